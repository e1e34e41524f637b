// Tests of include/gpuplace/reward_registry.hpp: a reward term registered with one call is weighed
// by name in a scenario's "reward", adds weight x term(job) for each job that finishes (the
// episode's return is the sum over its jobs), is listed by the registry under kind "reward_term",
// and refuses bad names by name. Every registration is undone before its test ends.

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/registry.hpp>
#include <gpuplace/reward_registry.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using gp::test::json;

namespace {

/// Hours a job ran past twice its ideal duration since submit (a deadline-like penalty), negated.
double late_hours(const gp::job_record& r, const gp::reward_term_view& v) {
    CHECK(v.num_gpus == 16);
    CHECK(v.now == r.end);
    return -std::max(0.0, r.end - r.submit - 2 * r.ideal_duration) / v.time_scale;
}

/// Plays pack over episode `seed` of `s`; returns the episode's return and the finished jobs' records.
std::pair<double, std::vector<gp::job_record>> play(const gp::scenario& s, std::uint64_t seed) {
    gp::env e(s);
    e.reset(seed);
    gp::pack_policy pack;
    while (!e.done()) e.step(e.heuristic_action(pack));
    return {e.episode_return(), {e.finished().begin(), e.finished().end()}};
}

struct registered {
    registered() { gp::register_reward_term("late_hours", "-hours past submit + 2 x ideal duration", late_hours); }
    ~registered() { gp::unregister_reward_term("late_hours"); }
};

gp::scenario busy(const json& reward) {
    json j = {{"topology", {{"preset", "dgx_a100"}, {"racks", 1}, {"nodes_per_rack", 2}}},
              {"workload", {{"kind", "synthetic"}, {"num_jobs", 30}, {"load", 2.0}, {"gpu_counts", {{"2", 0.5}, {"4", 0.5}}}}},
              {"reward", reward}};
    return gp::scenario_from_json(j);
}

}  // namespace

TEST_CASE("reward_registry: a registered term adds weight x term(job) for each finished job") {
    registered r;
    // alone: the return is exactly the weighted sum over the finished jobs, in finishing order
    const auto [ret, jobs] = play(busy({{"jct", 0}, {"late_hours", 0.5}}), 3);
    REQUIRE(jobs.size() == 30);
    double sum = 0;
    for (const auto& j : jobs) sum += 0.5 * late_hours(j, {16, 3600, j.end});
    CHECK(sum < 0);  // some jobs ran late
    CHECK(ret == doctest::Approx(sum).epsilon(1e-12));
    // beside the JCT term: the two add up, and the JCT part is the default return
    const auto [both, jobs2] = play(busy({{"late_hours", 0.5}}), 3);
    const auto [plain, jobs3] = play(busy(json::object()), 3);
    CHECK(both == doctest::Approx(plain + sum).epsilon(1e-12));
    CHECK(jobs2.size() == jobs3.size());
    // the scenario's JSON writes it back by name
    CHECK(gp::to_json(busy({{"late_hours", 0.5}}))["reward"]["late_hours"] == 0.5);
    // listed by the registry
    bool listed = false;
    for (const auto& e : gp::registry_entries()) listed = listed || (e.kind == "reward_term" && e.name == "late_hours");
    CHECK(listed);
}

TEST_CASE("reward_registry: unknown and unregistered terms, and bad names, are ConfigErrors naming them") {
    CHECK_THROWS_WITH_AS(busy({{"lateness", 1}}), doctest::Contains("config /reward/lateness: unknown key \"lateness\" (allowed: jct, makespan, "
                                                                    "comm, placement, time_scale, deadline_miss, wasted, unfairness)"),
                         gp::ConfigError);
    gp::scenario s;
    {
        registered r;
        s = busy({{"late_hours", 1}});
        CHECK_THROWS_WITH_AS(busy({{"lateness", 1}}), doctest::Contains("unfairness, late_hours)"), gp::ConfigError);
        CHECK_THROWS_WITH_AS(gp::register_reward_term("late_hours", "again", late_hours),
                             "reward term \"late_hours\" is registered already (-hours past submit + 2 x ideal duration)", gp::ConfigError);
        CHECK_THROWS_WITH_AS(gp::register_reward_term("jct", "mine", late_hours), "reward term \"jct\" is a built-in reward key",
                             gp::ConfigError);
        CHECK_THROWS_WITH_AS(gp::register_reward_term("x", "none", nullptr), "reward term \"x\": no function", gp::ConfigError);
    }
    // read while it was registered, built after it was removed
    CHECK_THROWS_WITH_AS(gp::env{s}, "config /reward/late_hours: no reward term is registered as \"late_hours\" (registered: none)",
                         gp::ConfigError);
}
