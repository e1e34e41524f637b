/// \file benchmarks/planner_perf.cpp
/// Cost of one fair rollout planner decision (planner.hpp):
/// BM_rollout_decision/gpus:<G>/futures:<F>/lazy:<0|1>/horizon:<H> is `rollout<F>:pack_wait+sjf` in
/// the placement action mode on the default scenario scaled to G GPUs (perf_scenarios.hpp), one
/// thread, its rollouts on lazy forks or not (rollout_options::lazy), played to the end of the
/// episode (horizon 0) or for H decisions (the cost per decision then linear in the cluster). Each run plays pack_wait+sjf until a quarter of the
/// episode's decisions are made, then times the planner's decisions along its own trajectory
/// (manual time: only act() is measured). docs/performance.md quotes it.
/// Run: build-perf/benchmarks/perf_planner --benchmark_filter=BM_rollout_decision

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include <gpuplace/any_policy.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/planner.hpp>
#include <gpuplace/policy_registry.hpp>

#include "perf_scenarios.hpp"

namespace {

void BM_rollout_decision(benchmark::State& state) {
    auto s = gpuplace::perf::scaled_default(state.range(0));
    s.env.mode = gpuplace::action_mode::placement;
    gpuplace::apply_queue(s, "sjf");
    const auto base = gpuplace::heuristic<gpuplace::env>("pack_wait+sjf");
    gpuplace::rollout_options o;
    o.futures = std::size_t(state.range(1));
    o.lazy = state.range(2) != 0;
    o.horizon = std::size_t(state.range(3));
    gpuplace::rollout_policy<gpuplace::env> planner(base.make, o);
    gpuplace::env e(s);
    std::uint64_t seed = 1;
    const auto warm = [&] {  // a quarter of the jobs placed by the base policy
        e.reset(seed);
        planner.reset(seed);
        auto b = base.make(seed);
        const auto jobs = s.workload.synthetic.num_jobs;
        for (std::size_t d = 0; !e.done() && d < jobs / 4; ++d) e.step(b(e));
    };
    warm();
    std::int64_t decisions = 0;
    for (auto _ : state) {
        if (e.done()) {
            ++seed;
            warm();
        }
        const auto t0 = std::chrono::steady_clock::now();
        const auto a = planner.act(e);
        state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        e.step(a);
        ++decisions;
    }
    state.counters["gpus"] = double(e.num_gpus());
    state.SetItemsProcessed(decisions);
}
BENCHMARK(BM_rollout_decision)
    ->ArgNames({"gpus", "futures", "lazy", "horizon"})
    ->Args({16, 4, 0, 0})
    ->Args({16, 4, 1, 0})
    ->Args({64, 4, 0, 0})
    ->Args({64, 4, 1, 0})
    ->Args({256, 4, 0, 0})
    ->Args({256, 4, 1, 0})
    ->Args({64, 4, 1, 32})
    ->Args({512, 4, 1, 32})
    ->Args({4096, 4, 1, 32})
    ->Args({16384, 4, 1, 32})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
