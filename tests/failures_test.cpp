// Tests of include/gpuplace/failures.hpp and the failures of the scheduling core
// (env/core_failures_inl.hpp): a failure at a known time loses exactly the work since the last
// checkpoint (hand-computed); checkpoint writes; Young/Daly's interval; failed GPUs masked until
// their repair; determinism by seed; failures off change nothing; random play with failures on in
// every action mode and queue discipline keeps the reward identity and finishes every job; forks
// redraw the failures to come; the scenario JSON's errors.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/failures.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy.hpp>
#include <gpuplace/simulator.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

gp::TrainingJob one_job(std::uint32_t gpus) {
    gp::TrainingJob j;
    j.num_gpus = gpus;
    j.work = 1;
    return j;
}

/// The default scenario with failures on: nodes failing every `mtbf_hours` on average.
gp::scenario failing(double mtbf_hours, std::size_t jobs = 60) {
    auto s = with(gp::default_scenario(), {{"workload", {{"num_jobs", jobs}}}});
    s.failures.enabled = true;
    s.failures.mtbf_hours = mtbf_hours;
    s.failures.repair_hours = 1.0;
    s.failures.checkpoint_interval = 600;
    return s;
}

/// Plays `e` to the end with `act`, checking at every step that exactly the GPUs of the units that
/// are down are out of service, and masked (GPU mode). Returns the episode's return.
template <class E, class Act>
double play_checked(E& e, std::uint64_t seed, Act&& act) {
    e.reset(seed);
    const auto& f = e.failure_state();
    std::size_t down_seen = 0;
    while (!e.done()) {
        const auto& cl = e.cluster();
        for (std::uint32_t u = 0; u < f.units(); ++u)
            for (const auto g : f.gpus(u)) {
                REQUIRE((cl.holder(g) == gp::cluster_state::failed) == f.is_down(u));
                if (f.is_down(u)) {
                    ++down_seen;
                    REQUIRE(cl.end_time(g) == f.next_of(u));  // out of service until its repair
                    REQUIRE(f.next_of(u) >= e.now());
                    if (e.mode() == gp::action_mode::gpu) REQUIRE(e.action_mask()[g] == 0);
                }
            }
        {  // what step() rewrote incrementally (the GPUs of the failures and repairs) equals a full rewrite
            const std::vector<float> inc(e.observation().begin(), e.observation().end());
            const std::vector<std::uint8_t> inc_mask(e.action_mask().begin(), e.action_mask().end());
            e.refresh_observation();
            REQUIRE(std::equal(inc.begin(), inc.end(), e.observation().begin(), e.observation().end()));
            REQUIRE(std::equal(inc_mask.begin(), inc_mask.end(), e.action_mask().begin(), e.action_mask().end()));
        }
        (void)e.step(act(e));
    }
    CHECK(down_seen > 0);
    return e.episode_return();
}

}  // namespace

TEST_CASE("failures: a failure at a known time loses exactly the work since the last checkpoint") {
    const auto t = tiny_topo::make();  // 4 GPUs
    gp::simulator sim;
    sim.resize(t);
    sim.enable_failures(30);  // 30 s to restart after a failure
    const std::vector<gp::TrainingJob> jobs = {one_job(2)};
    const std::vector<double> ideal = {1000};
    sim.reset(jobs, ideal);
    (void)sim.advance();  // the arrival, at 0
    const std::vector<gp::gpu_id> a = {0, 1}, b = {2, 3};
    sim.set_checkpointing(0, 100, 0);  // a checkpoint every 100 s, free
    sim.start(0, a, 1.0, 0.0);
    (void)sim.advance(250);  // the failure at 250: checkpoints at 100 and 200 kept
    sim.fail(0);
    CHECK(sim.work_left(0) == 800.0);
    CHECK(sim.record(0).lost_gpu_time == 2 * 50.0);
    CHECK(sim.record(0).interruptions == 1);
    CHECK(!sim.is_running(0));
    sim.take_down(a, 500);
    CHECK(sim.cluster().free_gpus() == 2);
    CHECK(sim.cluster().holder(0) == gp::cluster_state::failed);
    CHECK(sim.cluster().end_time(1) == 500.0);
    sim.set_checkpointing(0, 100, 0);
    sim.start(0, b, 1.0, 0.0);  // restarts at 250: 30 s overhead, then the 800 s left
    const auto ev = sim.advance();
    REQUIRE(ev.finished.size() == 1);
    const auto& r = ev.finished[0];
    CHECK(r.end == 250.0 + 30 + 800);
    CHECK(r.run_time == 250.0 + 830);
    CHECK(r.lost_gpu_time == 2 * 50.0 + 2 * 30.0);
    CHECK(r.preemptions == 0);
    CHECK(r.interruptions == 1);
    CHECK(r.queueing_delay() == 0.0);
    sim.bring_up(a);
    CHECK(sim.cluster().free_gpus() == 4);
}

