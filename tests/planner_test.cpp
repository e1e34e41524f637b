// Tests of include/gpuplace/planner.hpp and include/gpuplace/policy_registry.hpp: the rollout
// planners and their names.

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy_registry.hpp>

namespace gp = gpuplace;

namespace {

gp::scenario small_placement(std::size_t jobs = 16) {
    auto s = gp::preset_scenario("default");
    s.env.mode = gp::action_mode::placement;
    s.workload.synthetic.num_jobs = jobs;
    return s;
}

/// The actions and metrics of one episode of `act` on seed `seed`.
template <class Act>
std::pair<std::vector<std::int64_t>, gp::metrics> play(const gp::scenario& s, std::uint64_t seed, Act&& act) {
    gp::env e(s);
    e.reset(seed);
    std::vector<std::int64_t> actions;
    while (!e.done()) {
        actions.push_back(act(e));
        e.step(actions.back());
    }
    return {actions, e.episode_metrics()};
}

/// The mean return of `action` over `futures` forks of `e` made afresh, each then played `horizon`
/// decisions by the base `make` makes: the seeds as the planner draws them (decision d of seed s
/// forks future f with mix_seed(mix_seed(s, c + d), f)).
template <class Make>
double fresh_fork_mean(const gp::env& e, std::int64_t action, const Make& make, std::uint64_t decision, std::size_t futures,
                       std::size_t horizon) {
    double mean = 0;
    for (std::size_t f = 0; f < futures; ++f) {
        const auto fs = gp::detail::mix_seed(decision, f);
        auto sim = e.fork(fs);
        sim.set_lazy(true);
        auto b = make(fs);
        double ret = sim.step(action).reward;
        for (std::size_t k = 0; !sim.done() && k < horizon; ++k) ret += sim.step(b(sim)).reward;
        mean += ret;
    }
    return mean / double(futures);
}

}  // namespace

