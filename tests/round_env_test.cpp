// Tests of include/gpuplace/round_env.hpp and env/round_front.hpp (rounds): the cost accounting of
// a move, a suspension and a resume (exact restore times, in the job's round record and metrics),
// the progress rule under adversarial allocations whatever the ratio of restore time to round
// length, the reward identity, determinism by seed, the errors naming bad allocations and
// settings, and the calibration identity (on its measurement hardware a job runs at its measured
// rate).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gpuplace/json.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/round_env.hpp>
#include <gpuplace/round_policy_registry.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

/// Two 1-GPU servers, a V100 and a K80, and a zoo of two 1-GPU models: A runs 4 steps/s on the
/// V100 and 1 on the K80, B 4 and 2. Jobs: {submit, model, steps}.
json rounds_two_types(const std::vector<std::array<double, 3>>& jobs, const json& rounds) {
    auto model = [](const char* name, double tput) { return json{{"name", name}, {"throughput", {{"1", {tput, tput}}}}}; };
    auto ref_model = [&](const char* name, double tput) {
        auto m = model(name, tput);
        m["memory_gb"] = 4;
        return m;
    };
    json js = json::array();
    for (const auto& j : jobs) js.push_back({{"submit_time", j[0]}, {"num_gpus", 1}, {"model", int(j[1])}, {"work", j[2]}});
    return {{"topology", {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 2}, {"gpus_per_node", 1}, {"gpu_types", {"v100", "k80"}}}},
            {"zoo",
             {{"gpu_type", "v100"},
              {"models", {ref_model("A", 4), ref_model("B", 4)}},
              {"types", {{{"gpu_type", "k80"}, {"models", {model("A", 1), model("B", 2)}}}}}}},
            {"workload", {{"kind", "jobs"}, {"jobs", js}}},
            {"rounds", rounds}};
}

/// A round policy scripted by time: at the boundary at time t, grants[t / 360] (job, type) pairs.
struct scripted_rounds {
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> grants;
    void reset(std::uint64_t) {}
    void allocate(const gp::round_view& v, gp::round_allocation& out) {
        const auto r = std::size_t(std::llround(v.now() / v.round_length()));
        const auto& g = r < grants.size() ? grants[r] : grants.back();
        for (const auto& [job, type] : g)
            for (const auto& a : v.jobs())
                if (a.job == job) out.grant(job, type, a.gpus);
    }
};
static_assert(gp::RoundPolicy<scripted_rounds>);

/// An adversary: every round it grants the jobs that do not run now, and none of those that do.
struct swap_everything {
    void reset(std::uint64_t) {}
    void allocate(const gp::round_view& v, gp::round_allocation& out) {
        std::vector<std::uint32_t> left(v.num_types());
        for (std::size_t t = 0; t < v.num_types(); ++t) left[t] = v.type_gpus(t);
        for (const auto& a : v.jobs())
            if (a.type == gp::round_job::none)
                for (std::uint32_t t = 0; t < v.num_types(); ++t)
                    if (left[t] >= a.gpus) {
                        out.grant(a.job, t, a.gpus);
                        left[t] -= a.gpus;
                        break;
                    }
    }
};

}  // namespace

TEST_CASE("round_env: a move charges exactly the restore time, and shows in the job's record and metrics") {
    // job 0 (A, 2440 steps): round 0 on the V100 (1440 steps), then moved to the K80 (1 step/s)
    // for the 1000 steps left, after a 60 s restore: it ends at 360 + 60 + 1000
    const auto s = gp::scenario_from_json(rounds_two_types({{0, 0, 2440}}, {{"restore", {{"seconds", 60}}}}));
    gp::round_env e(s);
    scripted_rounds p{{{{0, 0}}, {{0, 1}}}};
    gp::pack_policy placer;
    e.reset(0);
    e.run([&](const gp::round_view& v, gp::round_allocation& a) { p.allocate(v, a); }, placer);
    REQUIRE(e.terminated());
    const auto& r = e.simulator().finished().front();
    CHECK(r.end == 1420.0);
    CHECK(r.lost_gpu_time == 60.0);
    CHECK(r.run_time == 1420.0);
    CHECK(r.preemptions == 0);
    const auto& rr = e.round_records()[0];
    CHECK(rr.moves == 1);
    CHECK(rr.restores == 1);
    CHECK(rr.restore_time == 60.0);
    CHECK(rr.suspensions == 0);
    const auto m = e.episode_metrics();
    CHECK(m.rounds);
    CHECK(m.avg_moves == 1.0);
    CHECK(m.lost_gpu_hours == doctest::Approx(60.0 / 3600));
    CHECK(e.episode_return() == doctest::Approx(-1420.0 / 3600).epsilon(1e-12));
}

