// Tests of include/gpuplace/workload.hpp: the seeded synthetic generator and fixed job lists.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include <gpuplace/workload.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

TEST_CASE("synthetic workload: same seed same jobs, different seed different jobs") {
    const auto zoo = gp::ModelZoo::builtin();
    gp::synthetic_workload w;
    w.num_jobs = 200;
    std::vector<gp::TrainingJob> a, b, c;
    gp::generate_synthetic(w, zoo, 64, 1, a);
    gp::generate_synthetic(w, zoo, 64, 1, b);
    gp::generate_synthetic(w, zoo, 64, 2, c);
    CHECK(a == b);
    CHECK(a != c);
    REQUIRE(a.size() == 200);
    // regenerating into a used vector gives the same jobs
    gp::generate_synthetic(w, zoo, 64, 2, b);
    CHECK(b == c);
}

TEST_CASE("synthetic workload: distributions") {
    const auto zoo = gp::ModelZoo::builtin();
    gp::synthetic_workload w;
    w.num_jobs = 4000;
    w.load = 0.8;
    w.gpu_counts = {{1, 0.5}, {2, 0.0}, {4, 0.25}, {8, 0.25}};
    w.duration_min = 100;
    w.duration_max = 10000;
    std::vector<gp::TrainingJob> jobs;
    gp::generate_synthetic(w, zoo, 64, 7, jobs);
    REQUIRE(jobs.size() == 4000);
    CHECK(jobs.front().submit_time == 0.0);
    double gpu_seconds = 0;
    std::size_t ones = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const auto& j = jobs[i];
        INFO("job ", i);
        REQUIRE(j.id == i);
        if (i > 0) REQUIRE(j.submit_time >= jobs[i - 1].submit_time);
        REQUIRE((j.num_gpus == 1 || j.num_gpus == 4 || j.num_gpus == 8));
        ones += j.num_gpus == 1;
        REQUIRE(j.model < zoo.size());
        // models are measured at the job's GPU count
        REQUIRE(zoo[j.model].max_measured_gpus() >= j.num_gpus);
        // work = duration x consolidated throughput, duration in [min, max]
        const double d = j.work / zoo[j.model].at(j.num_gpus).consolidated;
        REQUIRE(d >= 100 * (1 - 1e-12));
        REQUIRE(d <= 10000 * (1 + 1e-12));
        gpu_seconds += d * j.num_gpus;
    }
    CHECK(std::abs(double(ones) / 4000 - 0.5) < 0.03);
    // offered load = (GPU-seconds / span) / GPUs, close to the target over 4,000 jobs
    const double span = jobs.back().submit_time;
    CHECK(std::abs(gpu_seconds / span / 64 - 0.8) < 0.05);
}

TEST_CASE("synthetic workload: a model mix by name") {
    const auto zoo = gp::ModelZoo::builtin();
    gp::synthetic_workload w;
    w.num_jobs = 300;
    w.models = {{zoo[1].name, 1.0}, {zoo[2].name, 3.0}, {zoo[0].name, 0.0}};
    std::vector<gp::TrainingJob> jobs;
    gp::generate_synthetic(w, zoo, 64, 3, jobs);
    std::size_t n1 = 0, n2 = 0;
    for (const auto& j : jobs) {
        REQUIRE((j.model == 1 || j.model == 2));
        n1 += j.model == 1;
        n2 += j.model == 2;
    }
    CHECK(n2 > 2 * n1);
}

TEST_CASE("workload config: JSON round trip and errors") {
    using gp::detail::json;
    const json j = {{"kind", "synthetic"},  {"num_jobs", 12},       {"load", 0.7},
                    {"duration_min", 5.0},  {"duration_max", 50.0}, {"gpu_counts", {{"1", 0.25}, {"3", 0.75}}},
                    {"models", {{"A3C", 1.0}}}};
    const auto c = gp::workload_from_json(j);
    CHECK(c.synthetic.num_jobs == 12);
    CHECK(c.synthetic.gpu_counts == std::vector<std::pair<std::uint32_t, double>>{{1, 0.25}, {3, 0.75}});
    CHECK(to_json(c) == j);
    const json l = {{"kind", "jobs"},
                    {"jobs", json::array({{{"submit_time", 5.0}, {"num_gpus", 2}, {"model", 1}, {"work", 10.0}},
                                          {{"submit_time", 0.0}, {"num_gpus", 1}, {"model", 0}, {"work", 20.0}}})}};
    const auto cl = gp::workload_from_json(l);
    REQUIRE(cl.jobs.size() == 2);
    CHECK(cl.jobs[0].num_gpus == 2);
    CHECK(cl.jobs[1].work == 20.0);
    CHECK(to_json(cl) == l);
    CHECK_THROWS_WITH_AS((void)gp::workload_from_json(json{{"num_jobz", 3}}),
                         doctest::Contains("config /workload/num_jobz: unknown key \"num_jobz\""), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::workload_from_json(json{{"num_jobs", 0}}),
                         "config /workload/num_jobs: value 0 out of range [1, 10000000]", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::workload_from_json(json{{"gpu_counts", {{"1", 0.0}}}}),
                         "config /workload/gpu_counts: probabilities sum to 0", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::workload_from_json(json{{"models", {{"A3C", "many"}}}}),
                         "config /workload/models/A3C: expected a weight >= 0, got \"many\"", gp::ConfigError);
    CHECK_THROWS_WITH_AS(
        (void)gp::workload_from_json(
            json{{"kind", "jobs"}, {"jobs", json::array({{{"submit_time", 0}, {"num_gpus", 1}, {"model", 0}, {"work", 1}, {"x", 1}}})}}),
        "config /workload/jobs/0/x: unknown key \"x\" (allowed: submit_time, num_gpus, model, work)", gp::ConfigError);
}
