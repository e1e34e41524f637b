// The topology conformance suite: every shipped topology (TreeTopology's presets, LevelTopology's
// NVL72 and fat tree, a hierarchy with domains of different sizes and GPU types) and the user-defined
// one of examples/pcie_box.hpp pass the same checks: the hierarchy's invariants, the comm models'
// bounds, and the env in every action mode with every heuristic (valid actions, reward identity,
// capacity, incremental observation = full rewrite, determinism by seed).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/evaluate.hpp>
#include <gpuplace/level_topology.hpp>
#include <gpuplace/policy.hpp>

#include "../examples/pcie_box.hpp"
#include "test_util.hpp"

namespace gp = gpuplace;

namespace {

struct tree_dgx_a100 {
    static constexpr const char* name = "TreeTopology::dgx_a100(2, 4)";
    static gp::TreeTopology make() { return gp::TreeTopology::dgx_a100(2, 4); }
};
struct tree_dgx1 {
    static constexpr const char* name = "TreeTopology::dgx1(2, 2)";
    static gp::TreeTopology make() { return gp::TreeTopology::dgx1(2, 2); }
};
struct tree_proximity_drl {
    static constexpr const char* name = "TreeTopology::proximity_drl()";
    static gp::TreeTopology make() { return gp::TreeTopology::proximity_drl(); }
};
struct tree_heterogeneous {
    static constexpr const char* name = "TreeTopology (heterogeneous preset)";
    static gp::TreeTopology make() { return gp::TreeTopology::from_config(gp::preset_scenario("heterogeneous").topology); }
};
struct level_nvl72 {
    static constexpr const char* name = "LevelTopology::nvl72(2)";
    static gp::LevelTopology make() { return gp::LevelTopology::nvl72(2); }
};
struct level_fat_tree {
    static constexpr const char* name = "LevelTopology::fat_tree(2, 2, 2, 4)";
    static gp::LevelTopology make() { return gp::LevelTopology::fat_tree(2, 2, 2, 4); }
};
/// Switches of 2, 4 and 6 GPUs in servers of 6 and 6, of two GPU types.
struct level_uneven_typed {
    static constexpr const char* name = "LevelTopology (uneven domains, two GPU types)";
    static gp::LevelTopology make() {
        return {"uneven", gp::level_hierarchy({{"switch", 24, 1e-6}, {"server", 16, 2e-6}, {"spine", 12.5, 8e-6}}, {{2, 4, 6}, {6, 6}}),
                {"v100", "v100", "p100"}};
    }
};
/// A tree of four levels described by levels, with servers of one or two switches (uneven) and two GPU types.
struct tree_levels_uneven {
    static constexpr const char* name = "TreeTopology (four levels, uneven, typed)";
    static gp::TreeTopology make() {
        return {"levels4",
                {{"switch", {4}, 24, 1e-6, {}, {}, {}},
                 {"server", {1, 2, 2, 1}, 16, 2e-6, {"v100", "p100", "v100", "p100"}, {}, {}},
                 {"pod", {2, 2}, 12.5, 5e-6, {}, {}, {}},
                 {"spine", {2}, 6.25, 1e-5, {}, {}, {}}}};
    }
};
struct user_pcie_box {
    static constexpr const char* name = "pcie_box_cluster (examples/pcie_box.hpp)";
    static pcie_box_cluster make() { return pcie_box_cluster{}; }
};

/// The hierarchy's invariants: every level partitions the GPUs into contiguous domains, each
/// inside one domain of the level above; the maps, bounds, parents and children agree; link()
/// and span() are the lowest common level.
void check_hierarchy(const gp::level_hierarchy& h) {
    const std::size_t G = h.num_gpus(), L = h.num_levels();
    REQUIRE(G > 0);
    REQUIRE(L >= 2);
    CHECK(h.num_domains(L) == 1);
    CHECK(h.num_domains(0) == G);
    for (std::size_t l = 1; l < L; ++l) {
        const auto b = h.bounds(l);
        REQUIRE(b.size() == h.num_domains(l) + 1);
        CHECK(b.front() == 0);
        CHECK(b.back() == G);
        std::uint32_t mx = 0;
        for (std::size_t d = 0; d < h.num_domains(l); ++d) {
            CHECK(h.size(l, d) > 0);
            mx = std::max(mx, h.size(l, d));
            for (auto g = h.first(l, d); g < h.end(l, d); ++g) CHECK(h.domain_of(l, g) == d);
            // inside its parent, and its parent's children include it
            const auto p = h.parent(l, d);
            CHECK(h.first(l + 1, p) <= h.first(l, d));
            CHECK(h.end(l, d) <= h.end(l + 1, p));
            CHECK(h.first_child(l + 1, p) <= d);
            CHECK(d < h.end_child(l + 1, p));
        }
        CHECK(h.max_size(l) == mx);
    }
    for (std::size_t d = 0; d < h.num_domains(1); ++d) CHECK(h.end_child(1, d) - h.first_child(1, d) == h.size(1, d));
    gp::detail::rng r(3);
    for (int i = 0; i < 200; ++i) {
        const auto a = gp::gpu_id(r.below(G)), b = gp::gpu_id(r.below(G));
        const auto l = h.link(a, b);
        CHECK(l == h.link(b, a));
        CHECK((l == 0) == (a == b));
        for (std::size_t k = 1; k < L; ++k) CHECK((h.domain_of(k, a) == h.domain_of(k, b)) == (k >= l));
        std::vector<gp::gpu_id> set = {std::min(a, b), std::max(a, b)};
        if (a != b) CHECK(h.span(set) == l);
    }
    for (std::size_t k = 2; k <= std::min<std::size_t>(G, 64); ++k) CHECK(h.compact_level(k) <= h.spread_level(k));
}

/// Random placements cost between the comm model's bounds, with a slowdown of at least 1.
template <class T>
void check_comm(const T& t) {
    const auto zoo = gp::ModelZoo::builtin();
    const gp::comm_model ring;
    const std::size_t G = t.hierarchy().num_gpus();
    gp::detail::rng r(5);
    std::vector<gp::gpu_id> all(G);
    for (std::size_t g = 0; g < G; ++g) all[g] = gp::gpu_id(g);
    for (int i = 0; i < 300; ++i) {
        const auto m = gp::model_id(r.below(zoo.size()));
        const auto k = std::uint32_t(1 + r.below(std::min<std::size_t>(G, 16)));
        if (!zoo[m].at(k).consolidated) continue;
        for (std::size_t j = 0; j < k; ++j) std::swap(all[j], all[j + r.below(G - j)]);
        std::vector<gp::gpu_id> gpus(all.begin(), all.begin() + k);
        std::sort(gpus.begin(), gpus.end());
        const auto res = ring.evaluate(t, zoo, m, gpus);
        const auto b = ring.bounds(t, zoo, m, k);
        CHECK(res.slowdown >= 1.0);
        CHECK(res.cost >= b.best * (1 - 1e-12));
        CHECK(res.cost <= b.worst * (1 + 1e-12));
    }
}

/// A workload that fits: jobs of up to the smallest top-level domain's GPUs (at most 16).
gp::scenario conformance_scenario(std::size_t G, std::string_view mode, std::size_t smallest) {
    const std::size_t kmax = std::max<std::size_t>(1, std::min<std::size_t>({smallest, 16, G}));
    gp::test::json counts = gp::test::json::object();
    for (std::size_t k = 1; k <= kmax; k *= 2) counts[std::to_string(k)] = 1.0;
    auto s = gp::scenario_from_json(gp::test::json{{"workload",
                                                     {{"kind", "synthetic"},
                                                      {"num_jobs", 40},
                                                      {"load", 1.5},
                                                      {"gpu_counts", counts},
                                                      {"duration_min", 60},
                                                      {"duration_max", 3600}}},
                                                    {"env", {{"allow_defer", true}}}});
    s.env.mode = gp::parse_action_mode(mode);
    return s;
}

/// Plays an episode with policy `act`, checking capacity, the reward identity and that what step()
/// rewrote equals a full rewrite; returns the episode's return.
template <class E, class Act>
double play(E& e, std::uint64_t seed, Act&& act) {
    e.reset(seed);
    double sum = 0;
    while (!e.done()) {
        const auto a = act(e);
        REQUIRE(e.why_invalid(a) == "");
        sum += e.step(a).reward;
        for (float v : e.observation()) REQUIRE((v >= 0.0f && v <= 1.0f));
        const std::vector<float> inc(e.observation().begin(), e.observation().end());
        e.refresh_observation();
        REQUIRE(std::equal(inc.begin(), inc.end(), e.observation().begin()));
        REQUIRE(e.cluster().free_gpus() <= e.num_gpus());
    }
    REQUIRE(e.terminated());
    double jct = 0;
    for (const auto& rec : e.finished()) jct += rec.jct();
    CHECK(gp::test::close_rel(sum, -jct / e.config().reward.time_scale, 1e-9));
    return sum;
}

template <class P>
void check_env() {
    const auto t = P::make();
    const auto& h = t.hierarchy();
    const std::size_t top = h.num_levels() - 1;
    std::uint32_t smallest = ~std::uint32_t{0};
    for (std::size_t d = 0; d < h.num_domains(top); ++d) smallest = std::min(smallest, h.size(top, d));
    using E = gp::basic_env<decltype(P::make())>;
    for (const char* mode : {"gpu", "placement", "job"}) {
        INFO(P::name, " mode ", mode);
        const auto s = conformance_scenario(h.num_gpus(), mode, smallest);
        E e(t, gp::comm_model{}, gp::ModelZoo::builtin(), s);
        // uniformly random valid actions, twice for determinism
        gp::detail::rng r1(9), r2(9);
        const double a = play(e, 1, [&](const E& x) { return gp::test::random_action(x, r1, 0.1); });
        const double b = play(e, 1, [&](const E& x) { return gp::test::random_action(x, r2, 0.1); });
        CHECK(a == b);
        // every heuristic acts validly (play() checks each action)
        for (const auto& name : gp::heuristic_names()) {
            INFO("heuristic ", name);
            const auto p = gp::heuristic<E>(name);
            auto f = p.make(2);
            play(e, 2, f);
        }
        auto typed = gp::heuristic<E>("throughput_greedy:topology_greedy").make(3);
        play(e, 3, typed);
    }
}

}  // namespace

