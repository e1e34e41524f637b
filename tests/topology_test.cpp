// Tests of include/gpuplace/topology.hpp: coordinates, levels, bandwidths, presets, JSON.

#include <doctest/doctest.h>

#include <gpuplace/topology.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

TEST_CASE_TEMPLATE("topology conformance", P, dgx_a100_2x4, dgx1_2x4, dgx1_1x2, proximity_drl_topo, tiny_topo,
                   odd_topo) {
    const gp::TreeTopology t = P::make();
    INFO(std::string(P::name));
    const auto G = t.num_gpus();
    REQUIRE(G == t.num_racks() * t.nodes_per_rack() * t.gpus_per_node());
    CHECK(t.num_nodes() == t.num_racks() * t.nodes_per_rack());
    CHECK(t.gpus_per_rack() == t.nodes_per_rack() * t.gpus_per_node());
    for (gp::gpu_id a = 0; a < G; ++a) {
        const auto c = t.coord(a);
        CHECK(c.rack == t.rack_of(a));
        CHECK(c.node == t.node_of(a));
        CHECK(c.slot == t.slot_of(a));
        // GPUs are numbered node by node, nodes rack by rack
        CHECK(a == c.node * t.gpus_per_node() + c.slot);
        CHECK(c.node / t.nodes_per_rack() == c.rack);
        CHECK(t.level(a, a) == gp::link_level::same_gpu);
        for (gp::gpu_id b = 0; b < G; ++b) {
            const auto l = t.level(a, b);
            REQUIRE(l == t.level(b, a));
            REQUIRE(t.bandwidth(a, b) == t.bandwidth(b, a));
            REQUIRE(t.latency(a, b) == t.latency(b, a));
            REQUIRE(t.bandwidth(a, b) > 0);
            REQUIRE(t.latency(a, b) >= 0);
            const auto expect = a == b                           ? gp::link_level::same_gpu
                                : t.node_of(a) == t.node_of(b) ? gp::link_level::node
                                : t.rack_of(a) == t.rack_of(b) ? gp::link_level::rack
                                                               : gp::link_level::spine;
            REQUIRE(l == expect);
            REQUIRE(t.latency(a, b) == t.level_latency(l));
            const bool pcie = l == gp::link_level::node && t.params().fabric == gp::node_fabric::cube_mesh &&
                              !gp::TreeTopology::nvlink_pair(t.slot_of(a), t.slot_of(b));
            REQUIRE(t.bandwidth(a, b) == (pcie ? t.params().pcie_bandwidth : t.level_bandwidth(l)));
        }
    }
    // the JSON form reads back to the same topology
    const auto back = gp::topology_from_json(gp::to_json(t));
    CHECK(gp::to_json(back) == gp::to_json(t));
    CHECK(back.num_gpus() == G);
    // and the preset's config reads to this topology
    CHECK(gp::to_json(gp::topology_from_json(P::config())) == gp::to_json(t));
}

TEST_CASE("topology: presets") {
    const auto a = gp::TreeTopology::dgx_a100(2, 4);
    CHECK(a.num_gpus() == 64);
    CHECK(a.name() == "dgx_a100");
    CHECK(a.level_bandwidth(gp::link_level::node) == 300.0);
    CHECK(a.level_bandwidth(gp::link_level::rack) == 25.0);
    CHECK(a.level_bandwidth(gp::link_level::spine) == 12.5);
    CHECK(a.params().fabric == gp::node_fabric::switched);
    CHECK(gp::TreeTopology::dgx_a100(4, 16).num_gpus() == 512);

    const auto p = gp::TreeTopology::proximity_drl();
    CHECK(p.num_racks() == 2);
    CHECK(p.nodes_per_rack() == 4);
    CHECK(p.gpus_per_node() == 4);
    CHECK(p.num_gpus() == 32);
    CHECK(p.level(0, 3) == gp::link_level::node);
    CHECK(p.level(0, 4) == gp::link_level::rack);
    CHECK(p.level(15, 16) == gp::link_level::spine);

    const auto d = gp::TreeTopology::dgx1(1, 1);
    CHECK(d.num_gpus() == 8);
    CHECK(d.params().fabric == gp::node_fabric::cube_mesh);

    // O(1) queries on a large cluster (4,096 GPUs) need no G x G table
    const auto big = gp::TreeTopology::dgx_a100(16, 32);
    CHECK(big.num_gpus() == 4096);
    CHECK(big.level(0, 4095) == gp::link_level::spine);
    CHECK(big.level(4088, 4095) == gp::link_level::node);
}