TEST_CASE("policy names: rollout<F>:, rollout: and hindsight: over a heuristic, with its queue policy") {
    gp::rollout_options o;
    std::string base;
    CHECK(gp::parse_planner_name("rollout:pack_wait+sjf", o, base));
    CHECK(o.futures == 4);
    CHECK_FALSE(o.hindsight);
    CHECK(base == "pack_wait+sjf");
    o = {};
    CHECK(gp::parse_planner_name("rollout16:pack", o, base));
    CHECK(o.futures == 16);
    o = {};
    CHECK(gp::parse_planner_name("hindsight:first_fit+fifo", o, base));
    CHECK(o.hindsight);
    CHECK(base == "first_fit+fifo");
    CHECK_FALSE(gp::parse_planner_name("pack+sjf", o, base));
    CHECK_FALSE(gp::parse_planner_name("fastest_type:pack", o, base));
    CHECK(gp::is_hindsight_policy("hindsight:pack"));
    CHECK_FALSE(gp::is_hindsight_policy("rollout:pack"));
    o = {};
    CHECK(gp::parse_planner_name("hindsighth20v:pack+class_gittins", o, base));  // a horizon and a value at the cut (rounds)
    CHECK(o.hindsight);
    CHECK(o.horizon == 20);
    CHECK(o.terminal_value);
    CHECK(base == "pack+class_gittins");
    CHECK(gp::is_hindsight_policy("hindsighth20:pack"));
    CHECK_FALSE(gp::is_hindsight_policy("hindsight"));
    for (const char* bad : {"hindsight4:pack", "hindsighth3m1:pack", "hindsightx:pack"}) {  // no futures, no margin
        o = {};
        CHECK_THROWS_WITH_AS((void)gp::parse_planner_name(bad, o, base),
                             doctest::Contains("hindsight plays the one true future with no margin"), gp::ConfigError);
        CHECK_FALSE(o.hindsight);  // a refused name leaves the options as they were
    }
    CHECK_THROWS_WITH_AS((void)gp::parse_planner_name("rollout0:pack", o, base),
                         "policy \"rollout0:pack\": rollout<F>h<H> takes a number of futures F from 1 to 4096, got \"0\"",
                         gp::ConfigError);
    struct named {
        const char* name;
        std::size_t futures, horizon;
        double margin;
        bool terminal_value;
        const char* base;
    };
    for (const auto& n : {named{"rollout8h32:pack+sjf", 8, 32, 1.0, false, "pack+sjf"}, named{"rollouth16:pack", 4, 16, 1.0, false, "pack"},
                          named{"rollout8h20m0.5:pack+class_gittins", 8, 20, 0.5, false, "pack+class_gittins"},
                          named{"rolloutm0:pack", 4, 0, 0.0, false, "pack"}, named{"rollout16m2:pack", 16, 0, 2.0, false, "pack"},
                          named{"rollout8h20m0.5v:pack+class_gittins", 8, 20, 0.5, true, "pack+class_gittins"},
                          named{"rollout8h20v:pack+class_gittins", 8, 20, 1.0, true, "pack+class_gittins"}}) {
        CAPTURE(n.name);
        o = {};
        CHECK(gp::parse_planner_name(n.name, o, base));
        CHECK(o.futures == n.futures);
        CHECK(o.horizon == n.horizon);
        CHECK(o.margin == n.margin);
        CHECK(o.terminal_value == n.terminal_value);
        CHECK(base == n.base);
    }
    CHECK_THROWS_WITH_AS((void)gp::parse_planner_name("rollout4h:pack", o, base), doctest::Contains("a horizon H (decisions) from 1 to 1000000, got \"\""),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::parse_planner_name("rollout4h0:pack", o, base), doctest::Contains("got \"0\""), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::parse_planner_name("rolloutx:pack", o, base), doctest::Contains("got \"x\""), gp::ConfigError);
    o = {};
    REQUIRE(gp::parse_planner_name("rollout16m2:pack", o, base));
    for (const char* bad : {"rollout8m:pack", "rollout8m-1:pack", "rollout8mx:pack", "rollout8m1e9:pack", "rollout8m0.5.1:pack", "rollout8mnan:pack"})
        CHECK_THROWS_WITH_AS((void)gp::parse_planner_name(bad, o, base),
                             doctest::Contains("rollout<F>h<H>m<M> takes a margin M (standard errors) from 0 to 100, got"), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::parse_planner_name("rollout8m-1:pack", o, base),
                         "policy \"rollout8m-1:pack\": rollout<F>h<H>m<M> takes a margin M (standard errors) from 0 to 100, got \"-1\"",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::parse_planner_name("rollout8h0m0.5:pack", o, base), doctest::Contains("got \"0\""), gp::ConfigError);
    CHECK(o.futures == 16);  // a refused name leaves the options as they were
    CHECK(o.margin == 2.0);
    CHECK_THROWS_WITH_AS((void)gp::named_policy<gp::env>("rollout4h8v:pack+sjf"),
                         "policy \"rollout4h8v:pack+sjf\": the suffix v (a value at the rollout's cut) is the round planner's "
                         "(rollout<F>h<H>v:<placer>+class_gittins); a planner over a heuristic plays each rollout to its horizon",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::named_policy<gp::env>("rollout:nope"), doctest::Contains("unknown policy \"nope\""), gp::ConfigError);
    const auto p = gp::named_policy<gp::env>("rollout:pack+sjf");
    CHECK(p.name == "rollout:pack+sjf");
    CHECK(p.queue == "sjf");
    CHECK(gp::named_policy<gp::env>("pack+fifo").queue == "fifo");
}

TEST_CASE("rollout planner: refuses the gpu action mode, which has no candidates to score") {
    auto s = small_placement();
    s.env.mode = gp::action_mode::gpu;
    gp::env e(s);
    e.reset(1);
    auto act = gp::named_policy<gp::env>("rollout:pack").make(1);
    CHECK_THROWS_WITH_AS(act(e), doctest::Contains("placement or job action mode"), gp::ConfigError);
}

