// Tests of include/gpuplace/information.hpp and the preemptive disciplines (env/discipline.hpp):
// hand-computed schedules of LAS, 2D-LAS (demotion, starvation promotion), Gittins and SRTF with
// restart overhead and checkpoints; progress with a round shorter than the restart overhead; the Gittins table against its definition; random play with
// preemption (reward identity, every job run to its work once, attained service monotone,
// capacity, determinism); and, with hidden durations, observations that do not depend on a
// job's true duration before it ends.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/information.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using gp::test::json;

namespace {

/// `gpus` GPUs in one node, a model at 1 step/s on 1 or 2 GPUs (work = ideal seconds), the jobs
/// {submit, GPUs, work}, under `order` with preemption as given.
gp::scenario sched_scenario(std::size_t gpus, const std::vector<std::array<double, 3>>& jobs, gp::queue_order order,
                            double overhead = 0, double checkpoint = 0) {
    json list = json::array();
    for (const auto& j : jobs) list.push_back({{"submit_time", j[0]}, {"num_gpus", int(j[1])}, {"model", 0}, {"work", j[2]}});
    auto s = gp::scenario_from_json(json{
        {"topology", {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 1}, {"gpus_per_node", gpus}}},
        {"zoo", json::parse(R"({"models": [{"name": "m", "throughput": {"1": [1, 1], "2": [2, 2]}}]})")},
        {"workload", {{"kind", "jobs"}, {"jobs", list}}}});
    s.env.order = order;
    s.preemption.enabled = gp::is_preemptive(order);
    s.preemption.restart_overhead = overhead;
    s.preemption.checkpoint_interval = checkpoint;
    return s;
}

/// Runs first-fit to the end; the finished jobs' records by job id.
std::map<gp::job_id, gp::job_record> run(const gp::scenario& s) {
    gp::env e(s);
    gp::first_fit_policy ff;
    const auto r = gp::run_episode(e, ff, 1);
    REQUIRE(r.terminated);
    std::map<gp::job_id, gp::job_record> out;
    for (const auto& rec : e.finished()) out[rec.id] = rec;
    double jct = 0;
    for (const auto& [id, rec] : out) jct += rec.jct();
    CHECK(gp::test::close_rel(r.episode_return, -jct / 3600.0, 1e-12));
    return out;
}

}  // namespace

TEST_CASE("preemption: LAS preempts a job for a newcomer, which resumes with the work it had left") {
    // one GPU; A: 100 s from 0, B: 20 s from 10
    const auto fifo = run(sched_scenario(1, {{0, 1, 100}, {10, 1, 20}}, gp::queue_order::fifo));
    CHECK(fifo.at(0).end == 100);
    CHECK(fifo.at(1).end == 120);
    const auto las = run(sched_scenario(1, {{0, 1, 100}, {10, 1, 20}}, gp::queue_order::las));
    CHECK(las.at(1).start == 10);
    CHECK(las.at(1).end == 30);
    CHECK(las.at(0).end == 120);  // 10 s done, 90 left from 30
    CHECK(las.at(0).preemptions == 1);
    CHECK(las.at(0).run_time == 100);
    CHECK(las.at(0).queueing_delay() == 20);
    CHECK(las.at(0).lost_gpu_time == 0);
    // a 5 s restart overhead on resuming
    const auto over = run(sched_scenario(1, {{0, 1, 100}, {10, 1, 20}}, gp::queue_order::las, 5));
    CHECK(over.at(0).end == 125);
    CHECK(over.at(0).lost_gpu_time == 5);
    // checkpoints every 4 s of progress: 8 of the 10 s are kept, 2 lost
    const auto ckpt = run(sched_scenario(1, {{0, 1, 100}, {10, 1, 20}}, gp::queue_order::las, 0, 4));
    CHECK(ckpt.at(0).end == 122);
    CHECK(ckpt.at(0).lost_gpu_time == 2);
    // SRTF: B's 20 s beat A's 90 left
    const auto srtf = run(sched_scenario(1, {{0, 1, 100}, {10, 1, 20}}, gp::queue_order::srtf));
    CHECK(srtf.at(1).end == 30);
    CHECK(srtf.at(0).end == 120);
}

