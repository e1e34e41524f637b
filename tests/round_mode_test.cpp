// Tests of the round action mode (include/gpuplace/env/round_mode.hpp through basic_env): masks and
// allocations under random play (never a job twice, never beyond the GPUs, stop always legal, the
// locked jobs granted), the reward identity, determinism by seed, the elastic GPU-count step, errors.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/evaluate.hpp>
#include <gpuplace/heuristics.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/registry.hpp>
#include <gpuplace/round_env.hpp>
#include <gpuplace/round_policy_registry.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

constexpr auto none = gp::basic_env<>::none;

gp::scenario round_scenario(const gp::scenario& base, json extra = json::object()) {
    json p = {{"env", {{"action_mode", "round"}, {"slots", 4}}}, {"rounds", {{"length", 600}}}};
    p.merge_patch(extra);
    return with(base, p);
}

gp::scenario small_round(json extra = json::object()) {
    const auto base = small_scenario(dgx_a100_2x4::config(), json{{"1", .4}, {"2", .2}, {"4", .2}, {"8", .2}}, 24, 2.0);
    return round_scenario(base, std::move(extra));
}

bool locked(const gp::env& e, std::uint32_t j) {
    const auto& sim = e.simulator();
    if (!sim.is_running(j)) return false;
    const double u = sim.useful_run_time(j);
    return u <= 0 || u < sim.restart_overhead(j);
}

/// Random play to the end, checking every step's mask and allocation; returns the sum of rewards.
double play(gp::env& e, std::uint64_t seed, double stop_prob, std::size_t* rounds = nullptr) {
    e.reset(seed);
    gp::detail::rng r(seed * 7 + 1);
    const std::size_t A = e.num_actions(), K = A - 1, G = e.num_gpus();
    double sum = 0;
    bool fresh = true;  // a round has just opened
    std::size_t n_rounds = 0;
    while (!e.done()) {
        const auto mask = e.action_mask();
        for (float x : e.observation()) REQUIRE((x >= 0.0f && x <= 1.0f));
        const auto grants = e.round_grants();
        // stop, with env.round_idle: once a job is granted; with none only while arrivals are
        // pending (as wait). Without it (the default) never: a round runs once no job fits
        const bool pending = e.simulator().arrived() < e.simulator().jobs().size(), idle = e.config().env.round_idle;
        REQUIRE((mask[K] != 0) == (idle && (!grants.empty() || (e.config().env.allow_defer && pending))));
        REQUIRE(std::any_of(mask.begin(), mask.end(), [](std::uint8_t m) { return m != 0; }));
        std::size_t used = 0;
        std::vector<std::uint32_t> granted;
        for (const auto& g : grants) {
            used += g.gpus;
            granted.push_back(g.job);
        }
        std::sort(granted.begin(), granted.end());
        REQUIRE(std::adjacent_find(granted.begin(), granted.end()) == granted.end());  // never a job twice
        REQUIRE(used <= G);
        if (fresh) {  // every locked job is granted when the round opens, and only they are
            std::size_t n_locked = 0;
            for (std::uint32_t j = 0; j < e.simulator().jobs().size(); ++j)
                if (locked(e, j)) {
                    ++n_locked;
                    REQUIRE(std::binary_search(granted.begin(), granted.end(), j));
                }
            REQUIRE(grants.size() == n_locked);
        }
        REQUIRE(e.round_choosing() == none);  // no elastic jobs here
        for (std::size_t s = 0; s < K; ++s) {
            const auto j = e.slot_job(s);
            REQUIRE((mask[s] != 0) == (j != none));
            if (j == none) continue;
            REQUIRE(!std::binary_search(granted.begin(), granted.end(), j));  // not granted yet
            REQUIRE(!locked(e, j));
            REQUIRE(e.simulator().job(j).submit_time <= e.now());  // active
            REQUIRE(e.simulator().work_left(j) > 0);
            REQUIRE(used + e.simulator().job(j).num_gpus <= G);    // fits in the GPUs left
        }
        std::int64_t a = std::int64_t(K);
        if (r.uniform() >= stop_prob || !mask[K]) a = random_action(e, r);
        // without round_idle, a grant after which a job still fits in the GPUs left never runs the round
        bool fits_after = false;
        if (a < std::int64_t(K)) {
            std::vector<std::uint8_t> done(e.simulator().jobs().size(), 0);
            for (const auto& f : e.finished()) done[std::size_t(f.id)] = 1;
            const auto chosen = e.slot_job(std::size_t(a));
            const std::size_t left = G - used - e.simulator().job(chosen).num_gpus;
            for (std::uint32_t j = 0; j < e.simulator().jobs().size(); ++j)
                fits_after = fits_after || (j != chosen && j < e.simulator().arrived() && !done[j] &&
                                            !std::binary_search(granted.begin(), granted.end(), j) &&
                                            e.simulator().job(j).num_gpus <= left);
        }
        const auto res = e.step(a);
        if (!idle && res.elapsed > 0) REQUIRE(!fits_after);
        sum += res.reward;
        fresh = res.elapsed > 0;  // a round ran
        n_rounds += fresh;
    }
    if (rounds) *rounds = n_rounds;
    return sum;
}

}  // namespace

