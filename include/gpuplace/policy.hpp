#pragma once
/// \file policy.hpp
/// Policies acting through the env API: the Policy concept, the heuristics (heuristics.hpp) in any
/// action mode (act()), and a helper to run a policy for a whole episode.

#include <concepts>
#include <cstdint>

#include "env.hpp"
#include "heuristics.hpp"
#include "metrics.hpp"

namespace gpuplace {

/// A policy for env type E: `act(env)` returns a valid action of the env's current state;
/// `reset(seed)` is called at the start of each episode.
template <class P, class E>
concept Policy = requires(P& p, const E& e, std::uint64_t seed) {
    { p.act(e) } -> std::convertible_to<std::int64_t>;
    { p.reset(seed) };
};

/// A heuristic of heuristics.hpp: it decides GPU by GPU (basic_env::heuristic_action() turns that
/// into an action of any action mode).
template <class P>
concept GpuPlacer = requires { P::places_gpus; };

/// The action of policy p in env e's state: a heuristic's decision in e's action mode, or what
/// any other policy's act(e) returns.
template <class E, class P>
[[nodiscard]] std::int64_t act(const E& e, P& p) {
    if constexpr (GpuPlacer<P>) return e.heuristic_action(p);
    else return p.act(e);
}

/// Result of one episode.
struct episode_result {
    metrics m;
    double episode_return = 0;
    std::size_t steps = 0;
    bool terminated = false;
};

/// Resets `e` with `seed` and runs `p` until the episode ends.
template <class E, Policy<E> P>
episode_result run_episode(E& e, P& p, std::uint64_t seed) {
    e.reset(seed);
    p.reset(seed);
    step_result r;
    while (!e.done()) r = e.step(act(e, p));
    return {e.episode_metrics(), e.episode_return(), e.steps(), e.terminated()};
}

}  // namespace gpuplace