TEST_CASE("preemption: 2D-LAS demotes at the threshold, and starved jobs return to the first queue") {
    auto s = sched_scenario(1, {{0, 1, 100}, {10, 1, 20}}, gp::queue_order::two_d_las);
    s.preemption.thresholds = {50};
    // at 10 both are in the first queue and the running A goes on; at 50 A is demoted and B runs
    const auto r = run(s);
    CHECK(r.at(1).start == 50);
    CHECK(r.at(1).end == 70);
    CHECK(r.at(0).end == 120);
    CHECK(r.at(0).preemptions == 1);
    // GPU-service: a 2-GPU job reaches the threshold in half the time
    auto s2 = sched_scenario(2, {{0, 2, 100}, {10, 1, 20}}, gp::queue_order::two_d_las);
    s2.preemption.thresholds = {50};
    const auto r2 = run(s2);
    CHECK(r2.at(1).start == doctest::Approx(25).epsilon(1e-6));  // 2 GPUs x 25 s = 50 GPU-seconds
    // starvation: A is demoted at 50 for B; B is demoted at 100 for C (first queue); D arrives at
    // 120. Without promotion, D (first queue) runs after C, then A: A ends at 220. With
    // starvation 1, A (waiting since 50, 50 GPU-s served) returns to the first queue at 100, ahead
    // of D: it runs after C, 130 to 180.
    auto s3 = sched_scenario(1, {{0, 1, 100}, {50, 1, 60}, {60, 1, 30}, {120, 1, 40}}, gp::queue_order::two_d_las);
    s3.preemption.thresholds = {50};
    const auto plain = run(s3);
    CHECK(plain.at(2).start == 100);
    CHECK(plain.at(3).start == 130);
    CHECK(plain.at(0).end == 220);
    s3.preemption.starvation = 1;
    const auto starve = run(s3);
    CHECK(starve.at(0).end == 180);
    CHECK(starve.at(3).start == 180);
}

TEST_CASE("preemption: the Gittins index from the workload's sizes ranks a fresh job above one past a size") {
    // the sizes seen (32 episodes of this workload): 20 and 100 GPU-seconds; quantum 30. A fresh
    // job's index: P(S <= 30) / E[min(S, 30)] = 0.5 / 25; past 20 only the 100s remain, none of
    // which ends within 30 more: index 0
    auto s = sched_scenario(1, {{0, 1, 100}, {10, 1, 20}}, gp::queue_order::gittins);
    s.preemption.gittins_quantum = 30;
    const auto plain = run(s);
    CHECK(plain.at(1).start == 100);  // ties keep the earlier job; no decision point after 20
    s.preemption.round = 25;          // a decision at 25: A (25 attained) now ranks below B
    const auto rounds = run(s);
    CHECK(rounds.at(1).start == 25);
    CHECK(rounds.at(1).end == 45);
    CHECK(rounds.at(0).end == 120);
}

namespace {

/// Runs first-fit for at most `max_steps` steps; whether the episode ended.
bool ends_within(const gp::scenario& s, std::size_t max_steps, std::map<gp::job_id, gp::job_record>* out = nullptr) {
    gp::env e(s);
    gp::first_fit_policy ff;
    ff.reset(1);
    e.reset(1);
    for (std::size_t i = 0; i < max_steps && !e.done(); ++i) e.step(gp::act(e, ff));
    if (out)
        for (const auto& rec : e.finished()) (*out)[rec.id] = rec;
    return e.done();
}

}  // namespace