TEST_CASE("round mode: masks and allocations under random play, the rewards sum to -(sum of JCTs) / time_scale") {
    for (const bool idle : {false, true}) {
        CAPTURE(idle);
        for (double stop : {0.0, 0.2, 0.7}) {
            for (std::uint64_t seed : {1u, 2u, 3u}) {
                auto s = small_round({{"env", {{"round_idle", idle}}}});
                gp::env e(s);
                CHECK(e.mode() == gp::action_mode::round);
                CHECK(e.num_actions() == 5);
                std::size_t rounds = 0;
                const double sum = play(e, seed, stop, &rounds);
                CHECK(e.terminated());
                CHECK(e.finished().size() == e.simulator().jobs().size());
                CHECK(rounds > 0);
                CHECK(close_rel(sum, -sum_jct(e.finished()) / s.reward.time_scale, 1e-9));
                CHECK(close_rel(e.episode_return(), sum, 1e-12));
            }
        }
    }
}

TEST_CASE("round mode: the heterogeneous preset and restores as long as rounds keep the invariants") {
    auto het = gp::preset_scenario("heterogeneous");
    het.workload.synthetic.num_jobs = 30;
    auto s = round_scenario(het, {{"rounds", {{"length", 360}, {"restore", {{"seconds", 400}}}}}});
    gp::env e(s);
    const auto& lay = e.observation_layout();
    CHECK(lay.front().name == "slot_valid");
    CHECK(std::any_of(lay.begin(), lay.end(), [](const auto& g) { return g.name == "slot_speed_k80"; }));
    CHECK(std::any_of(lay.begin(), lay.end(), [](const auto& g) { return g.name == "slot_on_v100"; }));
    CHECK(lay.back().name == "round");
    const double sum = play(e, 5, 0.3);
    CHECK(close_rel(sum, -sum_jct(e.finished()) / s.reward.time_scale, 1e-9));
}

TEST_CASE("round mode: the same seed gives the same episode, the first-valid heuristic is a full allocation") {
    auto s = small_round();
    gp::env a(s), b(s);
    const double ra = play(a, 9, 0.3), rb = play(b, 9, 0.3);
    CHECK(ra == rb);
    CHECK(a.finished().size() == b.finished().size());
    for (std::size_t i = 0; i < a.finished().size(); ++i) CHECK(a.finished()[i].end == b.finished()[i].end);
    gp::pack_policy p;
    for (auto* e : {&a, &b}) {
        e->reset(4);
        while (!e->done()) {
            const auto act = e->heuristic_action(p);
            CHECK(act == (e->action_mask()[0] ? 0 : std::int64_t(e->num_actions() - 1)));
            e->step(act);
        }
    }
    CHECK(a.episode_return() == b.episode_return());
    // the harness runs it (a heuristic by name acts through heuristic_action)
    const auto rep = gp::evaluate<gp::env>(s, {gp::heuristic<gp::env>("pack")}, {1, 2});
    CHECK(rep.policies.size() == 1);
}

