// Tests of include/gpuplace/comm.hpp: conformance of both communication models on every topology
// preset, Proximity-DRL's reference route costs, a brute-force check of the route cost's closed
// form, the DGX-1 cube-mesh rings and the ring all-reduce calibration against the zoo.

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include <gpuplace/comm.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

template <class P, class C>
struct combo {
    using preset = P;
    using comm = C;
};

std::vector<gp::gpu_id> random_placement(std::size_t G, std::size_t k, gp::detail::rng& r) {
    std::vector<gp::gpu_id> all(G);
    std::iota(all.begin(), all.end(), gp::gpu_id{0});
    for (std::size_t i = 0; i < k; ++i) std::swap(all[i], all[i + r.below(G - i)]);
    all.resize(k);
    std::sort(all.begin(), all.end());
    return all;
}

/// The GPUs of the slot mask `mask` in node `node`.
std::vector<gp::gpu_id> node_subset(const gp::TreeTopology& t, std::size_t node, unsigned mask) {
    std::vector<gp::gpu_id> out;
    for (std::size_t s = 0; s < t.gpus_per_node(); ++s)
        if (mask & (1u << s)) out.push_back(static_cast<gp::gpu_id>(node * t.gpus_per_node() + s));
    return out;
}

/// Union of shortest paths among {spine} and the GPUs on Proximity-DRL's tree graph, by brute force
/// (Floyd-Warshall; weights x40 so that all arithmetic is on integers). Returns cost x 40.
long long brute_force_route_cost_x40(const gp::TreeTopology& t, const std::vector<gp::gpu_id>& gpus) {
    const std::size_t R = t.num_racks(), N = t.num_nodes(), G = t.num_gpus();
    const std::size_t V = 1 + R + N + G;
    auto rack_v = [&](std::size_t r) { return 1 + r; };
    auto node_v = [&](std::size_t n) { return 1 + R + n; };
    auto gpu_v = [&](std::size_t g) { return 1 + R + N + g; };
    struct edge {
        std::size_t u, v;
        long long w;
    };
    std::vector<edge> edges;
    for (std::size_t r = 0; r < R; ++r) edges.push_back({0, rack_v(r), 20});
    for (std::size_t n = 0; n < N; ++n) edges.push_back({rack_v(n / t.nodes_per_rack()), node_v(n), 10});
    for (std::size_t g = 0; g < G; ++g) {
        edges.push_back({node_v(t.node_of(gp::gpu_id(g))), gpu_v(g), 1});
        for (std::size_t h = g + 1; h < G; ++h)
            if (t.node_of(gp::gpu_id(g)) == t.node_of(gp::gpu_id(h))) edges.push_back({gpu_v(g), gpu_v(h), 1});
    }
    const long long inf = std::numeric_limits<long long>::max() / 4;
    std::vector<long long> d(V * V, inf);
    for (std::size_t i = 0; i < V; ++i) d[i * V + i] = 0;
    for (auto& e : edges) d[e.u * V + e.v] = d[e.v * V + e.u] = std::min(d[e.u * V + e.v], e.w);
    for (std::size_t k = 0; k < V; ++k)
        for (std::size_t i = 0; i < V; ++i)
            for (std::size_t j = 0; j < V; ++j) d[i * V + j] = std::min(d[i * V + j], d[i * V + k] + d[k * V + j]);
    std::vector<std::size_t> term = {0};
    for (auto g : gpus) term.push_back(gpu_v(g));
    long long total = 0;
    for (auto& e : edges) {
        bool on = false;
        for (std::size_t a = 0; a < term.size() && !on; ++a)
            for (std::size_t b = a + 1; b < term.size() && !on; ++b) {
                const auto s = term[a], x = term[b];
                on = d[s * V + e.u] + e.w + d[e.v * V + x] == d[s * V + x] ||
                     d[s * V + e.v] + e.w + d[e.u * V + x] == d[s * V + x];
            }
        if (on) total += e.w;
    }
    return total;
}

}  // namespace

