// Tests of include/gpuplace/env.hpp: the decision process, reward identities, invariants under
// random play on several topologies, determinism, observation layout and bad input.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/policy.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

/// A scenario with a fixed job list on the tiny 4-GPU cluster. Each job: {submit, gpus, work}.
gp::scenario jobs_scenario(std::vector<std::array<double, 3>> jobs, json env = json::object(),
                           json topology = tiny_topo::config()) {
    json list = json::array();
    for (auto& j : jobs) list.push_back({{"submit_time", j[0]}, {"num_gpus", int(j[1])}, {"model", 0}, {"work", j[2]}});
    return gp::scenario_from_json(
        json{{"topology", topology}, {"workload", {{"kind", "jobs"}, {"jobs", list}}}, {"env", env}});
}

/// The env's whole visible state, to compare before and after a rejected action.
struct snapshot {
    std::vector<float> obs;
    std::vector<std::uint8_t> mask;
    std::vector<gp::gpu_id> picked;
    gp::env_info info;
    std::uint32_t current;
    std::vector<std::uint32_t> queue;

    template <class E>
    explicit snapshot(const E& e)
        : obs(e.observation().begin(), e.observation().end()),
          mask(e.action_mask().begin(), e.action_mask().end()),
          picked(e.picked().begin(), e.picked().end()),
          info(e.info()),
          current(e.current_index()),
          queue(e.queue().begin(), e.queue().end()) {}

    bool operator==(const snapshot& o) const {
        return same_bytes<float>(obs, o.obs) && mask == o.mask && picked == o.picked && current == o.current &&
               queue == o.queue && info.time == o.info.time && info.steps == o.info.steps &&
               info.jobs_done == o.info.jobs_done && info.jobs_total == o.info.jobs_total &&
               info.queued == o.info.queued && info.running == o.info.running &&
               info.episode_return == o.info.episode_return;
    }
};