TEST_CASE("round mode: an elastic job's GPU count is a second step under its own mask, other jobs never see it") {
    for (const bool idle : {false, true}) {
        CAPTURE(idle);
        // requests of at most 4 GPUs: each is a count the 4 slots can name (min_gpus + 0 .. 3)
        const auto base = small_scenario(dgx_a100_2x4::config(), json{{"1", .4}, {"2", .3}, {"4", .3}}, 24, 2.0);
        auto s = round_scenario(base, {{"job_fields", json::array({{{"name", "min_gpus"}, {"default", 1}}, {{"name", "max_gpus"}, {"default", 6}}})},
                                       {"env", {{"round_idle", idle}}}});
        gp::env e(s);
        e.reset(3);
        const std::size_t K = e.num_actions() - 1, G = e.num_gpus();
        std::size_t substeps = 0;
        gp::pack_policy p;
        while (!e.done()) {
            const auto mask = e.action_mask();
            if (e.round_choosing() == none && mask[0]) {  // choose the first slot's job
                const auto j = e.slot_job(0);
                const auto k = e.simulator().job(j).num_gpus;
                e.step(0);
                const bool elastic = std::min<std::uint32_t>(1, k) < std::max<std::uint32_t>(6, k);
                REQUIRE(elastic);
                if (e.done() || e.round_choosing() == none) continue;
                REQUIRE(e.round_choosing() == j);
                ++substeps;
                std::size_t used = 0;
                for (const auto& g : e.round_grants()) used += g.gpus;
                const auto m = e.action_mask();
                const std::size_t hi = std::min<std::size_t>(std::max<std::uint32_t>(6, k), G - used);
                for (std::size_t a = 0; a < K; ++a) {
                    CHECK((m[a] != 0) == (1 + a <= hi));  // min_gpus + a GPUs, up to max_gpus and the GPUs left
                    CHECK(e.slot_job(a) == none);
                }
                const bool pending = e.simulator().arrived() < e.simulator().jobs().size();
                CHECK((m[K] != 0) == (idle && (!e.round_grants().empty() || (e.config().env.allow_defer && pending))));
                if (hi < K) CHECK_THROWS_AS(e.step(std::int64_t(hi)), gp::InvalidAction);
                if (substeps % 2 == 1 && m[0]) {
                    e.step(0);  // 1 GPU (min_gpus): the front end grants an elastic job another count than its request
                } else if (k <= hi && k - 1 < K) {  // its own request
                    CHECK(e.heuristic_action(p) == std::int64_t(k - 1));
                    e.step(std::int64_t(k - 1));
                } else {
                    e.step(m[K] ? std::int64_t(K) : 0);  // stop (the allocation runs without it), or its min_gpus
                }
            } else {
                REQUIRE(mask[K]);
                e.step(std::int64_t(K));
            }
        }
        CHECK(substeps > 0);
        CHECK(e.terminated());
        // without the fields (min = max = request) no job sees the GPU-count step
        gp::env f(small_round());
        f.reset(3);
        while (!f.done()) {
            REQUIRE(f.round_choosing() == none);
            f.step(f.action_mask()[0] ? 0 : std::int64_t(K));  // a decision always has a job that fits
        }
    }
}

