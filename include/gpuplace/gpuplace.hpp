#pragma once
/// \file gpuplace.hpp
/// Umbrella header: includes the whole public API of gpuplace (the reference PPO, which needs
/// Eigen, has its own umbrella: gpuplace/rl/rl.hpp).

#include "cluster.hpp"
#include "colocation.hpp"
#include "colocation_policy.hpp"
#include "comm.hpp"
#include "config.hpp"
#include "data.hpp"
#include "env.hpp"
#include "error.hpp"
#include "evaluate.hpp"
#include "job.hpp"
#include "metrics.hpp"
#include "model_zoo.hpp"
#include "policy.hpp"
#include "render.hpp"
#include "simulator.hpp"
#include "topology.hpp"
#include "trace.hpp"
#include "vector_env.hpp"
#include "version.hpp"
#include "workload.hpp"
