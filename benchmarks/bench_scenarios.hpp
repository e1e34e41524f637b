#pragma once
/// \file benchmarks/bench_scenarios.hpp
/// Scenarios shared by the benchmark programs: the default scenario scaled to a cluster size, and
/// the loops that drive an env with a policy (resetting outside the timed region).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include <gpuplace/config.hpp>
#include <gpuplace/detail/rng.hpp>
#include <gpuplace/env.hpp>

namespace gpuplace::bench {

/// The default scenario (DGX-A100 nodes of 8 GPUs, synthetic jobs of 1/2/4/8 GPUs at offered load
/// `load`) on `gpus` GPUs: 32 = 1 rack x 4 nodes, 64 = 2 x 4 (the default), 512 = 8 x 8,
/// 4,096 = 32 x 16, other multiples of 8 as 1 rack. The number of jobs scales with the cluster
/// (160 per 64 GPUs) so that an episode has about 8 steps per GPU whatever the size.
[[nodiscard]] inline scenario scaled_default(std::int64_t gpus, double load = 1.0, std::int64_t queue_window = 8) {
    auto s = default_scenario();
    std::size_t racks = 1, nodes = 4;
    switch (gpus) {
        case 32: racks = 1; nodes = 4; break;
        case 64: racks = 2; nodes = 4; break;
        case 512: racks = 8; nodes = 8; break;
        case 4096: racks = 32; nodes = 16; break;
        default: racks = 1; nodes = static_cast<std::size_t>(gpus / 8); break;
    }
    s.name = "default_" + std::to_string(gpus);
    s.topology = {{"preset", "dgx_a100"}, {"racks", racks}, {"nodes_per_rack", nodes}};
    s.workload.synthetic.num_jobs = static_cast<std::size_t>(160 * gpus / 64);
    s.workload.synthetic.load = load;
    s.env.queue_window = static_cast<std::size_t>(queue_window);
    return s;
}

/// A uniformly random valid GPU (never DEFER), drawn in O(1) expected time: up to 16 uniform draws
/// over all GPUs, kept when the mask allows it (rejection sampling), then an exact draw among the
/// valid GPUs by counting them (gpuplace::random_policy's method, O(G)). Both stages are uniform over
/// the valid GPUs, so the mixture is too. The benchmarks use it so that the time measured is the
/// env's, not an O(G) action sampler's; gpuplace::random_policy is measured separately.
class fast_random_policy {
public:
    void reset(std::uint64_t seed) { rng_.seed(detail::mix_seed(seed, 0x62656e6368ULL)); }
    template <class Env>
    std::int64_t act(const Env& e) {
        const auto mask = e.action_mask();
        const std::size_t G = e.num_gpus();
        for (int t = 0; t < 16; ++t) {
            const auto g = rng_.below(G);
            if (mask[g]) return static_cast<std::int64_t>(g);
        }
        // exact draw: count the valid GPUs, then find the k-th one block by block
        constexpr std::size_t B = 64;
        auto count = [&](std::size_t lo, std::size_t hi) {  // 32-bit sums of bytes vectorise
            std::uint32_t c = 0;
            for (std::size_t g = lo; g < hi; ++g) c += mask[g];
            return std::size_t{c};
        };
        const std::size_t n = count(0, G);
        if (n == 0) return e.defer_action();
        auto k = rng_.below(n);
        std::size_t b = 0;
        for (; b + B <= G; b += B) {
            const auto c = count(b, b + B);
            if (k < c) break;
            k -= c;
        }
        for (std::size_t g = b; g < G; ++g)
            if (mask[g] && k-- == 0) return static_cast<std::int64_t>(g);
        return e.defer_action();
    }

private:
    detail::rng rng_{0};
};

/// Steps `e` with `policy` for the whole benchmark; a finished episode is reset with the next
/// seed outside the timed region. Sets items (steps) and the mean episode length.
template <class Env, class Policy>
void run_steps(benchmark::State& state, Env& e, Policy& policy) {
    std::uint64_t seed = 1;
    e.reset(seed);
    policy.reset(seed);
    std::int64_t steps = 0, episodes = 0;
    double reward = 0;
    for (auto _ : state) {
        const auto r = e.step(policy.act(e));
        reward += r.reward;
        ++steps;
        if (r.terminated || r.truncated) {
            state.PauseTiming();
            ++episodes;
            e.reset(++seed);
            policy.reset(seed);
            state.ResumeTiming();
        }
    }
    benchmark::DoNotOptimize(reward);
    state.SetItemsProcessed(steps);
    state.counters["gpus"] = static_cast<double>(e.num_gpus());
    state.counters["ns_per_gpu"] = benchmark::Counter(static_cast<double>(steps) * static_cast<double>(e.num_gpus()),
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    if (episodes > 0) state.counters["episodes"] = static_cast<double>(episodes);
}

}  // namespace gpuplace::bench