TEST_CASE("round mode: env.round_advisor class_gittins ranks the slots, its fill is class_gittins's rounds exactly") {
    // random play keeps every invariant with the advisor's slot order and features
    for (std::uint64_t seed : {1u, 2u}) {
        auto s = small_round({{"env", {{"round_advisor", "class_gittins"}}}});
        gp::env e(s);
        const double sum = play(e, seed, 0.0);
        CHECK(e.finished().size() == e.simulator().jobs().size());
        CHECK(close_rel(sum, -sum_jct(e.finished()) / s.reward.time_scale, 1e-9));
    }
    // on hidden-duration Philly the first valid slot at every step is class_gittins's round policy
    auto base = gp::preset_scenario("philly_hidden:e13805");
    base.preemption.enabled = false;
    base.env.order = gp::queue_order::fifo;
    auto rounds = base;
    gp::apply_queue(rounds, "class_gittins");
    const auto policy = gp::round_policy("class_gittins", rounds);
    auto advised = base;
    advised.env.mode = gp::action_mode::round;
    advised.env.round_advisor = "class_gittins";
    gp::env e(advised);
    const auto& lay = e.observation_layout();
    const auto seg = [&](std::string_view n) {
        const auto it = std::find_if(lay.begin(), lay.end(), [&](const auto& g) { return g.name == n; });
        REQUIRE(it != lay.end());
        return *it;
    };
    const auto adv = seg("slot_advised"), rank = seg("slot_advice_rank");
    CHECK(rank.offset == adv.offset + adv.size);
    CHECK(seg("round").offset == rank.offset + rank.size);
    for (std::uint64_t seed : {1000000u, 1000001u}) {
        CAPTURE(seed);
        gp::round_env re(rounds);
        gp::pack_policy placer;
        re.reset(seed);
        auto fn = policy.make(seed);
        re.run(fn, placer);
        e.reset(seed);
        std::size_t decisions = 0, with_advised = 0;
        while (!e.done()) {
            const auto obs = e.observation();
            const auto K = e.num_actions() - 1;
            for (std::size_t k = 0; k + 1 < K && e.action_mask()[k + 1]; ++k)  // the advisor's order: rank falls with the slot
                REQUIRE(obs[rank.offset + k] > obs[rank.offset + k + 1]);
            with_advised += e.action_mask()[0] && obs[adv.offset] == 1.0f;
            ++decisions;
            (void)e.step(e.heuristic_action(placer));
        }
        CHECK(with_advised > decisions / 2);
        REQUIRE(e.finished().size() == re.simulator().finished().size());
        for (std::size_t i = 0; i < e.finished().size(); ++i) {
            CHECK(e.finished()[i].id == re.simulator().finished()[i].id);
            CHECK(e.finished()[i].end == re.simulator().finished()[i].end);
        }
    }
    CHECK_THROWS_WITH_AS(gp::env(small_round({{"env", {{"round_advisor", "las"}}}})),
                         doctest::Contains("config /env/round_advisor: unknown round advisor \"las\" (known: class_gittins)"), gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::env(with(small_scenario(dgx_a100_2x4::config(), json{{"1", 1.0}}, 4, 1.0), {{"env", {{"round_advisor", "class_gittins"}}}})),
                         doctest::Contains("config /env/round_advisor: supported in the round action mode only (env.action_mode \"gpu\")"),
                         gp::ConfigError);
    const auto j = gp::to_json(advised);
    CHECK(j["env"]["round_advisor"] == "class_gittins");
    CHECK(gp::scenario_from_json(j).env.round_advisor == "class_gittins");
    CHECK(!gp::to_json(base)["env"].contains("round_advisor"));
}

TEST_CASE("round mode: invalid actions raise and change nothing, settings it cannot run are ConfigErrors") {
    gp::env e(small_round());
    e.reset(1);
    const auto K = std::int64_t(e.num_actions() - 1);
    std::int64_t masked = -1;
    for (std::int64_t a = 0; a < K; ++a)
        if (!e.action_mask()[std::size_t(a)]) masked = a;
    const std::vector<float> before(e.observation().begin(), e.observation().end());
    CHECK_THROWS_WITH_AS(e.step(K + 1), doctest::Contains("out of range [0, 4] (4 job slots, stop = 4)"), gp::InvalidAction);
    if (masked >= 0) CHECK_THROWS_WITH_AS(e.step(masked), doctest::Contains("holds no job"), gp::InvalidAction);
    CHECK(std::equal(before.begin(), before.end(), e.observation().begin()));
    CHECK_THROWS_WITH_AS(e.step(K), doctest::Contains("stop is not allowed now (a job still fits in the GPUs left"), gp::InvalidAction);
    CHECK(std::equal(before.begin(), before.end(), e.observation().begin()));
    CHECK_THROWS_WITH_AS(e.fork(1), doctest::Contains("round action mode"), gp::StateError);
    CHECK_THROWS_WITH_AS(gp::env(with(small_scenario(dgx_a100_2x4::config(), json{{"1", 1.0}}, 4, 1.0), {{"env", {{"round_idle", true}}}})),
                         doctest::Contains("config /env/round_idle: supported in the round action mode only (env.action_mode \"gpu\")"),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::env(small_round({{"preemption", {{"enabled", true}}}})), doctest::Contains("config /preemption/enabled"),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::env(small_round({{"colocation", {{"enabled", true}}}})), doctest::Contains("config /colocation/enabled"),
                         gp::ConfigError);
    CHECK(gp::parse_action_mode("round") == gp::action_mode::round);
}
