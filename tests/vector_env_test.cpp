// Tests of include/gpuplace/vector_env.hpp: a vector env gives exactly the results of N separate
// envs, with any number of threads, including the final observation and info at autoreset.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/vector_env.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

bool same_metrics(const gp::metrics& a, const gp::metrics& b) {
    return a.avg_jct == b.avg_jct && a.p50_jct == b.p50_jct && a.p95_jct == b.p95_jct && a.p99_jct == b.p99_jct &&
           a.avg_queueing_delay == b.avg_queueing_delay && a.makespan == b.makespan &&
           a.avg_comm_cost == b.avg_comm_cost && a.total_comm_cost == b.total_comm_cost &&
           a.avg_slowdown == b.avg_slowdown && a.utilization == b.utilization && a.jobs_done == b.jobs_done &&
           a.jobs_total == b.jobs_total;
}

/// Steps a vector env and N reference envs side by side until every env has finished
/// `min_episodes` episodes; checks they agree bit for bit. Returns every observation seen.
std::vector<float> run_side_by_side(const gp::scenario& s, std::size_t N, std::size_t threads, std::uint64_t seed,
                                    std::uint64_t min_episodes, bool adaptive = true) {
    gp::vector_env v(s, N, threads);
    REQUIRE(v.adaptive_threads());
    v.set_adaptive_threads(adaptive);
    REQUIRE(v.num_envs() == N);
    REQUIRE(v.num_threads() == std::min(threads, N));
    std::vector<gp::env> ref(N, gp::env(s));
    std::vector<gp::detail::rng> rngs;
    std::vector<std::uint64_t> episode(N, 0);
    for (std::size_t i = 0; i < N; ++i) {
        ref[i].reset(gp::episode_seed(seed, i, 0));
        rngs.emplace_back(1000 + i);
    }
    v.reset(seed);
    const std::size_t O = v.observation_size(), A = v.num_actions();
    auto rows_match = [&] {
        for (std::size_t i = 0; i < N; ++i) {
            REQUIRE(same_bytes(v.observations().subspan(i * O, O), ref[i].observation()));
            REQUIRE(same_bytes(v.action_masks().subspan(i * A, A), ref[i].action_mask()));
        }
    };
    rows_match();
    std::vector<float> trace(v.observations().begin(), v.observations().end());
    std::vector<std::int64_t> actions(N);
    std::size_t autoresets = 0;
    for (std::size_t step = 0; step < 100000; ++step) {
        bool enough = true;
        for (auto e : episode) enough = enough && e >= min_episodes;
        if (enough) break;
        for (std::size_t i = 0; i < N; ++i) actions[i] = random_action(ref[i], rngs[i], 0.2);
        v.step(actions);
        for (std::size_t i = 0; i < N; ++i) {
            const auto r = ref[i].step(actions[i]);
            REQUIRE(v.rewards()[i] == r.reward);
            REQUIRE(bool(v.terminated()[i]) == r.terminated);
            REQUIRE(bool(v.truncated()[i]) == r.truncated);
            if (r.terminated || r.truncated) {
                ++autoresets;
                // the final observation and info of the finished episode are kept
                REQUIRE(same_bytes(v.final_observations().subspan(i * O, O), ref[i].observation()));
                const auto& f = v.final(i);
                REQUIRE(f.episode_return == ref[i].episode_return());
                REQUIRE(f.length == ref[i].steps());
                REQUIRE(f.seed == ref[i].seed());
                REQUIRE(f.seed == gp::episode_seed(seed, i, episode[i]));
                REQUIRE(same_metrics(f.m, ref[i].episode_metrics()));
                ref[i].reset(gp::episode_seed(seed, i, ++episode[i]));
            }
            REQUIRE(v.episode(i) == episode[i]);
        }
        rows_match();
        trace.insert(trace.end(), v.observations().begin(), v.observations().end());
    }
    CHECK(autoresets >= N * min_episodes);
    return trace;
}

}  // namespace