TEST_CASE_TEMPLATE("comm model conformance", X, combo<dgx_a100_2x4, gp::RingAllReduce>,
                   combo<dgx_a100_2x4, gp::TreeRouteCost>, combo<dgx1_2x4, gp::RingAllReduce>,
                   combo<dgx1_2x4, gp::TreeRouteCost>, combo<dgx1_1x2, gp::RingAllReduce>,
                   combo<dgx1_1x2, gp::TreeRouteCost>, combo<proximity_drl_topo, gp::RingAllReduce>,
                   combo<proximity_drl_topo, gp::TreeRouteCost>, combo<tiny_topo, gp::RingAllReduce>,
                   combo<tiny_topo, gp::TreeRouteCost>, combo<odd_topo, gp::RingAllReduce>,
                   combo<odd_topo, gp::TreeRouteCost>) {
    using C = typename X::comm;
    static_assert(gp::CommModel<C, gp::TreeTopology>);
    const auto t = X::preset::make();
    const auto zoo = gp::ModelZoo::builtin();
    const C c{};
    INFO(std::string(X::preset::name), " / ", std::string(C::name));
    const std::size_t G = t.num_gpus(), S = t.gpus_per_node();
    gp::detail::rng r(7);
    for (std::size_t mi = 0; mi < zoo.size(); ++mi) {
        const auto m = static_cast<gp::model_id>(mi);
        for (std::uint32_t k : {1u, 2u, 3u, 4u, 5u, 8u, unsigned(S), unsigned(S + 1), 12u}) {
            if (k > G) continue;
            INFO("model ", zoo[m].name, ", k = ", k);
            const double ideal = c.ideal_step_time(t, zoo, m, k);
            CHECK(ideal > 0);
            CHECK(std::isfinite(ideal));
            const auto b = c.bounds(t, zoo, m, k);
            CHECK(b.best <= b.worst);
            CHECK(b.best >= 0);

            // the best placement runs at the ideal speed and costs the best cost. Candidates: every
            // slot subset of one node, and an even split over n nodes for each feasible n (with the
            // route cost, 8 GPUs on two nodes of 4 cost less than on one node of 8: fewer GPU pairs)
            std::vector<std::vector<gp::gpu_id>> candidates;
            if (k <= S)
                for (unsigned mask = 1; mask < (1u << S); ++mask)
                    if (std::popcount(mask) == int(k)) candidates.push_back(node_subset(t, 0, mask));
            for (std::size_t n = (k + S - 1) / S; n <= std::min<std::size_t>(k, t.num_nodes()); ++n) {
                std::vector<gp::gpu_id> g;
                for (std::size_t i = 0; i < n; ++i) {
                    const std::size_t here = k / n + (i < k % n ? 1 : 0);
                    for (std::size_t sl = 0; sl < here; ++sl) g.push_back(static_cast<gp::gpu_id>(i * S + sl));
                }
                candidates.push_back(std::move(g));
            }
            std::vector<gp::gpu_id> compact;
            double best_cost = 1e300;
            for (const auto& g : candidates) {
                const auto res = c.evaluate(t, zoo, m, g);
                if (res.cost < best_cost) {
                    best_cost = res.cost;
                    compact = g;
                }
            }
            const auto rc = c.evaluate(t, zoo, m, compact);
            CHECK(rc.slowdown == doctest::Approx(1.0).epsilon(1e-12));
            CHECK(rc.cost == doctest::Approx(b.best).epsilon(1e-12));

            // consolidated (one node) is never worse than one GPU per node
            if (k <= S && k <= t.num_nodes()) {
                std::vector<gp::gpu_id> spread;
                for (std::size_t n = 0; n < k; ++n) spread.push_back(static_cast<gp::gpu_id>(n * S));
                const auto rs = c.evaluate(t, zoo, m, spread);
                CHECK(rc.cost <= rs.cost + 1e-12);
                CHECK(rc.slowdown <= rs.slowdown + 1e-12);
            }

            // random placements: slowdown >= 1, cost within the bounds, and the bounds are attained
            double lo = 1e300, hi = -1e300;
            for (int rep = 0; rep < 40; ++rep) {
                const auto g = random_placement(G, k, r);
                const auto res = c.evaluate(t, zoo, m, g);
                REQUIRE(std::isfinite(res.cost));
                REQUIRE(res.slowdown >= 1.0);
                REQUIRE(res.cost >= b.best - 1e-12);
                REQUIRE(res.cost <= b.worst + 1e-12);
                lo = std::min(lo, res.cost);
                hi = std::max(hi, res.cost);
            }
            CHECK(lo >= b.best - 1e-12);
            CHECK(hi <= b.worst + 1e-12);
        }
    }
}

