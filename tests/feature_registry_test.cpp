// Tests of include/gpuplace/feature_registry.hpp: an observation feature of one's own, registered
// by name and declared as a job field, is computed for every job when its episode is drawn (in the
// env's field table, forks and generated workloads included), is observed by its range in the
// "job_fields" segment, reads back from JSON, is listed by the registry, and refuses bad names,
// bad declarations and jobs that give it. Every registration is undone before its test ends.

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <gpuplace/env.hpp>
#include <gpuplace/feature_registry.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/registry.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;

namespace {

double log_work_feature(const gp::job_feature_view& j) { return std::log10(1.0 + double(j.job.work)); }

/// The job's GPUs per unit of its priority (a feature of a declared field): NaN without one.
double gpus_per_priority(const gp::job_feature_view& j) {
    const double p = j.field("priority");
    return p > 0 ? double(j.job.num_gpus) / p : std::nan("");
}

struct features_registered {
    features_registered() {
        gp::register_observation_feature("log_work", "log10 of 1 + the job's training steps", log_work_feature, 0, 8);
        gp::register_observation_feature("gpus_per_priority", "GPUs per unit of priority", gpus_per_priority, 0, 16);
    }
    ~features_registered() {
        gp::unregister_observation_feature("log_work");
        gp::unregister_observation_feature("gpus_per_priority");
    }
};

gp::scenario feature_scenario(const char* fields) {
    return gp::parse_scenario(std::string(R"({"job_fields": )") + fields + R"(,
        "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2},
        "workload": {"kind": "synthetic", "num_jobs": 30, "load": 1.5}})");
}

}  // namespace

TEST_CASE("feature_registry: a registered feature is a computed job field, in the table and the observation") {
    features_registered r;
    const auto s = feature_scenario(R"(["log_work", {"name": "priority", "draw": [0, 4]}, {"name": "gpp", "feature": "gpus_per_priority", "range": [0, 8]}])");
    REQUIRE(s.job_fields.size() == 3);
    CHECK(s.job_fields[0].feature == "log_work");
    CHECK(s.job_fields[0].observe);
    CHECK(s.job_fields[0].hi == 8.0);  // the registration's range
    CHECK(s.job_fields[2].hi == 8.0);  // the declaration's
    CHECK(gp::to_json(gp::scenario_from_json(gp::to_json(s))) == gp::to_json(s));
    CHECK(gp::to_json(s)["job_fields"][0] == gp::test::json{{"name", "log_work"}, {"type", "number"}, {"range", {0.0, 8.0}}, {"feature", "log_work"}});

    gp::env e(s);
    const gp::obs_segment* seg = nullptr;
    for (const auto& sg : e.observation_layout())
        if (sg.name == "job_fields") seg = &sg;
    REQUIRE(seg);
    CHECK(seg->fields[0] == "log_work");
    CHECK(seg->fields[1] == "gpp");  // priority is not observed
    e.reset(4);
    const auto& sim = e.simulator();
    for (std::uint32_t j = 0; j < sim.jobs().size(); ++j) {
        CHECK(e.field_value(j, 0) == log_work_feature({sim.job(j), "", {}, s.job_fields}));
        const double p = e.field_value(j, 1);
        if (p > 0) CHECK(e.field_value(j, 2) == double(sim.job(j).num_gpus) / p);
    }
    auto pack = gp::heuristic<gp::env>("pack").make(0);
    std::size_t seen = 0;
    while (!e.done()) {
        const auto cur = e.current_index();
        const auto o = e.observation().subspan(seg->offset, seg->size);
        CHECK(o[0] == doctest::Approx(std::clamp(e.field_value(cur, 0) / 8.0, 0.0, 1.0)));
        seen += o[0] > 0;
        e.step(pack(e));
    }
    CHECK(seen > 0);
    // a fork keeps the computed values of the jobs present
    e.reset(4);
    const auto f = e.fork(9);
    CHECK(f.field_value(0, 0) == e.field_value(0, 0));
    bool listed = false;
    for (const auto& x : gp::registry_entries()) listed = listed || (x.kind == "observation_feature" && x.name == "log_work");
    CHECK(listed);
}

TEST_CASE("feature_registry: bad names, declarations and jobs are ConfigErrors naming them") {
    features_registered r;
    CHECK_THROWS_WITH_AS(gp::register_observation_feature("log_work", "again", log_work_feature),
                         "observation feature \"log_work\" is registered already (log10 of 1 + the job's training steps)", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_observation_feature("priority", "mine", log_work_feature),
                         "observation feature \"priority\" is a job key or a known job field", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_observation_feature("x", "mine", log_work_feature, 1, 1),
                         "observation feature \"x\": range [1.000000, 1.000000]: expected lo < hi", gp::ConfigError);
    CHECK_THROWS_WITH_AS(feature_scenario(R"([{"name": "w", "feature": "log_wrk"}])"),
                         "config /job_fields/0/feature: unknown observation feature \"log_wrk\" (registered: log_work, gpus_per_priority)",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(feature_scenario(R"([{"name": "log_work", "default": 1}])"),
                         "config /job_fields/0: field \"log_work\" is computed by observation feature \"log_work\": no default, draw or categories",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(feature_scenario(R"([{"name": "w", "type": "category", "feature": "log_work"}])"),
                         "config /job_fields/0/name: field \"w\": an observation feature is a number", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::parse_scenario(R"({"job_fields": ["log_work"], "workload": {"kind": "jobs", "jobs": [
                             {"submit_time": 0, "num_gpus": 1, "model": 3, "work": 500, "log_work": 2}]}})"),
                         "config /workload/jobs/0/log_work: field \"log_work\" is computed by observation feature \"log_work\"; a job does not give it",
                         gp::ConfigError);
    // a feature removed after the scenario was read: the env says so
    const auto s = feature_scenario(R"(["log_work"])");
    gp::unregister_observation_feature("log_work");
    CHECK_THROWS_WITH_AS(gp::env{s}, "config /job_fields/0/feature: observation feature \"log_work\" is not registered (any more)", gp::ConfigError);
    // an infinite value is an Error naming the feature and the job
    gp::register_observation_feature("log_work", "infinite", [](const gp::job_feature_view&) { return INFINITY; });
    gp::env e(s);
    CHECK_THROWS_WITH_AS(e.reset(1), doctest::Contains("observation feature \"log_work\": job 0 of the episode of seed 1: value inf"), gp::Error);
}
