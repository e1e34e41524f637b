#pragma once
/// \file policy.hpp
/// Heuristic policies acting through the env API, one GPU pick per step, and a helper to run a
/// policy for a whole episode.

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

#include "detail/rng.hpp"
#include "env.hpp"
#include "error.hpp"
#include "metrics.hpp"

namespace gpuplace {

/// A policy for env type E: `act(env)` returns a valid action of the env's current state;
/// `reset(seed)` is called at the start of each episode.
template <class P, class E>
concept Policy = requires(P& p, const E& e, std::uint64_t seed) {
    { p.act(e) } -> std::convertible_to<std::int64_t>;
    { p.reset(seed) };
};

/// Picks a valid GPU uniformly at random (never DEFER).
class random_policy {
public:
    static constexpr std::string_view name = "random";
    explicit random_policy(std::uint64_t seed = 0) : rng_(seed) {}
    void reset(std::uint64_t seed) { rng_.seed(detail::mix_seed(seed, 0x72616e646f6dULL)); }

    template <class E>
    std::int64_t act(const E& e) {
        const auto mask = e.action_mask();
        const std::size_t G = e.num_gpus();
        std::size_t n = 0;
        for (std::size_t g = 0; g < G; ++g) n += mask[g];
        if (n == 0) return e.defer_action();
        auto k = rng_.below(n);
        for (std::size_t g = 0; g < G; ++g)
            if (mask[g] && k-- == 0) return static_cast<std::int64_t>(g);
        return e.defer_action();
    }

private:
    detail::rng rng_;
};

/// Picks the valid GPU with the lowest index.
struct first_fit_policy {
    static constexpr std::string_view name = "first_fit";
    void reset(std::uint64_t) {}
    template <class E>
    std::int64_t act(const E& e) const {
        const auto mask = e.action_mask();
        for (std::size_t g = 0; g < e.num_gpus(); ++g)
            if (mask[g]) return static_cast<std::int64_t>(g);
        return e.defer_action();
    }
};

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
    while (!e.done()) r = e.step(p.act(e));
    return {e.episode_metrics(), e.episode_return(), e.steps(), e.terminated()};
}

}  // namespace gpuplace
