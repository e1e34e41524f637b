// Tests of include/gpuplace/round_slot_teacher.hpp: round_env_at() is the round-mode env's
// boundary exactly (class_gittins from there plays the env's own rounds to the end); the round
// planner through the slots with a margin nothing beats is the first valid slot (the advisor's
// fill) at every step, and with slots for every job makes each round the planner's allocation; by
// name it is a PPO teacher, and what it cannot run is a ConfigError that says so.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/heuristics.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/rl/ppo_config.hpp>
#include <gpuplace/round_env.hpp>
#include <gpuplace/round_policy_registry.hpp>
#include <gpuplace/round_slot_teacher.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

/// Hidden-duration Philly in the round action mode, class_gittins advising, `slots` slots.
gp::scenario round_mode(std::size_t slots = 8, std::size_t max_steps = 0) {
    auto s = gp::preset_scenario("philly_hidden:e13805");
    s.preemption.enabled = false;
    s.env.order = gp::queue_order::fifo;
    s.env.mode = gp::action_mode::round;
    s.env.round_advisor = "class_gittins";
    s.env.slots = slots;
    s.env.max_steps = max_steps;
    return s;
}

using teacher = gp::basic_round_slot_teacher<gp::env>;

teacher make_teacher(gp::round_rollout_options o, std::uint64_t seed) {
    return teacher(o, gp::detail::round_placer_maker<teacher::round_env_type>("pack", "class_gittins"), seed);
}

std::vector<double> ends(std::span<const gp::job_record> done) {
    std::vector<double> v;
    for (const auto& r : done) v.push_back(r.end);
    return v;
}

std::vector<std::uint32_t> sorted_jobs(std::span<const gp::round_grant> grants) {
    std::vector<std::uint32_t> v;
    for (const auto& g : grants) v.push_back(g.job);
    std::sort(v.begin(), v.end());
    return v;
}

}  // namespace

TEST_CASE("round slot teacher: round_env_at() is the env's boundary, class_gittins from there plays the env's own rounds") {
    const auto s = round_mode();
    gp::pack_policy placer;
    for (const std::size_t from : {0u, 40u}) {  // the first boundary, and 40 decisions into the episode
        CAPTURE(from);
        gp::env e(s);
        e.reset(1000000);
        for (std::size_t k = 0; k < from; ++k) (void)e.step(e.heuristic_action(placer));
        auto r = gp::round_env_at(e, 7);
        CHECK(r.rounds() == 7);
        CHECK(r.view().now() == e.simulator().now());
        auto base = *gp::env_detail::round_env_access::advisor(e);  // the advisor with its episode's state
        gp::pack_policy p;
        p.reset(1000000);
        p.reserve(r.hierarchy());
        gp::round_allocation a;
        while (!r.done()) {
            a.clear();
            base.allocate(r.view(), a);
            r.step(a, p);
        }
        while (!e.done()) (void)e.step(e.heuristic_action(placer));  // the first valid slot: the advisor's fill
        CHECK(ends(r.simulator().finished()) == ends(e.finished()));
    }
    gp::env fresh(s);
    CHECK_THROWS_WITH_AS((void)gp::round_env_at(fresh), doctest::Contains("round_env_at(): the env has not been reset"), gp::StateError);
    auto gpu = s;
    gpu.env.mode = gp::action_mode::placement;
    gpu.env.round_advisor.clear();
    gpu.preemption.enabled = true;
    gpu.env.order = gp::queue_order::las;
    gp::env other(gpu);
    other.reset(1);
    CHECK_THROWS_WITH_AS((void)gp::round_env_at(other), doctest::Contains("the env's action mode is placement, not round"), gp::StateError);
}

TEST_CASE("round slot teacher: with a margin nothing beats it is the first valid slot, step for step") {
    const auto s = round_mode(8, 3000);
    gp::pack_policy placer;
    gp::env e(s), f(s);
    e.reset(1000001);
    f.reset(1000001);
    auto t = make_teacher({.futures = 2, .horizon = 3, .margin = std::numeric_limits<double>::infinity()}, 5);
    std::size_t steps = 0;
    while (!e.done()) {
        const auto a = t.act(e);
        REQUIRE(a == f.heuristic_action(placer));
        (void)e.step(a);
        (void)f.step(a);
        ++steps;
    }
    CHECK(steps == 3000);
    CHECK(t.stats().contested > 0);  // rounds where the planner played its alternatives, and took none
    CHECK(t.stats().overruled == 0);
}

