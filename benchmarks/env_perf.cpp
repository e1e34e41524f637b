/// \file benchmarks/env_perf.cpp
/// Single-env throughput: step() with random valid and first-fit actions over cluster sizes and
/// queue lengths, the action modes, reset(), the proximity_drl preset, co-location on and off,
/// hardware failures off and on, and the observation/mask rewrite on its own.
/// Run: build/benchmarks/perf_env --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>

#include <gpuplace/colocation_policy.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy.hpp>

#include "perf_scenarios.hpp"

namespace {

using gpuplace::perf::run_steps;
using gpuplace::perf::scaled_default;

void cluster_sizes(benchmark::internal::Benchmark* b) {
    for (std::int64_t g : {32, 64, 512, 4096}) b->Arg(g);
    b->ArgName("gpus");
}

/// Random valid actions (uniform over the mask, O(1) expected sampler), the target workload.
void BM_step_random(benchmark::State& state) {
    gpuplace::env e(scaled_default(state.range(0)));
    gpuplace::perf::fast_random_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_random)->Apply(cluster_sizes);

/// Random valid actions from gpuplace::random_policy (the whole mask counted, then the k-th valid
/// GPU selected, 8 entries at a time: detail/valid_actions.hpp; no rejection tries).
void BM_step_random_policy(benchmark::State& state) {
    gpuplace::env e(scaled_default(state.range(0)));
    gpuplace::random_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_random_policy)->Apply(cluster_sizes);

/// First-fit actions (the lowest valid GPU): a cheaper policy, fuller nodes.
void BM_step_first_fit(benchmark::State& state) {
    gpuplace::env e(scaled_default(state.range(0)));
    gpuplace::first_fit_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_first_fit)->Apply(cluster_sizes);

/// Hardware failures (docs/realities.md) off and on, side by side: random valid actions on the
/// default scenario scaled, nodes failing every 2 h on average (Weibull, shape 0.7; a stress far
/// above any measured rate, so that failures happen within the steps timed), hourly checkpoints.
void BM_step_failures(benchmark::State& state) {
    auto s = scaled_default(state.range(1));
    if (state.range(0)) {
        s.failures.enabled = true;
        s.failures.mtbf_hours = 2;
        s.failures.distribution = gpuplace::failure_distribution::weibull;
        s.failures.shape = 0.7;
        s.failures.repair_hours = 1;
        s.failures.checkpoint_cost = 60;
        s.failures.checkpoint_interval = 3600;
    }
    gpuplace::env e(s);
    gpuplace::perf::fast_random_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_failures)->ArgNames({"failures", "gpus"})->ArgsProduct({{0, 1}, {64, 512}});

/// Cluster realities (docs/realities.md) on against the same scenario with them off, side by side:
/// the default scenario scaled under preemption (30 s restarts), off = LAS. The first argument is a
/// set of features: 1 nodes failing as in BM_step_failures, 2 three tenants with quotas under the
/// capacity scheduler, 4 30% spot jobs, 8 deadlines drawn per job, 16 their fields observed, 32 the
/// reward terms of realities weighted; 63 is every one.
void BM_step_realities(benchmark::State& state) {
    auto s = gpuplace::perf::scaled_default(state.range(1));
    s.preemption.enabled = true;
    s.preemption.restart_overhead = 30;
    s.env.order = gpuplace::queue_order::las;
    const auto on = state.range(0);
    if (on) {
        namespace gp = gpuplace;
        const double g = double(state.range(1));
        auto j = gp::to_json(s);
        const bool observe = (on & 16) != 0;
        j["job_fields"] = gp::detail::json::array();
        if (on & 2) {
            j["job_fields"].push_back({{"name", "tenant"}, {"type", "category"}, {"categories", {"a", "b", "c"}},
                                       {"draw", {{"a", 0.3}, {"b", 0.5}, {"c", 0.2}}}, {"observe", observe}});
            j["tenants"] = {{"quotas", {{"a", g / 2}, {"b", g / 4}, {"c", g / 4}}}};
            j["env"]["queue_policy"] = "capacity";
        }
        if (on & 4) {
            j["job_fields"].push_back({{"name", "class"}, {"type", "category"}, {"categories", {"guaranteed", "spot"}},
                                       {"draw", {{"guaranteed", 0.7}, {"spot", 0.3}}}, {"observe", observe}});
            j["spot"] = gp::detail::json::object();
        }
        if (on & 8) {
            j["job_fields"].push_back({{"name", "deadline"}, {"observe", observe}});
            j["deadlines"] = gp::detail::json::object();
        }
        if (on & 1)
            j["failures"] = {{"enabled", true}, {"mtbf_hours", 2}, {"distribution", "weibull"}, {"shape", 0.7}, {"repair_hours", 1},
                             {"checkpoint_cost", 60}, {"checkpoint_interval", 3600}};
        if (on & 32) {
            j["reward"]["wasted"] = 1.0;
            j["reward"]["unfairness"] = 1.0;
            if (on & 8) j["reward"]["deadline_miss"] = 1.0;
        }
        s = gp::scenario_from_json(j);
    }
    gpuplace::env e(s);
    gpuplace::perf::fast_random_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_realities)->ArgNames({"realities", "gpus"})->ArgsProduct({{0, 1, 2, 4, 8, 24, 32, 63}, {64, 512}});

/// Queue length: offered load (x10) drives how many jobs wait, the window K how many the
/// observation describes. 64 GPUs, random valid actions.
void BM_step_random_queue(benchmark::State& state) {
    gpuplace::env e(scaled_default(64, double(state.range(0)) / 10.0, state.range(1)));
    gpuplace::perf::fast_random_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_random_queue)->ArgNames({"load_x10", "window"})->ArgsProduct({{5, 10, 20, 40}, {8, 32}});

/// The action modes (env.action_mode 0 gpu, 1 placement, 2 job): random valid actions of each mode.
/// A GPU-mode step is one pick; a placement-mode step places a whole job (its candidates are planned
/// by five heuristics and per rack at every decision); a job-mode step starts a job placed by pack.
/// Counter ns_per_job: time per job started, comparable across modes.
void BM_step_mode(benchmark::State& state) {
    auto s = scaled_default(state.range(1));
    s.env.mode = static_cast<gpuplace::action_mode>(state.range(0));
    gpuplace::env e(s);
    gpuplace::perf::fast_random_policy p;
    std::uint64_t seed = 1;
    e.reset(seed);
    p.reset(seed);
    std::int64_t steps = 0, jobs = 0;
    for (auto _ : state) {
        const auto r = e.step(p.act(e));
        ++steps;
        if (r.terminated || r.truncated) {
            state.PauseTiming();
            jobs += std::int64_t(e.simulator().jobs().size());
            e.reset(++seed);
            p.reset(seed);
            state.ResumeTiming();
        }
    }
    jobs += std::int64_t(e.info().jobs_done + e.info().running);
    state.SetItemsProcessed(steps);
    state.counters["ns_per_job"] = benchmark::Counter(double(jobs), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["steps_per_job"] = double(steps) / double(std::max<std::int64_t>(jobs, 1));
}
BENCHMARK(BM_step_mode)->ArgNames({"mode", "gpus"})->ArgsProduct({{0, 1, 2}, {64, 512}});

/// The Proximity-DRL preset (32 GPUs, tree route cost, 30 jobs), random valid actions.
void BM_step_random_proximity_drl(benchmark::State& state) {
    gpuplace::tree_route_env e(gpuplace::preset_scenario("proximity_drl"));
    gpuplace::perf::fast_random_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_random_proximity_drl);

/// Co-location on (up to 2 jobs per 32 GB GPU) in the scaled default scenario at offered load
/// load_x10 / 10, random valid actions. BM_step_random_queue (window 8) is the same workload with
/// co-location off.
void BM_step_random_colocation(benchmark::State& state) {
    auto s = scaled_default(state.range(0), double(state.range(1)) / 10.0);
    s.colocation.enabled = true;
    gpuplace::env e(s);
    gpuplace::perf::fast_random_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_random_colocation)->ArgNames({"gpus", "load_x10"})->Args({64, 10})->Args({64, 40})->Args({512, 10});

/// The "colocation" preset (16 GPUs, a burst of 200 single-GPU jobs, up to 2 per GPU), with
/// co-location on (arg 1) or off (arg 0), random valid actions (DEFER only when no GPU is valid).
void BM_step_random_colocation_preset(benchmark::State& state) {
    auto s = gpuplace::preset_scenario("colocation");
    s.colocation.enabled = state.range(0) != 0;
    gpuplace::env e(s);
    gpuplace::perf::fast_random_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_random_colocation_preset)->ArgName("coloc")->Arg(0)->Arg(1);

/// The "colocation" preset driven by the co-location packer (its own O(G) scoring included).
void BM_step_packer_colocation_preset(benchmark::State& state) {
    gpuplace::env e(gpuplace::preset_scenario("colocation"));
    gpuplace::colocation_packer_policy p;
    run_steps(state, e, p);
}
BENCHMARK(BM_step_packer_colocation_preset);

/// reset(): drawing the workload and advancing to the first decision.
void BM_reset(benchmark::State& state) {
    gpuplace::env e(scaled_default(state.range(0)));
    std::uint64_t seed = 0;
    for (auto _ : state) {
        e.reset(++seed);
        benchmark::DoNotOptimize(e.observation().data());
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_reset)->Apply(cluster_sizes);

/// The whole observation and mask written from the state (what reset() does; step() rewrites
/// only what changed), mid-episode with about half the GPUs busy.
void BM_observation_full(benchmark::State& state) {
    gpuplace::env e(scaled_default(state.range(0)));
    gpuplace::first_fit_policy p;
    e.reset(1);
    while (!e.done() && e.cluster().busy_gpus() < e.num_gpus() / 2) e.step(p.act(e));
    for (auto _ : state) {
        e.refresh_observation();
        benchmark::DoNotOptimize(e.observation().data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations());
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(e.observation_size() * sizeof(float) +
                                                                          e.num_actions()));
}
BENCHMARK(BM_observation_full)->Apply(cluster_sizes);

}  // namespace

BENCHMARK_MAIN();