TEST_CASE("preemption: a round shorter than the restart overhead still ends, in every discipline") {
    // one GPU, two 100 s jobs, a decision every 10 s, 30 s to restart. A run that paid a restart
    // keeps its GPU at the clock's decisions until it has made 30 s of progress: A runs 0-10, B
    // 10-20 (first runs cost nothing), A resumes 20-80 (30 s restart, 30 s of work), B 80-140, A
    // 140-200, B 200-260, A 260-320 (its last 30 s: ends), B 320-380.
    auto s = sched_scenario(1, {{0, 1, 100}, {0, 1, 100}}, gp::queue_order::las, 30);
    s.preemption.round = 10;
    std::map<gp::job_id, gp::job_record> r;
    REQUIRE(ends_within(s, 1000, &r));
    CHECK(r.at(0).end == 320);
    CHECK(r.at(1).end == 380);
    CHECK(r.at(0).lost_gpu_time == 3 * 30);
    CHECK(r.at(1).lost_gpu_time == 3 * 30);
    // every discipline, a busier cluster, with and without checkpoints longer than the round
    for (auto order : {gp::queue_order::las, gp::queue_order::two_d_las, gp::queue_order::gittins, gp::queue_order::srtf})
        for (double checkpoint : {0.0, 25.0}) {
            INFO(std::string(gp::to_string(order)), " checkpoint ", checkpoint);
            auto b = sched_scenario(2, {{0, 1, 300}, {0, 2, 200}, {5, 1, 150}, {7, 1, 400}, {9, 2, 100}, {30, 1, 50}}, order, 30, checkpoint);
            b.preemption.round = 10;
            b.preemption.thresholds = {5, 15};
            b.preemption.starvation = 1;
            b.preemption.gittins_quantum = 20;
            std::map<gp::job_id, gp::job_record> done;
            REQUIRE(ends_within(b, 20000, &done));
            CHECK(done.size() == 6);
            for (const auto& [id, rec] : done) CHECK(rec.run_time >= rec.ideal_duration);
        }
    // 2D-LAS without rounds: thresholds and starvation below the restart overhead
    auto t = sched_scenario(1, {{0, 1, 100}, {0, 1, 100}, {0, 1, 100}}, gp::queue_order::two_d_las, 30);
    t.preemption.thresholds = {10};
    t.preemption.starvation = 1;
    CHECK(ends_within(t, 20000));
    // with nothing to pay for a restart, the clock preempts as before: A 0-10, B 10-20, A 20-30, ...
    auto free = sched_scenario(1, {{0, 1, 100}, {0, 1, 100}}, gp::queue_order::las, 0);
    free.preemption.round = 10;
    std::map<gp::job_id, gp::job_record> f;
    REQUIRE(ends_within(free, 1000, &f));
    CHECK(f.at(0).end == 190);
    CHECK(f.at(1).end == 200);
}

TEST_CASE("information: the Gittins table equals its definition at every anchor") {
    gp::detail::rng r(5);
    std::vector<double> sizes;
    for (int i = 0; i < 300; ++i) sizes.push_back(std::floor(std::exp(r.uniform(2.0, 9.0))));
    const gp::gittins_table t(sizes, 500);
    std::vector<double> sorted = sizes;
    std::sort(sorted.begin(), sorted.end());
    for (double a : {0.0, 3.0, 100.0, 777.0, 2000.0, 7000.0, 1e9}) {
        // the anchor: the largest sample point at or below a (0 below them all)
        double anchor = 0;
        for (double v : sorted)
            if (v <= a) anchor = v;
        CHECK(t.index(a) == doctest::Approx(t.index_at(anchor)).epsilon(1e-12));
    }
    CHECK(t.index(1e9) == 0.0);
    // by hand: sizes {20, 100}, quantum 30, at 0: P = 1/2, E = (20 + 30) / 2
    const gp::gittins_table h({20, 100}, 30);
    CHECK(h.index(0) == doctest::Approx(0.5 / 25.0));
    CHECK(h.index(25) == 0.0);  // only 100 is above 20, and it does not end within 30 more
}