TEST_CASE("round_env: a suspension and a resume: the suspended time and the restore") {
    // job 0 (A, 2880 steps): round 0 on the V100, suspended in round 1, resumed on the V100 in
    // round 2 after a 60 s restore: 1440 steps left at 4/s, from 780: it ends at 1140
    const auto s = gp::scenario_from_json(rounds_two_types({{0, 0, 2880}}, {{"restore", {{"seconds", 60}}}}));
    gp::round_env e(s);
    scripted_rounds p{{{{0, 0}}, {}, {{0, 0}}}};
    gp::pack_policy placer;
    e.reset(0);
    e.run([&](const gp::round_view& v, gp::round_allocation& a) { p.allocate(v, a); }, placer);
    const auto& r = e.simulator().finished().front();
    CHECK(r.end == 1140.0);
    CHECK(r.preemptions == 1);
    CHECK(r.run_time == 360.0 + 420.0);
    const auto& rr = e.round_records()[0];
    CHECK(rr.suspensions == 1);
    CHECK(rr.suspended_time == 360.0);
    CHECK(rr.moves == 0);
    CHECK(rr.restore_time == 60.0);
    CHECK(e.episode_metrics().avg_suspended_time == 360.0);
    CHECK(e.rounds() == 4);  // 0, 1 (idle), 2 and 3, in which it ends
}

TEST_CASE("round_env: the progress rule: every job finishes whatever the restore time, under an adversary") {
    // three 1-GPU jobs on two GPUs; the adversary swaps every running job out at every boundary
    // (with 360 s rounds, and with 10 s rounds: a restore up to 500 rounds long)
    for (double length : {360.0, 10.0})
    for (double restore : {0.0, 100.0, 180.0, 359.0, 360.0, 361.0, 1000.0, 5000.0}) {
        CAPTURE(length);
        CAPTURE(restore);
        const auto s = gp::scenario_from_json(
            rounds_two_types({{0, 0, 20000}, {0, 1, 30000}, {100, 0, 5000}}, {{"length", length}, {"restore", {{"seconds", restore}}}}));
        gp::round_env e(s);
        swap_everything adversary;
        gp::pack_policy placer;
        e.reset(1);
        std::size_t rounds = 0;
        gp::round_allocation a;
        while (!e.done() && rounds < 100000) {
            a.clear();
            const auto v = e.view();
            for (const auto& j : v.jobs())  // a locked job is still running after its restart
                if (j.locked) CHECK(j.type != gp::round_job::none);
            adversary.allocate(v, a);
            e.step(a, placer);
            ++rounds;
        }
        REQUIRE(e.terminated());
        CHECK(e.simulator().finished().size() == 3);
        for (const auto& r : e.simulator().finished()) {
            const auto& rr = e.round_records()[r.id];
            // each restart but the last (which may end with the job) bought at least as much
            // progress as its restore cost
            const double useful = r.run_time - rr.restore_time;
            CHECK(useful >= (rr.restores > 0 ? rr.restores - 1 : 0) * restore - 1e-6);
            CHECK(rr.restore_time == rr.restores * restore);
            CHECK(r.lost_gpu_time == doctest::Approx(rr.restore_time));
        }
        // and the rewards sum to minus the sum of JCTs over time_scale
        CHECK(e.episode_return() == doctest::Approx(-sum_jct(e.simulator().finished()) / 3600).epsilon(1e-9));
    }
}

