// Tenants with quotas, a spot class and deadlines (tenancy.hpp, env/tenancy.hpp,
// group_metrics.hpp): hand-checked small cases of each discipline, the metrics by group, the
// JSON errors, determinism by seed and invariants under random play.

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using gp::test::json;

namespace {

/// A job {submit, GPUs, work (= ideal seconds)} with its fields.
struct tjob {
    double submit;
    int gpus;
    double work;
    json fields = json::object();
};

/// `gpus` GPUs in one node, a model at 1 step/s on 1 or 2 GPUs; the jobs; the scenario's keys
/// beside (`extra`: job_fields, tenants, spot, deadlines), under queue policy `queue`.
gp::scenario tscenario(std::size_t gpus, const std::vector<tjob>& jobs, const json& extra, const std::string& queue,
                       double overhead = 0) {
    json list = json::array();
    for (const auto& j : jobs) {
        json e = {{"submit_time", j.submit}, {"num_gpus", j.gpus}, {"model", 0}, {"work", j.work}};
        if (j.fields.is_object()) e.update(j.fields);
        list.push_back(e);
    }
    json s = {{"topology", {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 1}, {"gpus_per_node", gpus}}},
              {"zoo", json::parse(R"({"models": [{"name": "m", "throughput": {"1": [1, 1], "2": [2, 2]}}]})")},
              {"workload", {{"kind", "jobs"}, {"jobs", list}}}};
    s.update(extra);
    auto sc = gp::scenario_from_json(s);
    gp::apply_queue(sc, queue);
    sc.preemption.restart_overhead = overhead;
    return sc;
}

struct outcome {
    std::map<gp::job_id, gp::job_record> jobs;
    gp::metrics m;
};

/// Runs first-fit to the end.
outcome run(const gp::scenario& s) {
    gp::env e(s);
    gp::first_fit_policy ff;
    const auto r = gp::run_episode(e, ff, 1);
    REQUIRE(r.terminated);
    outcome o;
    for (const auto& rec : e.finished()) o.jobs[rec.id] = rec;
    o.m = e.episode_metrics();
    return o;
}

const json two_tenants = json::parse(R"({"job_fields": [{"name": "tenant", "categories": ["a", "b"]}],
                                         "tenants": {"quotas": {"a": 1, "b": 1}}})");

}  // namespace

TEST_CASE("tenancy: capacity lends an idle GPU and takes it back for its owner, the restart charged") {
    // two GPUs, a quota of one each; b's two 100 s jobs from 0 (the second borrows a's GPU), a's 20 s job at 10
    const std::vector<tjob> jobs = {{0, 1, 100, {{"tenant", "b"}}}, {0, 1, 100, {{"tenant", "b"}}}, {10, 1, 20, {{"tenant", "a"}}}};
    const auto cap = run(tscenario(2, jobs, two_tenants, "capacity", 5));
    CHECK(cap.jobs.at(2).start == 10);  // the owner's job at once
    CHECK(cap.jobs.at(2).end == 30);
    CHECK(cap.jobs.at(0).end == 100);      // within b's quota: untouched
    CHECK(cap.jobs.at(1).preemptions == 1);  // the borrower, suspended at 10 with 90 s left
    CHECK(cap.jobs.at(1).end == 125);        // resumed at 30: 5 s restart + 90 s
    CHECK(cap.jobs.at(1).lost_gpu_time == 5);
    CHECK(cap.m.groups.tenants);
    CHECK(cap.m.groups.num_tenants == 2);
    CHECK(cap.m.groups.tenant_jct[0] == 20);
    CHECK(cap.m.groups.tenant_jct[1] == (100 + 125) / 2.0);
    CHECK(cap.m.groups.below_guarantee_hours == 0);  // a never waited for its GPU
    // backfill (no preemption): a's job waits for b's borrowed GPU, 90 s below its guarantee
    const auto fifo = run(tscenario(2, jobs, two_tenants, "backfill"));
    CHECK(fifo.jobs.at(2).start == 100);
    CHECK(fifo.m.groups.tenant_below[0] == 90);
    CHECK(fifo.m.groups.tenant_below[1] == 0);
    CHECK(gp::test::close_rel(fifo.m.groups.below_guarantee_hours, 90 / 3600.0, 1e-12));
}