TEST_CASE("failures: checkpoint writes slow a run down and are counted, Young/Daly's interval") {
    const auto t = tiny_topo::make();
    gp::simulator sim;
    sim.resize(t);
    sim.enable_failures(0);
    const std::vector<gp::TrainingJob> jobs = {one_job(2)};
    const std::vector<double> ideal = {1000};
    sim.reset(jobs, ideal);
    (void)sim.advance();
    const std::vector<gp::gpu_id> a = {0, 1};
    // every 100 s of work, a 10 s checkpoint: a period of 110 s, the slowdown 1.1
    sim.set_checkpointing(0, 110, 10.0 / 110);
    sim.start(0, a, 1.1, 0.0);
    (void)sim.advance(250);
    sim.fail(0);  // kept: 2 periods (220 s, 200 s of work); lost: 30 s
    CHECK(close_rel(sim.work_left(0), 800.0, 1e-12));
    CHECK(close_rel(sim.record(0).lost_gpu_time, 2 * 30.0, 1e-12));
    CHECK(close_rel(sim.record(0).checkpoint_gpu_time, 2 * 20.0, 1e-12));

    CHECK(close_rel(gp::young_daly_interval(60, 360000, 2), std::sqrt(2.0 * 60 * 180000), 1e-15));
    CHECK(gp::young_daly_interval(60, 360000, 0) == gp::young_daly_interval(60, 360000, 1));
}

TEST_CASE("failures: the failed GPUs are out of service and masked until their repair, in every action mode") {
    for (const char* mode : {"gpu", "placement", "job"}) {
        INFO(mode);
        auto s = failing(3.0);
        s.env.mode = gp::parse_action_mode(mode);
        gp::env e(s);
        gp::first_fit_policy ff;
        const double ret = play_checked(e, 7, [&](gp::env& x) { return ff.act(x); });
        CHECK(e.terminated());
        CHECK(e.finished().size() == 60);
        double jct = 0, hits = 0;
        for (const auto& r : e.finished()) jct += r.jct(), hits += r.interruptions;
        CHECK(close_rel(ret, -jct / 3600.0, 1e-9));
        CHECK(hits > 0);
        CHECK(e.failure_state().failures() > 0);
        const auto m = e.episode_metrics();
        CHECK(m.failures);
        CHECK(m.goodput > 0.0);
        CHECK(m.goodput < 1.0);
        CHECK(m.wasted_gpu_hours > 0.0);
        CHECK(m.avg_interruptions == doctest::Approx(hits / 60.0));
    }
}

TEST_CASE("failures: random play in every queue discipline keeps the reward identity and finishes every job") {
    struct setup {
        gp::queue_order order;
        bool backfill;
    };
    for (const auto& [order, backfill] : {setup{gp::queue_order::fifo, false}, setup{gp::queue_order::fifo, true},
                                          setup{gp::queue_order::sjf, true}, setup{gp::queue_order::las, true}})
        for (const char* mode : {"gpu", "placement", "job"}) {
            INFO(std::string(gp::to_string(order)), " backfill ", backfill, " ", mode);
            auto s = failing(2.0, 40);
            s.env.order = order;
            s.env.backfill = backfill;
            s.env.mode = gp::parse_action_mode(mode);
            s.preemption.enabled = gp::is_preemptive(order);
            s.failures.young_daly = true;
            s.failures.checkpoint_cost = 60;
            gp::env e(s);
            gp::random_policy rp(3);
            rp.reset(3);
            const double ret = play_checked(e, 11, [&](gp::env& x) { return rp.act(x); });
            REQUIRE(e.terminated());
            CHECK(e.finished().size() == 40);
            double jct = 0;
            for (const auto& r : e.finished()) {
                jct += r.jct();
                CHECK(r.lost_gpu_time >= 0.0);
                CHECK(r.checkpoint_gpu_time > 0.0);
                CHECK(r.run_time <= r.end - r.start + 1e-9);
            }
            CHECK(close_rel(ret, -jct / 3600.0, 1e-9));
        }
}