/// Checks every invariant of the MDP while playing random valid actions to the end of an episode.
/// Returns the sum of rewards.
template <class E>
double play_checked(E& e, std::uint64_t seed, double defer_prob) {
    const std::size_t G = e.num_gpus();
    const auto& topo = e.topology();
    e.reset(seed);
    gp::detail::rng r(seed * 7 + 1);
    const std::size_t n_jobs = e.simulator().jobs().size();
    std::vector<std::vector<gp::gpu_id>> gpus_of(n_jobs);  // placement of each started job
    std::vector<std::uint8_t> started(n_jobs, 0), finished(n_jobs, 0);
    std::size_t n_finished = 0;
    double sum = 0, last_time = e.now();

    // the observation layout tiles the vector exactly, in order
    std::size_t off = 0;
    for (const auto& seg : e.observation_layout()) {
        REQUIRE(seg.offset == off);
        REQUIRE(seg.size > 0);
        if (!seg.fields.empty()) REQUIRE(seg.fields.size() == seg.size);
        off += seg.size;
    }
    REQUIRE(off == e.observation_size());
    REQUIRE(e.observation().size() == e.observation_size());
    REQUIRE(e.action_mask().size() == G + 1);

    auto check_state = [&] {
        const auto obs = e.observation();
        for (float v : obs) REQUIRE((std::isfinite(v) && v >= 0.0f && v <= 1.0f));
        {  // what step() rewrote incrementally equals a full rewrite, bit for bit
            const std::vector<float> inc(obs.begin(), obs.end());
            const std::vector<std::uint8_t> inc_mask(e.action_mask().begin(), e.action_mask().end());
            e.refresh_observation();
            REQUIRE(std::equal(inc.begin(), inc.end(), e.observation().begin()));
            REQUIRE(std::equal(inc_mask.begin(), inc_mask.end(), e.action_mask().begin()));
        }
        const auto& cl = e.cluster();
        // per-GPU features agree with the cluster
        for (std::size_t g = 0; g < G; ++g) {
            REQUIRE(obs[g] == (cl.is_free(gp::gpu_id(g)) ? 0.0f : 1.0f));
            REQUIRE(obs[G + g] == (e.is_picked(gp::gpu_id(g)) ? 1.0f : 0.0f));
        }
        // remaining time x / (x + time_scale), x = end - now, computed in float: relative error
        // at most 4 x 2^-24 (x, the sum, the quotient and the double result's rounding) against
        // the double formula; exactly 0 on a free GPU
        const double ts = e.config().reward.time_scale;
        for (std::size_t g = 0; g < G; ++g) {
            const float got = obs[2 * G + g];
            if (cl.is_free(gp::gpu_id(g))) {
                REQUIRE(got == 0.0f);
                continue;
            }
            const double x = std::max(0.0, cl.end_time(gp::gpu_id(g)) - e.now());
            const auto want = static_cast<float>(x / (x + ts));
            REQUIRE(std::abs(double(got) - double(want)) <= 4 * 0x1p-24 * double(want) + 1e-30);
        }
        // running jobs hold exactly their GPUs: no GPU is held by two jobs
        std::size_t held = 0, running = 0;
        for (std::size_t j = 0; j < n_jobs; ++j) {
            if (!started[j] || finished[j]) continue;
            ++running;
            for (auto g : gpus_of[j]) REQUIRE(cl.holder(g) == j);
            held += gpus_of[j].size();
        }
        REQUIRE(held == cl.busy_gpus());
        REQUIRE(running == e.simulator().running());
        std::size_t busy = 0;
        for (std::size_t g = 0; g < G; ++g) {
            if (cl.is_free(gp::gpu_id(g))) continue;
            ++busy;
            const auto h = cl.holder(gp::gpu_id(g));
            REQUIRE(h < n_jobs);
            REQUIRE((started[h] && !finished[h]));
        }
        REQUIRE(busy == cl.busy_gpus());
        // free counts per node and rack
        for (std::size_t n = 0; n < topo.num_nodes(); ++n) {
            std::uint32_t f = 0;
            for (std::size_t s = 0; s < topo.gpus_per_node(); ++s)
                f += cl.is_free(gp::gpu_id(n * topo.gpus_per_node() + s));
            REQUIRE(cl.node_free(n) == f);
        }
        for (std::size_t rk = 0; rk < topo.num_racks(); ++rk) {
            std::uint32_t f = 0;
            for (std::size_t n = 0; n < topo.nodes_per_rack(); ++n) f += cl.node_free(rk * topo.nodes_per_rack() + n);
            REQUIRE(cl.rack_free(rk) == f);
        }
        if (e.done()) return;
        // the mask: never all zero, exactly the free GPUs not yet picked, DEFER only when allowed
        REQUIRE(e.has_current());
        const auto mask = e.action_mask();
        bool any = false;
        for (std::size_t a = 0; a <= G; ++a) any = any || mask[a];
        REQUIRE(any);
        for (std::size_t g = 0; g < G; ++g)
            REQUIRE(bool(mask[g]) == (cl.is_free(gp::gpu_id(g)) && !e.is_picked(gp::gpu_id(g))));
        if (mask[G]) REQUIRE((e.config().env.allow_defer && e.picked().empty()));
        // the current job fits in what is free, and its picks are not more than it asked for
        REQUIRE(e.current_job().num_gpus <= cl.free_gpus() + e.picked().size());
        REQUIRE(e.picked().size() < e.current_job().num_gpus);
    };

    check_state();
    while (!e.done()) {
        const auto a = random_action(e, r, defer_prob);
        if (a < static_cast<std::int64_t>(G) && e.picked().size() + 1 == e.current_job().num_gpus) {
            const auto j = e.current_index();
            gpus_of[j].assign(e.picked().begin(), e.picked().end());
            gpus_of[j].push_back(static_cast<gp::gpu_id>(a));
            std::sort(gpus_of[j].begin(), gpus_of[j].end());
            started[j] = 1;
        }
        const auto res = e.step(a);
        sum += res.reward;
        REQUIRE(std::isfinite(res.reward));
        REQUIRE(res.terminated == e.terminated());
        REQUIRE(e.now() >= last_time);  // time never goes back
        last_time = e.now();
        for (; n_finished < e.finished().size(); ++n_finished) {
            const auto& rec = e.finished()[n_finished];
            REQUIRE(rec.id < n_jobs);
            REQUIRE(started[rec.id]);
            REQUIRE(!finished[rec.id]);
            finished[rec.id] = 1;
        }
        check_state();
    }
    REQUIRE(e.terminated());
    REQUIRE(!e.truncated());
    // every job finished, no faster than its ideal duration, on the GPUs it was given
    REQUIRE(e.finished().size() == n_jobs);
    for (const auto& rec : e.finished()) {
        REQUIRE(rec.jct() >= rec.ideal_duration * (1 - 1e-9));
        REQUIRE(rec.start >= rec.submit);
        REQUIRE(rec.slowdown >= 1.0);
        REQUIRE(close_rel(rec.end - rec.start, rec.ideal_duration * rec.slowdown, 1e-9));
        const auto g = e.simulator().gpus_of(rec);
        REQUIRE(std::vector<gp::gpu_id>(g.begin(), g.end()) == gpus_of[rec.id]);
        REQUIRE(rec.num_gpus == e.simulator().job(rec.id).num_gpus);
    }
    REQUIRE(e.episode_return() == sum);
    REQUIRE(e.cluster().free_gpus() == G);
    return sum;
}

