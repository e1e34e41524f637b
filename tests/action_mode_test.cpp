// Tests of the placement and job action modes (include/gpuplace/detail/action_layer.hpp through
// basic_env): masks, invalid actions, the reward identity, determinism, the candidates and the
// queue slots, and bit identity with the GPU mode where the modes must agree.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/colocation_policy.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/evaluate.hpp>
#include <gpuplace/policy.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

const char* const modes[] = {"placement", "job"};
const char* const mode_queues[] = {"fifo", "sjf", "fewest_gpus"};

/// Plays random valid actions to the end, checking the invariants of every step; returns the
/// sum of rewards.
template <class E>
double play_mode(E& e, std::uint64_t seed, double defer_prob) {
    e.reset(seed);
    gp::detail::rng r(seed * 13 + 5);
    const std::size_t A = e.num_actions();
    std::size_t off = 0;
    for (const auto& seg : e.observation_layout()) {
        REQUIRE(seg.offset == off);
        off += seg.size;
    }
    REQUIRE(off == e.observation_size());
    double sum = 0;
    while (!e.done()) {
        const auto mask = e.action_mask();
        REQUIRE(mask.size() == A);
        REQUIRE(std::any_of(mask.begin(), mask.end(), [](std::uint8_t m) { return m != 0; }));  // never all zero
        for (float x : e.observation()) REQUIRE((x >= 0.0f && x <= 1.0f));
        if (e.mode() == gp::action_mode::placement) {
            const auto k = e.current_job().num_gpus;
            for (std::size_t s = 0; s + 1 < A; ++s) {
                const auto c = e.candidate(s);
                REQUIRE((mask[s] != 0) == !c.empty());
                if (c.empty()) continue;
                REQUIRE(c.size() == k);
                REQUIRE(std::is_sorted(c.begin(), c.end()));
                REQUIRE(std::adjacent_find(c.begin(), c.end()) == c.end());
                for (auto g : c) REQUIRE(e.has_room(g, e.current_index()));
            }
        } else {
            for (std::size_t s = 0; s + 1 < A; ++s) {
                const auto j = e.slot_job(s);
                REQUIRE((mask[s] != 0) == (j != gp::basic_env<>::none));
            }
        }
        const auto a = random_action(e, r, defer_prob);
        sum += e.step(a).reward;
    }
    return sum;
}

gp::scenario mode_scenario(const gp::scenario& base, const char* mode, json extra = json::object()) {
    json env = {{"action_mode", mode}};
    env.merge_patch(extra);
    return with(base, {{"env", env}});
}

}  // namespace

TEST_CASE_TEMPLATE("action modes: invariants and the reward identity under random play", P, dgx_a100_2x4, dgx1_2x4,
                   proximity_drl_topo, tiny_topo, odd_topo) {
    const json counts = P::make().num_gpus() >= 32 ? json{{"1", .3}, {"2", .2}, {"3", .1}, {"4", .2}, {"8", .15}, {"16", .05}}
                                                   : json{{"1", .5}, {"2", .3}, {"3", .1}, {"4", .1}};
    const auto base = small_scenario(P::config(), counts, 14, 2.0);
    for (const char* mode : modes)
        for (std::uint64_t seed = 0; seed < 12; ++seed) {
            const json opts = {{"queue_policy", mode_queues[seed % 3]},
                               {"allow_defer", seed % 2 == 0},
                               {"slots", 1 + seed % 9},
                               {"placer", seed % 4 == 3 ? "topology_greedy" : "pack"}};
            INFO(P::name, " ", mode, " seed ", seed, " ", opts.dump());
            const auto s = mode_scenario(base, mode, opts);
            if (seed % 5 == 4) {
                gp::tree_route_env e(with(s, {{"comm", {{"model", "tree_route"}}}}));
                const double sum = play_mode(e, seed, 0.3);
                CHECK(close_rel(sum, -sum_jct(e.finished()) / 3600.0));
                CHECK(e.finished().size() == e.simulator().jobs().size());
            } else {
                gp::env e(s);
                const double sum = play_mode(e, seed, 0.3);
                CHECK(close_rel(sum, -sum_jct(e.finished()) / 3600.0));
                CHECK(e.finished().size() == e.simulator().jobs().size());
            }
        }
}