TEST_CASE("TreeRouteCost reproduces Proximity-DRL's reference values") {
    const auto t = gp::TreeTopology::proximity_drl();
    const gp::TreeRouteCost c;
    const auto zoo = gp::ModelZoo::builtin();
    auto cost = [&](std::vector<gp::gpu_id> g) { return c.cost(t, std::span<const gp::gpu_id>(g)); };
    // node n holds GPUs 4n .. 4n+3; rack 0 holds nodes 0-3
    CHECK(std::abs(cost({5}) - 0.775) <= 1e-12);
    CHECK(std::abs(cost({0, 1}) - 0.825) <= 1e-12);
    CHECK(std::abs(cost({4, 5, 6, 7}) - 1.0) <= 1e-12);
    CHECK(std::abs(cost({0, 4}) - 1.05) <= 1e-12);
    CHECK(std::abs(cost({0, 16}) - 1.55) <= 1e-12);
    CHECK(std::abs(cost({0, 1, 2, 3, 4, 5, 6, 7}) - 1.5) <= 1e-12);
    CHECK(std::abs(cost({0, 4, 8, 12, 16, 20, 24, 28}) - 3.2) <= 1e-12);
    // evaluate() reports the same cost
    std::vector<gp::gpu_id> g = {0, 4, 8, 12, 16, 20, 24, 28};
    CHECK(std::abs(c.evaluate(t, zoo, 0, g).cost - 3.2) <= 1e-12);

    // worst costs match Proximity-DRL's normalisation table for 1..8 GPUs; the best costs are the
    // true minima (5 GPUs: 3 + 2 on two nodes), and their table leaves out the GPU-pair edges:
    // theirs = ours - (pairs of the best placement) / 40
    const double worst[9] = {0, .775, 1.55, 1.825, 2.1, 2.375, 2.65, 2.925, 3.2};
    const double best[9] = {0, .775, .825, .9, 1.0, 1.225, 1.3, 1.4, 1.5};
    const double theirs_best[9] = {0, .775, .8, .825, .85, 1.125, 1.15, 1.175, 1.2};
    for (std::uint32_t k = 1; k <= 8; ++k) {
        INFO("k = ", k);
        const auto b = c.bounds(t, zoo, 0, k);
        CHECK(std::abs(b.worst - worst[k]) <= 1e-12);
        CHECK(std::abs(b.best - best[k]) <= 1e-12);
        const unsigned n = (k + 3) / 4, per = k / n, extra = k % n;  // best: even over the fewest nodes
        const double pairs = (n - extra) * per * (per - 1) / 2.0 + extra * (per + 1) * per / 2.0;
        CHECK(std::abs(b.best - pairs / 40 - theirs_best[k]) <= 1e-12);
    }
}

TEST_CASE("TreeRouteCost closed form equals the union of shortest paths (brute force)") {
    const gp::TreeRouteCost c;
    gp::detail::rng r(2024);
    for (const auto& t : {gp::TreeTopology::proximity_drl(), gp::TreeTopology::dgx_a100(2, 2)}) {
        const std::size_t max_k = std::min<std::size_t>(t.num_gpus(), 16);
        for (int rep = 0; rep < 200; ++rep) {
            const std::size_t k = 1 + r.below(max_k);
            const auto g = random_placement(t.num_gpus(), k, r);
            const double brute = double(brute_force_route_cost_x40(t, g)) / 40.0;
            INFO(t.name(), " k = ", k, " rep ", rep);
            REQUIRE(std::abs(c.cost(t, std::span<const gp::gpu_id>(g)) - brute) <= 1e-12);
        }
    }
    // pairs of GPUs: the first one in rack 0, the second anywhere after it
    const auto t = gp::TreeTopology::proximity_drl();
    for (gp::gpu_id a = 0; a < 16; ++a)
        for (gp::gpu_id b = a + 1; b < 32; b += 3) {
            std::vector<gp::gpu_id> g = {a, b};
            REQUIRE(std::abs(c.cost(t, std::span<const gp::gpu_id>(g)) - brute_force_route_cost_x40(t, g) / 40.0) <= 1e-12);
        }
}

