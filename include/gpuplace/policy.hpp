#pragma once
/// \file policy.hpp
/// Policies acting through the env API: the Policy concept and a helper to run a policy for a
/// whole episode. Every heuristic of heuristics.hpp is a Policy in every action mode (its act()).

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

/// A placer (heuristics.hpp, placement_view.hpp): it plans a job's placement from a view, in
/// every action mode through basic_env::heuristic_action().
template <class P, class E>
concept Placer = requires(P& p, const typename E::view_type& v, std::vector<gpu_id>& out) {
    { p.plan(v, out) } -> std::same_as<bool>;
    { p.next(v) } -> std::convertible_to<std::int64_t>;
};

/// The action of policy p in env e's state (p.act(e)).
template <class E, class P>
[[nodiscard]] std::int64_t act(const E& e, P& p) {
    return p.act(e);
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
    while (!e.done()) e.step(p.act(e));
    return {e.episode_metrics(), e.episode_return(), e.steps(), e.terminated()};
}

}  // namespace gpuplace