TEST_CASE("action modes: with co-location the invariants and the reward identity hold") {
    auto s = gp::default_scenario();
    s.colocation.enabled = true;
    s.workload.synthetic.num_jobs = 40;
    for (const char* mode : modes)
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
            INFO(mode, " seed ", seed);
            gp::env e(mode_scenario(s, mode));
            const double sum = play_mode(e, seed, 0.2);
            CHECK(close_rel(sum, -sum_jct(e.finished()) / 3600.0));
        }
}

TEST_CASE("action modes: a heuristic gives the GPU mode's episode, bit for bit") {
    auto base = gp::default_scenario();
    base.workload.synthetic.num_jobs = 60;
    const auto same = [](const auto& a, const auto& b) {
        REQUIRE(a.finished().size() == b.finished().size());
        for (std::size_t i = 0; i < a.finished().size(); ++i) {
            CHECK(a.finished()[i].id == b.finished()[i].id);
            CHECK(a.finished()[i].start == b.finished()[i].start);
            CHECK(a.finished()[i].end == b.finished()[i].end);
            CHECK(a.finished()[i].comm_cost == b.finished()[i].comm_cost);
        }
        CHECK(a.episode_return() == b.episode_return());
    };
    // placement mode: every heuristic whose placement is a candidate, and pack_wait (DEFER, then pack's)
    const auto check_placement = [&](auto policy, const char* queue) {
        auto s = base;
        gp::apply_queue(s, queue);
        gp::env g(s), p(mode_scenario(s, "placement"));
        auto h1 = policy, h2 = policy;
        gp::run_episode(g, h1, 7);
        gp::run_episode(p, h2, 7);
        INFO(decltype(policy)::name, "+", queue);
        same(g, p);
        CHECK(p.steps() < g.steps());  // one decision per job (or DEFER) instead of one per GPU
    };
    for (const char* q : {"fifo", "sjf"}) {
        check_placement(gp::pack_policy{}, q);
        check_placement(gp::load_balance_policy{}, q);
        check_placement(gp::topology_greedy_policy{}, q);
        check_placement(gp::first_fit_policy{}, q);
        check_placement(gp::pack_wait_policy{}, q);
    }
    // job mode: the first slot is the job the GPU mode places next (backfill), placed by the placer
    for (const char* q : {"backfill", "sjf", "fewest_gpus"}) {
        auto s = base;
        gp::apply_queue(s, q);
        gp::env g(s), j(mode_scenario(s, "job", {{"slots", 64}}));
        gp::pack_wait_policy h1, h2;
        gp::run_episode(g, h1, 3);
        gp::run_episode(j, h2, 3);
        INFO("pack_wait+", q);
        same(g, j);
        // always the first slot, placed by load_balance: load_balance in the GPU mode
        gp::env g2(s), j2(mode_scenario(s, "job", {{"placer", "load_balance"}}));
        gp::load_balance_policy lb;
        gp::run_episode(g2, lb, 4);
        j2.reset(4);
        while (!j2.done()) j2.step(0);
        same(g2, j2);
    }
}