TEST_CASE("TreeRouteCost best_cost is the least cost of k GPUs over every placement (brute force)") {
    // every subset of a 2 x 2 x 3 and a 3 x 2 x 2 cluster, with the default and two other weightings
    gp::tree_params a, b;
    a.racks = 2, a.nodes_per_rack = 2, a.gpus_per_node = 3;
    b.racks = 3, b.nodes_per_rack = 2, b.gpus_per_node = 2;
    for (const auto& p : {a, b}) {
        const gp::TreeTopology t(p);
        const auto G = static_cast<std::uint32_t>(t.num_gpus());
        for (const gp::TreeRouteCost c : {gp::TreeRouteCost{}, gp::TreeRouteCost{0.3, 0.001, 2.0, 0.1, 1.0},
                                          gp::TreeRouteCost{0.01, 0.5, 0.01, 3.0, 1.0}}) {
            std::vector<double> least(G + 1, std::numeric_limits<double>::infinity());
            for (std::uint32_t set = 1; set < (1u << G); ++set) {
                std::vector<gp::gpu_id> g;
                for (gp::gpu_id i = 0; i < G; ++i)
                    if (set >> i & 1) g.push_back(i);
                least[g.size()] = std::min(least[g.size()], c.cost(t, std::span<const gp::gpu_id>(g)));
            }
            for (std::uint32_t k = 1; k <= G; ++k) {
                INFO(t.name(), " k = ", k, " node weight ", c.node_weight);
                CHECK(std::abs(c.best_cost(t, k) - least[k]) <= 1e-12);
                CHECK(c.bounds(t, gp::ModelZoo::builtin(), 0, k).best == c.best_cost(t, k));
            }
        }
    }
}

TEST_CASE("TreeRouteCost slowdown exponent and JSON") {
    const auto t = gp::TreeTopology::proximity_drl();
    const auto zoo = gp::ModelZoo::builtin();
    std::vector<gp::gpu_id> spread = {0, 16};
    gp::TreeRouteCost c;
    CHECK(c.evaluate(t, zoo, 0, spread).slowdown == doctest::Approx(1.55 / 0.825).epsilon(1e-12));
    c.slowdown_exponent = 0;  // Proximity-DRL: placement does not change run time
    CHECK(c.evaluate(t, zoo, 0, spread).slowdown == 1.0);
    c.slowdown_exponent = 2;
    CHECK(c.evaluate(t, zoo, 0, spread).slowdown == doctest::Approx((1.55 / 0.825) * (1.55 / 0.825)).epsilon(1e-12));

    using gp::detail::json;
    const auto back = gp::comm_from_json<gp::TreeRouteCost>(gp::to_json(c));
    CHECK(gp::to_json(back) == gp::to_json(c));
    CHECK_THROWS_WITH_AS((void)gp::comm_from_json<gp::TreeRouteCost>(json{{"model", "tree_route"}, {"node_weight", -1}}),
                         "config /comm/node_weight: value -1 out of range [0.0, 1e+300]", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::comm_from_json<gp::TreeRouteCost>(json{{"gpu_weight", 0}, {"node_weight", 0}, {"rack_weight", 0}}),
                         "config /comm: at least one of gpu_weight, node_weight, rack_weight must be > 0", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::comm_from_json<gp::RingAllReduce>(json{{"model", "ring_allreduce"}, {"bandwidth", 1}}),
                         "config /comm/bandwidth: unknown key \"bandwidth\" (allowed: model)", gp::ConfigError);
}

