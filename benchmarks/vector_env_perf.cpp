/// \file benchmarks/vector_env_perf.cpp
/// Batched stepping: basic_vector_env::step over 1 and 2 threads (adaptive, and on every step:
/// BM_vector_threads, with and without a busy core), cluster sizes and env counts,
/// with random valid actions chosen from the mask before each call (the chooser is timed too, as
/// a training loop would pay for its policy), and step_random() (the vector env's own sampler,
/// fused with the step in the worker threads). Autoresets are included in the time. Time is wall
/// clock (UseRealTime); the CPU column is the process's CPU time (all threads).
/// Run: build/benchmarks/perf_vector_env --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <gpuplace/detail/rng.hpp>
#include <gpuplace/vector_env.hpp>

#include "perf_scenarios.hpp"

namespace {

/// Fills actions[i] with a uniformly random valid GPU of env i (perf::fast_random_policy).
struct batch_chooser {
    std::vector<gpuplace::perf::fast_random_policy> p;
    template <class V>
    void choose(const V& v, std::vector<std::int64_t>& actions) {
        for (std::size_t i = 0; i < v.num_envs(); ++i) actions[i] = p[i].act(v.env(i));
    }
};

/// args: GPUs, envs, threads
void BM_vector_step(benchmark::State& state) {
    const auto gpus = state.range(0);
    const auto n = static_cast<std::size_t>(state.range(1));
    const auto threads = static_cast<std::size_t>(state.range(2));
    gpuplace::vector_env v(gpuplace::perf::scaled_default(gpus), n, threads);
    v.reset(1);
    batch_chooser c{std::vector<gpuplace::perf::fast_random_policy>(n)};
    for (std::size_t i = 0; i < n; ++i) c.p[i].reset(i);
    std::vector<std::int64_t> actions(n);
    for (auto _ : state) {
        c.choose(v, actions);
        v.step(actions);
        benchmark::DoNotOptimize(v.rewards().data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
    state.counters["envs"] = static_cast<double>(n);
    state.counters["threads"] = static_cast<double>(v.num_threads());
}
BENCHMARK(BM_vector_step)
    ->ArgNames({"gpus", "envs", "threads"})
    ->ArgsProduct({{64}, {16, 256}, {1, 2}})
    ->ArgsProduct({{32, 512}, {256}, {1, 2}})
    ->ArgsProduct({{4096}, {16}, {1, 2}})
    ->UseRealTime()
    ->MeasureProcessCPUTime();

/// One thread against two, side by side: mode 0 = one thread, 1 = two threads on every step
/// (set_adaptive_threads(false)), 2 = two threads, adaptive (the default: the vector env times
/// both ways every few thousand steps and steps the faster way). busy = 1 runs a thread that
/// spins for the whole benchmark, as another process on a core of a busy machine would.
void BM_vector_threads(benchmark::State& state) {
    const auto gpus = state.range(0);
    const auto n = static_cast<std::size_t>(state.range(1));
    const auto mode = state.range(2);
    std::atomic<bool> stop{false};
    std::thread hog;
    if (state.range(3) != 0)
        hog = std::thread([&stop] {
            for (volatile std::uint64_t x = 0; !stop.load(std::memory_order_relaxed);) x = x + 1;
        });
    gpuplace::vector_env v(gpuplace::perf::scaled_default(gpus), n, mode == 0 ? 1 : 2);
    v.set_adaptive_threads(mode == 2);
    v.reset(1);
    batch_chooser c{std::vector<gpuplace::perf::fast_random_policy>(n)};
    for (std::size_t i = 0; i < n; ++i) c.p[i].reset(i);
    std::vector<std::int64_t> actions(n);
    std::size_t on_all = 0;
    for (auto _ : state) {
        c.choose(v, actions);
        v.step(actions);
        on_all += v.active_threads() > 1;
        benchmark::DoNotOptimize(v.rewards().data());
    }
    stop.store(true);
    if (hog.joinable()) hog.join();
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
    state.counters["threads"] = static_cast<double>(v.num_threads());
    state.counters["on_all_threads"] = static_cast<double>(on_all) / static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
}
BENCHMARK(BM_vector_threads)
    ->ArgNames({"gpus", "envs", "mode", "busy"})
    ->ArgsProduct({{64}, {16, 256}, {0, 1, 2}, {0, 1}})
    ->ArgsProduct({{4096}, {16}, {0, 1, 2}, {0, 1}})
    ->UseRealTime()
    ->MeasureProcessCPUTime();

/// step_random(): each env draws a uniformly random valid action from its own stream and steps,
/// env by env inside the worker threads (what Python's VectorEnv.step_random() runs).
void BM_vector_step_random(benchmark::State& state) {
    const auto gpus = state.range(0);
    const auto n = static_cast<std::size_t>(state.range(1));
    const auto threads = static_cast<std::size_t>(state.range(2));
    gpuplace::vector_env v(gpuplace::perf::scaled_default(gpus), n, threads);
    v.reset(1);
    std::vector<std::int64_t> actions(n);
    for (auto _ : state) {
        v.step_random(actions);
        benchmark::DoNotOptimize(v.rewards().data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
    state.counters["threads"] = static_cast<double>(v.num_threads());
}
BENCHMARK(BM_vector_step_random)
    ->ArgNames({"gpus", "envs", "threads"})
    ->ArgsProduct({{64}, {1, 16, 256}, {1, 2}})
    ->UseRealTime()
    ->MeasureProcessCPUTime();

/// The step alone: actions precomputed by first-fit on a copy would change the trajectory, so
/// this variant steps with the first valid GPU of each env (one pass over the mask row).
void BM_vector_step_first_fit(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto threads = static_cast<std::size_t>(state.range(1));
    gpuplace::vector_env v(gpuplace::perf::scaled_default(64), n, threads);
    v.reset(1);
    std::vector<std::int64_t> actions(n);
    const std::size_t A = v.num_actions();
    for (auto _ : state) {
        const auto m = v.action_masks();
        for (std::size_t i = 0; i < n; ++i) {
            std::size_t g = 0;
            while (g + 1 < A && !m[i * A + g]) ++g;
            actions[i] = static_cast<std::int64_t>(g);
        }
        v.step(actions);
        benchmark::DoNotOptimize(v.rewards().data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_vector_step_first_fit)
    ->ArgNames({"envs", "threads"})
    ->ArgsProduct({{256}, {1, 2}})
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
