// Tests of include/gpuplace/config.hpp: the embedded scenarios, JSON round trips, and errors that
// name the JSON path and the bad value.

#include <doctest/doctest.h>

#include <string>

#include <gpuplace/config.hpp>
#include <gpuplace/env.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {
std::string parse_error(std::string_view text) {
    try {
        (void)gp::parse_scenario(text, "test.json");
    } catch (const gp::ConfigError& e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST_CASE("config: the default scenario") {
    const auto s = gp::default_scenario();
    CHECK(s.name == "default");
    CHECK(s.workload.kind == "synthetic");
    CHECK(s.workload.synthetic.num_jobs == 160);
    CHECK(s.workload.synthetic.load == 1.0);
    CHECK(s.env.order == gp::queue_order::fifo);
    CHECK(s.env.backfill);
    CHECK(s.env.allow_defer);  // a scheduler may hold a job back (docs/ppo.md: what PPO learns with it)
    CHECK(s.env.queue_window == 8);
    CHECK(s.reward.jct == 1.0);
    CHECK(s.reward.time_scale == 3600.0);
    const auto t = gp::TreeTopology::from_config(s.topology);
    CHECK(t.num_gpus() == 64);
    CHECK(t.name() == "dgx_a100");
    // every preset parses and builds an env of its comm model
    CHECK(gp::preset_scenario("proximity_drl").comm.model == "tree_route");
    CHECK(gp::tree_route_env(gp::preset_scenario("proximity_drl")).num_gpus() == 32);
    CHECK_THROWS_WITH_AS((void)gp::preset_scenario("nope"),
                         doctest::Contains("unknown scenario preset \"nope\" (allowed: default, proximity_drl"),
                         gp::ConfigError);
}

TEST_CASE("config: JSON round trip") {
    const auto s = gp::parse_scenario(R"({
        "name": "rt", "topology": {"preset": "dgx1", "racks": 1, "nodes_per_rack": 2},
        "comm": {"model": "tree_route", "slowdown_exponent": 0.5},
        "workload": {"kind": "synthetic", "num_jobs": 7, "load": 0.5, "gpu_counts": {"1": 0.5, "2": 0.5},
                     "duration_min": 10, "duration_max": 20},
        "env": {"queue_policy": "sjf", "backfill": false, "allow_defer": true, "queue_window": 3,
                "max_steps": 100, "max_time": 5000},
        "reward": {"jct": 0.5, "makespan": 0.25, "comm": 0.125, "placement": 2, "time_scale": 60}})");
    CHECK(s.env.order == gp::queue_order::sjf);
    CHECK(!s.env.backfill);
    CHECK(s.env.allow_defer);
    CHECK(s.env.queue_window == 3);
    CHECK(s.env.max_steps == 100);
    CHECK(s.env.max_time == 5000.0);
    CHECK(s.reward.placement == 2.0);
    CHECK(s.reward.time_scale == 60.0);
    CHECK(s.workload.synthetic.gpu_counts.size() == 2);
    const auto back = gp::scenario_from_json(gp::to_json(s));
    CHECK(gp::to_json(back) == gp::to_json(s));
    CHECK(gp::to_json(gp::scenario_from_json(gp::to_json(gp::default_scenario()))) == gp::to_json(gp::default_scenario()));
    // an empty document is the built-in defaults
    CHECK(gp::to_json(gp::parse_scenario("{}")) == gp::to_json(gp::scenario{}));
}

TEST_CASE("config: errors name the JSON path and the value") {
    CHECK(parse_error(R"({"foo": 1})") ==
          "config /foo: unknown key \"foo\" (allowed: name, topology, comm, zoo, workload, env, reward, colocation, durations, preemption, job_fields, rounds, failures, tenants, spot, deadlines, observation)");
    CHECK(parse_error(R"({"env": {"queue_policy": "lifo"}})") ==
          "config /env/queue_policy: unknown queue policy \"lifo\" (allowed: fifo, sjf, fewest_gpus, las, 2d_las, gittins, srtf, capacity, drf, themis, edf, edf_ac)");
    CHECK(parse_error(R"({"env": {"backfill": "yes"}})") == "config /env/backfill: expected true or false, got \"yes\"");
    CHECK(parse_error(R"({"env": {"queue_window": -1}})") == "config /env/queue_window: value -1 out of range [0, 1024]");
    CHECK(parse_error(R"({"env": {"max_time": "1h"}})") == "config /env/max_time: expected a number, got \"1h\"");
    CHECK(parse_error(R"({"env": {"deferral": true}})") ==
          "config /env/deferral: unknown key \"deferral\" (allowed: queue_policy, backfill, allow_defer, queue_window, "
          "max_steps, max_time, action_mode, slots, placer, confine_type, round_idle, round_advisor)");
    CHECK(parse_error(R"({"reward": {"time_scale": 0}})") ==
          "config /reward/time_scale: value 0 out of range [1e-12, 1e+300]");
    CHECK(parse_error(R"({"reward": {"jct": null}})") == "config /reward/jct: expected a number, got null");
    CHECK(parse_error(R"({"topology": [1, 2]})") == "config /topology: expected an object, got [1,2]");
    CHECK(parse_error(R"({"zoo": 3})") == "config /zoo: expected a file name or an object, got 3");
    CHECK(parse_error(R"({"workload": {"kind": "replay"}})") ==
          "config /workload/kind: unknown workload kind \"replay\" (allowed: synthetic, proximity_drl, trace, jobs, mixture)");
    CHECK(parse_error(R"({"workload": {"load": 0}})") == "config /workload/load: value 0 out of range [1e-06, 1000000.0]");
    CHECK(parse_error(R"({"workload": {"gpu_counts": {"two": 1}}})") ==
          "config /workload/gpu_counts/two: GPU count \"two\" is not an integer >= 1");
    CHECK(parse_error(R"({"workload": {"gpu_counts": {"2": -1}}})") ==
          "config /workload/gpu_counts/2: expected a probability >= 0 or a range [lo, hi], got -1");
    CHECK(parse_error(R"({"workload": {"duration_min": 100, "duration_max": 10}})") ==
          "config /workload/duration_max: value 10.000000 is below duration_min 100.000000");
    CHECK(parse_error(R"({"workload": {"kind": "jobs", "jobs": [{"submit_time": 0, "num_gpus": 1, "model": 0}]}})") ==
          "config /workload/jobs/0: missing key \"work\"");
    CHECK(parse_error(R"({"workload": {"kind": "jobs", "jobs": [{"submit_time": 0, "num_gpus": 0, "model": 0, "work": 1}]}})") ==
          "config /workload/jobs/0/num_gpus: value 0 out of range [1, 16777216]");
    CHECK(parse_error(R"({"workload": {"kind": "jobs"}})") == "config /workload/jobs: kind \"jobs\" needs a job list");
    // the topology, the comm model and an inline zoo are read with the scenario
    CHECK_THROWS_WITH_AS(gp::env(gp::parse_scenario(R"({"topology": {"preset": "dgx_a100", "racks": 0}})")),
                         "config /topology/racks: value 0 out of range [1, 65536]", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::tree_route_env(gp::parse_scenario(R"({"comm": {"model": "tree_route", "rack_weight": "x"}})")),
                         "config /comm/rack_weight: expected a number, got \"x\"", gp::ConfigError);
    CHECK_THROWS_WITH_AS(
        gp::env(gp::parse_scenario(R"({"zoo": {"models": [{"name": "m", "throughput": {"x": [1, 1]}}]}})")),
        "config /zoo/models/0/throughput/x: GPU count \"x\" is not an integer in [1, 65536]", gp::ConfigError);
}

TEST_CASE("config: malformed JSON names the source and the byte") {
    const auto e = parse_error("{\"env\": {\"backfill\": tru}}");
    INFO(e);
    CHECK(e.rfind("test.json: invalid JSON at byte 25: ", 0) == 0);
    const auto e2 = parse_error("{\"name\": \"x\",}");
    INFO(e2);
    CHECK(e2.rfind("test.json: invalid JSON at byte 14: ", 0) == 0);
    CHECK_THROWS_WITH_AS((void)gp::load_scenario("/nonexistent/scenario.json"),
                         "cannot open scenario file \"/nonexistent/scenario.json\"", gp::ConfigError);
}