TEST_CASE("round_env: the same seed gives the same episode") {
    auto s = gp::preset_scenario("heterogeneous");
    for (const std::string q : {"fifo_perf", "max_min_fairness", "max_min_fairness_perf"}) {
        CAPTURE(q);
        gp::apply_queue(s, q);
        auto run = [&](std::uint64_t seed) {
            return gp::round_runner<gp::env>(s, "pack")(seed);
        };
        const auto a = run(1000000), b = run(1000000), c = run(1000001);
        CHECK(a.m.avg_jct == b.m.avg_jct);
        CHECK(a.episode_return == b.episode_return);
        CHECK(a.m.avg_moves == b.m.avg_moves);
        CHECK(a.m.avg_jct != c.m.avg_jct);
        CHECK(a.m.jobs_done == a.m.jobs_total);
        CHECK(a.m.rounds);
    }
}

TEST_CASE("round_env: bad allocations are InvalidAction naming the grant, and change nothing") {
    const auto s = gp::scenario_from_json(rounds_two_types({{0, 0, 2440}, {0, 1, 2440}, {5000, 0, 100}}, json::object()));
    gp::round_env e(s);
    gp::round_allocation a;
    CHECK_THROWS_WITH_AS(e.step(a), "round_env::step() called before reset()", gp::StateError);
    e.reset(0);
    auto refused = [&](std::initializer_list<gp::round_grant> grants, const std::string& why) {
        a.clear();
        for (const auto& g : grants) a.grant(g.job, g.type, g.gpus);
        CHECK(e.why_invalid(a) == why);
        CHECK_THROWS_WITH_AS(e.step(a), why.c_str(), gp::InvalidAction);
        CHECK(e.now() == 0.0);
        CHECK(e.cluster().free_gpus() == 2);
    };
    refused({{0, 0, 1}, {0, 1, 1}}, "round allocation grant 1 (job 0): it is granted twice");
    refused({{2, 0, 1}}, "round allocation grant 0 (job 2): it has not arrived yet");
    refused({{7, 0, 1}}, "round allocation grant 0 (job 7): no such job (the episode has 3)");
    refused({{1, 0, 2}}, "round allocation grant 0 (job 1): 2 GPUs, but the job requests 1 (it is not elastic)");
    refused({{1, 2, 1}}, "round allocation grant 0 (job 1): GPU type 2, but the cluster has 2 type(s)");
    a.clear();
    a.grant(0, gp::round_grant::any_type, 1);
    a.grant(1, 1, 1);
    CHECK(e.why_invalid(a).empty());
    e.step(a);
    CHECK(e.now() == 360.0);
    CHECK(e.run_type(0) == 0);  // any type: the placer took the free V100
    CHECK(e.run_type(1) == 1);
}

TEST_CASE("round_env: settings rounds cannot run are ConfigErrors naming the key") {
    auto s = gp::scenario_from_json(rounds_two_types({{0, 0, 100}}, {{"restore", {{"models", {{"C", 10}}}}}}));
    CHECK_THROWS_WITH_AS(gp::round_env{s}, "config /rounds/restore/models/C: no model of that name in the zoo (its models: A, B)",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::scenario_from_json(rounds_two_types({{0, 0, 100}}, {{"length", 0}})),
                         doctest::Contains("config /rounds/length"), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::scenario_from_json(rounds_two_types({{0, 0, 100}}, {{"restore", {{"seconds", -1}}}})),
                         doctest::Contains("config /rounds/restore/seconds"), gp::ConfigError);
    auto p = gp::preset_scenario("colocation");
    CHECK_THROWS_WITH_AS(gp::round_env{p}, "config /colocation/enabled: rounds run on exclusive GPUs (no co-location)", gp::ConfigError);
    auto q = gp::preset_scenario("default");
    gp::apply_queue(q, "max_min_fairness_perf");
    CHECK_THROWS_WITH_AS(gp::env{q}, doctest::Contains("config /rounds/enabled: the round policies (\"max_min_fairness_perf\") run in "
                                                       "gpuplace::round_env"),
                         gp::ConfigError);
    // the per-model and per-GB restore times
    auto r = gp::scenario_from_json(rounds_two_types({{0, 0, 100}, {0, 1, 100}},
                                                     {{"restore", {{"seconds", 10}, {"per_gb", 2.5}, {"models", {{"B", 7}}}}}}));
    gp::round_env e(r);
    e.reset(0);
    CHECK(e.restore_time(0) == 20.0);  // 10 + 2.5 x 4 GB
    CHECK(e.restore_time(1) == 7.0);
    // the JSON form reads back to itself
    CHECK(gp::rounds_from_json(gp::to_json(r.rounds)) == r.rounds);
}

