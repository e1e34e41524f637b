/// \file benchmarks/rounds_perf.cpp
/// Rounds (docs/rounds.md) on Gavel's 96-GPU cluster (the heterogeneous_gavel preset: 32 V100, 32
/// P100, 32 K80 in 8-GPU servers):
///  - BM_lp_allocation/<policy>: one LP allocation (rounds/gavel_lp.hpp) over 100 active jobs (Gavel's
///    Philly mix of GPU counts, 70% 1 GPU, 10% 2, 15% 4, 5% 8; models drawn from those measured at
///    their count), what a round with a new allocation solves;
///  - BM_round_lp/<policy>: a whole round at those 100 jobs with a new allocation: the mechanism
///    (rounds/gavel.hpp) computing it, granting the round by priority, the front end moving,
///    suspending and placing the jobs (pack) and running the round's 360 s;
///  - BM_gavel_run/<queue>: the preset's whole run (227 Philly jobs) under pack, from a prototype that
///    has read the trace (items = episodes).
/// Run: build-perf/benchmarks/perf_rounds --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gpuplace/json.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/round_env.hpp>
#include <gpuplace/round_policy_registry.hpp>

#if defined(GPUPLACE_WITH_LP)
#include <gpuplace/rounds/gavel_lp.hpp>

namespace {

namespace gp = gpuplace;

/// heterogeneous_gavel's cluster with `n` jobs at time 0 that never finish in a benchmark's time.
[[nodiscard]] gp::scenario busy_gavel_cluster(std::size_t n) {
    auto s = gp::preset_scenario("heterogeneous_gavel");
    const auto zoo = s.zoo.make();
    gp::detail::rng r(7);
    s.workload = gp::workload_config{};
    s.workload.kind = "jobs";
    for (std::size_t i = 0; i < n; ++i) {
        const double u = r.uniform();
        const std::uint32_t k = u < 0.7 ? 1 : u < 0.8 ? 2 : u < 0.95 ? 4 : 8;
        std::vector<gp::model_id> measured;
        for (std::size_t m = 0; m < zoo.size(); ++m)
            for (const auto& p : zoo[gp::model_id(m)].points)
                if (p.gpus == k) measured.push_back(gp::model_id(m));
        gp::TrainingJob j;
        j.id = static_cast<gp::job_id>(i);
        j.submit_time = 0;
        j.num_gpus = k;
        j.model = measured[r.below(measured.size())];
        j.work = 1e12;
        s.workload.jobs.push_back(j);
    }
    s.rounds.enabled = true;
    return s;
}

[[nodiscard]] gp::gavel_objective objective_of(const std::string& name) {
    if (name.starts_with("min_total_duration")) return gp::gavel_objective::min_total_duration;
    if (name.starts_with("finish_time_fairness")) return gp::gavel_objective::finish_time_fairness;
    if (name.starts_with("max_sum_throughput")) return gp::gavel_objective::max_sum_throughput;
    return gp::gavel_objective::max_min_fairness;
}

void BM_lp_allocation(benchmark::State& state, const std::string& policy) {
    gp::round_env e(busy_gavel_cluster(100));
    e.reset(0);
    const auto v = e.view();
    gp::gavel_lp_allocation lp(objective_of(policy), policy.ends_with("_perf"));
    lp.reset();
    gp::gavel_allocation x;
    for (auto _ : state) {
        x.assign(v.jobs().size(), v.num_types());
        lp.compute(v, x);
        benchmark::DoNotOptimize(x.at(0, 0));
    }
    state.counters["jobs"] = double(v.jobs().size());
    state.counters["lp_solves"] = benchmark::Counter(double(lp.solves()), benchmark::Counter::kAvgIterations);
}

void BM_round_lp(benchmark::State& state, const std::string& policy) {
    const auto s = busy_gavel_cluster(100);
    gp::round_env e(s);
    const auto p = gp::round_policy(policy, s);
    gp::pack_policy placer;
    placer.reserve(e.hierarchy());
    gp::round_allocation a;
    e.reset(0);
    std::uint64_t seed = 0;
    for (auto _ : state) {
        auto allocate = p.make(++seed);  // a fresh mechanism: its first round computes an allocation
        a.clear();
        allocate(e.view(), a);
        e.step(a, placer);
    }
    state.counters["jobs"] = double(e.active().size());
}

void BM_gavel_run(benchmark::State& state, const std::string& queue) {
    auto s = gp::preset_scenario("heterogeneous_gavel");
    gp::apply_queue(s, queue);
    std::function<gp::episode_outcome(std::uint64_t)> run;
    if (s.rounds.enabled) {
        run = gp::round_runner<gp::env>(s, "pack");
    } else {
        const gp::env proto(s);
        const auto p = gp::heuristic<gp::env>("pack+" + queue);
        run = [proto, p](std::uint64_t seed) {
            gp::env e(proto);
            auto act = p.make(seed);
            e.reset(seed);
            while (!e.done()) e.step(act(e));
            return gp::episode_outcome{e.episode_metrics(), 0.0};
        };
    }
    double jct = 0;
    for (auto _ : state) {
        const auto r = run(1000000);
        jct = r.m.avg_jct;
    }
    state.counters["avg_jct_h"] = benchmark::Counter(jct / 3600.0);
    state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK_CAPTURE(BM_lp_allocation, max_min_fairness_perf, std::string("max_min_fairness_perf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_lp_allocation, max_min_fairness, std::string("max_min_fairness"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_lp_allocation, min_total_duration_perf, std::string("min_total_duration_perf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_lp_allocation, finish_time_fairness_perf, std::string("finish_time_fairness_perf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_lp_allocation, max_sum_throughput_perf, std::string("max_sum_throughput_perf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_round_lp, max_min_fairness_perf, std::string("max_min_fairness_perf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_round_lp, max_min_fairness, std::string("max_min_fairness"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gavel_run, fifo, std::string("fifo"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gavel_run, fifo_perf, std::string("fifo_perf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gavel_run, max_min_fairness_perf, std::string("max_min_fairness_perf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gavel_run, max_min_fairness, std::string("max_min_fairness"))->Unit(benchmark::kMillisecond);

#else
int main() { return 0; }  // without the LP component there is nothing here to measure
#endif

#if defined(GPUPLACE_WITH_LP)
BENCHMARK_MAIN();
#endif