TEST_CASE("information: configuration errors name the option") {
    auto s = gp::default_scenario();
    s.env.order = gp::queue_order::las;
    CHECK_THROWS_WITH_AS(gp::env{s}, "config /env/queue_policy: \"las\" is a preemptive discipline: it needs /preemption/enabled",
                         gp::ConfigError);
    s.env.order = gp::queue_order::fifo;
    s.preemption.enabled = true;
    CHECK_THROWS_WITH_AS(gp::env{s}, "config /preemption/enabled: needs a preemptive /env/queue_policy (las, 2d_las, gittins, srtf, capacity, drf, themis, edf, edf_ac or a registered discipline), got \"fifo\"",
                         gp::ConfigError);
    s = gp::default_scenario();
    s.durations.mode = gp::duration_info::hidden;
    s.env.order = gp::queue_order::sjf;
    CHECK_THROWS_WITH_AS(gp::env{s}, "config /env/queue_policy: \"sjf\" orders jobs by their duration, which durations \"hidden\" does not show",
                         gp::ConfigError);
    // NaN, infinite and negative costs, and 2D-LAS without a threshold, name the key and the value
    const auto preempting = [](gp::queue_order o) {
        auto p = gp::default_scenario();
        p.env.order = o;
        p.preemption.enabled = true;
        return p;
    };
    using pc = gp::preemption_config;
    for (const auto& [key, field, v, shown] : {std::tuple{"restart_overhead", &pc::restart_overhead, double(NAN), "nan"},
                                               {"round", &pc::round, INFINITY, "inf"},
                                               {"checkpoint_interval", &pc::checkpoint_interval, -1.0, "-1"},
                                               {"starvation", &pc::starvation, -INFINITY, "-inf"}}) {
        auto p = preempting(gp::queue_order::las);
        p.preemption.*field = v;
        CHECK_THROWS_WITH_AS(gp::env{p}, ("config /preemption/" + std::string(key) + ": must be a finite number >= 0 (got " + shown + ")").c_str(),
                             gp::ConfigError);
    }
    auto q = preempting(gp::queue_order::gittins);
    q.preemption.gittins_quantum = 0;
    CHECK_THROWS_WITH_AS(gp::env{q}, "config /preemption/gittins_quantum: must be a finite number > 0 (got 0)", gp::ConfigError);
    auto t = preempting(gp::queue_order::two_d_las);
    t.preemption.thresholds.clear();
    CHECK_THROWS_WITH_AS(gp::env{t}, "config /preemption/thresholds: 2d_las needs at least one queue threshold (GPU-seconds; e.g. [3250, 7200]), got none",
                         gp::ConfigError);
    t.env.order = gp::queue_order::las;  // las reads no thresholds
    CHECK_NOTHROW(gp::env{t});
    CHECK_THROWS_WITH_AS((void)gp::preemption_from_json(json{{"thresholds", json::array()}}),
                         "config /preemption/thresholds: expected a list of one or more GPU-seconds (e.g. [3250, 7200]), got []", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::preemption_from_json(json{{"round", -5}}), "config /preemption/round: value -5 out of range [0.0, 1000000000.0]",
                         gp::ConfigError);
}