TEST_CASE("round_env: the calibration identity: on its measurement hardware a job runs at exactly the measured rate") {
    // heterogeneous_gavel is the zoo's measurement hardware (8-GPU servers, NVLink 100 GB/s inside,
    // 25 Gb/s Ethernet between, the zoo's latencies): one job at a time, granted a type, placed
    // consolidated (in one server) by pack, ends after exactly its steps over that type's measured
    // consolidated throughput at its GPU count, for every model, measured count and type.
    const auto base = gp::preset_scenario("heterogeneous_gavel");
    const auto zoo = base.zoo.make();
    std::size_t checked = 0;
    for (std::size_t m = 0; m < zoo.size(); ++m)
        for (const auto& pt : zoo[gp::model_id(m)].points) {
            if (pt.gpus > 8) continue;
            json jobs = json::array();
            jobs.push_back({{"submit_time", 0}, {"num_gpus", pt.gpus}, {"model", int(m)}, {"work", 1e4}});
            auto s = base;
            s.workload = gp::workload_from_json({{"kind", "jobs"}, {"jobs", jobs}}, "/workload");
            s.rounds.enabled = true;
            gp::round_env e(s);
            for (std::uint32_t t = 0; t < e.gpu_types().num_types(); ++t) {
                CAPTURE(zoo[gp::model_id(m)].name);
                CAPTURE(pt.gpus);
                CAPTURE(t);
                const auto& tz = e.gpu_types().zoo_of(t);
                const auto& prof = tz[gp::model_id(m)];
                const bool measured = std::any_of(prof.points.begin(), prof.points.end(), [&](const auto& p) { return p.gpus == pt.gpus; });
                if (!measured) continue;
                gp::pack_policy placer;
                e.reset(0);
                e.run([t](const gp::round_view& v, gp::round_allocation& a) { a.grant(v.jobs()[0].job, t, v.jobs()[0].gpus); }, placer);
                REQUIRE(e.terminated());
                const double expected = 1e4 / prof.at(pt.gpus).consolidated;
                CHECK(std::abs(e.simulator().finished().front().end - expected) <= 1e-9 * expected);
                ++checked;
            }
        }
    CHECK(checked > 100);
}

TEST_CASE("round_env: a round policy runs on a preset whose queue is a preemptive discipline (philly_hidden's las)") {
    auto s = gp::preset_scenario("philly_hidden");
    REQUIRE(gp::is_preemptive(s.env.order));
    gp::apply_queue(s, "max_min_fairness");
    CHECK(s.env.order == gp::queue_order::fifo);
    CHECK_FALSE(s.preemption.enabled);
    CHECK(s.rounds.enabled);
    gp::round_env e(s);  // was: ConfigError "las" is a preemptive discipline: it needs /preemption/enabled
    e.reset(1000000);
    CHECK_FALSE(e.done());
}