TEST_CASE_TEMPLATE("topology conformance: hierarchy, comm bounds and the env in every mode", P, tree_dgx_a100, tree_dgx1,
                   tree_proximity_drl, tree_heterogeneous, tree_levels_uneven, level_nvl72, level_fat_tree, level_uneven_typed, user_pcie_box) {
    const auto t = P::make();
    static_assert(gp::Topology<std::remove_cvref_t<decltype(t)>>);
    check_hierarchy(t.hierarchy());
    check_comm(t);
    check_env<P>();
}

TEST_CASE("topology conformance: the tree route runs on trees of nodes and racks and refuses other hierarchies") {
    CHECK_NOTHROW(gp::TreeRouteCost::check(gp::TreeTopology::proximity_drl()));
    CHECK_THROWS_AS(gp::TreeRouteCost::check(gp::LevelTopology::nvl72(2)), gp::ConfigError);
    CHECK_THROWS_AS(gp::TreeRouteCost::check(pcie_box_cluster{}), gp::ConfigError);  // servers of different sizes
    CHECK_THROWS_AS(gp::TreeRouteCost::check(gp::LevelTopology::fat_tree()), gp::ConfigError);
}

TEST_CASE("topology conformance: bad hierarchies are ConfigErrors naming the problem") {
    using gp::level_hierarchy;
    CHECK_THROWS_WITH_AS(level_hierarchy({{"a", 1, 0}, {"b", 1, 0}, {"r", 1, 0}}, {{3, 3}, {2, 4}}),
                         "topology: a domain of level \"a\" crosses the boundary of a domain of level \"b\"", gp::ConfigError);
    CHECK_THROWS_WITH_AS(level_hierarchy({{"a", 1, 0}, {"r", 1, 0}}, {{2, 0}}), "topology: level \"a\": a domain of 0 GPUs",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(level_hierarchy({{"a", 1, 0}, {"b", 1, 0}, {"r", 1, 0}}, {{2, 2}, {3}}),
                         "topology: level \"b\" holds 3 GPUs, the level below 4", gp::ConfigError);
    CHECK_THROWS_WITH_AS(level_hierarchy({{"a", -1, 0}, {"r", 1, 0}}, {{2}}), "topology: level \"a\": bandwidth must be > 0 (got -1.000000)",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(level_hierarchy({{"r", 1, 0}}, {}), "topology: a hierarchy needs at least one level of domains below the root",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::LevelTopology("x", level_hierarchy::uniform({{"a", 1, 0}, {"r", 1, 0}}, {2, 2}), {"v100"}),
                         "topology: 1 GPU types for 2 domains of level \"a\"", gp::ConfigError);
}