const char* const queue_policies[] = {"fifo", "sjf", "fewest_gpus"};

}  // namespace

TEST_CASE_TEMPLATE("env invariants under random play", P, dgx_a100_2x4, dgx1_2x4, proximity_drl_topo, tiny_topo) {
    const json counts = P::make().num_gpus() >= 32 ? json{{"1", .3}, {"2", .2}, {"3", .1}, {"4", .2}, {"8", .15}, {"16", .05}}
                                                   : json{{"1", .5}, {"2", .3}, {"3", .1}, {"4", .1}};
    const auto base = small_scenario(P::config(), counts, 10, 2.0);
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
        const json opts = {{"env",
                            {{"queue_policy", queue_policies[seed % 3]},
                             {"backfill", seed % 4 != 1},
                             {"allow_defer", seed % 2 == 0},
                             {"queue_window", 1 + seed % 5}}}};
        const auto s = with(base, opts);
        INFO(std::string(P::name), " seed ", seed, " ", opts.dump());
        if (seed % 5 == 4) {
            gp::tree_route_env e(with(s, {{"comm", {{"model", "tree_route"}}}}));
            const double sum = play_checked(e, seed, 0.3);
            CHECK(close_rel(sum, -sum_jct(e.finished()) / 3600.0));
        } else {
            gp::env e(s);
            const double sum = play_checked(e, seed, 0.3);
            CHECK(close_rel(sum, -sum_jct(e.finished()) / 3600.0));
        }
    }
}