namespace {
/// Plays round env `e` with `policy` for `rounds` rounds or to its end, placing with pack.
double play_rounds(gp::round_env& e, gp::gittins_round_policy& policy, int rounds = std::numeric_limits<int>::max()) {
    gp::pack_policy placer;
    placer.reset(0);
    placer.reserve(e.hierarchy());
    gp::round_allocation a;
    for (int r = 0; r < rounds && !e.done(); ++r) {
        a.clear();
        policy.allocate(e.view(), a);
        e.step(a, placer);
    }
    return e.episode_return();
}
/// Plays round env `e` to its end with `policy` (a copy: its episode state), placing with pack.
double finish_rounds(gp::round_env& e, gp::gittins_round_policy policy) { return play_rounds(e, policy); }

/// An episode of `preset` (seed 1,000,000) under class_gittins after 300 rounds, not done.
struct played {
    gp::scenario s;
    gp::gittins_round_policy policy;
    gp::round_env e;
};
played after_300_rounds(const char* preset) {
    auto s = gp::preset_scenario(preset);
    gp::apply_queue(s, "class_gittins");
    played p{s, gp::gittins_round_policy(gp::gittins_prior_of(s), s.rounds.restore.seconds), gp::round_env(s)};
    p.policy.reset(1000000);
    p.e.reset(1000000);
    play_rounds(p.e, p.policy, 300);
    REQUIRE(!p.e.done());
    return p;
}
}  // namespace

TEST_CASE("round_env: fork keeps the present bit for bit and redraws what the scheduler cannot know, by seed") {
    for (const char* preset : {"philly_hidden:e13805", "philly:e13805"}) {
        INFO(preset);
        auto [s, policy, e] = after_300_rounds(preset);
        const bool hidden = s.durations.mode == gp::duration_info::hidden;
        CHECK_THROWS_WITH_AS((void)gp::round_env(s).fork(1), "round_env::fork() called before reset()", gp::StateError);
        const auto arrived = e.simulator().arrived();
        REQUIRE(arrived < e.simulator().jobs().size());
        const auto f = e.fork(7);
        // the present: time, rounds, the arrived jobs, what each holds, has done and went through
        CHECK(f.now() == e.now());
        CHECK(f.rounds() == e.rounds());
        CHECK(f.episode_return() == e.episode_return());
        CHECK(f.simulator().arrived() == arrived);
        CHECK(std::vector<std::uint32_t>(f.active().begin(), f.active().end()) == std::vector<std::uint32_t>(e.active().begin(), e.active().end()));
        for (std::size_t g = 0; g < e.num_gpus(); ++g) CHECK(f.cluster().holder(gp::gpu_id(g)) == e.cluster().holder(gp::gpu_id(g)));
        bool redrawn = false;
        for (std::uint32_t j = 0; j < arrived; ++j) {
            CHECK(f.simulator().job(j) == e.simulator().job(j));
            CHECK(f.simulator().attained(j) == e.simulator().attained(j));
            CHECK(f.held_gpus(j) == e.held_gpus(j));
            CHECK(f.run_type(j) == e.run_type(j));
            CHECK(f.round_records()[j].restores == e.round_records()[j].restores);
            CHECK(f.round_records()[j].suspended_time == e.round_records()[j].suspended_time);
            if (!hidden) CHECK(f.simulator().ideal_duration(j) == e.simulator().ideal_duration(j));
            redrawn = redrawn || f.simulator().ideal_duration(j) != e.simulator().ideal_duration(j);
        }
        CHECK(redrawn == hidden);  // with durations hidden the active jobs' durations are redrawn
        for (auto j = std::uint32_t(arrived); j < f.simulator().jobs().size(); ++j) CHECK(f.simulator().job(j).submit_time > e.now());
        for (auto j = std::uint32_t(arrived); j < f.round_records().size(); ++j) CHECK(f.round_records()[j].restores == 0);
        // a copy replays the true future; a fork is a function of its seed
        gp::round_env c1 = e, c2 = e, f1 = e.fork(7), f2 = e.fork(7), f3 = e.fork(8);
        CHECK(finish_rounds(c1, policy) == finish_rounds(c2, policy));
        const double r1 = finish_rounds(f1, policy), r2 = finish_rounds(f2, policy), r3 = finish_rounds(f3, policy);
        CHECK(r1 == r2);
        CHECK(r1 != r3);
        CHECK(r1 != c1.episode_return());
        // a forked episode runs every job to its end, and its rewards sum to -(sum of JCTs) / time_scale
        CHECK(f1.terminated());
        CHECK(f1.simulator().finished().size() == f1.simulator().jobs().size());
        double jct = 0;
        for (const auto& rec : f1.simulator().finished()) jct += rec.jct();
        CHECK(close_rel(f1.episode_return(), -jct / 3600.0, 1e-9));
        // a fork of a fork with the same seed is that fork: only what the scheduler cannot know differs between them
        gp::round_env ff = e.fork(99).fork(7);
        CHECK(finish_rounds(ff, policy) == r1);
    }
    auto el = gp::preset_scenario("elastic");
    gp::round_env e(el);
    e.reset(1);
    CHECK_THROWS_WITH_AS((void)e.fork(1), doctest::Contains("a scenario with elastic jobs"), gp::StateError);
}