TEST_CASE("rollout planner: with an unreachable margin it keeps the base heuristic's every action") {
    const auto s = small_placement();
    gp::rollout_options o;
    o.futures = 3;
    o.margin = 1e300;
    auto base = gp::heuristic<gp::env>("pack").make;
    for (std::uint64_t seed : {1000000ULL, 1000001ULL}) {
        gp::rollout_policy<gp::env> planner(base, o);
        planner.reset(seed);
        auto pack = base(seed);
        const auto [pa, pm] = play(s, seed, [&](const gp::env& e) { return pack(e); });
        const auto [ra, rm] = play(s, seed, [&](const gp::env& e) { return planner.act(e); });
        CHECK(ra == pa);
        CHECK(rm.avg_jct == pm.avg_jct);
        CHECK(planner.seconds_per_decision() >= 0);
    }
}

TEST_CASE("rollout planner: deterministic by seed, whatever the thread count, hindsight and fair alike") {
    const auto s = small_placement(12);
    for (const bool hindsight : {false, true}) {
        gp::rollout_options o;
        o.futures = 2;
        o.hindsight = hindsight;
        auto base = gp::heuristic<gp::env>("pack_wait").make;
        gp::rollout_policy<gp::env> one(base, o);
        o.threads = 2;
        gp::rollout_policy<gp::env> two(base, o);
        one.reset(7);
        two.reset(7);
        const auto [a1, m1] = play(s, 1000000, [&](const gp::env& e) { return one.act(e); });
        const auto [a2, m2] = play(s, 1000000, [&](const gp::env& e) { return two.act(e); });
        CHECK(a1 == a2);
        CHECK(m1.avg_jct == m2.avg_jct);
        CHECK(m1.jobs_done == 12);
    }
}

TEST_CASE("rollout planner: lazy forks give the same scores and decisions as full ones") {
    const auto s = small_placement(24);
    for (const bool hindsight : {false, true}) {
        gp::rollout_options o;
        o.futures = 3;
        o.hindsight = hindsight;
        o.lazy = false;
        auto base = gp::heuristic<gp::env>("pack_wait").make;
        gp::rollout_policy<gp::env> full(base, o);
        o.lazy = true;
        gp::rollout_policy<gp::env> lazy(base, o);
        full.reset(3);
        lazy.reset(3);
        std::vector<double> fs, ls;
        const auto [af, mf] = play(s, 1000002, [&](const gp::env& e) {
            const auto a = full.act(e);
            fs.insert(fs.end(), full.last_scores().begin(), full.last_scores().end());
            return a;
        });
        const auto [al, ml] = play(s, 1000002, [&](const gp::env& e) {
            const auto a = lazy.act(e);
            ls.insert(ls.end(), lazy.last_scores().begin(), lazy.last_scores().end());
            return a;
        });
        CHECK(al == af);
        CHECK(ls == fs);  // every action's mean return, bit for bit
        CHECK(ml.avg_jct == mf.avg_jct);
    }
}

TEST_CASE("rollout planner: the harness runs it by name next to its heuristic") {
    const auto s = small_placement(12);
    const auto rep = gp::evaluate(s, {gp::named_policy<gp::env>("pack_wait+sjf"), gp::named_policy<gp::env>("hindsight:pack_wait+sjf"),
                                      gp::named_policy<gp::env>("rollout2:pack_wait+sjf")},
                                  gp::held_out_seeds(2), 2);
    REQUIRE(rep.policies.size() == 3);
    for (const auto& p : rep.policies)
        for (const auto& m : p.per_seed) CHECK(m.jobs_done == 12);
    // the same report again: planners are deterministic by seed, whatever the threads
    const auto again = gp::evaluate(s, {gp::named_policy<gp::env>("rollout2:pack_wait+sjf")}, gp::held_out_seeds(2), 1);
    CHECK(again.policies[0].per_seed[0].avg_jct == rep.policies[2].per_seed[0].avg_jct);
    CHECK(again.policies[0].per_seed[1].avg_jct == rep.policies[2].per_seed[1].avg_jct);
}