TEST_CASE("env reward identities") {
    struct setup {
        json topology, counts;
    };
    const setup setups[] = {
        {dgx_a100_2x4::config(), {{"1", .4}, {"2", .2}, {"4", .2}, {"8", .2}}},
        {proximity_drl_topo::config(), {{"1", .3}, {"2", .3}, {"3", .1}, {"4", .2}, {"8", .1}}},
        {tiny_topo::config(), {{"1", .6}, {"2", .3}, {"4", .1}}},
    };
    for (std::size_t si = 0; si < 3; ++si) {
        const auto base = small_scenario(setups[si].topology, setups[si].counts, 25, 1.2);
        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
            const bool defer = seed % 2 == 1;
            const json env_opts = {{"queue_policy", queue_policies[seed % 3]}, {"backfill", seed != 3},
                                   {"allow_defer", defer}};
            INFO("setup ", si, " seed ", seed, " ", env_opts.dump());
            auto run = [&](const json& reward, auto& stats) {
                gp::env e(with(base, {{"env", env_opts}, {"reward", reward}}));
                e.reset(seed);
                gp::detail::rng r(seed);
                double sum = 0;
                while (!e.done()) sum += e.step(random_action(e, r, defer ? 0.25 : 0.0)).reward;
                stats = e.episode_metrics();
                return std::pair{sum, sum_jct(e.finished())};
            };
            gp::metrics m;
            // default: -(sum of JCTs) / time_scale
            const auto [r_jct, jcts] = run(json::object(), m);
            CHECK(close_rel(r_jct, -jcts / 3600.0));
            CHECK(m.jobs_done == 25);
            CHECK(close_rel(m.avg_jct * 25, jcts));
            // another time scale
            const auto [r_ts, jcts2] = run({{"time_scale", 100.0}}, m);
            CHECK(jcts2 == jcts);  // the reward does not change the episode
            CHECK(close_rel(r_ts, -jcts / 100.0));
            // makespan only: -makespan / time_scale
            const auto [r_mk, j3] = run({{"jct", 0.0}, {"makespan", 1.0}}, m);
            CHECK(close_rel(r_mk, -m.makespan / 3600.0));
            // both
            const auto [r_both, j4] = run({{"jct", 2.0}, {"makespan", 0.5}}, m);
            CHECK(close_rel(r_both, -(2.0 * jcts + 0.5 * m.makespan) / 3600.0));
            // comm penalty only: -weight x total comm cost
            const auto [r_comm, j5] = run({{"jct", 0.0}, {"comm", 0.1}}, m);
            CHECK(close_rel(r_comm, -0.1 * m.total_comm_cost, 1e-9));
            (void)j3, (void)j4, (void)j5;
        }
    }
}

TEST_CASE("env: makespan identity when the first job arrives late") {
    const auto s = jobs_scenario({{100, 2, 500}, {130, 4, 300}, {400, 1, 50}, {400, 3, 80}});
    for (const char* q : queue_policies) {
        gp::env e(with(s, {{"reward", {{"jct", 0.0}, {"makespan", 1.0}}}, {"env", {{"queue_policy", q}}}}));
        e.reset(0);
        gp::first_fit_policy p;
        double sum = 0;
        while (!e.done()) sum += e.step(p.act(e)).reward;
        const auto m = e.episode_metrics();
        double last = 0;
        for (const auto& r : e.finished()) last = std::max(last, r.end);
        CHECK(m.makespan == doctest::Approx(last - 100.0).epsilon(1e-12));
        CHECK(close_rel(sum, -(last - 100.0) / 3600.0));
    }
}

TEST_CASE("env: Proximity-DRL placement reward") {
    auto s = gp::preset_scenario("proximity_drl");
    s = with(s, {{"reward", {{"jct", 0.0}, {"placement", 1.0}}}, {"workload", {{"num_jobs", 20}}}});
    gp::tree_route_env e(s);
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
        e.reset(seed);
        gp::detail::rng r(seed);
        double sum = 0;
        while (!e.done()) sum += e.step(random_action(e, r)).reward;
        double expect = 0;
        for (const auto& rec : e.finished()) {
            const auto b = e.comm().bounds(e.topology(), e.zoo(), rec.model, rec.num_gpus);
            const double score = b.worst > b.best ? 1.0 - (rec.comm_cost - b.best) / (b.worst - b.best) : 1.0;
            CHECK(score >= -1e-12);
            CHECK(score <= 1.0 + 1e-12);
            expect += score;
        }
        CHECK(close_rel(sum, expect, 1e-9));
    }
    // first-fit on an empty cluster places compactly: every job scores 1 when jobs run one at a time
    // (up to 4 GPUs: first-fit's single node is the best placement)
    const auto one = with(small_scenario(proximity_drl_topo::config(), {{"1", .3}, {"2", .3}, {"3", .2}, {"4", .2}}, 8, 0.001),
                          {{"reward", {{"jct", 0.0}, {"placement", 1.0}}}, {"comm", {{"model", "tree_route"}}}});
    gp::tree_route_env e1(one);
    gp::first_fit_policy ff;
    const auto res = gp::run_episode(e1, ff, 3);
    CHECK(res.episode_return == doctest::Approx(8.0).epsilon(1e-12));
}

