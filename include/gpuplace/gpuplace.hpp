#pragma once
/// \file gpuplace.hpp
/// Umbrella header: includes the public API of gpuplace, which parses no JSON and needs no Eigen.
/// Reading and writing scenarios, zoos and reports as JSON (and the preset scenarios):
/// gpuplace/json.hpp; the reference PPO, which needs Eigen: gpuplace/rl/rl.hpp.

#include "cluster.hpp"
#include "colocation.hpp"
#include "colocation_policy.hpp"
#include "comm.hpp"
#include "config.hpp"
#include "data.hpp"
#include "env.hpp"
#include "error.hpp"
#include "evaluate.hpp"
#include "group_metrics.hpp"
#include "job.hpp"
#include "metrics.hpp"
#include "model_zoo.hpp"
#include "observation.hpp"
#include "observation_layout.hpp"
#include "policy.hpp"
#include "random.hpp"
#include "render.hpp"
#include "simulator.hpp"
#include "tenancy.hpp"
#include "topology.hpp"
#include "trace.hpp"
#include "vector_env.hpp"
#include "version.hpp"
#include "compiled.hpp"
#include "workload.hpp"
#include "workload_source.hpp"

// with GPUPLACE_COMPILED: the env types gpuplace::compiled instantiates (compiled.hpp)
#include "impl/extern_templates.hpp"