TEST_CASE("failures: episodes are reproduced by seed, and failures off change nothing") {
    const auto records = [](const gp::scenario& s, std::uint64_t seed) {
        gp::env e(s);
        gp::first_fit_policy ff;
        (void)gp::run_episode(e, ff, seed);
        std::vector<double> v;
        for (const auto& r : e.finished()) v.insert(v.end(), {double(r.id), r.start, r.end, double(r.interruptions), r.lost_gpu_time});
        return v;
    };
    const auto s = failing(3.0);
    CHECK(records(s, 5) == records(s, 5));
    CHECK(records(s, 5) != records(s, 6));
    auto off = s;
    off.failures.enabled = false;
    const auto plain = with(gp::default_scenario(), {{"workload", {{"num_jobs", 60}}}});
    CHECK(records(off, 5) == records(plain, 5));
    CHECK(records(s, 5) != records(plain, 5));
}

TEST_CASE("failures: a fork redraws the failures to come, the observation does not reveal them") {
    auto s = failing(3.0);
    s.durations.mode = gp::duration_info::hidden;
    gp::env e(s);
    gp::first_fit_policy ff;
    e.reset(3);
    for (int i = 0; i < 40 && !e.done(); ++i) (void)e.step(ff.act(e));
    const auto next_failure = [](const gp::env& x) {  // of the units up (a repair under way is known)
        double t = gp::failure_process::never;
        for (std::uint32_t u = 0; u < x.failure_state().units(); ++u)
            if (!x.failure_state().is_down(u)) t = std::min(t, x.failure_state().next_of(u));
        return t;
    };
    const auto f1 = e.fork(100), f2 = e.fork(100), f3 = e.fork(101);
    CHECK(next_failure(f1) == next_failure(f2));
    CHECK(next_failure(f1) != next_failure(e));
    CHECK(next_failure(f3) != next_failure(f1));
    CHECK(next_failure(f1) > e.now());
    // two episodes whose failure streams differ (other unit MTBF) look alike until the first failure
    auto other = s;
    other.failures.mtbf_hours = 3.5;
    gp::env a(s), b(other);
    a.reset(3);
    b.reset(3);
    const double first = std::min(a.failure_state().next_time(), b.failure_state().next_time());
    while (!a.done() && a.now() < first) {
        REQUIRE(a.now() == b.now());
        const auto oa = a.observation(), ob = b.observation();
        REQUIRE(std::equal(oa.begin(), oa.end(), ob.begin(), ob.end()));
        const auto act = ff.act(a);
        (void)a.step(act);
        (void)b.step(act);
    }
}

TEST_CASE("failures: the scenario JSON, and its errors name the path and the value") {
    const auto parse = [](const std::string& failures) {
        return gp::parse_scenario(R"({"failures": )" + failures + "}", "test.json");
    };
    const auto s = parse(R"({"enabled": true, "scope": "gpu", "mtbf_hours": 100, "distribution": "weibull", "shape": 0.7,
                             "checkpoint_interval": "young_daly", "checkpoint_cost": 30})");
    CHECK(s.failures.enabled);
    CHECK(s.failures.scope == gp::failure_scope::gpu);
    CHECK(s.failures.distribution == gp::failure_distribution::weibull);
    CHECK(s.failures.young_daly);
    CHECK(gp::scenario_from_json(gp::to_json(s)).failures == s.failures);
    CHECK(gp::to_json(gp::default_scenario()).count("failures") == 0);
    CHECK_THROWS_WITH_AS(parse(R"({"mtbf_hours": -1})"), doctest::Contains("/failures/mtbf_hours: value -1"), gp::ConfigError);
    CHECK_THROWS_WITH_AS(parse(R"({"distribution": "gamma"})"), doctest::Contains("/failures/distribution: unknown value \"gamma\""),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(parse(R"({"scope": 3})"), doctest::Contains("/failures/scope"), gp::ConfigError);
    CHECK_THROWS_WITH_AS(parse(R"({"checkpoint_interval": "daily"})"), doctest::Contains("/failures/checkpoint_interval"), gp::ConfigError);
    CHECK_THROWS_WITH_AS(parse(R"({"checkpoint_interval": "young_daly"})"), doctest::Contains("checkpoint_cost > 0"), gp::ConfigError);
    CHECK_THROWS_WITH_AS(parse(R"({"mtbf": 3})"), doctest::Contains("/failures/mtbf: unknown key"), gp::ConfigError);
    gp::failures_config f;
    f.mtbf_hours = std::nan("");
    CHECK_THROWS_WITH_AS(gp::check_failures(f), doctest::Contains("/failures/mtbf_hours: must be a finite number > 0 (got nan)"), gp::ConfigError);
    auto r = failing(3.0);
    r.env.mode = gp::action_mode::round;
    CHECK_THROWS_WITH_AS(gp::env{r}, doctest::Contains("/env/action_mode \"round\""), gp::ConfigError);
    auto c = failing(3.0);
    c.colocation.enabled = true;
    CHECK_THROWS_WITH_AS(gp::env{c}, doctest::Contains("/colocation/enabled"), gp::ConfigError);
}