TEST_CASE("vector env: exactly N separate envs, with 1 and 2 threads, across autoresets") {
    const auto s = with(small_scenario(proximity_drl_topo::config(), {{"1", .4}, {"2", .3}, {"4", .2}, {"8", .1}}, 6),
                        {{"env", {{"allow_defer", true}}}});
    const auto one = run_side_by_side(s, 3, 1, 77, 3);
    const auto two = run_side_by_side(s, 3, 2, 77, 3);
    CHECK(same_bytes<float>(one, two));
    // a thread per env; the results do not change
    const auto many = run_side_by_side(s, 3, 3, 77, 3);
    CHECK(same_bytes<float>(one, many));
    // another seed gives other episodes
    const auto other = run_side_by_side(s, 3, 2, 78, 1);
    CHECK(!same_bytes<float>(std::span<const float>(one).first(other.size() < one.size() ? other.size() : one.size()),
                             std::span<const float>(other).first(other.size() < one.size() ? other.size() : one.size())));
}

TEST_CASE("vector env: adaptive threads step on one thread or on all, with the same results") {
    const auto s = with(small_scenario(proximity_drl_topo::config(), {{"1", .4}, {"2", .3}, {"4", .2}, {"8", .1}}, 6),
                        {{"env", {{"allow_defer", true}}}});
    // enough steps for several measurements (every recalibrate_steps steps, half of each on one thread)
    const auto one = run_side_by_side(s, 3, 1, 91, 300);
    CHECK(one.size() / (3 * gp::vector_env(s, 3, 1).observation_size()) > 2 * gp::vector_env::recalibrate_steps);
    CHECK(same_bytes<float>(one, run_side_by_side(s, 3, 2, 91, 300)));                       // adaptive (the default)
    CHECK(same_bytes<float>(one, run_side_by_side(s, 3, 2, 91, 300, /*adaptive=*/false)));  // every step on both threads
    gp::vector_env v(s, 3, 2);
    v.reset(1);
    std::vector<std::int64_t> acts(3);
    for (std::size_t k = 0; k < gp::vector_env::calibrate_steps + 1; ++k) v.step_random(acts);
    CHECK((v.active_threads() == 1 || v.active_threads() == 2));  // whichever measured faster
    v.set_adaptive_threads(false);
    v.step_random(acts);
    CHECK(v.active_threads() == 2);
}

TEST_CASE("vector env: truncation autoresets too") {
    const auto s = with(small_scenario(tiny_topo::config(), {{"1", .5}, {"2", .5}}, 10), {{"env", {{"max_steps", 4}}}});
    (void)run_side_by_side(s, 2, 2, 5, 3);
    gp::vector_env v(s, 2, 1);
    v.reset(5);
    std::vector<std::int64_t> a(2);
    for (int k = 0; k < 4; ++k) {
        for (std::size_t i = 0; i < 2; ++i) {
            const auto m = v.action_masks().subspan(i * v.num_actions(), v.num_actions());
            a[i] = std::find(m.begin(), m.end(), std::uint8_t{1}) - m.begin();
        }
        v.step(a);
    }
    CHECK(v.truncated()[0] == 1);
    CHECK(v.terminated()[0] == 0);
    CHECK(v.final(0).length == 4);
    CHECK(v.episode(0) == 1);
    CHECK(v.env(0).steps() == 0);  // already reset for the next episode
}

