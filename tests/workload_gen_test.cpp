#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

using namespace gpuplace;

TEST_CASE("workload: Proximity-DRL's workload has its bands and counts") {
    const auto z = ModelZoo::gavel_v100();
    proximity_drl_workload w;
    std::vector<TrainingJob> a, b;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        generate_proximity_drl(w, z, seed, a);
        REQUIRE(a.size() == 30);
        std::size_t one_gpu = 0, big = 0, long_jobs = 0;
        for (const auto& j : a) {
            CHECK(j.num_gpus >= 1);
            CHECK(j.num_gpus <= 8);
            const double exact = j.work / z[j.model].at(j.num_gpus).consolidated / w.time_step;
            const long len = std::lround(exact);
            CHECK(exact == doctest::Approx(double(len)));
            CHECK(len >= 1);
            CHECK(len <= 20);
            CHECK(j.submit_time == 0);
            one_gpu += j.num_gpus == 1;
            big += j.num_gpus >= 5;
            long_jobs += len >= 16;
        }
        // 15 short (1 GPU), 3 medium (2 GPUs), 6 long (2-4 GPUs), 6 extreme (5-8 GPUs); lengths likewise
        CHECK(one_gpu == 15);
        CHECK(big == 6);
        CHECK(long_jobs == 6);
    }
    generate_proximity_drl(w, z, 5, a);
    generate_proximity_drl(w, z, 5, b);
    CHECK(a == b);
    generate_proximity_drl(w, z, 6, b);
    CHECK(a != b);
    w.arrival_rate = 0.01;
    generate_proximity_drl(w, z, 5, a);
    CHECK(a.back().submit_time > 0);
}

TEST_CASE("workload: the proximity_drl preset uses it, same seed same episode") {
    tree_route_env e(preset_scenario("proximity_drl"));
    first_fit_policy p;
    const auto a = run_episode(e, p, 11);
    CHECK(a.m.jobs_total == 30);
    for (std::size_t j = 0; j < 30; ++j) {
        const double d = e.simulator().ideal_duration(std::uint32_t(j)) / 60.0;
        CHECK(d == doctest::Approx(std::round(d)));
    }
    CHECK(run_episode(e, p, 11).m.avg_jct == a.m.avg_jct);
    const auto c = preset_scenario("proximity_drl").workload;
    CHECK(to_json(workload_from_json(to_json(c))) == to_json(c));
}

TEST_CASE("workload: the synthetic generator draws zoo models measured at the GPU count") {
    const auto z = ModelZoo::gavel_v100();
    synthetic_workload w;
    std::vector<TrainingJob> a, b;
    generate_synthetic(w, z, 64, 3, a);
    generate_synthetic(w, z, 64, 3, b);
    CHECK(a == b);
    for (const auto& j : a) CHECK(z[j.model].max_measured_gpus() >= j.num_gpus);
    CHECK_THROWS_WITH_AS(workload_from_json(detail::json{{"kind", "proximity_drl"}, {"load", 1}}),
                         "config /workload/load: unknown key \"load\" (allowed: kind, num_jobs, max_length, max_request, "
                         "time_step, arrival_rate, models)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(workload_from_json(detail::json{{"kind", "poisson"}}),
                         "config /workload/kind: unknown workload kind \"poisson\" (allowed: synthetic, proximity_drl, trace, jobs, mixture)",
                         ConfigError);
}
