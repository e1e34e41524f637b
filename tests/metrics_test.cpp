// Tests of include/gpuplace/metrics.hpp: percentiles and episode metrics on hand-computed records.

#include <doctest/doctest.h>

#include <vector>

#include <gpuplace/metrics.hpp>
#include <gpuplace/json.hpp>

namespace gp = gpuplace;

TEST_CASE("metrics: percentiles interpolate between ranks") {
    const std::vector<double> v = {1, 2, 3, 4};
    CHECK(gp::percentile_sorted(v, 0.0) == 1.0);
    CHECK(gp::percentile_sorted(v, 1.0) == 4.0);
    CHECK(gp::percentile_sorted(v, 0.5) == 2.5);
    CHECK(gp::percentile_sorted(v, 0.95) == doctest::Approx(3.85));
    const std::vector<double> one = {7};
    CHECK(gp::percentile_sorted(one, 0.99) == 7.0);
    CHECK(gp::percentile_sorted(std::vector<double>{}, 0.5) == 0.0);
}

TEST_CASE("metrics: hand-computed episode") {
    auto rec = [](gp::job_id id, std::uint32_t gpus, double submit, double start, double end, double cost, double sd) {
        gp::job_record r;
        r.id = id;
        r.num_gpus = gpus;
        r.submit = submit;
        r.start = start;
        r.end = end;
        r.ideal_duration = (end - start) / sd;
        r.comm_cost = cost;
        r.slowdown = sd;
        return r;
    };
    // JCTs 100, 300, 50, 200; queueing 0, 100, 0, 50
    const std::vector<gp::job_record> done = {rec(0, 1, 10, 10, 110, 0.0, 1.0), rec(1, 4, 20, 120, 320, 0.5, 2.0),
                                              rec(2, 2, 30, 30, 80, 0.25, 1.0), rec(3, 1, 40, 90, 240, 0.0, 1.5)};
    std::vector<double> scratch;
    const auto m = gp::compute_metrics(done, 5, 8, 10.0, scratch);
    CHECK(m.jobs_done == 4);
    CHECK(m.jobs_total == 5);
    CHECK(m.avg_jct == 162.5);
    CHECK(m.p50_jct == 150.0);                          // between 100 and 200
    CHECK(m.p95_jct == doctest::Approx(200 + 0.85 * 100));  // pos 2.85
    CHECK(m.p99_jct == doctest::Approx(200 + 0.97 * 100));
    CHECK(m.avg_queueing_delay == 37.5);
    CHECK(m.makespan == 310.0);  // 320 - 10
    CHECK(m.total_comm_cost == 0.75);
    CHECK(m.avg_comm_cost == 0.1875);
    CHECK(m.avg_slowdown == 1.375);
    // busy GPU time 1x100 + 4x200 + 2x50 + 1x150 = 1150 over 8 GPUs x 310 s
    CHECK(m.utilization == doctest::Approx(1150.0 / (8 * 310.0)));

    const auto j = to_json(m);
    for (const char* k : {"avg_jct", "p50_jct", "p95_jct", "p99_jct", "avg_queueing_delay", "makespan", "avg_comm_cost",
                          "total_comm_cost", "avg_slowdown", "utilization", "jobs_done", "jobs_total"})
        CHECK(j.contains(k));
    CHECK(j["avg_jct"].get<double>() == 162.5);
    CHECK(j["jobs_done"].get<std::size_t>() == 4);

    const auto empty = gp::compute_metrics({}, 3, 8, 0.0, scratch);
    CHECK(empty.jobs_done == 0);
    CHECK(empty.jobs_total == 3);
    CHECK(empty.avg_jct == 0.0);
    CHECK(empty.makespan == 0.0);
}
