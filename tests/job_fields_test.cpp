// Job fields as data (job_fields.hpp): declared in a scenario, carried by `jobs` entries (a model
// by name or id too) and trace rows, kept in the env's side table (job order, forks included),
// shown in the observation when observed, refused when not declared; the default path unchanged.

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;

namespace {

/// Three jobs given out of submit order, with a priority (a known field) and a team (a category of one's own).
gp::scenario fields_scenario(const char* mode = "gpu") {
    return gp::parse_scenario(std::string(R"j({
      "job_fields": [{"name": "priority", "observe": true}, {"name": "team", "type": "category", "default": "ops", "observe": true}],
      "env": {"action_mode": ")j") + mode + R"j("},
      "workload": {"kind": "jobs", "jobs": [
        {"submit_time": 0, "num_gpus": 2, "model": "LM (batch size 20)", "work": 10000, "team": "ml", "priority": 3},
        {"submit_time": 5, "num_gpus": 1, "model": 3, "work": 500, "team": "web"},
        {"submit_time": 1, "num_gpus": 1, "model": 3, "work": 500, "priority": 9}]}})j");
}

}  // namespace

TEST_CASE("job fields: jobs entries carry declared fields into the env's table, in job order") {
    const auto s = fields_scenario();
    gp::env e(s);
    e.reset(0);
    REQUIRE(e.job_fields().size() == 2);
    CHECK(e.job_fields()[0].name == "priority");
    CHECK(e.field_categories(1) == std::vector<std::string>{"ops", "ml", "web"});
    // jobs sorted by submit time: the list's 0, 2, 1
    const auto& sim = e.simulator();
    CHECK(gp::ModelZoo::builtin()[sim.job(0).model].name == "LM (batch size 20)");
    CHECK(e.field_value(0, 0) == 3);
    CHECK(e.field_value(0, 1) == 1);  // ml
    CHECK(e.field_value(1, 0) == 9);
    CHECK(e.field_value(1, 1) == 0);  // the default, ops
    CHECK(e.field_value(2, 0) == 0);  // priority's default
    CHECK(e.field_value(2, 1) == 2);  // web
    // a fork keeps the present jobs' fields
    const auto f = e.fork(5);
    CHECK(f.field_value(0, 0) == 3);
    CHECK(f.field_value(1, 1) == 0);
    // the scenario's JSON reads back to the same scenario
    CHECK(gp::to_json(gp::scenario_from_json(gp::to_json(s))) == gp::to_json(s));
}

TEST_CASE("job fields: observed fields are named features of the current job and the queue, in every mode that shows them") {
    for (const char* mode : {"gpu", "placement"}) {
        INFO(mode);
        gp::env e(fields_scenario(mode));
        const gp::obs_segment* seg = nullptr;
        for (const auto& sg : e.observation_layout())
            if (sg.name == "job_fields") seg = &sg;
        REQUIRE(seg);
        CHECK(seg->size == 2 * (e.config().env.queue_window + 1));
        CHECK(seg->fields[0] == "priority");
        CHECK(seg->fields[3] == "0.team");
        e.reset(0);
        auto pack = gp::heuristic<gp::env>("pack").make(0);
        bool saw = false;
        while (!e.done()) {
            const auto o = e.observation().subspan(seg->offset, seg->size);
            const auto cur = e.current_index();
            CHECK(o[0] == doctest::Approx(e.field_value(cur, 0) / 10.0));                 // priority in [0, 10]
            CHECK(o[1] == doctest::Approx(e.field_value(cur, 1) / 2.0));                  // team: index / (3 - 1)
            saw = saw || o[0] > 0.5f;
            const std::vector<float> inc(e.observation().begin(), e.observation().end());
            e.refresh_observation();
            CHECK(std::equal(inc.begin(), inc.end(), e.observation().begin()));
            e.step(pack(e));
        }
        CHECK(saw);
    }
    // the job mode shows none: refused, saying so
    CHECK_THROWS_WITH_AS(gp::env(fields_scenario("job")), "config /job_fields: \"observe\" is supported in the gpu and placement action modes (not job)",
                         gp::ConfigError);
}

TEST_CASE("job fields: trace rows carry declared fields from columns of their name or mapped to them") {
    auto s = gp::parse_scenario(R"({"job_fields": [{"name": "tenant", "categories": ["a", "b"]}, {"name": "budget", "type": "number", "default": -1}],
        "workload": {"kind": "trace", "format": "csv", "path": "x.csv", "columns": {"tenant": "vc"}, "model": "A3C"}})");
    std::istringstream in("submit_time,num_gpus,duration,vc,budget\n10,1,60,b,5\n0,1,60,a,\n");
    auto o = s.workload.trace_opts;
    o.fields = s.job_fields;
    const auto t = gp::read_trace(gp::trace_format::csv, in, "t", gp::ModelZoo::builtin(), o);
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.field_values == std::vector<double>{0, -1, 1, 5});  // sorted by submit time; an empty budget is its default
    std::istringstream bad("submit_time,num_gpus,duration,vc\n0,1,60,c\n");
    CHECK_THROWS_WITH_AS(gp::read_trace(gp::trace_format::csv, bad, "t", gp::ModelZoo::builtin(), o),
                         "t:2:8: vc: unknown category \"c\" (allowed: a, b)", gp::TraceError);
}

