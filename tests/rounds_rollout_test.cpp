// Tests of include/gpuplace/rounds/rollout.hpp (the rollout planner in rounds) and its names
// (policy_registry.hpp): with a margin no candidate can beat it is class_gittins's rounds exactly;
// it decides the same on the env and on any fork of it (it reads only what the scheduler knows),
// and on any number of threads; its counts add up; its value at the cut is the least-area-first
// bound, unused by rollouts that reach the episode's end; with hindsight (not causal) it takes an
// alternative exactly where the alternative's rounds on the true future return more than the
// base's; by name it runs in the harness, repeats by seed, and bad names are ConfigErrors that say
// what runs.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <gpuplace/evaluate.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/round_env.hpp>
#include <gpuplace/round_policy_registry.hpp>
#include <gpuplace/rounds/rollout.hpp>

namespace gp = gpuplace;

namespace {

using planner = gp::basic_round_rollout<gp::round_env, gp::gittins_round_policy, gp::pack_policy>;

gp::scenario hidden_rounds() {
    auto s = gp::preset_scenario("philly_hidden:e13805");
    gp::apply_queue(s, "class_gittins");
    return s;
}

/// The pack placer of env e's episodes, reset with `seed`.
gp::pack_policy pack_for(const gp::round_env& e, std::uint64_t seed) {
    gp::pack_policy placer;
    placer.reset(seed);
    placer.reserve(e.hierarchy());
    return placer;
}

/// Plays an episode of seed `seed` with `decide(env, allocation)`; every finished job's end time.
template <class Decide>
std::vector<double> play(const gp::scenario& s, std::uint64_t seed, Decide decide) {
    gp::round_env e(s);
    auto placer = pack_for(e, seed);
    e.reset(seed);
    gp::round_allocation a;
    while (!e.done()) {
        a.clear();
        decide(e, a);
        e.step(a, placer);
    }
    CHECK(e.terminated());
    std::vector<double> ends;
    for (const auto& r : e.simulator().finished()) ends.push_back(r.end);
    return ends;
}

}  // namespace

TEST_CASE("round rollout: with a margin no candidate can beat, it is class_gittins's rounds exactly") {
    const auto s = hidden_rounds();
    const auto prior = gp::gittins_prior_of(s);
    gp::gittins_round_policy base(prior, s.rounds.restore.seconds);
    base.reset(1000000);
    const auto truth = play(s, 1000000, [&](gp::round_env& e, gp::round_allocation& a) { base.allocate(e.view(), a); });
    planner p(gp::gittins_round_policy(prior, s.rounds.restore.seconds), {.futures = 2, .horizon = 3, .margin = std::numeric_limits<double>::infinity()});
    p.reset(1000000);
    CHECK(play(s, 1000000, [&](gp::round_env& e, gp::round_allocation& a) { p.allocate(e, a); }) == truth);
    // it played rollouts where an alternative differed, and took none of them
    const auto& st = p.stats();
    CHECK(st.contested > 0);
    CHECK(st.overruled == 0);
    CHECK(std::all_of(st.taken.begin(), st.taken.end(), [](std::size_t n) { return n == 0; }));
    CHECK(st.rollouts >= 2 * 2 * st.contested);  // at least two distinct candidates on two futures each
    CHECK(st.rollouts <= (1 + gp::round_rollout_orders) * 2 * st.contested);  // the base and each alternative order at most
    CHECK(st.boundaries > st.contested);
}

TEST_CASE("round rollout: it decides the same on the env and on a fork of it (it reads only what the scheduler knows)") {
    const auto s = hidden_rounds();
    const auto prior = gp::gittins_prior_of(s);
    for (const bool base_durations : {true, false}) {  // futures with class_gittins's durations, and with the fork's
        INFO("base_durations " << base_durations);
        planner p(gp::gittins_round_policy(prior, s.rounds.restore.seconds), {.futures = 3, .horizon = 4, .margin = 0, .base_durations = base_durations});
        p.reset(1000001);
        gp::round_env e(s);
        auto placer = pack_for(e, 0);
        e.reset(1000001);
        gp::round_allocation a, b;
        std::size_t compared = 0;
        for (int r = 0; r < 400 && !e.done(); ++r) {
            planner q = p;  // the same state, deciding on a fork whose hidden future is another draw
            gp::round_env other = e.fork(12345 + std::uint64_t(r));
            a.clear();
            b.clear();
            const auto before = p.stats().overruled;
            p.allocate(e, a);
            q.allocate(other, b);
            CHECK(std::vector<gp::round_grant>(a.grants().begin(), a.grants().end()) ==
                  std::vector<gp::round_grant>(b.grants().begin(), b.grants().end()));
            compared += p.stats().overruled > before;
            e.step(a, placer);
        }
        CHECK(compared > 0);  // some of the compared decisions overruled the base
    }
}