TEST_CASE("tenancy: drf fills by GPUs held per weight, tenant by tenant") {
    // four GPUs; a submits four 1-GPU jobs, then b two: backfill runs a's four, drf two of each
    std::vector<tjob> jobs;
    for (int i = 0; i < 4; ++i) jobs.push_back({0, 1, 100, {{"tenant", "a"}}});
    for (int i = 0; i < 2; ++i) jobs.push_back({1, 1, 100, {{"tenant", "b"}}});
    const auto ex = json::parse(R"({"job_fields": [{"name": "tenant", "categories": ["a", "b"]}], "tenants": {"quotas": {"a": 2, "b": 2}}})");
    const auto bf = run(tscenario(4, jobs, ex, "backfill"));
    CHECK(bf.jobs.at(4).start == 100);
    const auto drf = run(tscenario(4, jobs, ex, "drf"));
    CHECK(drf.jobs.at(4).start == 1);
    CHECK(drf.jobs.at(5).start == 1);
    CHECK(drf.jobs.at(0).end == 100);  // a's first two keep running
    CHECK(drf.jobs.at(1).end == 100);
    CHECK(drf.jobs.at(2).preemptions == 1);
    CHECK(drf.jobs.at(3).preemptions == 1);
    // weights: b's 3 to a's 1 give b both its jobs and a three of the four GPUs... up to its jobs
    auto w = ex;
    w["tenants"]["weights"] = {{"a", 1}, {"b", 3}};
    const auto drfw = run(tscenario(4, jobs, w, "drf"));
    CHECK(drfw.jobs.at(4).start == 1);
    CHECK(drfw.jobs.at(5).start == 1);
}

TEST_CASE("tenancy: EDF runs three jobs in deadline order, edf_ac puts a job that cannot make it last") {
    const json ex = json::parse(R"({"job_fields": ["deadline"], "deadlines": {}})");
    // one GPU, three 10 s jobs at 0 with deadlines 100, 5 and 50 s after submission
    const std::vector<tjob> jobs = {{0, 1, 10, {{"deadline", 100}}}, {0, 1, 10, {{"deadline", 5}}}, {0, 1, 10, {{"deadline", 50}}}};
    const auto edf = run(tscenario(1, jobs, ex, "edf"));
    CHECK(edf.jobs.at(1).end == 10);
    CHECK(edf.jobs.at(2).end == 20);
    CHECK(edf.jobs.at(0).end == 30);
    CHECK(edf.m.groups.deadlines);
    CHECK(edf.m.groups.deadlines_met == doctest::Approx(2.0 / 3));
    CHECK(edf.m.groups.avg_lateness == 5);
    CHECK(edf.m.groups.not_admitted == 0);
    const auto ac = run(tscenario(1, jobs, ex, "edf_ac"));
    CHECK(ac.jobs.at(2).end == 10);
    CHECK(ac.jobs.at(0).end == 20);
    CHECK(ac.jobs.at(1).end == 30);  // not admitted (0 + 10 > 5): behind the admitted, best effort
    CHECK(ac.m.groups.not_admitted == 1);
    CHECK(ac.m.groups.deadlines_met == doctest::Approx(2.0 / 3));
    CHECK(ac.m.groups.avg_lateness == 25);
    // fifo: in submit order 0, 1, 2; only the first meets its deadline... and the last (30 <= 50)
    const auto fifo = run(tscenario(1, jobs, ex, "fifo"));
    CHECK(fifo.jobs.at(0).end == 10);
    CHECK(fifo.m.groups.deadlines_met == doctest::Approx(2.0 / 3));
    CHECK(fifo.m.groups.avg_lateness == 15);
}