TEST_CASE("job fields: a field not declared is refused with its name, declarations are checked") {
    const auto fails = [](const char* text) {
        try {
            (void)gp::parse_scenario(text);
        } catch (const gp::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(fails(R"({"workload": {"kind": "jobs", "jobs": [{"submit_time": 0, "num_gpus": 1, "model": 0, "work": 1, "team": "a"}]}})") ==
          "config /workload/jobs/0/team: unknown field \"team\" (allowed: submit_time, num_gpus, model, work; a field of one's own must "
          "be declared in /job_fields)");
    CHECK(fails(R"({"job_fields": ["team"]})") ==
          "config /job_fields/0: unknown field \"team\": give its \"type\" (number or category), or declare a known one (tenant, "
          "priority, deadline, min_gpus, max_gpus) or a registered observation feature");
    CHECK(fails(R"({"job_fields": ["priority", "priority"]})") == "config /job_fields/1: field \"priority\" is declared twice");
    CHECK(fails(R"({"job_fields": [{"name": "work", "type": "number"}]})") == "config /job_fields/0/name: \"work\" is a job key already, not a field");
    CHECK(fails(R"({"job_fields": [{"name": "team", "type": "category"}], "workload": {"kind": "jobs", "jobs": [{"submit_time": 0,
                 "num_gpus": 1, "model": 0, "work": 1}]}})") == "config /workload/jobs/0: missing field \"team\" (declared in /job_fields without a default)");
    CHECK(fails(R"({"job_fields": ["priority"], "workload": {"kind": "jobs", "jobs": [{"submit_time": 0, "num_gpus": 1, "model": 0,
                 "work": 1, "priority": "high"}]}})") == "config /workload/jobs/0/priority: expected a number, got \"high\"");
    CHECK(fails(R"({"workload": {"kind": "jobs", "jobs": [{"submit_time": 0, "num_gpus": 1, "model": "GPT-5", "work": 1}]}})") ==
          "no error");  // a model name is checked against the zoo when the env is built
    try {
        (void)gp::env(gp::parse_scenario(R"({"workload": {"kind": "jobs", "jobs": [{"submit_time": 0, "num_gpus": 1, "model": "GPT-5", "work": 1}]}})"));
        FAIL("no error");
    } catch (const gp::ConfigError& e) {
        CHECK(std::string(e.what()).starts_with("config /workload/jobs/0/model: model zoo: unknown model \"GPT-5\" (known: "));
    }
}

TEST_CASE("job fields: without declared fields the observation and the job records are as they were") {
    const gp::env e(gp::default_scenario());
    for (const auto& sg : e.observation_layout()) CHECK(sg.name != "job_fields");
    CHECK(e.job_fields().empty());
    static_assert(sizeof(gp::TrainingJob) <= 40, "the hot job record does not grow");
}

TEST_CASE("job fields: a generated workload draws its fields from a stream of their own, its jobs are the same without them") {
    auto plain = gp::default_scenario();
    plain.workload.synthetic.num_jobs = 30;
    auto with = plain;
    with.job_fields = gp::job_fields_from_json(gp::parse_json(R"([{"name": "team", "type": "category", "draw": {"a": 1, "b": 1}},
                                                                  {"name": "priority", "draw": [2, 4]}])",
                                                              "test"));
    gp::env a(plain), b(with), c(with);
    a.reset(11), b.reset(11), c.reset(11);
    auto pa = gp::heuristic<gp::env>("pack").make(0), pb = gp::heuristic<gp::env>("pack").make(0);
    std::size_t seen_a = 0;
    for (std::uint32_t j = 0; j < 30; ++j) {
        CHECK(b.field_value(j, 1) >= 2);
        CHECK(b.field_value(j, 1) < 4);
        CHECK(b.field_value(j, 0) == c.field_value(j, 0));
        seen_a += b.field_value(j, 0) == 0;
    }
    CHECK(seen_a > 5);
    CHECK(seen_a < 25);
    while (!a.done()) {  // the fields observed by none: the same episode, bit for bit
        REQUIRE(std::equal(a.observation().begin(), a.observation().end(), b.observation().begin(), b.observation().end()));
        CHECK(a.step(pa(a)).reward == b.step(pb(b)).reward);
    }
    CHECK(b.done());
}