TEST_CASE("action modes: the first candidate is pack's placement, and DEFER is the GPU mode's") {
    auto s = gp::default_scenario();
    s.workload.synthetic.num_jobs = 40;
    gp::env e(mode_scenario(s, "placement"));
    gp::env g(s);
    e.reset(5);
    g.reset(5);
    gp::pack_policy pack;
    std::size_t decisions = 0;
    while (!e.done()) {
        REQUIRE(e.current_index() == g.current_index());
        CHECK(e.action_mask()[e.num_actions() - 1] == g.action_mask()[g.num_gpus()]);
        // pack's whole placement, picked GPU by GPU in the GPU-mode env
        const auto c = e.candidate(0);
        std::vector<gp::gpu_id> picks;
        while (g.picked().size() + 1 < g.current_job().num_gpus) {
            picks.push_back(gp::gpu_id(pack.act(g)));
            g.step(picks.back());
        }
        picks.push_back(gp::gpu_id(pack.act(g)));
        std::sort(picks.begin(), picks.end());
        CHECK(std::vector<gp::gpu_id>(c.begin(), c.end()) == picks);
        const auto rg = g.step(std::int64_t(*std::find_if(picks.begin(), picks.end(), [&](gp::gpu_id x) { return !g.is_picked(x); })));
        const auto rp = e.step(0);
        CHECK(rg.terminated == rp.terminated);
        ++decisions;
    }
    CHECK(g.episode_return() == e.episode_return());
    CHECK(decisions == e.steps());
}

TEST_CASE("action modes: invalid actions raise and change nothing, masks and errors") {
    auto s = gp::default_scenario();
    s.workload.synthetic.num_jobs = 30;
    for (const char* mode : modes) {
        INFO(mode);
        gp::env e(mode_scenario(s, mode, {{"slots", 6}}));
        CHECK_THROWS_AS(e.step(0), gp::StateError);
        e.reset(2);
        CHECK(e.num_actions() == 7);
        const std::vector<float> obs(e.observation().begin(), e.observation().end());
        const auto steps = e.steps();
        CHECK_THROWS_WITH_AS(e.step(7), doctest::Contains("out of range [0, 6]"), gp::InvalidAction);
        CHECK_THROWS_AS(e.step(-1), gp::InvalidAction);
        for (std::size_t a = 0; a < 7; ++a)
            if (!e.action_mask()[a]) {
                CHECK_THROWS_AS(e.step(std::int64_t(a)), gp::InvalidAction);
                CHECK_FALSE(e.why_invalid(std::int64_t(a)).empty());
            }
        CHECK(same_bytes<float>(obs, e.observation()));
        CHECK(e.steps() == steps);
        gp::detail::rng r(1);
        while (!e.done()) e.step(random_action(e, r, 0.1));
        CHECK_THROWS_AS(e.step(0), gp::StateError);
    }
    // DEFER / wait off: the last action is always masked
    for (const char* mode : modes) {
        gp::env e(mode_scenario(s, mode, {{"allow_defer", false}}));
        e.reset(1);
        gp::detail::rng r(2);
        while (!e.done()) {
            CHECK(e.action_mask()[e.num_actions() - 1] == 0);
            CHECK_THROWS_WITH_AS(e.step(std::int64_t(e.num_actions() - 1)), doctest::Contains("not allowed"), gp::InvalidAction);
            e.step(random_action(e, r, 0.0));
        }
    }
    CHECK_THROWS_WITH_AS(gp::parse_scenario(R"({"env": {"action_mode": "jobs"}})"), doctest::Contains("/env/action_mode"), gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::parse_scenario(R"({"env": {"action_mode": "job", "slots": 0}})"), doctest::Contains("/env/slots"),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::parse_scenario(R"({"env": {"placer": "random"}})"), doctest::Contains("/env/placer"), gp::ConfigError);
    auto zero = gp::default_scenario();
    zero.env.mode = gp::action_mode::job;
    zero.env.slots = 0;
    CHECK_THROWS_AS(gp::env{zero}, gp::ConfigError);
}