TEST_CASE("tenancy: a spot job is evicted when a guaranteed job needs its GPU") {
    const json ex = json::parse(R"({"job_fields": [{"name": "class", "type": "category", "categories": ["guaranteed", "spot"], "default": "guaranteed"}],
                                    "spot": {}, "preemption": {"thresholds": [1000]}})");
    // one GPU; a spot job of 100 s at 0, a guaranteed one of 20 s at 10; 2D-LAS alone would keep the running job
    const std::vector<tjob> jobs = {{0, 1, 100, {{"class", "spot"}}}, {10, 1, 20}};
    auto off = ex;
    off["spot"] = {{"enabled", false}};
    const auto plain = run(tscenario(1, jobs, off, "2d_las", 5));
    CHECK(plain.jobs.at(1).end == 120);
    const auto spot = run(tscenario(1, jobs, ex, "2d_las", 5));
    CHECK(spot.jobs.at(1).start == 10);
    CHECK(spot.jobs.at(1).end == 30);
    CHECK(spot.jobs.at(0).preemptions == 1);
    CHECK(spot.jobs.at(0).end == 125);
    CHECK(spot.m.groups.spot);
    CHECK(spot.m.groups.spot_jobs == 1);
    CHECK(spot.m.groups.spot_evictions == 1);
    CHECK(spot.m.groups.guaranteed_jct == 20);
    CHECK(spot.m.groups.spot_jct == 125);
    CHECK(spot.m.groups.spot_delay == 20);
}

TEST_CASE("tenancy: Jain's index of known values") {
    const double a[] = {1, 2, 3}, b[] = {4, 4}, c[] = {1, 0};
    CHECK(gp::jain_index(a, 3) == doctest::Approx(36.0 / 42.0));
    CHECK(gp::jain_index(b, 2) == 1);
    CHECK(gp::jain_index(c, 2) == 0.5);
    CHECK(gp::jain_index(a, 0) == 0);
}

TEST_CASE("tenancy: bad tenants, spot and deadlines JSON are ConfigErrors naming the path and the value") {
    const auto bad = [](const char* text, const char* msg) {
        INFO(text);
        CHECK_THROWS_WITH_AS((void)gp::parse_scenario(text), doctest::Contains(msg), gp::ConfigError);
    };
    bad(R"({"tenants": {"quotas": {"a": -1}}})", "config /tenants/quotas/a: value -1 out of range [0.0, 1000000000.0]");
    bad(R"({"tenants": {"quotas": {"a": 0.7, "b": 0.6}, "share": true}})", "config /tenants/quotas: shares sum to 1.2");
    bad(R"({"tenants": {"quotas": [4]}})", "config /tenants/quotas: expected an object of tenant names to numbers, got [4]");
    bad(R"({"tenants": {"weights": {"a": 0}}})", "config /tenants/weights/a: value 0 out of range (0.0, 1000000000.0]");
    bad(R"({"tenants": {"quota": {}}})", "config /tenants/quota: unknown key \"quota\"");
    bad(R"({"spot": {"value": ""}})", "config /spot/value: expected the category that marks a spot job, got \"\"");
    bad(R"({"deadlines": {"factor": [1.5, 0.5]}})", "config /deadlines/factor: expected 0 < lo <= hi (finite), got [1.5,0.5]");
    bad(R"({"deadlines": {"factor": 2}})", "config /deadlines/factor: expected [lo, hi], two numbers, got 2");
    // checked against the declared fields when an env is built
    const auto env_error = [](const json& extra, const std::string& queue, const char* msg) {
        INFO(extra.dump(), " ", queue);
        const auto s = tscenario(2, {{0, 1, 10, {}}}, extra, queue);
        CHECK_THROWS_WITH_AS(gp::env{s}, msg, gp::ConfigError);
    };
    env_error(json::parse(R"({"tenants": {}})"), "backfill", "config /tenants/field: job field \"tenant\" is not declared (add it to /job_fields)");
    env_error(json::parse(R"({"job_fields": [{"name": "tenant", "default": "a"}], "tenants": {"quotas": {"zz": 1}}})"), "backfill",
              "config /tenants/quotas/zz: no tenant \"zz\" among the categories of field \"tenant\"");
    env_error(json::parse(R"({"job_fields": ["priority"], "deadlines": {"field": "priority", "factor": [1, 2]}, "tenants": {"field": "priority"}})"),
              "backfill", "config /tenants/field: job field \"priority\" must be a category");
    env_error(json::object(), "capacity", "config /env/queue_policy: \"capacity\" needs tenants (/tenants/enabled)");
    env_error(json::object(), "edf_ac", "config /env/queue_policy: \"edf_ac\" needs deadlines (/deadlines/enabled)");
    // a scenario with them reads back to itself
    const auto s = gp::preset_scenario("tenants");
    CHECK(gp::to_json(gp::scenario_from_json(gp::to_json(s))) == gp::to_json(s));
    const auto d = gp::preset_scenario("deadlines");
    CHECK(gp::to_json(gp::scenario_from_json(gp::to_json(d))) == gp::to_json(d));
}

