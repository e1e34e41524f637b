// Tests of include/gpuplace/rounds/gavel_lp.hpp (Gavel's LP allocations) and, through them, of
// Gavel's mechanism (rounds/gavel.hpp) in a round_env: a case of two jobs and two GPU types small
// enough to solve by hand, its LP allocations and the finish times they lead to, exact.
// Needs the LP component (GPUPLACE_WITH_LP; CI has it); tests/no_lp/ checks a build without it.

#if defined(GPUPLACE_WITH_LP)

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/json.hpp>
#include <gpuplace/round_env.hpp>
#include <gpuplace/round_policy_registry.hpp>
#include <gpuplace/rounds/gavel_lp.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

// The hand-solved case. Two GPU types with 2 GPUs each (N = 4): t = 0 "v100", t = 1 "k80".
// Job A: 1 GPU, 4 steps/s on a V100, 1 on a K80. Job B: 2 GPUs, 6 and 3 steps/s (whole job).
// An allocation X (time fractions) is feasible when X >= 0, each job's row sums to <= 1 and each
// type's GPUs hold: x_A0 + 2 x_B0 <= 2, x_A1 + 2 x_B1 <= 2.
//
// max_min_fairness_perf: maximise min_i thr_i(X) s_i / prop_i, prop_i = sum_t T_it N_t / N (an equal
// share of each type): prop_A = (4 + 1) / 2 = 2.5, prop_B = (6 + 3) / 2 = 4.5, so
//   f_A = (4 x_A0 + x_A1) / 2.5,   f_B = 2 (6 x_B0 + 3 x_B1) / 4.5.
// f_A <= 4 / 2.5 = 1.6 (x_A0 = 1). With x_A0 = 1 one V100 is left: x_B0 <= 1/2, and x_B1 = 1/2
// gives f_B = 2 (3 + 1.5) / 4.5 = 2 >= 1.6: the optimum is z = 1.6, reached by x_A = (1, 0) and
// any x_B with f_B >= 1.6 (x_B0 <= 1/2, 6 x_B0 + 3 x_B1 >= 3.6). The second LP (the total
// normalised throughput f_A + f_B at z = 1.6) takes the most of it: x_B = (1/2, 1/2), f_B = 2.
//
// max_min_fairness (heterogeneity-agnostic): every throughput 1, prop_i = 1, the types pooled
// (4 GPUs): f_A = x_A, f_B = 2 x_B with x_A + 2 x_B <= 4: z = 1 at x_A = 1, and the second LP
// takes x_B = 1; each share spread over the types by their GPUs: x_A = x_B = (1/2, 1/2).
//
// max_sum_throughput_perf: maximise 4 x_A0 + x_A1 + 6 x_B0 + 3 x_B1. Per GPU a V100 is worth 4 to A
// and 3 to B, a K80 1 to A and 1.5 to B: A takes a V100 whole (x_A0 = 1), B the other V100 half
// the time (x_B0 = 1/2) and the K80s the rest (x_B1 = 1/2): 4 + 3 + 1.5 = 8.5.
struct hand_case {
    std::vector<gp::round_job> jobs;
    std::vector<double> thr{4, 1, 6, 3}, step_ref{0.25, 1.0 / 6};
    std::vector<std::string> types{"v100", "k80"};
    std::vector<std::uint32_t> gpus{2, 2};
    hand_case() {
        gp::round_job a, b;
        a.job = 0, a.gpus = 1, a.remaining = 100;
        b.job = 1, b.gpus = 2, b.remaining = 100;
        jobs = {a, b};
    }
    [[nodiscard]] gp::round_view view() const {
        gp::round_view::state s;
        s.round_length = 360;
        s.jobs = jobs;
        s.throughput = thr;
        s.step_time_ref = step_ref;
        s.type_names = types;
        s.type_gpus = gpus;
        return gp::round_view(s);
    }
};

gp::gavel_allocation hand_solve(gp::gavel_objective o, bool perf) {
    const hand_case c;
    gp::gavel_lp_allocation lp(o, perf);
    lp.reset();
    gp::gavel_allocation x;
    x.assign(2, 2);
    lp.compute(c.view(), x);
    return x;
}

void check_allocation(const gp::gavel_allocation& x, std::array<double, 4> want) {
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t t = 0; t < 2; ++t) {
            CAPTURE(i);
            CAPTURE(t);
            CHECK(std::abs(x.at(i, t) - want[i * 2 + t]) <= 1e-9);
        }
}