TEST_CASE("action modes: JSON round trip, a GPU-mode scenario's JSON has no mode keys") {
    const auto s = mode_scenario(gp::default_scenario(), "job", {{"slots", 5}, {"placer", "topology_greedy"}});
    CHECK(s.env.mode == gp::action_mode::job);
    CHECK(s.env.slots == 5);
    CHECK(s.env.placer == gp::placer_kind::topology_greedy);
    const auto back = gp::scenario_from_json(gp::to_json(s));
    CHECK(back.env.mode == gp::action_mode::job);
    CHECK(back.env.slots == 5);
    CHECK(back.env.placer == gp::placer_kind::topology_greedy);
    CHECK_FALSE(gp::to_json(gp::default_scenario())["env"].contains("action_mode"));
}

TEST_CASE("action modes: observation layout names and determinism by seed") {
    auto s = gp::default_scenario();
    s.workload.synthetic.num_jobs = 30;
    {
        gp::env e(mode_scenario(s, "placement", {{"slots", 4}}));
        const auto& l = e.observation_layout();
        CHECK(l[0].name == "candidate_valid");
        CHECK(l[0].size == 4);
        CHECK(l[7].name == "candidate_partial");
        CHECK(l[8].name == "job");
        CHECK(l.back().name == "global");
        CHECK(e.observation_size() == 8 * 4 + 5 + 4 * 8 + 4);
    }
    {
        gp::env e(mode_scenario(s, "job", {{"slots", 3}}));
        const auto& l = e.observation_layout();
        CHECK(l[0].name == "slot_valid");
        CHECK(l[6].name == "slot_fits_rack");
        CHECK(l[7].name == "cluster");
        CHECK(l[8].name == "global");
        CHECK(e.observation_size() == 7 * 3 + 4 + 4);
    }
    for (const char* mode : modes) {
        gp::env a(mode_scenario(s, mode)), b(mode_scenario(s, mode));
        a.reset(9);
        b.reset(9);
        gp::detail::rng ra(3), rb(3);
        while (!a.done()) {
            REQUIRE(same_bytes<float>(a.observation(), b.observation()));
            REQUIRE(same_bytes<std::uint8_t>(a.action_mask(), b.action_mask()));
            const auto ca = a.step(random_action(a, ra, 0.2)), cb = b.step(random_action(b, rb, 0.2));
            REQUIRE(ca.reward == cb.reward);
        }
        CHECK(b.done());
    }
}

TEST_CASE("action modes: the harness and random run in every mode") {
    auto s = gp::default_scenario();
    s.workload.synthetic.num_jobs = 30;
    for (const char* mode : modes) {
        INFO(mode);
        const auto sm = mode_scenario(s, mode);
        for (const auto& name : gp::heuristic_names()) {
            gp::env e(sm);
            auto p = gp::heuristic<gp::env>(name);
            auto act = p.make(1);
            e.reset(1);
            while (!e.done()) {
                const auto a = act(e);
                REQUIRE(e.why_invalid(a) == "");
                e.step(a);
            }
            CHECK(e.finished().size() == 30);
        }
    }
}

TEST_CASE("action modes: on the heterogeneous preset the invariants hold and type-aware heuristics act in every mode") {
    auto s = gp::preset_scenario("heterogeneous");
    s.workload.synthetic.num_jobs = 40;
    for (const char* mode : modes) {
        INFO(mode);
        const auto sm = mode_scenario(s, mode);
        gp::env e(sm);
        const double sum = play_mode(e, 3, 0.2);
        CHECK(close_rel(sum, -sum_jct(e.finished()) / 3600.0));
        for (const char* name : {"fastest_type:pack_wait", "throughput_greedy:pack"}) {
            gp::env h(sm);
            auto act = gp::heuristic<gp::env>(name).make(1);
            h.reset(2);
            while (!h.done()) {
                const auto a = act(h);
                REQUIRE(h.why_invalid(a) == "");
                h.step(a);
            }
            CHECK(h.finished().size() == 40);
        }
    }
}