TEST_CASE("topology: DGX-1 hybrid cube-mesh NVLink pairs") {
    const auto d = gp::TreeTopology::dgx1(1, 2);
    // NVLink: slots 0-3 fully connected, 4-7 fully connected, and i <-> i+4
    const int nvlink[8][8] = {
        {0, 1, 1, 1, 1, 0, 0, 0}, {1, 0, 1, 1, 0, 1, 0, 0}, {1, 1, 0, 1, 0, 0, 1, 0}, {1, 1, 1, 0, 0, 0, 0, 1},
        {1, 0, 0, 0, 0, 1, 1, 1}, {0, 1, 0, 0, 1, 0, 1, 1}, {0, 0, 1, 0, 1, 1, 0, 1}, {0, 0, 0, 1, 1, 1, 1, 0},
    };
    int pairs = 0;
    for (gp::gpu_id a = 0; a < 8; ++a)
        for (gp::gpu_id b = 0; b < 8; ++b) {
            if (a == b) continue;
            INFO(a, " ", b);
            CHECK(gp::TreeTopology::nvlink_pair(a, b) == bool(nvlink[a][b]));
            CHECK(d.bandwidth(a, b) == (nvlink[a][b] ? 100.0 : 12.0));
            // the same pattern in the second node
            CHECK(d.bandwidth(a + 8, b + 8) == d.bandwidth(a, b));
            // across nodes: the network, whatever the slots
            CHECK(d.bandwidth(a, b + 8) == 12.5);
            pairs += nvlink[a][b];
        }
    CHECK(pairs / 2 == 16);  // each GPU has 4 NVLink neighbours
    CHECK(d.bandwidth(0, 4) == 100.0);
    CHECK(d.bandwidth(0, 5) == 12.0);
    CHECK(d.bandwidth(3, 4) == 12.0);
    CHECK(d.bandwidth(3, 7) == 100.0);
}

TEST_CASE("topology: JSON presets and overrides") {
    using gp::detail::json;
    const auto a = gp::topology_from_json(json{{"preset", "dgx_a100"}, {"racks", 1}, {"nodes_per_rack", 2},
                                                    {"spine_bandwidth", 5.0}});
    CHECK(a.num_gpus() == 16);
    CHECK(a.level_bandwidth(gp::link_level::spine) == 5.0);
    CHECK(a.level_bandwidth(gp::link_level::node) == 300.0);
    CHECK(a.name() == "dgx_a100");

    const auto c = gp::topology_from_json(json{{"racks", 3}, {"nodes_per_rack", 2}, {"gpus_per_node", 5}});
    CHECK(c.num_gpus() == 30);
    CHECK(c.name() == "custom");

    const auto d = gp::topology_from_json(json{{"preset", "dgx1"}, {"pcie_bandwidth", 16.0}});
    CHECK(d.num_gpus() == 64);
    CHECK(d.bandwidth(0, 5) == 16.0);

    const auto p = gp::topology_from_json(json{{"preset", "proximity_drl"}, {"node_latency", 1e-6}});
    CHECK(p.num_gpus() == 32);
    CHECK(p.level_latency(gp::link_level::node) == 1e-6);
}