TEST_CASE("env determinism: same seed, same bytes, different seeds differ") {
    const auto s = with(small_scenario(dgx_a100_2x4::config(), {{"1", .4}, {"2", .2}, {"4", .2}, {"8", .2}}, 30),
                        {{"env", {{"allow_defer", true}}}});
    auto trace = [&](gp::env& e, std::uint64_t seed) {
        std::vector<float> obs;
        std::vector<std::uint8_t> masks;
        std::vector<double> rewards;
        e.reset(seed);
        gp::detail::rng r(99);
        obs.insert(obs.end(), e.observation().begin(), e.observation().end());
        while (!e.done()) {
            rewards.push_back(e.step(random_action(e, r, 0.2)).reward);
            obs.insert(obs.end(), e.observation().begin(), e.observation().end());
            masks.insert(masks.end(), e.action_mask().begin(), e.action_mask().end());
        }
        return std::tuple{obs, masks, rewards};
    };
    gp::env a(s), b(s);
    const auto [oa, ma, ra] = trace(a, 5);
    const auto [ob, mb, rb] = trace(b, 5);
    CHECK(same_bytes<float>(oa, ob));
    CHECK(ma == mb);
    CHECK(same_bytes<double>(ra, rb));
    // the same env object, reused after another episode, replays seed 5 exactly
    (void)trace(a, 6);
    const auto [oc, mc, rc] = trace(a, 5);
    CHECK(same_bytes<float>(oa, oc));
    CHECK(same_bytes<double>(ra, rc));
    // a copy made mid-episode continues exactly like the original
    a.reset(8);
    gp::detail::rng r(1);
    for (int i = 0; i < 10; ++i) (void)a.step(random_action(a, r));
    gp::env copy = a;
    gp::detail::rng r2 = r;
    while (!a.done()) {
        const auto act = random_action(a, r);
        REQUIRE(act == random_action(copy, r2));
        const auto x = a.step(act), y = copy.step(act);
        REQUIRE(x.reward == y.reward);
        REQUIRE(same_bytes(a.observation(), copy.observation()));
    }
    CHECK(copy.done());
    // different seeds give different episodes
    const auto [od, md, rd] = trace(b, 6);
    CHECK(!same_bytes<float>(oa, od));
    CHECK(!same_bytes<double>(ra, rd));
}

TEST_CASE("env observation layout and features") {
    auto s = with(gp::preset_scenario("proximity_drl"), {{"env", {{"queue_window", 3}}}});
    gp::tree_route_env e(s);
    const std::size_t G = 32;
    const auto& L = e.observation_layout();
    REQUIRE(L.size() == 9);
    const char* names[] = {"gpu_busy", "gpu_picked", "gpu_remaining", "gpu_proximity", "gpu_node_free",
                           "gpu_rack_free", "job", "queue", "global"};
    for (std::size_t i = 0; i < 6; ++i) {
        CHECK(L[i].name == names[i]);
        CHECK(L[i].offset == i * G);
        CHECK(L[i].size == G);
        CHECK(L[i].fields.empty());
    }
    CHECK(L[6].name == "job");
    CHECK(L[6].fields == std::vector<std::string>{"request", "remaining_picks", "ideal_duration", "comm_intensity", "wait"});
    CHECK(L[7].name == "queue");
    CHECK(L[7].size == 12);
    CHECK(L[7].fields[0] == "0.present");
    CHECK(L[7].fields[11] == "2.wait");
    CHECK(L[8].name == "global");
    CHECK(L[8].fields == std::vector<std::string>{"load", "queue_length", "time", "progress"});
    CHECK(e.observation_size() == 6 * G + 5 + 12 + 4);
    CHECK(e.num_actions() == G + 1);
    CHECK(e.defer_action() == 32);

    // proximity to the picks: 1 in a node with a pick, 0.5 in a rack with a pick, 0 elsewhere
    const auto one = jobs_scenario({{0, 8, 100}}, json::object(), proximity_drl_topo::config());
    gp::tree_route_env p(with(one, {{"comm", {{"model", "tree_route"}}}}));
    p.reset(0);
    auto prox = [&](std::size_t g) { return p.observation()[3 * G + g]; };
    for (std::size_t g = 0; g < G; ++g) CHECK(prox(g) == 0.0f);
    const auto* job = p.observation().data() + 6 * G;
    CHECK(job[0] == doctest::Approx(std::log2(9.0) / std::log2(33.0)));
    CHECK(job[1] == 1.0f);
    (void)p.step(5);
    for (std::size_t g = 0; g < G; ++g) {
        INFO("GPU ", g);
        CHECK(prox(g) == (g / 4 == 1 ? 1.0f : g < 16 ? 0.5f : 0.0f));
    }
    job = p.observation().data() + 6 * G;
    CHECK(job[1] == 7.0f / 8.0f);
    // free GPUs per node and rack are not changed by picks, only by running jobs
    CHECK(p.observation()[4 * G + 5] == 1.0f);
    for (gp::gpu_id g : {6u, 7u, 8u, 9u, 10u, 11u, 12u}) (void)p.step(g);
    CHECK(p.done());
}