TEST_CASE("round slot teacher: with a slot for every job each round is the planner's allocation") {
    const auto s = round_mode(128, 3000);
    gp::env e(s);
    e.reset(1000002);
    auto t = make_teacher({.futures = 3, .horizon = 4, .margin = 0}, 9);
    std::vector<std::uint32_t> got, want;
    std::size_t seen = 0, compared = 0;
    const auto K = std::int64_t(e.num_actions() - 1);
    while (!e.done()) {
        const auto a = t.act(e);
        if (t.stats().boundaries != seen) {  // a new round planned at this step: the last one was the planner's
            if (seen > 0) {
                CHECK(got == want);
                ++compared;
            }
            want = sorted_jobs(t.planned().grants());
            seen = t.stats().boundaries;
        }
        REQUIRE(a < K);  // a round is filled: a job is chosen while one fits
        got = sorted_jobs(e.round_grants());
        got.insert(std::upper_bound(got.begin(), got.end(), e.slot_job(std::size_t(a))), e.slot_job(std::size_t(a)));
        (void)e.step(a);
    }
    CHECK(compared > 20);
    CHECK(t.stats().overruled > 0);  // some rounds are not class_gittins's
}

TEST_CASE("round slot teacher: by name it acts in the round action mode and is a PPO teacher, repeatably by seed") {
    const auto p = gp::named_policy<gp::env>("rollout2h3:pack+class_gittins", {});
    const auto s = round_mode(8, 300);
    const auto actions = [&](std::uint64_t seed) {
        gp::env e(s);
        e.reset(1000003);
        auto act = p.make(seed);
        std::vector<std::int64_t> v;
        while (!e.done()) {
            v.push_back(act(e));
            (void)e.step(v.back());
        }
        return v;
    };
    CHECK(actions(3) == actions(3));
    CHECK(gp::teacher_policy<gp::env>("rollout2h3:pack+class_gittins").name == "rollout2h3:pack+class_gittins");
    CHECK(gp::rl::teacher_policy<gp::env>("pack").name == "pack");  // the PPO's name for the same function
    CHECK_THROWS_WITH_AS((void)gp::rl::teacher_policy<gp::env>("rollout4:pack_wait+sjf"),
                         doctest::Contains("teacher \"rollout4:pack_wait+sjf\": a rollout planner labels the states the network visits (dagger_teacher)"),
                         gp::ConfigError);
    CHECK(gp::rl::ppo_config::from_json(json{{"teacher", "rollout8h20:pack+class_gittins"}}).teacher == "rollout8h20:pack+class_gittins");
    // outside the round action mode, or without the advisor whose state is its base
    auto no_advisor = s;
    no_advisor.env.round_advisor.clear();
    gp::env e(no_advisor);
    e.reset(1);
    auto act = p.make(1);
    CHECK_THROWS_WITH_AS((void)act(e), doctest::Contains("env.round_advisor \"class_gittins\", its base with the episode's state; the env's action mode is round, without an advisor"),
                         gp::ConfigError);
    // the same refusals before acting (any_policy::check: the PPO's and Python's teachers ask it
    // before any step), and in another action mode
    REQUIRE(p.check);
    CHECK_THROWS_WITH_AS(p.check(e), doctest::Contains("the env's action mode is round, without an advisor"), gp::ConfigError);
    auto gpu_mode = s;
    gpu_mode.env.mode = gp::action_mode::gpu;
    gpu_mode.env.round_advisor.clear();
    CHECK_THROWS_WITH_AS(p.check(gp::env(gpu_mode)), doctest::Contains("the env's action mode is gpu"), gp::ConfigError);
    CHECK_NOTHROW(p.check(gp::env(s)));
    // elastic jobs: no forked futures, a StateError (never a read past the planned jobs) at the
    // first contested round or GPU-count step, the env unchanged
    const auto base = small_scenario(dgx_a100_2x4::config(), json{{"1", .4}, {"2", .3}, {"4", .3}}, 24, 2.0);
    auto elastic = with(base, {{"env", {{"action_mode", "round"}, {"slots", 4}, {"round_advisor", "class_gittins"}}},
                               {"rounds", {{"length", 600}}},
                               {"job_fields", json::array({{{"name", "min_gpus"}, {"default", 1}}, {{"name", "max_gpus"}, {"default", 6}}})}});
    gp::env el(elastic);
    CHECK_THROWS_WITH_AS(p.check(el), doctest::Contains("a scenario with elastic jobs (job fields min_gpus / max_gpus) has none of"),
                         gp::ConfigError);
    el.reset(3);
    auto el_act = p.make(3);
    bool refused = false;
    for (int k = 0; k < 2000 && !el.done() && !refused; ++k) {
        const auto before = el.simulator().now();
        try {
            (void)el.step(el_act(el));
        } catch (const gp::StateError& x) {
            CHECK(std::string(x.what()).find("elastic jobs") != std::string::npos);
            CHECK(el.simulator().now() == before);
            refused = true;
        }
    }
    CHECK(refused);
}