TEST_CASE("topology: bad parameters are ConfigErrors naming the value") {
    using gp::detail::json;
    gp::tree_params p;
    p.racks = 0;
    CHECK_THROWS_WITH_AS(gp::TreeTopology{p}, "topology: racks, nodes_per_rack and gpus_per_node must be >= 1 (got 0, 4, 8)",
                         gp::ConfigError);
    p = {};
    p.rack_bandwidth = -1;
    CHECK_THROWS_WITH_AS(gp::TreeTopology{p}, "topology: bandwidths must be > 0 (got -1.000000)", gp::ConfigError);
    p = {};
    p.spine_latency = -2e-6;
    CHECK_THROWS_WITH_AS(gp::TreeTopology{p}, "topology: latencies must be >= 0 (got -0.000002)", gp::ConfigError);
    p = {};
    p.fabric = gp::node_fabric::cube_mesh;
    p.gpus_per_node = 4;
    CHECK_THROWS_WITH_AS(gp::TreeTopology{p}, "topology: cube_mesh fabric needs 8 GPUs per node (got 4)", gp::ConfigError);

    auto fails = [](const json& j) {
        try {
            (void)gp::topology_from_json(j);
        } catch (const gp::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(fails(json{{"rackz", 2}}) ==
          "config /topology/rackz: unknown key \"rackz\" (allowed: preset, racks, nodes_per_rack, gpus_per_node, "
          "node_bandwidth, rack_bandwidth, spine_bandwidth, node_latency, rack_latency, spine_latency, fabric, "
          "pcie_bandwidth, gpu_types)");
    CHECK(fails(json{{"preset", "dgx2"}}) ==
          "config /topology/preset: unknown preset \"dgx2\" (allowed: dgx_a100, dgx1, proximity_drl, custom, nvl72, fat_tree, heterogeneous)");
    CHECK(fails(json{{"racks", 0}}) == "config /topology/racks: value 0 out of range [1, 65536]");
    CHECK(fails(json{{"racks", 1.5}}) == "config /topology/racks: expected an integer, got 1.5");
    CHECK(fails(json{{"gpus_per_node", "8"}}) == "config /topology/gpus_per_node: expected an integer, got \"8\"");
    CHECK(fails(json{{"node_bandwidth", -1}}) == "config /topology/node_bandwidth: value -1 out of range [1e-09, 1e+300]");
    CHECK(fails(json{{"fabric", "torus"}}) ==
          "config /topology/fabric: unknown fabric \"torus\" (allowed: switched, cube_mesh)");
    CHECK(fails(json{{"fabric", "cube_mesh"}, {"gpus_per_node", 4}}) ==
          "config /topology/fabric: cube_mesh needs gpus_per_node = 8 (got 4)");
    CHECK(fails(json{{"preset", "proximity_drl"}, {"racks", 3}}) ==
          "config /topology: preset \"proximity_drl\" has a fixed size (2 racks x 4 nodes x 4 GPUs); use preset "
          "\"custom\" to change it");
    CHECK(fails(json::array()) == "config /topology: expected an object, got []");
}

TEST_CASE("topology: detail::divider divides exactly (the GPU -> node / rack lookups)") {
    // every divisor up to 1,000 and around powers of two, numerators small, random and near 2^32
    std::vector<std::uint32_t> divisors;
    for (std::uint32_t d = 1; d <= 1000; ++d) divisors.push_back(d);
    for (int b = 10; b < 32; ++b)
        for (std::int64_t k = -1; k <= 1; ++k) divisors.push_back(static_cast<std::uint32_t>((std::int64_t{1} << b) + k));
    divisors.push_back(0xFFFFFFFFu);
    gp::detail::rng r(7);
    for (const auto d : divisors) {
        const gp::detail::divider div(d);
        REQUIRE(div.divisor() == d);
        auto check = [&](std::uint32_t n) {
            REQUIRE(div.divide(n) == n / d);
            REQUIRE(div.remainder(n) == n % d);
        };
        for (std::uint32_t n = 0; n < 300; ++n) check(n);
        for (std::uint32_t k = 0; k < 300; ++k) check(0xFFFFFFFFu - k);
        for (int k = 0; k < 300; ++k) check(static_cast<std::uint32_t>(r()));
        for (std::uint32_t m = 1; m < 64; ++m) {  // multiples of d and their neighbours
            const std::uint64_t n = std::uint64_t(d) * m;
            if (n > 0xFFFFFFFFu) break;
            check(static_cast<std::uint32_t>(n));
            check(static_cast<std::uint32_t>(n - 1));
        }
    }
    CHECK(gp::detail::divider{}.divide(12345) == 12345);
    CHECK(gp::detail::divider(0).divisor() == 1);  // 0 is treated as 1
}
