// Regression tests: every bug the fuzzers (fuzz/) or the property tests (tests/property_test.cpp)
// found, as the smallest input that showed it, with the behaviour now expected. Each case names the
// finder and the fix (docs/reliability.md lists them).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include <gpuplace/config.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/policy.hpp>
#include <gpuplace/trace.hpp>
#if __has_include(<gpuplace/rl/checkpoint.hpp>)
#include <gpuplace/rl/checkpoint.hpp>
#include <gpuplace/json.hpp>
#endif

#include "test_util.hpp"

namespace gp = gpuplace;
using json = gp::detail::json;

namespace {

gp::trace read_regression_trace(gp::trace_format f, const std::string& text, gp::trace_options o = {}) {
    std::istringstream in(text);
    return gp::read_trace(f, in, "fuzz", gp::ModelZoo::builtin(), o);
}

}  // namespace

// trace_csv_fuzzer: "#! scale=1e300" over "0,1,1e10" gave a job with infinite work, which the
// simulator would turn into an infinite end time and NaN rewards. Fix (include/gpuplace/trace.hpp):
// finish_trace() refuses scaled submit times or work that are not finite.
TEST_CASE("regression: a time scale that overflows a job's work is a ConfigError, not an infinite job") {
    gp::trace_options o;
    o.time_scale = 1e300;
    CHECK_THROWS_WITH_AS((void)read_regression_trace(gp::trace_format::csv, "submit_time,num_gpus,steps\n0,1,1e10\n", o),
                         "trace options: time_scale 1e+300 and target_load 0.0 overflow the submit time or work of job 0 of fuzz",
                         gp::ConfigError);
    o.time_scale = 1e12;  // the largest a scenario accepts: fine for ordinary values
    const auto t = read_regression_trace(gp::trace_format::csv, "submit_time,num_gpus,steps\n0,1,1e10\n5,1,10\n", o);
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.jobs[0].work == 1e22);
    CHECK(t.jobs[1].submit_time == 5e12);
}

// Same finder: a duration whose work (duration x throughput) overflows, and an openb pod whose run
// time does. Fix: the row is a TraceError naming its line and column (skipped with skip_bad_rows).
TEST_CASE("regression: a duration too large for a finite amount of work is a row error") {
    CHECK_THROWS_WITH_AS((void)read_regression_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,1e308\n"),
                         "fuzz:2:5: duration: value 1e308 is too large", gp::TraceError);
    CHECK_THROWS_WITH_AS(
        (void)read_regression_trace(gp::trace_format::openb,
                   "name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np,1,1000,0,1.7e308,0\n"),
        "fuzz:2:12: deletion_time: run time 1.7e+308 s is too long", gp::TraceError);
    gp::trace_options o;
    o.skip_bad_rows = true;
    const auto t = read_regression_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,1e308\n3,2,60\n", o);
    CHECK(t.jobs.size() == 1);
    CHECK(t.skipped_bad == 1);
    CHECK(t.bad_rows.at(0) == "fuzz:2:5: duration: value 1e308 is too large");
}

// trace_csv_fuzzer: "#! load=nan" was accepted and silently ignored (target_load < 0 is false for
// NaN). Fix: target_load must be >= 0, which NaN is not.
TEST_CASE("regression: a NaN target load is refused") {
    gp::trace_options o;
    o.target_load = std::nan("");
    CHECK_THROWS_WITH_AS((void)read_regression_trace(gp::trace_format::csv, "submit_time,num_gpus,duration\n0,1,60\n", o),
                         "trace options: target_load must be >= 0 (got nan)", gp::ConfigError);
}

// scenario_fuzzer: {"comm": {"model": 5}} built a ring all-reduce env: a non-string model fell
// back to the default without a word. Fix (include/gpuplace/config.hpp): a ConfigError naming
// /comm/model.
TEST_CASE("regression: a comm model that is not a string is a ConfigError") {
    CHECK_THROWS_WITH_AS((void)gp::parse_scenario(R"({"comm": {"model": 5}})"), "config /comm/model: expected a string, got 5",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::parse_scenario(R"({"comm": {"model": null}})"),
                         "config /comm/model: expected a string, got null", gp::ConfigError);
    const auto s = gp::parse_scenario(R"({"comm": {}})");  // absent: the documented default
    CHECK(s.comm.model == "ring_allreduce");
}

