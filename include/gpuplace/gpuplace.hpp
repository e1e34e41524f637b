#pragma once
/// \file gpuplace.hpp
/// Umbrella header: includes the whole public API of gpuplace.

#include "cluster.hpp"
#include "comm.hpp"
#include "config.hpp"
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
#include "vector_env.hpp"
#include "version.hpp"
#include "workload.hpp"