TEST_CASE("tenancy: every discipline on the presets, by seed: the same metrics twice, every job done, invariants of the metrics") {
    for (const char* preset : {"tenants", "spot", "deadlines"})
        for (const char* queue : {"backfill", "capacity", "drf", "themis", "edf", "edf_ac", "2d_las"}) {
            auto s = gp::preset_scenario(preset);
            if ((std::string(queue) == "capacity" || std::string(queue) == "drf") && !s.tenants.enabled) continue;
            if (std::string(queue).starts_with("edf") && !s.deadlines.enabled) continue;
            INFO(preset, " ", queue);
            s.workload.synthetic.num_jobs = 40;
            gp::apply_queue(s, queue);
            gp::env a(s), b(s);
            gp::random_policy ra(3), rb(3);
            (void)gp::run_episode(a, ra, 7);
            (void)gp::run_episode(b, rb, 7);
            const auto ma = a.episode_metrics(), mb = b.episode_metrics();
            CHECK(ma.jobs_done == 40);
            CHECK(gp::to_json(ma) == gp::to_json(mb));
            const auto& g = ma.groups;
            CHECK(g.tenants == s.tenants.enabled);
            CHECK(g.spot == s.spot.enabled);
            CHECK(g.deadlines == s.deadlines.enabled);
            if (g.tenants) {
                CHECK(g.num_tenants == 3);
                CHECK(g.jain_index > 1.0 / 3 - 1e-12);
                CHECK(g.jain_index <= 1 + 1e-12);
                CHECK(g.worst_tenant_rho > 0);
                std::size_t n = 0;
                double jct = 0;
                for (std::size_t t = 0; t < 3; ++t) {
                    n += g.tenant_jobs[t];
                    jct += g.tenant_jct[t] * double(g.tenant_jobs[t]);
                    CHECK(g.tenant_below[t] >= 0);
                    CHECK(g.tenant_below[t] <= ma.makespan);
                }
                CHECK(n == 40);
                CHECK(gp::test::close_rel(jct / 40, ma.avg_jct, 1e-9));
            }
            if (g.spot) {
                CHECK(g.spot_jobs > 0);
                CHECK(g.spot_jobs < 40);
                CHECK(g.spot_evictions >= 0);
                CHECK(gp::test::close_rel((g.spot_jct * double(g.spot_jobs) + g.guaranteed_jct * double(40 - g.spot_jobs)) / 40, ma.avg_jct, 1e-9));
            }
            if (g.deadlines) {
                CHECK(g.deadlines_met >= 0);
                CHECK(g.deadlines_met <= 1);
                CHECK(g.avg_lateness >= 0);
                CHECK((g.not_admitted > 0) == (std::string(queue) == "edf_ac" && g.not_admitted > 0));
            }
            // a fork keeps the tenancy of the present jobs and runs to the end
            gp::env c(s);
            c.reset(7);
            for (int i = 0; i < 10 && !c.done(); ++i) (void)c.step(gp::random_policy(5).act(c));
            auto f = c.fork(11);
            gp::random_policy rf(5);
            while (!f.done()) (void)f.step(rf.act(f));
            CHECK(f.episode_metrics().jobs_done == 40);
        }
}