TEST_CASE("vector env: bad input") {
    const auto s = small_scenario(proximity_drl_topo::config(), {{"1", .5}, {"2", .5}}, 6);
    CHECK_THROWS_WITH_AS(gp::vector_env(s, 0), "vector env: num_envs must be >= 1", gp::ConfigError);
    gp::vector_env v(s, 3, 2);
    std::vector<std::int64_t> a = {0, 0, 0};
    CHECK_THROWS_WITH_AS(v.step(a), "vector env: step() called before reset()", gp::StateError);
    v.reset(1);
    CHECK_THROWS_WITH_AS(v.step(std::span<const std::int64_t>(a).first(2)), "vector env: got 2 actions for 3 envs",
                         gp::InvalidAction);
    // an invalid action in one env changes no env
    gp::detail::rng r(3);
    for (std::size_t i = 0; i < 3; ++i) a[i] = random_action(v.env(i), r);
    (void)v.step(a);
    const std::vector<float> obs(v.observations().begin(), v.observations().end());
    const std::vector<std::uint8_t> mask(v.action_masks().begin(), v.action_masks().end());
    const std::vector<double> rew(v.rewards().begin(), v.rewards().end());
    std::vector<std::size_t> steps;
    for (std::size_t i = 0; i < 3; ++i) steps.push_back(v.env(i).steps());
    for (std::size_t i = 0; i < 3; ++i) {
        const auto m = v.action_masks().subspan(i * v.num_actions(), v.num_actions());
        a[i] = std::find(m.begin(), m.end(), std::uint8_t{1}) - m.begin();
    }
    a[1] = 99;
    CHECK_THROWS_WITH_AS(v.step(a), "vector env: env 1: invalid action 99: out of range [0, 32] (32 GPUs, DEFER = 32)",
                         gp::InvalidAction);
    a[1] = 32;
    CHECK_THROWS_WITH_AS(v.step(a), "vector env: env 1: invalid action 32: DEFER is disabled (env.allow_defer = false)",
                         gp::InvalidAction);
    CHECK(same_bytes<float>(obs, v.observations()));
    CHECK(mask == std::vector<std::uint8_t>(v.action_masks().begin(), v.action_masks().end()));
    CHECK(same_bytes<double>(rew, v.rewards()));
    for (std::size_t i = 0; i < 3; ++i) CHECK(v.env(i).steps() == steps[i]);
}

TEST_CASE("vector env: episode seeds") {
    // distinct per env and per episode, and a pure function of (seed, index, episode)
    CHECK(gp::episode_seed(1, 0, 0) == gp::episode_seed(1, 0, 0));
    CHECK(gp::episode_seed(1, 0, 0) != gp::episode_seed(1, 1, 0));
    CHECK(gp::episode_seed(1, 0, 0) != gp::episode_seed(1, 0, 1));
    CHECK(gp::episode_seed(1, 0, 0) != gp::episode_seed(2, 0, 0));
    CHECK(gp::episode_seed(1, 1, 0) != gp::episode_seed(1, 0, 1));
    static_assert(gp::episode_seed(3, 4, 5) == gp::episode_seed(3, 4, 5));
}

TEST_CASE("vector env: step_random() is sample_valid_actions() then step(), whatever the thread count") {
    const auto s = with(small_scenario(proximity_drl_topo::config(), {{"1", .4}, {"2", .3}, {"4", .2}, {"8", .1}}, 6),
                        {{"env", {{"allow_defer", true}}}});
    const std::size_t N = 5;
    // reference: sampled actions, then step(); obs_out receives the observations after the step
    auto run = [&](std::size_t threads, bool fused) {
        gp::vector_env v(s, N, threads);
        v.reset(11);
        const std::size_t O = v.observation_size(), A = v.num_actions();
        std::vector<std::int64_t> a(N);
        std::vector<float> obs_out(N * O, -1.0f);
        std::vector<float> trace;
        std::size_t ended_total = 0;
        for (int t = 0; t < 400; ++t) {
            std::size_t ended = 0;
            if (fused) {
                ended = v.step_random(a, obs_out);
            } else {
                v.sample_valid_actions(a);
                ended = v.step(a, obs_out);
            }
            REQUIRE(same_bytes<float>(obs_out, v.observations()));
            std::size_t dones = 0;
            for (std::size_t i = 0; i < N; ++i) {
                REQUIRE(a[i] >= 0);
                REQUIRE(a[i] < static_cast<std::int64_t>(A));
                REQUIRE(v.dones()[i] == (v.terminated()[i] | v.truncated()[i]));
                dones += v.dones()[i];
                trace.push_back(static_cast<float>(a[i]));
                trace.push_back(static_cast<float>(v.rewards()[i]));
            }
            REQUIRE(ended == dones);
            ended_total += ended;
            trace.insert(trace.end(), v.observations().begin(), v.observations().end());
        }
        CHECK(ended_total > 0);  // autoresets were exercised
        return trace;
    };
    const auto ref = run(1, false);
    CHECK(same_bytes<float>(ref, run(1, true)));
    CHECK(same_bytes<float>(ref, run(2, true)));
    CHECK(same_bytes<float>(ref, run(3, false)));
    CHECK(same_bytes<float>(ref, run(5, true)));  // one thread per env
    CHECK_THROWS_WITH_AS(gp::vector_env(gp::default_scenario(), 5, 8),
                         "vector env: num_threads 8 out of range [1, 5] (each thread steps at least one of the 5 envs)",
                         gp::ConfigError);
    CHECK_THROWS_AS(gp::vector_env(gp::default_scenario(), 5, 0), gp::ConfigError);
    // the actions are those of the sampler seeds: env i's stream is a function of (seed, i)
    CHECK(gp::sampler_seed(11, 0) != gp::sampler_seed(11, 1));
    CHECK(gp::sampler_seed(11, 0) != gp::sampler_seed(12, 0));
    CHECK(gp::sampler_seed(11, 0) != gp::episode_seed(11, 0, 0));
}