TEST_CASE("rollout planner: hindsight with ties_to_base keeps the base's action unless another is better by min_gain") {
    const auto s = small_placement(120);
    std::size_t moved = 0;
    for (const std::uint64_t seed : {7, 8}) {
        CAPTURE(seed);
        // on the states the base visits: the plain planner (the lowest best action), the teacher's
        // labels (ties to the base; with an unreachable min_gain) and the base's own action
        gp::rollout_options o, never;
        o.ties_to_base = never.ties_to_base = true;
        never.min_gain = 1e9;
        auto plain = gp::named_policy<gp::env>("hindsight:pack_wait+sjf").make(seed);
        auto ties = gp::named_policy<gp::env>("hindsight:pack_wait+sjf", o).make(seed);
        auto kept = gp::named_policy<gp::env>("hindsight:pack_wait+sjf", never).make(seed);
        auto base = gp::heuristic<gp::env>("pack_wait+sjf").make(seed);
        (void)play(s, seed, [&](const gp::env& e) {
            const auto p = plain(e), t = ties(e), b = base(e);
            if (t != b) {
                CHECK(t == p);  // the base strictly beaten: the best action, as without ties_to_base
                ++moved;
            }
            if (p == b) CHECK(t == b);
            CHECK(kept(e) == b);
            return b;
        });
    }
    MESSAGE("labels off the base: ", moved);
    CHECK(moved > 0);
}

TEST_CASE("rollout planner: a cluster larger than max_gpus is refused before any episode, naming its size and the limit") {
    auto s = small_placement(4);
    s.topology = gp::topology_config::of("dgx_a100", 64, 16);  // 8,192 GPUs
    const auto huge = gp::named_policy<gp::env>("rollout:pack");
    CHECK_THROWS_WITH_AS((void)gp::evaluate(s, {gp::named_policy<gp::env>("pack"), huge}, gp::held_out_seeds(1), 1),
                         doctest::Contains("policy \"rollout:pack\": a rollout planner on 8192 GPUs does not finish in reasonable "
                                           "time"),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::evaluate(s, {gp::named_policy<gp::env>("hindsight:pack")}, gp::held_out_seeds(1), 1),
                         doctest::Contains("the limit is 4096 GPUs (rollout_options::max_gpus"), gp::ConfigError);
    // the planner itself refuses too, at its first decision, when used without the harness
    gp::rollout_options o;
    gp::rollout_policy<gp::env> p(gp::heuristic<gp::env>("pack").make, o);
    gp::env e(s);
    e.reset(1);
    p.reset(1);
    CHECK_THROWS_WITH_AS((void)p.act(e), doctest::Contains("on 8192 GPUs"), gp::ConfigError);
    // a raised limit (or a horizon) lets it run
    o.max_gpus = 8192;
    const auto rep = gp::evaluate(s, {gp::named_policy<gp::env>("rollout:pack", o)}, gp::held_out_seeds(1), 1);
    CHECK(rep.policies[0].per_seed[0].jobs_done == 4);
}