TEST_CASE("tenancy: edf_ac admits by the duration the scheduler knows: the truth, or with durations hidden the sampled mean") {
    const json ex = json::parse(R"({"job_fields": ["deadline"], "deadlines": {}})");
    // one GPU; 100 s, 10 s and 10 s jobs at 0, the 10 s one first with a deadline of 30 s
    const std::vector<tjob> jobs = {{0, 1, 100, {{"deadline", 1000}}}, {0, 1, 10, {{"deadline", 30}}}, {0, 1, 10, {{"deadline", 1000}}}};
    const auto oracle = run(tscenario(1, jobs, ex, "edf_ac"));
    CHECK(oracle.m.groups.not_admitted == 0);
    CHECK(oracle.jobs.at(1).end == 10);
    CHECK(oracle.m.groups.deadlines_met == 1);
    // hidden: the estimate is the mean job size, (100 + 10 + 10) / 3 = 40 s > 30 s: not admitted
    auto s = tscenario(1, jobs, ex, "edf_ac");
    s.durations.mode = gp::duration_info::hidden;
    const auto hidden = run(s);
    CHECK(hidden.m.groups.not_admitted == 1);
    CHECK(hidden.jobs.at(0).end == 100);
    CHECK(hidden.jobs.at(2).end == 110);
    CHECK(hidden.jobs.at(1).end == 120);
    CHECK(hidden.m.groups.deadlines_met == doctest::Approx(2.0 / 3));
}

TEST_CASE("tenancy: the reward terms deadline_miss and unfairness, charged as jobs finish, deadline_miss needs deadlines") {
    const json ex = json::parse(R"({"job_fields": ["deadline"], "deadlines": {}})");
    const std::vector<tjob> jobs = {{0, 1, 10, {{"deadline", 100}}}, {0, 1, 10, {{"deadline", 5}}}, {0, 1, 10, {{"deadline", 50}}}};
    auto s = tscenario(1, jobs, ex, "fifo");  // ends 10, 20, 30: job 1 misses its deadline (5 s)
    s.reward.jct = 0;
    s.reward.deadline_miss = 2.5;
    gp::env e(s);
    gp::first_fit_policy ff;
    REQUIRE(gp::run_episode(e, ff, 1).terminated);
    CHECK(e.episode_return() == -2.5);
    // unfairness: rho = JCT / ideal (contention N: jobs in system over the job's life) beyond 1
    s.reward.deadline_miss = 0;
    s.reward.unfairness = 1;
    gp::env u(s);
    REQUIRE(gp::run_episode(u, ff, 1).terminated);
    double want = 0;
    for (const auto& r : u.finished()) want -= std::max(0.0, r.finish_time_fairness(u.num_gpus()) - 1.0);
    CHECK(want < 0);
    CHECK(u.episode_return() == doctest::Approx(want).epsilon(1e-12));
    // weights set in JSON round-trip; unset ones stay out of the scenario's JSON
    const auto j = gp::to_json(s);
    CHECK(j.at("reward").at("unfairness") == 1.0);
    CHECK_FALSE(j.at("reward").contains("wasted"));
    auto none = tscenario(1, {{0, 1, 10}, {0, 1, 10}}, json::object(), "fifo");
    none.reward.deadline_miss = 1;
    CHECK_THROWS_WITH_AS(gp::env{none}, doctest::Contains("config /reward/deadline_miss: 1.000000 needs deadlines"), gp::ConfigError);
}