TEST_CASE("vector env: sample_valid_actions() draws uniformly among the valid actions") {
    const auto s = with(small_scenario(proximity_drl_topo::config(), {{"1", .5}, {"2", .5}}, 6),
                        {{"env", {{"allow_defer", true}}}});
    gp::vector_env v(s, 2, 1);
    v.reset(4);
    // make some GPUs busy so that the mask has holes, then draw many times from one state
    std::vector<std::int64_t> a(2);
    for (int t = 0; t < 6; ++t) v.step_random(a);
    const std::size_t A = v.num_actions();
    std::vector<std::size_t> count(2 * A, 0);
    const int draws = 40000;
    for (int t = 0; t < draws; ++t) {
        v.sample_valid_actions(a);
        for (std::size_t i = 0; i < 2; ++i) ++count[i * A + static_cast<std::size_t>(a[i])];
    }
    for (std::size_t i = 0; i < 2; ++i) {
        const auto m = v.action_masks().subspan(i * A, A);
        std::size_t valid = 0;
        for (auto x : m) valid += x;
        REQUIRE(valid >= 2);
        REQUIRE(valid < A);  // the test needs a mask with holes
        const double expected = double(draws) / double(valid);
        for (std::size_t k = 0; k < A; ++k) {
            INFO("env ", i, " action ", k);
            if (!m[k]) CHECK(count[i * A + k] == 0);
            else CHECK(std::abs(double(count[i * A + k]) - expected) < 0.1 * expected);  // ~4 standard deviations
        }
    }
}

TEST_CASE("vector env: sampler and obs_out bad input") {
    const auto s = small_scenario(proximity_drl_topo::config(), {{"1", .5}, {"2", .5}}, 6);
    gp::vector_env v(s, 3, 2);
    std::vector<std::int64_t> a(3), two(2);
    std::vector<float> obs(3 * v.observation_size()), short_obs(5);
    CHECK_THROWS_WITH_AS(v.sample_valid_actions(a), "vector env: sample_valid_actions() called before reset()",
                         gp::StateError);
    CHECK_THROWS_WITH_AS(v.step_random(a), "vector env: step() called before reset()", gp::StateError);
    v.reset(2);
    CHECK_THROWS_WITH_AS(v.sample_valid_actions(two), "vector env: sample_valid_actions(): out has 2 entries for 3 envs",
                         gp::Error);
    CHECK_THROWS_WITH_AS(v.step_random(two), "vector env: step_random(): actions_out has 2 entries for 3 envs",
                         gp::Error);
    const auto msg = "vector env: obs_out has 5 floats, expected 3 x " + std::to_string(v.observation_size());
    CHECK_THROWS_WITH_AS(v.step_random({}, short_obs), msg.c_str(), gp::Error);
    v.sample_valid_actions(a);
    CHECK_THROWS_WITH_AS(v.step(a, short_obs), msg.c_str(), gp::Error);
    // nothing moved
    for (std::size_t i = 0; i < 3; ++i) CHECK(v.env(i).steps() == 0);
    CHECK(v.step(a, obs) == 0);
    CHECK(same_bytes<float>(obs, v.observations()));
}