TEST_CASE("env queue policies: fifo, sjf, fewest-gpus, strict and backfill") {
    // all at time 0 on 4 GPUs: {gpus, work}; job 0 needs 3 GPUs
    const auto s = jobs_scenario({{0, 3, 1000}, {0, 2, 50}, {0, 1, 400}, {0, 2, 10}});
    auto current_after_reset = [&](const char* q) {
        gp::env e(with(s, {{"env", {{"queue_policy", q}}}}));
        e.reset(0);
        return e.current_index();
    };
    CHECK(current_after_reset("fifo") == 0);
    CHECK(current_after_reset("fewest_gpus") == 2);
    CHECK(current_after_reset("sjf") == 3);  // smallest work x step time

    // queue order: fewest GPUs, ties by submit order
    gp::env f(with(s, {{"env", {{"queue_policy", "fewest_gpus"}}}}));
    f.reset(0);
    CHECK(std::vector<std::uint32_t>(f.queue().begin(), f.queue().end()) == std::vector<std::uint32_t>{2, 1, 3, 0});

    // fifo + backfill: after job 0 takes 3 GPUs, job 2 (1 GPU) backfills at time 0
    gp::env b(with(s, {{"env", {{"backfill", true}}}}));
    b.reset(0);
    for (gp::gpu_id g : {0u, 1u, 2u}) (void)b.step(g);
    CHECK(b.current_index() == 2);
    CHECK(b.now() == 0.0);
    // strict head of line: job 1 (2 GPUs) blocks the queue until job 0 ends
    gp::env h(with(s, {{"env", {{"backfill", false}}}}));
    h.reset(0);
    for (gp::gpu_id g : {0u, 1u, 2u}) (void)h.step(g);
    CHECK(h.current_index() == 1);
    CHECK(h.now() == doctest::Approx(h.simulator().ideal_duration(0)).epsilon(1e-12));
    CHECK(h.finished().size() == 1);
}

TEST_CASE("env DEFER") {
    const auto s = jobs_scenario({{0, 1, 100}, {0, 1, 200}}, {{"allow_defer", true}});
    gp::env e(s);
    e.reset(0);
    CHECK(e.current_index() == 0);
    CHECK(e.action_mask()[4] == 1);
    (void)e.step(e.defer_action());  // job 0 waits, job 1 becomes current
    CHECK(e.current_index() == 1);
    CHECK(e.now() == 0.0);
    // job 1 is the only candidate now and nothing runs: deferring it would stall
    CHECK(e.action_mask()[4] == 0);
    (void)e.step(2);
    // job 0 comes back at the next event: the end of job 1
    CHECK(e.current_index() == 0);
    CHECK(e.now() == doctest::Approx(e.simulator().ideal_duration(1)).epsilon(1e-12));
    CHECK(e.action_mask()[4] == 0);  // nothing else waits and nothing runs
    (void)e.step(0);
    CHECK(e.terminated());
    const auto f = e.finished();
    REQUIRE(f.size() == 2);
    CHECK(f[0].id == 1);
    CHECK(f[1].id == 0);
    CHECK(f[1].start == f[0].end);
}