TEST_CASE("action modes: a lazy placement env (set_lazy) plays every policy's episode bit for bit, and reads the same observation") {
    // heuristics whose placement is a candidate, one that holds jobs back (pack_wait), type-aware
    // ones whose placement may be none (the first-candidate fallback), co-location, random; and
    // chosen segments (scenario key "observation"), which a lazy env copies when they are read
    struct run {
        const char* preset;
        const char* policy;
        bool choose = false;  // the lazy env leaves out the global segment
    };
    for (const auto& r : {run{"default", "pack+sjf"}, run{"default", "pack_wait+sjf"}, run{"default", "topology_greedy+fifo"},
                          run{"default", "random"}, run{"heterogeneous", "fastest_type:pack_wait"},
                          run{"heterogeneous", "throughput_greedy:pack"}, run{"colocation", "pack_wait"},
                          run{"default", "pack_wait+sjf", true}}) {
        INFO(r.preset, " ", r.policy, r.choose ? " without global" : "");
        auto s = gp::preset_scenario(r.preset);
        s.env.mode = gp::action_mode::placement;
        s.workload.synthetic.num_jobs = 40;
        const auto p = gp::heuristic<gp::env>(r.policy);
        gp::apply_queue(s, p.queue);
        auto chosen = s;
        if (r.choose) chosen.observation.exclude = {"global"};
        gp::env full(s), lazy(chosen);
        full.reset(5);
        lazy.reset(5);
        lazy.set_lazy(true);
        auto a_full = p.make(5), a_lazy = p.make(5);
        gp::detail::rng pick(11);
        std::size_t reads = 0;
        while (!full.done()) {
            REQUIRE_FALSE(lazy.done());
            if (pick.uniform() < 0.2) {  // read now and then: what it leaves out is made on demand, the same
                ++reads;
                const auto o = full.observation(), lo = lazy.observation();
                if (r.choose) {  // each kept segment, bit for bit
                    const auto& whole = full.observation_layout();
                    for (const auto& seg : lazy.observation_layout()) {
                        const auto f = std::find_if(whole.begin(), whole.end(), [&](const auto& w) { return w.name == seg.name; });
                        REQUIRE(f != whole.end());
                        CHECK(std::ranges::equal(o.subspan(f->offset, f->size), lo.subspan(seg.offset, seg.size)));
                    }
                } else {
                    CHECK(std::equal(o.begin(), o.end(), lo.begin(), lo.end()));
                }
                const auto m = full.action_mask(), lm = lazy.action_mask();
                CHECK(std::equal(m.begin(), m.end(), lm.begin(), lm.end()));
            }
            const auto a = a_full(full);
            REQUIRE(a_lazy(lazy) == a);
            full.step(a);
            lazy.step(a);
        }
        CHECK(lazy.done());
        CHECK(lazy.episode_return() == full.episode_return());
        CHECK(reads > 10);
        lazy.set_lazy(false);  // completes the decision: the same observation again
        CHECK(lazy.finished().size() == full.finished().size());
        const auto m = full.action_mask(), lm = lazy.action_mask();
        CHECK(std::equal(m.begin(), m.end(), lm.begin(), lm.end()));
    }
}

TEST_CASE("action modes: with co-location a candidate's speed is the rate the job gets there") {
    auto s = gp::preset_scenario("colocation");  // 1-GPU jobs sharing GPUs, Gavel's measured interference
    s.env.mode = gp::action_mode::placement;
    gp::env e(s);
    std::size_t speed_at = 0, K = 0;
    for (const auto& seg : e.observation_layout())
        if (seg.name == "candidate_speed") speed_at = seg.offset, K = seg.size;
    REQUIRE(K > 0);
    const auto& sim = e.simulator();
    const auto* table = sim.interference();
    REQUIRE(table != nullptr);
    gp::first_fit_policy ff;
    e.reset(1000000);
    ff.reset(1000000);
    std::size_t shared = 0, checked = 0;
    while (!e.done()) {
        const auto mask = e.action_mask();
        const auto& job = e.current_job();
        for (std::size_t c = 0; c < K; ++c) {
            if (!mask[c]) continue;
            // the simulator's rate of the job on those GPUs: per GPU the product of its factors next
            // to each job there, the slowest GPU's (basic_simulator's co-location rates)
            double rate = 1.0;
            for (const auto g : e.candidate(c)) {
                double f = 1.0;
                for (const auto o : e.cluster().jobs_on(g)) f *= table->factor(job.model, job.gpu_fraction, sim.job(o).model, sim.job(o).gpu_fraction);
                rate = std::min(rate, f);
            }
            const auto comm = e.evaluate(e.candidate(c));
            CHECK(e.observation()[speed_at + c] == doctest::Approx(rate / std::max(1.0, comm.slowdown)).epsilon(1e-6));
            shared += rate < 1.0;
            ++checked;
        }
        e.step(ff.act(e));
    }
    CHECK(checked > 100);
    CHECK(shared > 0);  // candidates next to another job show its interference
}