namespace {

/// Steps a next_step vector env and N reference envs side by side (an env whose episode ended
/// restarts in the next step, which ignores its action); checks they agree bit for bit and
/// returns every observation, reward and flag seen.
std::vector<float> run_next_step_side_by_side(const gp::scenario& s, std::size_t N, std::size_t threads, std::uint64_t seed,
                                              std::uint64_t min_episodes) {
    gp::vector_env v(s, N, threads, gp::autoreset_mode::next_step);
    REQUIRE(v.autoreset() == gp::autoreset_mode::next_step);
    std::vector<gp::env> ref(N, gp::env(s));
    std::vector<gp::detail::rng> rngs;
    std::vector<std::uint64_t> episode(N, 0);
    std::vector<bool> restart(N, false);
    for (std::size_t i = 0; i < N; ++i) {
        ref[i].reset(gp::episode_seed(seed, i, 0));
        rngs.emplace_back(2000 + i);
    }
    v.reset(seed);
    const std::size_t O = v.observation_size(), A = v.num_actions();
    std::vector<float> trace(v.observations().begin(), v.observations().end()), obs_out(N * O);
    std::vector<std::int64_t> actions(N);
    std::size_t restarts = 0;
    for (std::size_t step = 0; step < 100000; ++step) {
        bool enough = true;
        for (auto e : episode) enough = enough && e >= min_episodes;
        if (enough) break;
        for (std::size_t i = 0; i < N; ++i) {
            REQUIRE(v.restarting(i) == restart[i]);
            // a restarting env's action is ignored, even one that is out of range
            actions[i] = restart[i] ? 12345 : random_action(ref[i], rngs[i], 0.2);
        }
        std::size_t ended_ref = 0;
        const auto ended = v.step(actions, obs_out);
        for (std::size_t i = 0; i < N; ++i) {
            if (restart[i]) {
                ref[i].reset(gp::episode_seed(seed, i, ++episode[i]));
                REQUIRE(v.rewards()[i] == 0.0);
                REQUIRE(v.elapsed()[i] == 0.0);
                REQUIRE(v.terminated()[i] == 0);
                REQUIRE(v.truncated()[i] == 0);
                restart[i] = false;
                ++restarts;
            } else {
                const auto r = ref[i].step(actions[i]);
                REQUIRE(v.rewards()[i] == r.reward);
                REQUIRE(v.elapsed()[i] == r.elapsed);
                REQUIRE(bool(v.terminated()[i]) == r.terminated);
                REQUIRE(bool(v.truncated()[i]) == r.truncated);
                if (r.terminated || r.truncated) {
                    ++ended_ref;
                    restart[i] = true;
                    // the step returns the last observation; final() and final_observations() hold it too
                    REQUIRE(same_bytes(v.final_observations().subspan(i * O, O), ref[i].observation()));
                    const auto& f = v.final(i);
                    REQUIRE(f.episode_return == ref[i].episode_return());
                    REQUIRE(f.length == ref[i].steps());
                    REQUIRE(f.seed == gp::episode_seed(seed, i, episode[i]));
                    REQUIRE(same_metrics(f.m, ref[i].episode_metrics()));
                }
            }
            REQUIRE(v.dones()[i] == (v.terminated()[i] | v.truncated()[i]));
            REQUIRE(v.episode(i) == episode[i]);
            REQUIRE(same_bytes(v.observations().subspan(i * O, O), ref[i].observation()));
            REQUIRE(same_bytes(v.action_masks().subspan(i * A, A), ref[i].action_mask()));
        }
        REQUIRE(ended == ended_ref);
        REQUIRE(same_bytes<float>(obs_out, v.observations()));
        trace.insert(trace.end(), v.observations().begin(), v.observations().end());
        trace.insert(trace.end(), v.rewards().begin(), v.rewards().end());
    }
    CHECK(restarts >= N * min_episodes);
    return trace;
}

}  // namespace

