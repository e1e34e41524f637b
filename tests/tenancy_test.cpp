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
        e.update(j.fields);
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

TEST_CASE("tenancy: EDF runs three jobs in deadline order; edf_ac puts a job that cannot make it last") {
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