TEST_CASE("preemption: random play keeps every invariant, in every discipline and mode") {
    for (auto order : {gp::queue_order::las, gp::queue_order::two_d_las, gp::queue_order::gittins, gp::queue_order::srtf})
        for (const char* mode : {"gpu", "placement", "job"}) {
            INFO(std::string(gp::to_string(order)), " ", std::string(mode));
            auto s = gp::test::small_scenario(gp::test::odd_topo::config(), {{"1", 0.4}, {"2", 0.3}, {"4", 0.2}, {"6", 0.1}}, 30, 2.0);
            s.env.order = order;
            s.env.allow_defer = true;
            s.env.mode = gp::parse_action_mode(mode);
            s.preemption.enabled = true;
            s.preemption.restart_overhead = 20;
            s.preemption.checkpoint_interval = order == gp::queue_order::las ? 60 : 0;
            s.preemption.round = 300;
            s.preemption.thresholds = {400, 1500};
            s.preemption.starvation = 2;
            gp::env e(s);
            double sums[2] = {0, 0};
            for (int rep = 0; rep < 2; ++rep) {
                e.reset(7);
                gp::detail::rng r(3);
                std::vector<double> attained(e.simulator().jobs().size(), 0.0);
                while (!e.done()) {
                    sums[rep] += e.step(gp::test::random_action(e, r, 0.1)).reward;
                    const auto& sim = e.simulator();
                    std::size_t busy = 0;
                    for (std::uint32_t j = 0; j < sim.jobs().size(); ++j) {
                        REQUIRE(sim.attained(j) >= attained[j] - 1e-9);  // monotone
                        attained[j] = sim.attained(j);
                        if (sim.is_running(j)) busy += sim.job(j).num_gpus;
                    }
                    REQUIRE(busy == e.cluster().busy_gpus());  // capacity: what runs holds exactly the busy GPUs
                    REQUIRE(busy <= e.num_gpus());
                }
                REQUIRE(e.terminated());
                std::vector<int> seen(e.simulator().jobs().size(), 0);
                double jct = 0;
                for (const auto& rec : e.finished()) {
                    ++seen[rec.id];
                    jct += rec.jct();
                    // its work ran once: run time = ideal x slowdown (the last placement's, when never
                    // preempted) plus overheads and lost progress
                    CHECK(rec.run_time >= rec.ideal_duration * 0.999);
                }
                for (int n : seen) CHECK(n == 1);
                CHECK(gp::test::close_rel(sums[rep], -jct / 3600.0, 1e-9));
            }
            CHECK(sums[0] == sums[1]);  // determinism by seed
        }
}

TEST_CASE("information: with durations hidden, nothing observable depends on a job's true duration before it ends") {
    // two workloads that differ only in the duration of job 1 (100 s or 5000 s): identical
    // observations and masks until job 1 ends in the shorter one
    for (auto order : {gp::queue_order::fifo, gp::queue_order::las, gp::queue_order::two_d_las}) {
        INFO(std::string(gp::to_string(order)));
        auto a = sched_scenario(4, {{0, 2, 300}, {0, 1, 100}, {5, 2, 200}, {8, 1, 50}, {20, 2, 400}}, order);
        auto b = sched_scenario(4, {{0, 2, 300}, {0, 1, 5000}, {5, 2, 200}, {8, 1, 50}, {20, 2, 400}}, order);
        for (auto* s : {&a, &b}) {
            s->durations.mode = gp::duration_info::hidden;
            s->env.allow_defer = true;
        }
        gp::env ea(a), eb(b);
        ea.reset(1);
        eb.reset(1);
        gp::detail::rng r(11);
        std::size_t steps = 0;
        while (!ea.done() && !eb.done()) {
            const bool one_done = std::any_of(ea.finished().begin(), ea.finished().end(), [](const auto& rec) { return rec.id == 1; });
            if (one_done) break;
            REQUIRE(gp::test::same_bytes(ea.observation(), eb.observation()));
            REQUIRE(gp::test::same_bytes(ea.action_mask(), eb.action_mask()));
            const auto act = gp::test::random_action(ea, r, 0.2);
            (void)ea.step(act);
            (void)eb.step(act);
            ++steps;
        }
        CHECK(steps > 3);
        // under oracle the same pair differs at once (the duration is a feature)
        a.durations.mode = b.durations.mode = gp::duration_info::oracle;
        gp::env oa(a), ob(b);
        oa.reset(1);
        ob.reset(1);
        CHECK_FALSE(gp::test::same_bytes(oa.observation(), ob.observation()));
    }
}