TEST_CASE("vector env: next_step autoreset is N separate envs restarted a step later, whatever the thread count") {
    const auto s = with(small_scenario(proximity_drl_topo::config(), {{"1", .4}, {"2", .3}, {"4", .2}, {"8", .1}}, 6),
                        {{"env", {{"allow_defer", true}}}});
    const auto one = run_next_step_side_by_side(s, 3, 1, 77, 3);
    CHECK(same_bytes<float>(one, run_next_step_side_by_side(s, 3, 2, 77, 3)));
    CHECK(same_bytes<float>(one, run_next_step_side_by_side(s, 3, 3, 77, 3)));
    // truncated episodes restart a step later too
    const auto t = with(small_scenario(tiny_topo::config(), {{"1", .5}, {"2", .5}}, 10), {{"env", {{"max_steps", 4}}}});
    (void)run_next_step_side_by_side(t, 2, 2, 5, 3);
}

TEST_CASE("vector env: next_step step_random() is sample_valid_actions() then step(), restarting envs draw nothing") {
    const auto s = with(small_scenario(proximity_drl_topo::config(), {{"1", .4}, {"2", .3}, {"4", .2}, {"8", .1}}, 6),
                        {{"env", {{"allow_defer", true}}}});
    const std::size_t N = 5;
    auto run = [&](std::size_t threads, bool fused) {
        gp::vector_env v(s, N, threads, gp::autoreset_mode::next_step);
        v.reset(11);
        std::vector<std::int64_t> a(N);
        std::vector<float> trace;
        std::size_t restarts = 0;
        for (int t = 0; t < 400; ++t) {
            std::vector<bool> restarting(N);
            for (std::size_t i = 0; i < N; ++i) restarting[i] = v.restarting(i);
            if (fused) {
                (void)v.step_random(a);
            } else {
                v.sample_valid_actions(a);
                (void)v.step(a);
            }
            for (std::size_t i = 0; i < N; ++i) {
                REQUIRE((a[i] == -1) == restarting[i]);  // -1: no action drawn, none taken
                restarts += restarting[i];
                trace.push_back(static_cast<float>(a[i]));
                trace.push_back(static_cast<float>(v.rewards()[i]));
            }
            trace.insert(trace.end(), v.observations().begin(), v.observations().end());
        }
        CHECK(restarts > 0);
        return trace;
    };
    const auto ref = run(1, false);
    CHECK(same_bytes<float>(ref, run(1, true)));
    CHECK(same_bytes<float>(ref, run(2, true)));
    CHECK(same_bytes<float>(ref, run(5, false)));
}

TEST_CASE("vector env: the autoreset mode by name, and a mode change needs a reset") {
    CHECK(gp::to_string(gp::autoreset_mode::same_step) == "same_step");
    CHECK(gp::parse_autoreset_mode("next_step") == gp::autoreset_mode::next_step);
    CHECK_THROWS_WITH_AS((void)gp::parse_autoreset_mode("NextStep"),
                         "vector env: autoreset: unknown autoreset mode \"NextStep\" (allowed: same_step, next_step)",
                         gp::ConfigError);
    const auto s = small_scenario(proximity_drl_topo::config(), {{"1", .5}, {"2", .5}}, 6);
    gp::vector_env v(s, 2);
    CHECK(v.autoreset() == gp::autoreset_mode::same_step);
    v.reset(3);
    v.set_autoreset(gp::autoreset_mode::next_step);
    std::vector<std::int64_t> a(2);
    CHECK_THROWS_WITH_AS(v.step_random(a), "vector env: step() called before reset()", gp::StateError);
    v.reset(3);
    CHECK(v.step_random(a) == 0);
}
