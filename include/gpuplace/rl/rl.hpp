#pragma once
/// \file rl/rl.hpp
/// The reference PPO on Eigen: MLP, Adam, masked categorical, actor-critic, PPO trainer,
/// checkpoints, training runs that resume. Include this one header.

#include "actor_critic.hpp"
#include "adam.hpp"
#include "blocking.hpp"
#include "categorical.hpp"
#include "checkpoint.hpp"
#include "memory.hpp"
#include "mlp.hpp"
#include "normalizer.hpp"
#include "ppo.hpp"
#include "run.hpp"
#include "state_file.hpp"