TEST_CASE("DGX-1 cube-mesh: NVLink rings") {
    // the precomputed table agrees with trying every cyclic order of every slot subset
    const auto& table = gp::detail::cube_mesh_nvlink_ring();
    for (unsigned mask = 1; mask < 256; ++mask) {
        std::vector<int> s;
        for (int i = 0; i < 8; ++i)
            if (mask & (1u << i)) s.push_back(i);
        bool ring = s.size() == 1;
        if (s.size() == 2) ring = gp::TreeTopology::nvlink_pair(s[0], s[1]);
        if (s.size() >= 3) {
            do {
                bool ok = true;
                for (std::size_t i = 0; i < s.size() && ok; ++i)
                    ok = gp::TreeTopology::nvlink_pair(s[i], s[(i + 1) % s.size()]);
                ring = ring || ok;
            } while (!ring && std::next_permutation(s.begin() + 1, s.end()));
        }
        INFO("mask ", mask);
        CHECK(table[mask] == ring);
    }
    CHECK(table[0b1111]);       // {0,1,2,3}
    CHECK(table[0b00110011]);   // {0,1,4,5}: 0-1-5-4-0
    CHECK(table[0xFF]);         // the whole node: 0-1-2-3-7-6-5-4-0
    CHECK(!table[0b10000111]);  // {0,1,2,7}: 7 has no NVLink to 0, 1 or 2
    CHECK(!table[0b00011111]);  // {0,1,2,3,4}: 4 has a single NVLink neighbour (0)

    // ring all-reduce uses NVLink for a ring subset and PCIe otherwise
    const auto t = gp::TreeTopology::dgx1(1, 2);
    const auto zoo = gp::ModelZoo::builtin();
    const gp::RingAllReduce c;
    const gp::model_id m = 0;  // ResNet-18: communication heavy
    auto sd = [&](std::vector<gp::gpu_id> g) { return c.evaluate(t, zoo, m, g).slowdown; };
    auto expect = [&](std::uint32_t k, double bw, double lat) {
        const auto s = gp::RingAllReduce::calibrate(zoo, m, k);
        return (s.compute + s.volume / bw + s.hops * lat) / c.ideal_step_time(t, zoo, m, k);
    };
    const double nv = 100.0, pcie = 12.0, ib = 12.5, lat = 2e-6, rack_lat = 5e-6;
    CHECK(sd({0, 4}) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(sd({0, 5}) == doctest::Approx(expect(2, pcie, lat)).epsilon(1e-12));
    CHECK(sd({0, 1, 2, 3}) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(sd({0, 1, 4, 5}) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(sd({0, 1, 2, 7}) == doctest::Approx(expect(4, pcie, lat)).epsilon(1e-12));
    CHECK(sd({0, 1, 2, 3, 4, 5, 6, 7}) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(sd({8, 9, 10, 11, 12, 13, 14, 15}) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(sd({0, 1, 8, 9}) == doctest::Approx(expect(4, ib, rack_lat)).epsilon(1e-12));
    CHECK(expect(4, nv, lat) == doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("RingAllReduce reproduces the zoo's measurements on the measurement cluster") {
    auto check_zoo = [](const gp::ModelZoo& zoo) {
        const auto& ref = zoo.reference();
        gp::tree_params p;
        p.racks = 2;
        p.nodes_per_rack = 4;
        p.gpus_per_node = 8;
        p.node_bandwidth = ref.node_bandwidth;
        p.rack_bandwidth = p.spine_bandwidth = ref.network_bandwidth;
        p.node_latency = ref.node_latency;
        p.rack_latency = p.spine_latency = ref.network_latency;
        const gp::TreeTopology t(p);
        const gp::RingAllReduce c;
        int consistent = 0, noisy = 0;
        for (std::size_t mi = 0; mi < zoo.size(); ++mi) {
            const auto m = static_cast<gp::model_id>(mi);
            for (const auto& pt : zoo[m].points) {
                if (pt.gpus > 8) continue;
                INFO(zoo[m].name, " at ", pt.gpus, " GPUs");
                const auto k = pt.gpus;
                std::vector<gp::gpu_id> one_node(k), spread(k);
                for (std::uint32_t i = 0; i < k; ++i) {
                    one_node[i] = i;
                    spread[i] = i * 8;  // one GPU per node, across both racks for k > 4
                }
                const double ideal = c.ideal_step_time(t, zoo, m, k);
                const double t_cons = ideal * c.evaluate(t, zoo, m, one_node).slowdown;
                const double t_spread = ideal * c.evaluate(t, zoo, m, spread).slowdown;
                const auto s = gp::RingAllReduce::calibrate(zoo, m, k);
                CHECK(1.0 / t_cons == doctest::Approx(pt.consolidated).epsilon(1e-12));
                if (pt.spread < pt.consolidated) {
                    ++consistent;
                    CHECK(s.compute > 0.05 / pt.consolidated);  // a real fit, not the degenerate clamp
                    CHECK(1.0 / t_spread == doctest::Approx(pt.spread).epsilon(1e-12));
                } else {
                    ++noisy;
                    CHECK(s.volume == 0.0);
                    // only the per-hop latency of the network remains
                    CHECK(t_spread == doctest::Approx(1.0 / pt.consolidated +
                                                      s.hops * (ref.network_latency - ref.node_latency))
                                          .epsilon(1e-12));
                }
            }
        }
        return std::pair{consistent, noisy};
    };
    const auto [consistent, noisy] = check_zoo(gp::ModelZoo::builtin());
    CHECK(consistent >= 12);
    CHECK(noisy >= 1);  // at least the single-GPU entries (spread == consolidated)

    // a noisy measurement (spread faster than consolidated) makes the model placement-insensitive
    const gp::ModelZoo noisy_zoo({{"noisy", 2.0, {{1, 10.0, 10.0}, {2, 15.0, 16.0}}}}, gp::measurement_cluster{});
    const auto s = gp::RingAllReduce::calibrate(noisy_zoo, 0, 2);
    CHECK(s.volume == 0.0);
    const auto t = gp::TreeTopology::dgx_a100(2, 4);
    std::vector<gp::gpu_id> far = {0, 63};
    // what remains is the per-hop latency of the spine against that of a node
    const double expect = (s.compute + s.hops * t.level_latency(gp::link_level::spine)) /
                          (s.compute + s.hops * t.level_latency(gp::link_level::node));
    CHECK(gp::RingAllReduce{}.evaluate(t, noisy_zoo, 0, far).slowdown == doctest::Approx(expect).epsilon(1e-12));
    CHECK(expect < 1.001);
}

TEST_CASE("RingAllReduce: a single GPU has no communication") {
    const auto t = gp::TreeTopology::dgx_a100(2, 4);
    const auto zoo = gp::ModelZoo::builtin();
    std::vector<gp::gpu_id> one = {37};
    for (std::size_t m = 0; m < zoo.size(); ++m) {
        const auto r = gp::RingAllReduce{}.evaluate(t, zoo, gp::model_id(m), one);
        CHECK(r.cost == 0.0);
        CHECK(r.slowdown == 1.0);
        CHECK(gp::RingAllReduce{}.ideal_step_time(t, zoo, gp::model_id(m), 1) ==
              doctest::Approx(1.0 / zoo[gp::model_id(m)].points.front().consolidated).epsilon(1e-12));
    }
}

TEST_CASE("RingAllReduce on the measurement hardware: consolidated and spread step times are the measured ones") {
    // the comm model's calibration, checked where it is an identity: two 8-GPU servers of the zoo's
    // measurement hardware; k GPUs in one server step at 1 / consolidated, k split over the two
    // servers at 1 / spread (where the spread measurement is the slower one: a spread throughput at
    // or above the consolidated one is measurement noise, and the model treats the job as
    // insensitive to placement)
    const auto topo = gp::topology_from_json({{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 2}, {"gpus_per_node", 8},
                                              {"node_bandwidth", 100}, {"rack_bandwidth", 3.125}, {"spine_bandwidth", 3.125},
                                              {"node_latency", 2e-6}, {"rack_latency", 20e-6}, {"spine_latency", 20e-6}});
    const auto zoo = gp::ModelZoo::builtin();
    const gp::RingAllReduce ring;
    std::size_t spread_checked = 0;
    for (std::size_t m = 0; m < zoo.size(); ++m)
        for (const auto& pt : zoo[gp::model_id(m)].points) {
            if (pt.gpus > 8) continue;
            CAPTURE(zoo[gp::model_id(m)].name);
            CAPTURE(pt.gpus);
            std::vector<gp::gpu_id> one, two;
            for (std::uint32_t g = 0; g < pt.gpus; ++g) one.push_back(gp::gpu_id(g));
            for (std::uint32_t g = 0; g < pt.gpus; ++g) two.push_back(gp::gpu_id(g < pt.gpus / 2 ? g : 8 + g));
            const double best = ring.ideal_step_time(topo, zoo, gp::model_id(m), pt.gpus);
            CHECK(std::abs(best * ring.evaluate(topo, zoo, gp::model_id(m), one).slowdown * pt.consolidated - 1) <= 1e-12);
            if (pt.gpus > 1 && pt.spread < pt.consolidated) {
                CHECK(std::abs(best * ring.evaluate(topo, zoo, gp::model_id(m), two).slowdown * pt.spread - 1) <= 1e-12);
                ++spread_checked;
            }
        }
    CHECK(spread_checked > 20);
}