TEST_CASE("round rollout: it decides the same on any number of threads") {
    auto s = hidden_rounds();
    s.env.max_steps = 400;  // rounds: enough for contested boundaries, cheap enough for the sanitizers
    const auto prior = gp::gittins_prior_of(s);
    const gp::round_rollout_options o{.futures = 5, .horizon = 4, .margin = 0};
    const auto decisions = [&](planner p) {  // every boundary's grants
        p.reset(1000002);
        gp::round_env e(s);
        auto placer = pack_for(e, 0);
        e.reset(1000002);
        std::vector<std::vector<gp::round_grant>> out;
        gp::round_allocation a;
        while (!e.done()) {
            a.clear();
            p.allocate(e, a);
            out.emplace_back(a.grants().begin(), a.grants().end());
            e.step(a, placer);
        }
        return std::pair{out, p.stats()};
    };
    const auto [one, st] = decisions(planner(gp::gittins_round_policy(prior, s.rounds.restore.seconds), o));
    REQUIRE(one.size() == 400);
    CHECK(st.overruled > 0);
    CHECK(std::accumulate(st.taken.begin(), st.taken.end(), std::size_t{0}) == st.overruled);  // each overrule is one order's
    CHECK(std::count_if(st.taken.begin(), st.taken.end(), [](std::size_t n) { return n > 0; }) >= 2);
    for (const std::size_t threads : {2, 3, 8}) {  // 8: more threads than futures
        INFO("threads " << threads);
        auto ot = o;
        ot.threads = threads;
        planner many(gp::gittins_round_policy(prior, s.rounds.restore.seconds), ot);
        const auto [got, gst] = decisions(many);  // (a copy: it runs threads of its own)
        CHECK(got == one);
        CHECK(gst.overruled == st.overruled);
        CHECK(gst.rollouts == st.rollouts);
        CHECK(gst.taken == st.taken);
    }
    // by name: named_policy(name, planner threads)
    const std::vector<std::uint64_t> seeds{1000000};
    const auto a = gp::evaluate(s, {gp::named_policy("rollout3h3:pack+class_gittins", 1)}, seeds, 1);
    const auto b = gp::evaluate(s, {gp::named_policy("rollout3h3:pack+class_gittins", 2)}, seeds, 1);
    CHECK(a.policies[0].per_seed[0].avg_jct == b.policies[0].per_seed[0].avg_jct);
    CHECK(a.policies[0].per_seed[0].jobs_done == b.policies[0].per_seed[0].jobs_done);
}

TEST_CASE("round rollout: the value at the cut is the least-area-first bound of the active jobs' work left, and a rollout to the end never uses it") {
    auto s = hidden_rounds();
    const auto prior = gp::gittins_prior_of(s);
    gp::round_env e(s);
    auto placer = pack_for(e, 0);
    e.reset(1000003);
    gp::gittins_round_policy base(prior, s.rounds.restore.seconds);
    base.reset(1000003);
    gp::round_allocation a;
    std::vector<std::pair<double, double>> buf;
    std::size_t checked = 0;
    for (int r = 0; r < 300 && !e.done(); ++r) {
        if (r % 30 == 29) {  // an independent O(n^2) form: job k ends no earlier than its work left, nor than the area up to it over the GPUs
            const auto& sim = e.simulator();
            std::vector<std::pair<double, double>> jobs;  // (GPU-seconds left, seconds left)
            for (const auto j : e.active()) jobs.emplace_back(sim.work_left(j) * double(sim.job(j).num_gpus), sim.work_left(j));
            double want = 0, own = 0;
            for (std::size_t k = 0; k < jobs.size(); ++k) {
                double before = 0;  // the jobs ahead of k: a smaller (area, left), or the same and an earlier index
                for (std::size_t i = 0; i < jobs.size(); ++i)
                    if (jobs[i] < jobs[k] || (jobs[i] == jobs[k] && i <= k)) before += jobs[i].first;
                want += std::max(jobs[k].second, before / double(e.num_gpus()));
                own += jobs[k].second;
            }
            const double scale = s.reward.jct / s.reward.time_scale;
            const double got = planner::cut_cost(e, buf);
            CHECK(got == doctest::Approx(want * scale).epsilon(1e-12));
            CHECK(got >= own * scale * (1 - 1e-12));  // at least each job's own work left
            checked += jobs.size() > 1;
        }
        a.clear();
        base.allocate(e.view(), a);
        e.step(a, placer);
    }
    CHECK(checked >= 5);
    // rollouts played to the episode's end (here a truncation at 260 rounds; class_gittins alone
    // for the first 200) never stop at a cut: with and without the value, the same decisions
    s.env.max_steps = 260;
    const auto decisions = [&](bool value) {
        gp::round_env f(s);
        auto pl = pack_for(f, 0);
        f.reset(1000004);
        gp::gittins_round_policy g(prior, s.rounds.restore.seconds);
        g.reset(1000004);
        for (int r = 0; r < 200; ++r) {
            a.clear();
            g.allocate(f.view(), a);
            f.step(a, pl);
        }
        planner p(gp::gittins_round_policy(prior, s.rounds.restore.seconds), {.futures = 2, .horizon = 0, .margin = 0, .terminal_value = value});
        p.reset(1000004, g);
        std::vector<std::vector<gp::round_grant>> out;
        while (!f.done()) {
            a.clear();
            p.allocate(f, a);
            out.emplace_back(a.grants().begin(), a.grants().end());
            f.step(a, pl);
        }
        return std::pair{out, p.stats().contested};
    };
    const auto [with, contested] = decisions(true);
    CHECK(contested > 0);
    CHECK(with == decisions(false).first);
}

