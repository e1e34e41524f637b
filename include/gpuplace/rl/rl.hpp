#pragma once
/// \file rl/rl.hpp
/// The reference PPO on Eigen: MLP, Adam, masked categorical, actor-critic, PPO trainer,
/// checkpoints. Include this one header. (Training runs with run folders, logs and resume are an
/// application layer compiled for gpuplace-train and the Python package: src/training_run/.)

#include "actor_critic.hpp"
#include "adam.hpp"
#include "blocking.hpp"
#include "categorical.hpp"
#include "checkpoint.hpp"
#include "memory.hpp"
#include "mlp.hpp"
#include "normalizer.hpp"
#include "ppo.hpp"
#include "state_file.hpp"

// with GPUPLACE_RL_COMPILED: the float types gpuplace::rl_compiled instantiates (../compiled.hpp)
#include "impl/extern_templates.hpp"