TEST_CASE("failures: avoid_failed keeps jobs off recently failed nodes when the others hold them, and is pack without failures") {
    const auto records = [](const gp::scenario& s, const char* policy) {
        gp::env e(s);
        const auto act = gp::heuristic<gp::env>(policy).make(9);
        e.reset(9);
        while (!e.done()) (void)e.step(act(e));
        std::vector<double> v;
        for (const auto& r : e.finished()) v.insert(v.end(), {double(r.id), r.start, r.end});
        return v;
    };
    const auto plain = with(gp::default_scenario(), {{"workload", {{"num_jobs", 60}}}});
    CHECK(records(plain, "avoid_failed") == records(plain, "pack"));
    CHECK(records(failing(3.0), "avoid_failed") != records(failing(3.0), "pack"));
    CHECK(gp::applicable_heuristic_names(failing(3.0)).back() == "avoid_failed");
    CHECK(gp::applicable_heuristic_names(plain) == gp::heuristic_names());

    // at every placement, no GPU of a node that failed in the last 24 h while enough others are free
    gp::env e(failing(3.0));
    gp::avoid_failed_policy af;
    e.reset(9);
    af.reserve(e.topology());
    std::size_t avoided = 0;
    while (!e.done()) {
        const auto& f = e.failure_state();
        const auto mask = e.action_mask();
        std::size_t fresh = 0, recent = 0;
        for (std::size_t g = 0; g + 1 < mask.size(); ++g) {
            const bool rec = e.now() - f.last_failure(f.unit_of(gp::gpu_id(g))) < 24 * 3600.0;
            if (mask[g]) (rec ? recent : fresh) += 1;
        }
        const auto a = af.act(e);
        if (e.has_current() && a < std::int64_t(mask.size()) - 1 && recent > 0) {
            const std::size_t need = e.current_job().num_gpus - e.picked().size();
            const bool rec = e.now() - f.last_failure(f.unit_of(gp::gpu_id(a))) < 24 * 3600.0;
            if (fresh >= need) {
                CHECK(!rec);
                ++avoided;
            }
        }
        (void)e.step(a);
    }
    CHECK(avoided > 0);
}