TEST_CASE("round rollout: with hindsight it takes an alternative exactly where its rounds on the true future return more than class_gittins's") {
    const auto s = hidden_rounds();
    const auto prior = gp::gittins_prior_of(s);
    constexpr std::uint64_t seed = 1000002;
    constexpr std::size_t horizon = 4;
    planner p(gp::gittins_round_policy(prior, s.rounds.restore.seconds), {.horizon = horizon, .hindsight = true});
    CHECK(p.options().futures == 1);  // the one true future
    p.reset(seed);
    gp::gittins_round_policy base(prior, s.rounds.restore.seconds);  // the planner's base, kept in step with it
    base.reset(seed);
    // the return of `first` then `horizon - 1` rounds of the base on a copy of e (the true future), placed by a fresh pack
    auto played = [&](const gp::round_env& e, const gp::round_allocation& first) {
        gp::round_env r(e);
        gp::gittins_round_policy b(base);
        auto placer = pack_for(r, seed);
        double g = r.step(first, placer);
        gp::round_allocation next;
        for (std::size_t h = 1; h < horizon && !r.done(); ++h) {
            next.clear();
            b.allocate(r.view(), next);
            g += r.step(next, placer);
        }
        return g;
    };
    auto jobs = [](const gp::round_allocation& a) {
        std::vector<std::uint32_t> v;
        for (const auto& g : a.grants()) v.push_back(g.job);
        std::sort(v.begin(), v.end());
        return v;
    };
    gp::round_env e(s);
    auto placer = pack_for(e, seed);
    e.reset(seed);
    gp::round_allocation a, b;
    std::size_t overruled = 0, boundaries = 0;
    while (!e.done() && overruled < 40) {
        a.clear();
        b.clear();
        p.allocate(e, a);
        base.allocate(e.view(), b);
        ++boundaries;
        if (jobs(a) != jobs(b)) {
            ++overruled;
            CHECK(played(e, a) > played(e, b));  // the taken alternative's rounds return more on the true future
        } else {
            CHECK(p.stats().overruled == overruled);  // the same jobs: the base's allocation, kept
            CHECK(a.grants().size() == b.grants().size());
        }
        e.step(a, placer);
    }
    CHECK(overruled == p.stats().overruled);
    CHECK(overruled > 0);
    CHECK(p.stats().boundaries == boundaries);
    CHECK(p.stats().rollouts >= 2 * p.stats().contested);  // one future: a rollout per distinct candidate
}

TEST_CASE("round rollout: by name in the harness, repeatable by seed, and names it cannot run are ConfigErrors") {
    const auto s = gp::preset_scenario("philly_hidden:e13805");
    const std::vector<std::uint64_t> seeds{1000000};
    const auto a = gp::evaluate(s, {gp::named_policy("rollout2h3:pack+class_gittins")}, seeds, 1);
    const auto b = gp::evaluate(s, {gp::named_policy("rollout2h3:pack+class_gittins")}, seeds, 1);
    REQUIRE(a.policies.size() == 1);
    CHECK(a.policies[0].policy == "rollout2h3:pack+class_gittins");
    CHECK(a.policies[0].per_seed[0].jobs_done == a.policies[0].per_seed[0].jobs_total);
    CHECK(a.policies[0].per_seed[0].avg_jct == b.policies[0].per_seed[0].avg_jct);
    CHECK(a.policies[0].per_seed[0].rounds);
    CHECK_THROWS_WITH_AS((void)gp::named_policy("rollout4h3:pack+max_min_fairness"),
                         doctest::Contains("in rounds the rollout planner plans over class_gittins only (its base is copied into every rollout with its episode's state), not over max_min_fairness"),
                         gp::ConfigError);
    auto shorter = s;
    shorter.env.max_steps = 300;  // rounds
    for (const char* name : {"rollout2h3m0:pack+class_gittins", "rollout2h3v:pack+class_gittins"}) {  // a margin and a value at the cut, by name
        const auto c = gp::evaluate(shorter, {gp::named_policy(name)}, seeds, 1);
        CHECK(c.policies[0].policy == name);
        CHECK(c.policies[0].per_seed[0].jobs_done > 0);
    }
    for (const char* name : {"hindsighth3:pack+class_gittins", "hindsighth3v:pack+class_gittins"}) {  // the true future (not causal), by name
        CHECK(gp::is_hindsight_policy(name));
        const auto c = gp::evaluate(shorter, {gp::named_policy(name)}, seeds, 1);
        CHECK(c.policies[0].policy == name);
        CHECK(c.policies[0].per_seed[0].jobs_done > 0);
    }
    CHECK_THROWS_WITH_AS((void)gp::named_policy("hindsight4h3:pack+class_gittins"),
                         doctest::Contains("hindsight plays the one true future with no margin, so it takes a horizon and a value at the cut only"),
                         gp::ConfigError);
}