TEST_CASE("rollout planner: its decisions on fixed seeds are pinned (a faster planner plays the same actions)") {
    // FNV-1a of each episode's actions and of its last decision scores' bits: any change to what
    // the planner decides (or to the scores it decides on) changes these
    const auto fnv = [](std::uint64_t h, std::uint64_t x) {
        for (int b = 0; b < 8; ++b) h = (h ^ ((x >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
        return h;
    };
    struct pinned {
        const char* name;
        std::uint64_t seed;
        std::size_t decisions;
        std::uint64_t hash;
    };
    const auto s = small_placement(40);
    for (const auto& p : {pinned{"rollout4:pack_wait+sjf", 1000000, 44, 7641130532452368256ULL},
                          pinned{"rollout4:pack_wait+sjf", 1000001, 40, 4703249480067678027ULL},
                          pinned{"rollout3h8:pack+fifo", 1000002, 582, 18199014924068332877ULL},
                          pinned{"hindsight:pack_wait+sjf", 1000003, 40, 10536554428727229117ULL}}) {
        CAPTURE(p.name);
        CAPTURE(p.seed);
        gp::rollout_options o;
        std::string base;
        REQUIRE(gp::parse_planner_name(p.name, o, base));
        const auto named = gp::named_policy<gp::env>(base);
        auto q = s;
        gp::apply_queue(q, named.queue);
        gp::rollout_policy<gp::env> planner(gp::heuristic<gp::env>(base).make, o);
        planner.reset(p.seed);
        std::uint64_t h = 0xcbf29ce484222325ULL;
        const auto [actions, m] = play(q, p.seed, [&](const gp::env& e) {
            const auto a = planner.act(e);
            h = fnv(h, std::uint64_t(a));
            for (const double x : planner.last_scores()) h = fnv(h, std::bit_cast<std::uint64_t>(x));
            return a;
        });
        MESSAGE(std::string(p.name), " ", p.seed, " ", actions.size(), " ", h);
        CHECK(m.jobs_done == 40);
        CHECK(actions.size() == p.decisions);
        CHECK(h == p.hash);
    }
}

TEST_CASE("rollout planner: every score is that of a fresh fork per action, with co-location too") {
    // the planner forks once per future and copies the fork for each action into a reused env:
    // each score must equal the return of a fork made afresh for that action (the seeds as the
    // planner draws them: decision d of seed s forks future f with mix_seed(mix_seed(s, c + d), f))
    for (const char* preset : {"default", "colocation"}) {
        CAPTURE(preset);
        auto s = gp::preset_scenario(preset);
        s.env.mode = gp::action_mode::placement;
        s.workload.synthetic.num_jobs = 24;
        gp::rollout_options o;
        o.futures = 2;
        o.horizon = 6;
        o.margin = 0;
        auto base = gp::heuristic<gp::env>("pack_wait").make;
        gp::rollout_policy<gp::env> planner(base, o);
        const std::uint64_t seed = 5;
        planner.reset(seed);
        std::uint64_t d = 0;
        std::size_t checked = 0;
        (void)play(s, 1000004, [&](const gp::env& e) {
            const auto a = planner.act(e);
            const auto actions = planner.last_actions();
            if (actions.size() > 1) {
                const auto decision = gp::detail::mix_seed(seed, 0x726f6c6c6f7574ULL + d);
                for (std::size_t i = 0; i < actions.size(); ++i) {
                    CHECK(planner.last_scores()[i] == fresh_fork_mean(e, actions[i], base, decision, o.futures, o.horizon));
                    ++checked;
                }
                ++d;  // the planner counts the decisions with a choice
            }
            return a;
        });
        CHECK(checked > 10);
    }
}

TEST_CASE("parallel rollout: names of several bases, under one queue policy, and their errors") {
    const auto p = gp::named_policy<gp::env>("rollout4:pack_wait/topology_greedy+sjf");
    CHECK(p.name == "rollout4:pack_wait/topology_greedy+sjf");
    CHECK(p.queue == "sjf");
    CHECK(gp::named_policy<gp::env>("hindsight:pack/first_fit").queue.empty());
    struct bad {
        const char* name;
        const char* message;
    };
    for (const auto& b : {bad{"rollout4:pack//first_fit+sjf", "policy \"rollout4:pack//first_fit+sjf\": bases are written "
                                                              "<heuristic>/<heuristic>[/...][+queue], and base 2 of \"pack//first_fit+sjf\" is empty"},
                          bad{"rollout4:pack/+sjf", "policy \"rollout4:pack/+sjf\": bases are written <heuristic>/<heuristic>[/...][+queue], "
                                                    "and base 2 of \"pack/+sjf\" is empty"},
                          bad{"rollout4:pack/first_fit/pack", "policy \"rollout4:pack/first_fit/pack\": the base pack is named twice"},
                          bad{"rollout4h8:pack/load_balance+class_gittins",
                              "policy \"rollout4h8:pack/load_balance+class_gittins\": several bases are for a planner over heuristics; in rounds the "
                              "planner plans over class_gittins alone"},
                          bad{"rollout4h8v:pack/load_balance+sjf", "policy \"rollout4h8v:pack/load_balance+sjf\": the suffix v (a value at the rollout's "
                                                             "cut) is the round planner's (rollout<F>h<H>v:<placer>+class_gittins); a planner "
                                                             "over a heuristic plays each rollout to its horizon"}}) {
        CAPTURE(b.name);
        CHECK_THROWS_WITH_AS((void)gp::named_policy<gp::env>(b.name), b.message, gp::ConfigError);
    }
    CHECK_THROWS_WITH_AS((void)gp::named_policy<gp::env>("rollout4:pack/nope+sjf"), doctest::Contains("unknown policy \"nope\""), gp::ConfigError);
    CHECK_THROWS_AS((void)gp::rollout_policy<gp::env>(std::vector<gp::rollout_policy<gp::env>::base_factory>{}, gp::rollout_options{}),
                    gp::ConfigError);
}

TEST_CASE("parallel rollout: each score is the best base's mean over fresh forks, and the action kept is the best base's own") {
    // two bases (first_fit, pack) on the same futures: an action's score is the larger of its two
    // bases' mean returns, each future a fork made afresh; with an unreachable margin the planner
    // plays the own action of the base whose own action scores best (a tie: the first base's)
    auto s = gp::preset_scenario("default");
    s.env.mode = gp::action_mode::placement;
    s.workload.synthetic.num_jobs = 24;
    const auto first_fit = gp::heuristic<gp::env>("first_fit").make, pack = gp::heuristic<gp::env>("pack").make;
    for (const double margin : {0.0, 1e300}) {
        CAPTURE(margin);
        gp::rollout_options o;
        o.futures = 2;
        o.horizon = 6;
        o.margin = margin;
        gp::rollout_policy<gp::env> planner({first_fit, pack}, o);
        CHECK(planner.bases() == 2);
        const std::uint64_t seed = 5;
        planner.reset(seed);
        std::uint64_t d = 0;
        std::size_t checked = 0, departures = 0, first_kept = 0, second_kept = 0;
        (void)play(s, 1000004, [&](const gp::env& e) {
            const auto a = planner.act(e);
            const auto actions = planner.last_actions();
            if (actions.size() > 1) {
                const auto decision = gp::detail::mix_seed(seed, 0x726f6c6c6f7574ULL + d);
                const auto mean = [&](std::int64_t action, const auto& make) {
                    return fresh_fork_mean(e, action, make, decision, o.futures, o.horizon);
                };
                for (std::size_t i = 0; i < actions.size(); ++i) {
                    CHECK(planner.last_scores()[i] == std::max(mean(actions[i], first_fit), mean(actions[i], pack)));
                    ++checked;
                }
                const auto own = gp::detail::mix_seed(decision, 0x62617365ULL);
                const auto ff = first_fit(own)(e), p = pack(own)(e);
                const auto kept = mean(p, pack) > mean(ff, first_fit) ? p : ff;
                if (margin > 1) CHECK(a == kept);
                departures += a != kept;
                first_kept += ff != p && kept == ff;
                second_kept += ff != p && kept == p;
                ++d;  // the planner counts the decisions with a choice
            }
            return a;
        });
        CHECK(checked > 10);
        CHECK(first_kept > 0);  // where the two bases' own actions differ, each is kept somewhere
        CHECK(second_kept > 0);
        if (margin == 0) CHECK(departures > 0);
    }
}

TEST_CASE("parallel rollout: deterministic by seed whatever the thread count, and one base is the single-base planner") {
    const auto s = small_placement(12);
    gp::rollout_options o;
    o.futures = 3;
    const auto pack_wait = gp::heuristic<gp::env>("pack_wait").make, tg = gp::heuristic<gp::env>("topology_greedy").make;
    gp::rollout_policy<gp::env> one({pack_wait, tg}, o), single(pack_wait, o), listed(std::vector{pack_wait}, o);
    o.threads = 2;
    gp::rollout_policy<gp::env> two({pack_wait, tg}, o);
    for (auto* p : {&one, &two, &single, &listed}) p->reset(7);
    const auto [a1, m1] = play(s, 1000000, [&](const gp::env& e) { return one.act(e); });
    const auto [a2, m2] = play(s, 1000000, [&](const gp::env& e) { return two.act(e); });
    CHECK(a1 == a2);
    CHECK(m1.avg_jct == m2.avg_jct);
    const auto [as, ms] = play(s, 1000000, [&](const gp::env& e) { return single.act(e); });
    const auto [al, ml] = play(s, 1000000, [&](const gp::env& e) { return listed.act(e); });
    CHECK(as == al);
    CHECK(ms.avg_jct == ml.avg_jct);
}