TEST_CASE("action modes: with co-location the packer's every placement is a candidate, and combined is its score") {
    auto s = gp::preset_scenario("colocation");
    s.workload.synthetic.num_jobs = 80;
    // the share candidate: coloc_packer plays the GPU mode's episode, bit for bit
    for (const char* q : {"fifo", "sjf"}) {
        auto sq = s;
        gp::apply_queue(sq, q);
        gp::env g(sq), p(mode_scenario(sq, "placement"));
        gp::colocation_packer_policy h1, h2;
        gp::run_episode(g, h1, 5);
        gp::run_episode(p, h2, 5);
        INFO("coloc_packer+", q);
        REQUIRE(g.finished().size() == p.finished().size());
        for (std::size_t i = 0; i < g.finished().size(); ++i) {
            CHECK(g.finished()[i].id == p.finished()[i].id);
            CHECK(g.finished()[i].start == p.finished()[i].start);
            CHECK(g.finished()[i].end == p.finished()[i].end);
        }
        CHECK(g.episode_return() == p.episode_return());
    }
    // combined: the rates of the GPU's jobs with the job (a free GPU 2), over 2 jobs a GPU
    s.env.mode = gp::action_mode::placement;
    gp::env e(s);
    std::size_t at = 0, K = 0;
    for (const auto& seg : e.observation_layout())
        if (seg.name == "candidate_combined") at = seg.offset, K = seg.size;
    REQUIRE(K == s.env.slots);
    const auto& sim = e.simulator();
    const auto* table = sim.interference();
    gp::first_fit_policy ff;
    e.reset(1000001);
    std::size_t shared = 0, free = 0;
    while (!e.done()) {
        const auto mask = e.action_mask();
        const auto& job = e.current_job();
        for (std::size_t c = 0; c < K; ++c) {
            if (!mask[c]) continue;
            const auto g = e.candidate(c).front();
            const auto on = e.cluster().jobs_on(g);
            double total = 2.0;
            if (!on.empty()) {
                double own = 1.0;
                for (const auto o : on) own *= table->factor(job.model, job.gpu_fraction, sim.job(o).model, sim.job(o).gpu_fraction);
                total = own;
                for (const auto o : on) {
                    double f = table->factor(sim.job(o).model, sim.job(o).gpu_fraction, job.model, job.gpu_fraction);
                    for (const auto p : on)
                        if (p != o) f *= table->factor(sim.job(o).model, sim.job(o).gpu_fraction, sim.job(p).model, sim.job(p).gpu_fraction);
                    total += f;
                }
                ++shared;
            } else {
                ++free;
            }
            CHECK(e.observation()[at + c] == doctest::Approx(std::min(1.0, total / 2.0)).epsilon(1e-6));
        }
        e.step(ff.act(e));
    }
    CHECK(shared > 50);
    CHECK(free > 20);
    // without co-location the candidates have no "combined"
    gp::env plain(mode_scenario(gp::default_scenario(), "placement"));
    for (const auto& seg : plain.observation_layout()) CHECK(seg.name != "candidate_combined");
}
