#pragma once
/// \file benchmarks/perf_scenarios.hpp
/// Scenarios shared by the benchmark programs: the default scenario scaled to a cluster size, and
/// the loops that drive an env with a policy (resetting outside the timed region).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include <gpuplace/config.hpp>
#include <gpuplace/detail/rng.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/vector_env.hpp>

namespace gpuplace::perf {

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
    s.topology = topology_config::of("dgx_a100", racks, nodes);
    s.workload.synthetic.num_jobs = static_cast<std::size_t>(160 * gpus / 64);
    s.workload.synthetic.load = load;
    s.env.queue_window = static_cast<std::size_t>(queue_window);
    return s;
}

/// A uniformly random valid GPU (DEFER only when no GPU is valid; in the placement and job action
/// modes: a valid candidate or queue slot, the last action only when none is valid), drawn by the vector env's
/// sampler (detail::sample_valid: the valid entries counted 8 at a time, then the k-th selected
/// without a data-dependent branch; rows of more than 128 entries try 2 uniform draws first), so
/// that the time measured is the env's, not an O(G) action sampler's; gpuplace::random_policy
/// (the whole mask counted, then the k-th valid entry selected) is measured separately.
class fast_random_policy {
public:
    void reset(std::uint64_t seed) { rng_.seed(detail::mix_seed(seed, 0x62656e6368ULL)); }
    template <class Env>
    std::int64_t act(const Env& e) {
        const auto a = detail::sample_valid(e.action_mask().data(), e.num_actions() - 1, rng_);
        return a < 0 ? e.defer_action() : a;
    }

private:
    detail::rng rng_{0};
};

/// Steps `e` with `policy` for the whole benchmark; a finished episode is reset with the next
/// seed outside the timed region. Sets items (steps), the episodes and, for envs that count the
/// jobs they finished, ns_per_job: the time per job finished, which compares schedules whose steps
/// do different amounts of work (a discipline that suspends more jobs takes more steps to place
/// them again, each cheap).
template <class Env, class Policy>
void run_steps(benchmark::State& state, Env& e, Policy& policy) {
    std::uint64_t seed = 1;
    e.reset(seed);
    policy.reset(seed);
    std::int64_t steps = 0, episodes = 0;
    double reward = 0, jobs = 0;
    constexpr bool counts_jobs = requires { e.info().jobs_done; };
    for (auto _ : state) {
        const auto r = e.step(policy.act(e));
        reward += r.reward;
        ++steps;
        if (r.terminated || r.truncated) {
            state.PauseTiming();
            ++episodes;
            if constexpr (counts_jobs) jobs += static_cast<double>(e.info().jobs_done);
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
    if constexpr (counts_jobs) {
        jobs += static_cast<double>(e.info().jobs_done);
        if (jobs > 0) state.counters["ns_per_job"] = benchmark::Counter(jobs, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    }
}

}  // namespace gpuplace::perf