TEST_CASE("round_env: fork(seed, draw) gives the active jobs the durations draw returns, where durations are hidden") {
    for (const char* preset : {"philly_hidden:e13805", "philly:e13805"}) {
        INFO(preset);
        auto [s, policy, e] = after_300_rounds(preset);
        const bool hidden = s.durations.mode == gp::duration_info::hidden;
        const auto v = e.view();
        const auto jobs = v.jobs();
        REQUIRE(jobs.size() > 1);
        // draw sees each active job as the view shows it, in the view's order, with its step time
        std::vector<std::uint32_t> asked;
        std::vector<double> us;
        const auto f = e.fork(7, [&](const gp::round_job& r, double step, double u) {
            const auto i = asked.size();
            CHECK(r.job == jobs[i].job);
            CHECK(r.done == jobs[i].done);
            CHECK(step == 1.0 / v.reference_throughput(i));
            asked.push_back(r.job);
            us.push_back(u);
            return 1e6 + double(r.job);
        });
        const auto plain = e.fork(7);
        if (!hidden) {  // durations known: the fork keeps them, draw is not asked
            CHECK(asked.empty());
            for (std::uint32_t j = 0; j < e.simulator().jobs().size(); ++j) CHECK(f.simulator().ideal_duration(j) == plain.simulator().ideal_duration(j));
            continue;
        }
        CHECK(asked.size() == jobs.size());
        for (double u : us) CHECK((u >= 0 && u < 1));
        for (auto j : asked) CHECK(f.simulator().ideal_duration(j) == 1e6 + double(j));
        // everything else is fork(seed)'s: the present, the jobs to come and their durations
        CHECK(f.now() == plain.now());
        CHECK(f.simulator().jobs().size() == plain.simulator().jobs().size());
        for (std::uint32_t j = 0; j < f.simulator().jobs().size(); ++j) {
            CHECK(f.simulator().job(j) == plain.simulator().job(j));
            CHECK(f.simulator().attained(j) == plain.simulator().attained(j));
            if (std::find(asked.begin(), asked.end(), j) == asked.end()) CHECK(f.simulator().ideal_duration(j) == plain.simulator().ideal_duration(j));
        }
        // NaN keeps the fork's draw: the same episode as fork(seed)
        gp::round_env keep = e.fork(7, [](const gp::round_job&, double, double) { return std::numeric_limits<double>::quiet_NaN(); });
        gp::round_env p1 = e.fork(7);
        CHECK(finish_rounds(keep, policy) == finish_rounds(p1, policy));
        // the uniforms are a function of the seed; the drawn episode finishes every job
        std::vector<double> us2;
        gp::round_env g = e.fork(7, [&](const gp::round_job& r, double step, double u) {
            us2.push_back(u);
            return policy.draw_duration(r, step, u);
        });
        CHECK(us2 == us);
        finish_rounds(g, policy);
        CHECK(g.simulator().finished().size() == g.simulator().jobs().size());
    }
}