TEST_CASE("env truncation by steps and by time") {
    const auto s = small_scenario(tiny_topo::config(), {{"1", .5}, {"2", .5}}, 20);
    gp::env e(with(s, {{"env", {{"max_steps", 3}}}}));
    e.reset(1);
    gp::first_fit_policy ff;
    CHECK(!e.step(ff.act(e)).truncated);
    CHECK(!e.step(ff.act(e)).truncated);
    const auto r = e.step(ff.act(e));
    CHECK(r.truncated);
    CHECK(!r.terminated);
    CHECK(e.done());
    CHECK(e.steps() == 3);
    CHECK_THROWS_WITH_AS((void)e.step(0), "step() called on a finished episode; call reset()", gp::StateError);

    gp::env t(with(s, {{"env", {{"max_time", 2000.0}}}}));
    t.reset(1);
    while (!t.done()) (void)t.step(ff.act(t));
    CHECK(t.truncated());
    CHECK(!t.terminated());
    CHECK(t.now() >= 2000.0);
    CHECK(t.finished().size() < 20);
}

TEST_CASE("env: an invalid action throws InvalidAction and changes nothing") {
    // 4 GPUs (2 nodes x 2); job 0 and job 1 need 2 GPUs each, job 2 needs 1
    const auto s = jobs_scenario({{0, 2, 100}, {0, 2, 100}, {0, 1, 100}});
    gp::env e(s);
    CHECK_THROWS_WITH_AS((void)e.step(0), "step() called before reset()", gp::StateError);
    e.reset(0);
    auto rejected = [&](std::int64_t a, const std::string& msg) {
        const snapshot before(e);
        CHECK_THROWS_WITH_AS((void)e.step(a), msg.c_str(), gp::InvalidAction);
        CHECK(snapshot(e) == before);
        CHECK(e.why_invalid(a) == msg.substr(msg.find(": ") + 2));
    };
    rejected(-1, "invalid action -1: out of range [0, 4] (4 GPUs, DEFER = 4)");
    rejected(5, "invalid action 5: out of range [0, 4] (4 GPUs, DEFER = 4)");
    rejected(4, "invalid action 4 (DEFER): DEFER is disabled (env.allow_defer = false)");
    (void)e.step(0);
    rejected(0, "invalid action 0: GPU 0 is already picked (job 0 needs 2 GPUs, 1 picked)");
    CHECK(e.why_invalid(1).empty());
    (void)e.step(1);
    CHECK(e.current_index() == 1);
    rejected(1, "invalid action 1: GPU 1 is busy with job 0 (job 1 needs 2 GPUs, 0 picked)");
    // the env goes on normally after rejected actions
    (void)e.step(3);
    (void)e.step(2);
    CHECK(e.current_index() == 2);
    CHECK(e.now() > 0.0);  // job 2 had to wait for a free GPU

    // DEFER rules
    gp::env d(with(s, {{"env", {{"allow_defer", true}}}}));
    d.reset(0);
    (void)d.step(0);
    const snapshot before(d);
    CHECK_THROWS_WITH_AS((void)d.step(4),
                         "invalid action 4 (DEFER): DEFER is only allowed before the first GPU of a job is picked (job 0 "
                         "needs 2 GPUs, 1 picked)",
                         gp::InvalidAction);
    CHECK(snapshot(d) == before);
    gp::env lone(jobs_scenario({{0, 3, 100}}, {{"allow_defer", true}}));
    lone.reset(0);
    const snapshot b2(lone);
    CHECK_THROWS_WITH_AS(
        (void)lone.step(4),
        "invalid action 4 (DEFER): DEFER would stall the episode: no other waiting job fits and no event is pending",
        gp::InvalidAction);
    CHECK(snapshot(lone) == b2);
    CHECK(gp::env(s).why_invalid(0) == "reset() has not been called");
}

