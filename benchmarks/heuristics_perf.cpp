/// \file benchmarks/heuristics_perf.cpp
/// Cost of one heuristic decision (act() in the GPU action mode) on clusters of 1k to 100k GPUs:
/// BM_heuristic_decision/<heuristic>/gpus:<G>/gpn:<GPUs per node>. gpn 1: racks of 100 one-GPU
/// nodes (the custom shape where topology_greedy has the most candidates); gpn 8: racks of 25
/// DGX-A100 nodes. The default synthetic workload with 2.5 jobs per GPU. Each run first
/// plays uniformly random valid actions until half the GPUs are busy, then times the heuristic's
/// decisions along its own trajectory (manual time: only act() is measured, the steps are not).
/// Run: build-perf/benchmarks/perf_heuristics --benchmark_filter=BM_heuristic_decision

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <gpuplace/env.hpp>
#include <gpuplace/heuristics.hpp>

#include "perf_scenarios.hpp"

namespace {

[[nodiscard]] gpuplace::scenario cluster(std::int64_t gpus, std::int64_t gpn) {
    auto s = gpuplace::default_scenario();
    const auto nodes = std::size_t(gpus / gpn), per_rack = std::size_t(gpn == 1 ? 100 : 25);
    s.name = "decision_" + std::to_string(gpus);
    s.topology = gpuplace::topology_config::of(gpn == 1 ? "custom" : "dgx_a100", nodes / per_rack, per_rack);
    s.topology.gpus_per_node = std::size_t(gpn);
    s.workload.synthetic.num_jobs = std::size_t(gpus) * 5 / 2;
    return s;
}

/// Resets `e` with `seed` and plays random valid actions until half of its GPUs are busy (or the
/// episode ends).
void warm_up(gpuplace::env& e, std::uint64_t seed) {
    gpuplace::perf::fast_random_policy r;
    e.reset(seed);
    r.reset(seed);
    while (!e.done() && 2 * e.cluster().free_gpus() > e.num_gpus()) e.step(r.act(e));
}

template <class P>
void BM_heuristic_decision(benchmark::State& state) {
    gpuplace::env e(cluster(state.range(0), state.range(1)));
    P p;
    p.reserve(e.topology());
    std::uint64_t seed = 1;
    warm_up(e, seed);
    p.reset(seed);
    for (auto _ : state) {
        while (e.done()) {
            warm_up(e, ++seed);
            p.reset(seed);
        }
        const auto t0 = std::chrono::steady_clock::now();
        const auto a = p.act(e);
        state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        e.step(a);
    }
    state.counters["gpus"] = static_cast<double>(e.num_gpus());
}

void sizes(benchmark::internal::Benchmark* b) {
    b->ArgNames({"gpus", "gpn"});
    for (std::int64_t gpn : {1, 8})
        for (std::int64_t g : {1000, 10000, 100000}) b->Args({g, gpn});
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK(BM_heuristic_decision<gpuplace::random_policy>)->Name("BM_heuristic_decision/random")->Apply(sizes);
BENCHMARK(BM_heuristic_decision<gpuplace::first_fit_policy>)->Name("BM_heuristic_decision/first_fit")->Apply(sizes);
BENCHMARK(BM_heuristic_decision<gpuplace::pack_policy>)->Name("BM_heuristic_decision/pack")->Apply(sizes);
BENCHMARK(BM_heuristic_decision<gpuplace::pack_wait_policy>)->Name("BM_heuristic_decision/pack_wait")->Apply(sizes);
BENCHMARK(BM_heuristic_decision<gpuplace::load_balance_policy>)->Name("BM_heuristic_decision/load_balance")->Apply(sizes);
BENCHMARK(BM_heuristic_decision<gpuplace::topology_greedy_policy>)->Name("BM_heuristic_decision/topology_greedy")->Apply(sizes);

BENCHMARK_MAIN();