TEST_CASE("failures: a trace row that failed or was killed ends at its recorded run time, its GPU time wasted") {
    const auto file = (std::filesystem::temp_directory_path() / "gpuplace_failures_outcomes.csv").string();
    // 1 GPU each, 1 step/s: job 1 was killed after 40 s of its 100, job 2 failed after 500 s (past its work: it runs its 100)
    std::ofstream(file) << "submit_time,num_gpus,steps,outcome,run_time\n0,1,100,completed,100\n0,1,100,Killed,40\n10,1,100,failed,500\n"
                           "20,1,50,completed,\n";
    const auto s = gp::scenario_from_json(json{
        {"topology", {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 1}, {"gpus_per_node", 2}}},
        {"zoo", json::parse(R"({"models": [{"name": "m", "throughput": {"1": [1, 1]}}]})")},
        {"job_fields", json::parse(R"([{"name": "outcome", "type": "category", "default": "completed"},
                                         {"name": "run_time", "type": "number", "default": 0}])")},
        {"workload", {{"kind", "trace"}, {"format", "csv"}, {"path", file}, {"model", "m"}}}});
    gp::env e(s);
    gp::first_fit_policy ff;
    const auto r = gp::run_episode(e, ff, 1);
    REQUIRE(r.terminated);
    std::map<gp::job_id, gp::job_record> by_id;
    for (const auto& x : e.finished()) by_id[x.id] = x;
    CHECK(by_id.at(0).end == 100.0);
    CHECK(by_id.at(1).end == 40.0);              // killed at 40
    CHECK(by_id.at(2).end == 40.0 + 100);        // starts when job 1's GPU frees, runs its work
    CHECK(by_id.at(3).end == 100.0 + 50);
    const auto& m = r.m;
    CHECK(m.failures);
    CHECK(m.hardware_failures == 0.0);
    CHECK(close_rel(m.wasted_gpu_hours, (40.0 + 100.0) / 3600.0, 1e-12));
    CHECK(close_rel(m.goodput, (290.0 - 140.0) / 290.0, 1e-12));  // held: 100 + 40 + 100 + 50
    CHECK(close_rel(m.avg_jct_completed, (100.0 + (150.0 - 20.0)) / 2, 1e-12));
    std::filesystem::remove(file);

    const auto bad = gp::scenario_from_json(json{
        {"job_fields", json::parse(R"([{"name": "outcome", "type": "category", "default": "completed"}])")},
        {"workload", {{"kind", "jobs"}, {"jobs", json::parse(R"([{"submit_time": 0, "num_gpus": 1, "model": 0, "work": 10}])")}}}});
    CHECK_THROWS_WITH_AS(gp::env{bad}, doctest::Contains("needs a number field \"run_time\""), gp::ConfigError);
}

TEST_CASE("failures: a job's own checkpoint interval and cost (declared job fields) override the scenario's") {
    // 2 GPUs in 1 node; job 0 checkpoints every 100 s at no cost, job 1 every 50 s at 10 s (its rate 50/60)
    auto s = gp::scenario_from_json(json{
        {"topology", {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 1}, {"gpus_per_node", 2}}},
        {"zoo", json::parse(R"({"models": [{"name": "m", "throughput": {"1": [1, 1]}}]})")},
        {"job_fields", json::parse(R"([{"name": "checkpoint_interval", "type": "number"}, {"name": "checkpoint_cost", "type": "number"}])")},
        {"workload", {{"kind", "jobs"}, {"jobs", json::parse(R"([
            {"submit_time": 0, "num_gpus": 1, "model": 0, "work": 1000, "checkpoint_interval": 100, "checkpoint_cost": 0},
            {"submit_time": 0, "num_gpus": 1, "model": 0, "work": 100, "checkpoint_interval": 50, "checkpoint_cost": 10}])")}}},
        {"failures", {{"enabled", true}, {"mtbf_hours", 1e6}, {"checkpoint_interval", 7}, {"checkpoint_cost", 3}}}});
    gp::env e(s);
    gp::first_fit_policy ff;
    const auto r = gp::run_episode(e, ff, 1);
    REQUIRE(r.terminated);
    std::map<gp::job_id, gp::job_record> by_id;
    for (const auto& x : e.finished()) by_id[x.id] = x;
    CHECK(by_id.at(0).end == 1000.0);
    CHECK(by_id.at(0).checkpoint_gpu_time == 0.0);
    CHECK(close_rel(by_id.at(1).end, 100.0 * 60 / 50, 1e-12));               // 2 periods of 60 s
    CHECK(close_rel(by_id.at(1).checkpoint_gpu_time, 120.0 * 10 / 60, 1e-12));  // 10 s of each 60
}

TEST_CASE("failures: the reward term wasted charges each finishing job's wasted GPU-time, beside the JCT term") {
    auto s = failing(2.0, 40);
    s.failures.checkpoint_cost = 60;
    s.reward.wasted = 0.5;
    gp::env e(s);
    gp::first_fit_policy ff;
    REQUIRE(gp::run_episode(e, ff, 5).terminated);
    double jct = 0, wasted = 0;
    for (const auto& r : e.finished()) {
        jct += r.jct();
        wasted += r.lost_gpu_time + r.checkpoint_gpu_time;
    }
    CHECK(wasted > 0);
    CHECK(close_rel(e.episode_return(), -jct / 3600.0 - 0.5 * wasted / 3600.0, 1e-9));
}