TEST_CASE("env: jobs that can never fit are ConfigErrors naming them") {
    CHECK_THROWS_WITH_AS(gp::env(jobs_scenario({{0, 2, 100}, {5, 5, 100}})),
                         "config /workload/jobs/1/num_gpus: job 1 requests 5 GPUs, which can never fit in a cluster of 4 GPUs",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::env(small_scenario(tiny_topo::config(), {{"1", .5}, {"8", .5}})),
                         "config /workload/gpu_counts/8: jobs of 8 GPUs can never fit in a cluster of 4 GPUs",
                         gp::ConfigError);
    // a zero-probability GPU count that does not fit is harmless
    CHECK_NOTHROW(gp::env(small_scenario(tiny_topo::config(), {{"1", 1.0}, {"8", 0.0}})));
    const auto zoo = gp::ModelZoo::builtin();
    json j = gp::to_json(jobs_scenario({{0, 1, 100}}));
    j["workload"]["jobs"][0]["model"] = 9999;
    CHECK_THROWS_WITH_AS(gp::env(gp::scenario_from_json(j)),
                         ("config /workload/jobs/0/model: model id 9999 is not in the zoo (" +
                          std::to_string(zoo.size()) + " models)")
                             .c_str(),
                         gp::ConfigError);
    json m = gp::to_json(small_scenario(tiny_topo::config(), {{"1", 1.0}}));
    m["workload"]["models"] = {{zoo[0].name, 1.0}, {"VGG", 1.0}};
    std::string known;
    for (const auto& p : zoo.models()) known += (known.empty() ? "" : ", ") + p.name;
    CHECK_THROWS_WITH_AS(gp::env(gp::scenario_from_json(m)),
                         ("config /workload/models/VGG: model zoo: unknown model \"VGG\" (known: " + known + ")").c_str(),
                         gp::ConfigError);
    // every built-in comm model runs on gpuplace::env (a run-time value)
    CHECK(gp::env(with(gp::default_scenario(), {{"comm", {{"model", "tree_route"}}}})).comm().name() == "tree_route");
}

TEST_CASE("env: the default scenario runs to the end with first-fit") {
    gp::env e;
    CHECK(e.num_gpus() == 64);
    gp::first_fit_policy p;
    const auto r = gp::run_episode(e, p, 1);
    CHECK(r.terminated);
    CHECK(r.m.jobs_done == 160);
    CHECK(r.m.jobs_total == 160);
    CHECK(close_rel(r.episode_return, -sum_jct(e.finished()) / 3600.0));
}

TEST_CASE("env: step_result::elapsed is the simulated time each step advanced") {
    auto s = gpuplace::default_scenario();
    s.workload.synthetic.num_jobs = 30;
    gpuplace::env e(s);
    gpuplace::vector_env v(s, 1);
    for (std::uint64_t seed : {1u, 2u}) {
        e.reset(seed);
        const double t0 = e.now();
        double sum = 0;
        gpuplace::pack_policy p;
        while (!e.done()) {
            const double before = e.now();
            const auto r = e.step(p.act(e));
            CHECK(r.elapsed == e.now() - before);
            CHECK(r.elapsed >= 0);
            sum += r.elapsed;
        }
        CHECK(sum == doctest::Approx(e.now() - t0).epsilon(1e-12));
    }
    v.reset(9);
    gpuplace::env w(s);
    w.reset(gpuplace::episode_seed(9, 0, 0));
    for (int k = 0; k < 50; ++k) {
        const double before = w.now();
        const std::int64_t a = gpuplace::pack_policy{}.act(w);
        (void)w.step(a);
        const std::int64_t acts[1] = {a};
        v.step(acts);
        CHECK(v.elapsed()[0] == w.now() - before);
        if (w.done()) break;
    }
}