// property_test (case 12 of the default sweep): with co-location, metrics::utilization summed GPUs x
// run time over jobs and so counted a shared GPU once per job (1.41 on a 12-GPU cluster). Fix
// (include/gpuplace/env.hpp, episode_metrics): busy GPU-time as the simulator measures it.
TEST_CASE("regression: co-location utilization counts a shared GPU once") {
    const auto s = gp::scenario_from_json(json::parse(R"({
        "colocation": {"enabled": true, "gpu_memory_gb": 18.63, "max_jobs_per_gpu": 3},
        "env": {"allow_defer": false, "backfill": true, "queue_policy": "sjf", "queue_window": 2},
        "reward": {"comm": 0.0, "jct": 0.0, "makespan": 0.0, "placement": 1.0, "time_scale": 240.0},
        "topology": {"gpus_per_node": 3, "nodes_per_rack": 2, "preset": "custom", "racks": 2},
        "workload": {"arrival_rate": 0.0, "kind": "proximity_drl", "max_length": 8, "max_request": 5,
                     "num_jobs": 26, "time_step": 60}})"));
    gp::env e(s);
    gp::first_fit_policy p;
    const auto r = gp::run_episode(e, p, 2201270645664893270ULL);
    REQUIRE(r.terminated);
    double job_gpu_time = 0;
    for (const auto& rec : e.finished()) job_gpu_time += double(rec.num_gpus) * (rec.end - rec.start);
    CHECK(e.simulator().busy_gpu_time() <= job_gpu_time);
    CHECK(r.m.utilization > 0);
    CHECK(r.m.utilization <= 1.0);
    CHECK(r.m.utilization == doctest::Approx(e.simulator().busy_gpu_time() / (12.0 * r.m.makespan)).epsilon(1e-12));
}

// checkpoint_fuzzer: a parameter written 0.701e30879 made nlohmann::json throw
// out_of_range 406 ("number overflow"), which is not a parse_error: it escaped parse_checkpoint as
// an nlohmann exception and terminated the fuzzer. The scenario reader had the same hole. Fix
// (include/gpuplace/json/util.hpp, include/gpuplace/rl/checkpoint.hpp): such a number is
// a ConfigError / CheckpointError naming the source and the byte just past the number (the
// scenario fuzzer then caught that the message had no byte offset, unlike every other JSON error).
TEST_CASE("regression: a JSON number too large for a double is a ConfigError or CheckpointError") {
    CHECK_THROWS_WITH_AS((void)gp::parse_scenario(R"({"env": {"max_time": 1e400}})", "s.json"),
                         "s.json: invalid JSON at byte 26: [json.exception.out_of_range.406] number overflow parsing '1e400' "
                         "(a number too large for a double)",
                         gp::ConfigError);
#if __has_include(<gpuplace/rl/checkpoint.hpp>)
    CHECK_THROWS_WITH_AS((void)gp::rl::parse_checkpoint(R"({"format": "gpuplace-ppo", "params": [0.701e30879]})", "c.json"),
                         "checkpoint c.json: invalid JSON at byte 49: [json.exception.out_of_range.406] number overflow "
                         "parsing '0.701e30879' (a number too large for a double)",
                         gp::CheckpointError);
#endif
}

// scenario_fuzzer: a node latency of 3.3e66 s with co-location on slowed a job down so far that
// its remaining time, finite as a double, overflowed the float the feature is computed in: inf /
// inf gave a NaN remaining-time feature (with co-location off too). Fix: observation_writer's
// remaining() clamps to the largest float, feature 1 (include/gpuplace/observation.hpp); the
// cluster keeps end times below cluster_state::max_end, so the all-GPU loop needs no test
// (include/gpuplace/cluster.hpp).
TEST_CASE("regression: a remaining time beyond the float range is feature 1, not NaN") {
    for (const bool colocation : {true, false}) {
        CAPTURE(colocation);
        auto s = gp::scenario_from_json(json::parse(R"({
            "topology": {"preset": "custom", "racks": 2, "nodes_per_rack": 1, "gpus_per_node": 3, "node_bandwidth": 50,
                         "rack_bandwidth": 10, "spine_bandwidth": 1, "node_latency": 3.3e66, "rack_latency": 1e-05,
                         "spine_latency": 0.0001, "fabric": "switched", "pcie_bandwidth": 8},
            "colocation": {"enabled": true, "max_jobs_per_gpu": 1, "gpu_memory_gb": 40},
            "workload": {"kind": "proximity_drl", "num_jobs": 12, "max_length": 5, "max_request": 6, "time_step": 30,
                         "arrival_rate": 0.01, "models": {"A3C": 1}},
            "env": {"allow_defer": true}})"));
        s.colocation.enabled = colocation;
        gp::env e(s);
        e.reset(0);
        gp::detail::rng r(0);
        bool saturated = false;  // a remaining time of 1 was seen
        const auto& segs = e.observation_layout();
        const auto seg = std::find_if(segs.begin(), segs.end(), [](const auto& x) { return x.name == "gpu_remaining"; });
        REQUIRE(seg != segs.end());
        const auto rem = seg->offset;
        for (std::size_t step = 0; step < 200 && !e.done(); ++step) {
            const auto obs = e.observation();
            for (float x : obs) REQUIRE((std::isfinite(x) && x >= 0.0f && x <= 1.0f));
            for (std::size_t g = 0; g < e.num_gpus(); ++g) saturated |= obs[rem + g] == 1.0f;
            (void)e.step(gp::test::random_action(e, r, 0.2));
        }
        CHECK(saturated);
    }
}