/// The hand-solved case as a scenario: a rack of two 2-GPU servers, the first of V100s, the second
/// of K80s, on the zoo's measurement hardware (so every consolidated job runs at its measured rate);
/// jobs A (model 0, 1 GPU) and B (model 1, 2 GPUs) at time 0 with `work_a` and `work_b` steps.
json gavel_lp_case(double work_a, double work_b, double restore) {
    auto model = [](const char* name, std::string gpus, double tput) { return json{{"name", name}, {"throughput", {{gpus, {tput, tput}}}}}; };
    auto ref_model = [&](const char* name, std::string gpus, double tput) {
        auto m = model(name, gpus, tput);
        m["memory_gb"] = 4;
        return m;
    };
    return {{"topology",
             {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 2}, {"gpus_per_node", 2}, {"node_bandwidth", 100},
              {"rack_bandwidth", 3.125}, {"spine_bandwidth", 3.125}, {"node_latency", 2e-6}, {"rack_latency", 20e-6},
              {"spine_latency", 20e-6}, {"gpu_types", {"v100", "k80"}}}},
            {"zoo",
             {{"gpu_type", "v100"},
              {"models", {ref_model("A", "1", 4), ref_model("B", "2", 6)}},
              {"types", {{{"gpu_type", "k80"}, {"models", {model("A", "1", 1), model("B", "2", 3)}}}}}}},
            {"workload",
             {{"kind", "jobs"},
              {"jobs", {{{"submit_time", 0}, {"num_gpus", 1}, {"model", 0}, {"work", work_a}},
                        {{"submit_time", 0}, {"num_gpus", 2}, {"model", 1}, {"work", work_b}}}}}},
            {"rounds", {{"length", 360}, {"min_reset_interval", 0}, {"restore", {{"seconds", restore}}}}}};
}

}  // namespace

TEST_CASE("gavel_lp: two jobs, two types: the LP allocations solved by hand") {
    check_allocation(hand_solve(gp::gavel_objective::max_min_fairness, true), {1, 0, 0.5, 0.5});
    check_allocation(hand_solve(gp::gavel_objective::max_min_fairness, false), {0.5, 0.5, 0.5, 0.5});
    check_allocation(hand_solve(gp::gavel_objective::max_sum_throughput, true), {1, 0, 0.5, 0.5});
}

TEST_CASE("gavel_lp: two jobs, two types: max_min_fairness_perf's rounds and finish times by hand") {
    // The mechanism (rounds/gavel.hpp) over X = {A: (1, 0), B: (1/2, 1/2)}, 360 s rounds: each
    // job's time on each type starts at half a round (180 s), the priority on type t is X over the
    // fraction of type t's time the job had, types visited V100 then K80.
    //  round 0 (t = 0):    V100: A 1 / (180/360) = 2 before B 0.5 / 0.5 = 1: A takes one V100, B
    //                      (2 GPUs) no longer fits; K80: B. A runs at 4/s, B at 3/s.
    //  round 1 (t = 360):  V100 time A 540, B 180 of 720: A 1 / 0.75 = 1.33, B 0.5 / 0.25 = 2: B
    //                      takes both V100s (6/s); K80: A (priority 0, but the K80s are free: 1/s).
    //  round 2 (t = 720):  V100 A 540, B 540 of 1080: A 2 before B 1: A on a V100, B on the K80s.
    //                      A has 1440 + 360 = 1800 of its 2200 steps: it ends 100 s in, at 820.
    //  round 3 (t = 1080): A has left: the allocation is computed again (min_reset_interval 0): B
    //                      alone, max (6 x_B0 + 3 x_B1) with x_B0 + x_B1 <= 1: x_B = (1, 0). B has
    //                      1080 + 2160 + 1080 = 4320 of its 5520 steps: 1200 at 6/s, it ends at 1280.
    // Every change of type is a move (A: 2, B: 3), paying the restore time on the new GPUs: with
    // 30 s, A's rounds 1 and 2 make 330 and then 430 steps from 750, ending at 857.5; B makes 1980
    // and 990 in rounds 1 and 2 (4050 in all) and its last 1470 from 1110, ending at 1355.
    struct expect {
        double restore, end_a, end_b;
    };
    for (const auto& x : {expect{0, 820, 1280}, expect{30, 857.5, 1355}}) {
        CAPTURE(x.restore);
        auto s = gp::scenario_from_json(gavel_lp_case(2200, 5520, x.restore));
        gp::apply_queue(s, "max_min_fairness_perf");
        gp::round_env e(s);
        const auto policy = gp::round_policy("max_min_fairness_perf", s);
        auto allocate = policy.make(0);
        gp::pack_policy placer;
        e.reset(0);
        e.run(allocate, placer);
        REQUIRE(e.terminated());
        const auto recs = e.simulator().finished();
        REQUIRE(recs.size() == 2);
        const auto& a = recs[0].id == 0 ? recs[0] : recs[1];
        const auto& b = recs[0].id == 0 ? recs[1] : recs[0];
        CHECK(std::abs(a.end - x.end_a) <= 1e-9);
        CHECK(std::abs(b.end - x.end_b) <= 1e-9);
        CHECK(e.round_records()[0].moves == 2);
        CHECK(e.round_records()[1].moves == 3);
        CHECK(e.round_records()[0].restore_time == 2 * x.restore);
        CHECK(e.round_records()[1].restore_time == 3 * x.restore);
        // the restores' GPU time: A's on 1 GPU, B's on 2
        CHECK(std::abs(e.episode_metrics().lost_gpu_hours - (2 * x.restore + 3 * 2 * x.restore) / 3600) <= 1e-12);
        CHECK(std::abs(e.episode_return() + (x.end_a + x.end_b) / 3600) <= 1e-12);
    }
}

#endif  // GPUPLACE_WITH_LP
