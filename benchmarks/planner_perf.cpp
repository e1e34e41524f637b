/// \file benchmarks/planner_perf.cpp
/// Cost of one fair rollout planner decision (planner.hpp):
/// BM_rollout_decision/gpus:<G>/futures:<F>/lazy:<0|1>/horizon:<H>/threads:<T> is
/// `rollout<F>:pack_wait+sjf` in the placement action mode on the default scenario scaled to G GPUs
/// (perf_scenarios.hpp), on T threads (rollout_options::threads), its rollouts on lazy forks or not (rollout_options::lazy), played to the end of the
/// episode (horizon 0) or for H decisions (the cost per decision then linear in the cluster). Each run plays pack_wait+sjf until a quarter of the
/// episode's decisions are made, then times the planner's decisions along its own trajectory
/// (manual time: only act() is measured). docs/performance.md and docs/planning.md quote it.
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
    o.threads = std::size_t(state.range(4));
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
    double rollouts = 0, seconds = 0;
    for (auto _ : state) {
        if (e.done()) {
            ++seed;
            warm();
        }
        const auto t0 = std::chrono::steady_clock::now();
        const auto a = planner.act(e);
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        state.SetIterationTime(t);
        seconds += t;
        rollouts += double(planner.last_actions().size() > 1 ? planner.last_actions().size() * o.futures : 0);
        e.step(a);
        ++decisions;
    }
    state.counters["gpus"] = double(e.num_gpus());
    // rollouts (action, future pairs) per decision, and the wall time per rollout: with a horizon
    // the latter is linear in the cluster, the former grows with its candidates (racks)
    state.counters["rollouts"] = decisions ? rollouts / double(decisions) : 0.0;
    state.counters["us_per_rollout"] = rollouts > 0 ? 1e6 * seconds / rollouts : 0.0;
    state.SetItemsProcessed(decisions);
}
BENCHMARK(BM_rollout_decision)
    ->ArgNames({"gpus", "futures", "lazy", "horizon", "threads"})
    ->Args({16, 4, 0, 0, 1})
    ->Args({16, 4, 1, 0, 1})
    ->Args({64, 4, 0, 0, 1})
    ->Args({64, 4, 1, 0, 1})
    ->Args({64, 4, 1, 0, 2})
    ->Args({256, 4, 0, 0, 1})
    ->Args({256, 4, 1, 0, 1})
    ->Args({512, 4, 1, 0, 1})
    ->Args({64, 4, 1, 32, 1})
    ->Args({64, 4, 1, 32, 2})
    ->Args({512, 4, 1, 32, 1})
    ->Args({512, 4, 1, 32, 2})
    ->Args({4096, 4, 1, 32, 1})
    ->Args({4096, 4, 1, 32, 2})
    ->Args({16384, 4, 1, 32, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
