#pragma once
/// \file random.hpp
/// The random numbers of gpuplace: a small, fast, portable generator (xoshiro256**, seeded by
/// splitmix64) whose distributions are written out (not <random>'s), so that a seed gives the same
/// numbers with every standard library. Workloads, heuristics, the vector env's samplers and the
/// PPO draw from it; programs and tests that must reproduce them use it too.

#include "detail/rng.hpp"

namespace gpuplace {

/// The generator: rng r(seed); r.next(), r.uniform(), r.uniform_int(n), r.normal(), ...
using detail::rng;

/// mix_seed(a, b): two seeds mixed into one (how per-env, per-episode and per-teacher seeds are
/// derived from a run's seed).
using detail::mix_seed;

}  // namespace gpuplace
