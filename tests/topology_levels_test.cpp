// Topologies described level by level (topology_levels.hpp) and the presets written as levels
// (data/topologies.hpp, json/topology.hpp): the hierarchy they describe, their JSON, their errors,
// and that a preset written as levels plays the same episodes as TreeTopology's C++ preset.

#include <doctest/doctest.h>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/json/registry.hpp>
#include <gpuplace/level_topology.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;

namespace {

/// Plays a whole episode of `policy` and returns every observation, mask and reward, concatenated.
std::vector<double> levels_episode(const gp::scenario& s, const char* policy, std::uint64_t seed) {
    gp::env e(s);
    auto act = gp::heuristic<gp::env>(policy).make(seed);
    std::vector<double> out;
    e.reset(seed);
    while (!e.done()) {
        for (float v : e.observation()) out.push_back(v);
        for (auto m : e.action_mask()) out.push_back(m);
        out.push_back(e.step(act(e)).reward);
    }
    out.push_back(e.episode_metrics().avg_jct);
    return out;
}

gp::scenario levels_scenario(const gp::json& topology) {
    return gp::scenario_from_json({{"topology", topology},
                                   {"workload", {{"num_jobs", 30}, {"gpu_counts", {{"1", 0.5}, {"2", 0.3}, {"4", 0.2}}}}},
                                   {"env", {{"allow_defer", true}}}});
}

}  // namespace

TEST_CASE("topology levels: fan-outs describe the hierarchy, uniform or not, level 1 first") {
    // five switches of 4 GPUs in servers of one or two switches, three servers under a network
    const std::vector<gp::level_config> lv = {{"switch", {4}, 24, 1.5e-6, {}, {}, {}},
                                              {"server", {1, 2, 2}, 16, 3e-6, {}, {}, {}},
                                              {"network", {3}, 12.5, 1e-5, {}, {}, {}}};
    const auto out = gp::levels_layout_of(lv);
    const gp::level_hierarchy direct({{"switch", 24, 1.5e-6}, {"server", 16, 3e-6}, {"network", 12.5, 1e-5}}, {{4, 4, 4, 4, 4}, {4, 8, 8}});
    CHECK(out.hierarchy == direct);
    CHECK(out.domain_types.empty());
    CHECK_FALSE(out.cube_mesh);
    // a uniform fat tree equals LevelTopology's preset
    const std::vector<gp::level_config> ft = {{"node", {8}, 300, 2e-6, {}, {}, {}}, {"leaf", {4}, 25, 5e-6, {}, {}, {}},
                                              {"pod", {2}, 25, 8e-6, {}, {}, {}}, {"spine", {2}, 12.5, 1.2e-5, {}, {}, {}}};
    CHECK(gp::levels_layout_of(ft).hierarchy == gp::LevelTopology::fat_tree().hierarchy());
    // GPU types on a level pass down to every level-1 domain below it
    auto typed = lv;
    typed[1].gpu_types = {"v100", "p100", "k80"};
    CHECK(gp::levels_layout_of(typed).domain_types == std::vector<std::string>{"v100", "p100", "p100", "k80", "k80"});
}

TEST_CASE("topology levels: a TreeTopology described by levels answers the tree's questions by level") {
    const gp::TreeTopology t("mine", {{"switch", {4}, 24, 1.5e-6, {}, {}, {}},
                                      {"server", {1, 2, 2}, 16, 3e-6, {"v100", "p100", "k80"}, {}, {}},
                                      {"network", {3}, 12.5, 1e-5, {}, {}, {}}});
    CHECK(t.levels_form());
    CHECK(t.name() == "mine");
    CHECK(t.num_gpus() == 20);
    CHECK(t.num_nodes() == 5);
    CHECK(t.num_racks() == 3);
    CHECK(t.gpus_per_node() == 4);
    CHECK(t.nodes_per_rack() == 0);  // servers of one and two switches
    CHECK(t.node_of(9) == 2);
    CHECK(t.rack_of(9) == 1);
    CHECK(t.slot_of(9) == 1);
    CHECK(t.level(0, 1) == gp::link_level::node);
    CHECK(t.level(0, 4) == gp::link_level::spine);
    CHECK(t.level(4, 11) == gp::link_level::rack);
    CHECK(t.bandwidth(4, 11) == 16.0);
    CHECK(t.latency(0, 19) == 1e-5);
    CHECK(t.gpu_types() == std::vector<std::string>{"v100", "p100", "k80"});
    CHECK(t.type_of(7) == 1);
    CHECK(t.type_of(19) == 2);
    // its JSON reads back to the same topology
    const auto back = gp::topology_from_json(gp::to_json(t));
    CHECK(back.hierarchy() == t.hierarchy());
    CHECK(back.name() == "mine");
    CHECK(back.gpu_types() == t.gpu_types());
}

TEST_CASE("topology levels: the tree presets written as levels play TreeTopology's episodes bit for bit") {
    CHECK(gp::topology_preset_names() == std::vector<std::string>{"dgx_a100", "dgx1", "proximity_drl", "nvl72", "fat_tree", "heterogeneous"});
    struct tc {
        gp::json tree, levels;
    };
    const tc cases[] = {
        {{{"preset", "dgx_a100"}, {"racks", 2}, {"nodes_per_rack", 4}}, gp::to_json(gp::topology_preset("dgx_a100"))},
        {{{"preset", "dgx_a100"}, {"racks", 1}, {"nodes_per_rack", 2}},
         gp::to_json(gp::topology_config_from_json({{"preset", "dgx_a100"}, {"racks", 1}, {"nodes_per_rack", 2}}))},
        {{{"preset", "dgx1"}, {"racks", 1}, {"nodes_per_rack", 2}},
         gp::to_json(gp::topology_config_from_json({{"preset", "dgx1"}, {"racks", 1}, {"nodes_per_rack", 2}}))},
        {{{"preset", "proximity_drl"}}, gp::to_json(gp::topology_preset("proximity_drl"))},
    };
    for (const auto& c : cases) {
        INFO(c.tree.dump());
        const auto a = levels_scenario(c.tree), b = levels_scenario(c.levels);
        CHECK(gp::TreeTopology::from_config(a.topology).hierarchy() == gp::TreeTopology::from_config(b.topology).hierarchy());
        for (const char* p : {"pack", "topology_greedy", "load_balance"}) CHECK(levels_episode(a, p, 7) == levels_episode(b, p, 7));
    }
    // the heterogeneous cluster: the heterogeneous scenario's topology, types and all
    auto het = gp::preset_scenario("heterogeneous");
    het.workload.synthetic.num_jobs = 30;
    auto het_levels = het;
    het_levels.topology = gp::topology_preset("heterogeneous");
    const auto t1 = gp::TreeTopology::from_config(het.topology), t2 = gp::TreeTopology::from_config(het_levels.topology);
    CHECK(t1.hierarchy() == t2.hierarchy());
    CHECK(t1.gpu_types() == t2.gpu_types());
    CHECK(levels_episode(het, "fastest_type:pack_wait", 3) == levels_episode(het_levels, "fastest_type:pack_wait", 3));
    // NVL72 and the fat tree: LevelTopology's C++ presets
    CHECK(gp::TreeTopology::from_config(gp::topology_preset("nvl72")).hierarchy() == gp::LevelTopology::nvl72(4).hierarchy());
    CHECK(gp::TreeTopology::from_config(gp::topology_preset("fat_tree")).hierarchy() == gp::LevelTopology::fat_tree().hierarchy());
}

TEST_CASE("topology levels: a scenario's topology as levels or as a preset written as levels") {
    const auto s = gp::parse_scenario(R"({"topology": {"preset": "nvl72", "racks": 2, "spine_bandwidth": 25}})");
    REQUIRE(s.topology.levels.size() == 2);
    CHECK(*s.topology.name == "nvl72");
    CHECK(s.topology.levels[1].fanout == std::vector<std::uint32_t>{2});
    CHECK(s.topology.levels[1].bandwidth == 25.0);
    const gp::env e(s);
    CHECK(e.num_gpus() == 144);
    // the scenario's JSON holds the levels and reads back to the same scenario
    const auto j = gp::to_json(s);
    CHECK(j["topology"]["levels"][0]["name"] == "nvl");
    CHECK(gp::to_json(gp::scenario_from_json(j)) == j);
    // the observation has one free-GPU segment per domain level, named after it
    const auto f = gp::parse_scenario(R"({"topology": {"preset": "fat_tree"}})");
    std::vector<std::string> names;
    const gp::env fe(f);
    for (const auto& seg : fe.observation_layout()) names.push_back(seg.name);
    CHECK(std::find(names.begin(), names.end(), "gpu_leaf_free") != names.end());
    CHECK(std::find(names.begin(), names.end(), "gpu_pod_free") != names.end());
}

TEST_CASE("topology levels: errors name the JSON path and the value") {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"levels": [{"name": "a", "fanout": 4, "bandwidth": 1}]})",
         "config /topology/levels: 1 level: a topology needs at least two (a level of domains, e.g. \"node\", and the root, e.g. \"spine\")"},
        {R"({"racks": 2, "levels": [{"name": "a", "fanout": 4, "bandwidth": 1}, {"name": "b", "fanout": 2, "bandwidth": 1}]})",
         "config /topology/racks: \"racks\" describes a tree preset; with \"levels\" the levels say it all (fan-outs, bandwidths, "
         "latencies, GPU types on the levels)"},
        {R"({"levels": [{"name": "a", "fanout": [4, 4], "bandwidth": 1}, {"name": "b", "fanout": 3, "bandwidth": 1}]})",
         "config /topology/levels/0/fanout: 2 fan-outs for the 3 domains of level \"a\" (give one for all, or one per domain)"},
        {R"({"levels": [{"name": "a", "fanout": [4, 0], "bandwidth": 1}, {"name": "b", "fanout": 2, "bandwidth": 1}]})",
         "config /topology/levels/0/fanout/1: expected a fan-out, a whole number from 1 to 16777216, got 0"},
        {R"({"levels": [{"name": "a", "fanout": 2, "bandwidth": -1}, {"name": "b", "fanout": 3, "bandwidth": 1}]})",
         "config /topology/levels/0/bandwidth: expected a bandwidth > 0 (GB/s per GPU), got -1"},
        {R"({"levels": [{"name": "a", "fanout": 2, "bandwidth": 1}, {"name": "a", "fanout": 3, "bandwidth": 1}]})",
         "config /topology/levels/1/name: level name \"a\" is used by level 0 too"},
        {R"({"levels": [{"name": "a", "fanout": 2, "bandwidth": 1}, {"name": "b", "fanout": 3, "bw": 1}]})",
         "config /topology/levels/1/bw: unknown key \"bw\" (allowed: name, fanout, bandwidth, latency, gpu_types, fabric, pcie_bandwidth)"},
        {R"({"levels": [{"name": "a", "fanout": 2, "bandwidth": 1, "gpu_types": ["v100", "k80"]}, {"name": "b", "fanout": 3, "bandwidth": 1}]})",
         "config /topology/levels/0/gpu_types: 2 GPU types for the 3 domains of level \"a\" (give one for all, or one per domain)"},
        {R"({"levels": [{"name": "a", "fanout": 4, "bandwidth": 1, "fabric": "cube_mesh"}, {"name": "b", "fanout": 3, "bandwidth": 1}]})",
         "config /topology/levels/0/fabric: cube_mesh needs domains of 8 GPUs (a domain of level \"a\" has 4)"},
        {R"({"levels": [{"name": "a", "fanout": 4096, "bandwidth": 1}, {"name": "b", "fanout": 8192, "bandwidth": 1}]})",
         "config /topology/levels/0/fanout: too many GPUs below level \"a\" (more than 16777216)"},
        {R"({"preset": "nvl72", "nodes_per_rack": 2})",
         "config /topology/nodes_per_rack: unknown key \"nodes_per_rack\" for preset \"nvl72\" (allowed: preset, racks, nvl_bandwidth, "
         "nvl_latency, spine_bandwidth, spine_latency)"},
        {R"({"preset": "nvl72", "racks": 0})", "config /topology/racks: expected a count, a whole number from 1 to 16777216, got 0"},
        {R"({"preset": "nvl73"})",
         "config /topology/preset: unknown preset \"nvl73\" (allowed: dgx_a100, dgx1, proximity_drl, custom, nvl72, fat_tree, heterogeneous)"},
    };
    for (const auto& [text, msg] : cases) {
        INFO(text);
        const auto j = gp::parse_json(text, "test");
        CHECK_THROWS_WITH_AS(gp::scenario_from_json({{"topology", j}}), msg, gp::ConfigError);
    }
    CHECK_THROWS_WITH_AS(gp::topology_preset("nvl"), "unknown topology preset \"nvl\" (known: dgx_a100, dgx1, proximity_drl, nvl72, fat_tree, heterogeneous)",
                         gp::ConfigError);
}

TEST_CASE("topology levels: a preset of one's own, registered by name, is a built-in preset's equal") {
    const char* entry = R"({"about": "two-tier pods of 4-GPU boards",
        "parameters": {"pods": "spine", "boards_per_pod": "pod"},
        "levels": [{"name": "board", "fanout": 4, "bandwidth": 200, "latency": 1e-6},
                   {"name": "shelf", "fanout": 2, "bandwidth": 50, "latency": 3e-6},
                   {"name": "pod", "fanout": 4, "bandwidth": 25, "latency": 5e-6},
                   {"name": "spine", "fanout": 2, "bandwidth": 10, "latency": 1e-5}]})";
    REQUIRE(gp::register_topology("my_pods", entry));
    // a scenario names it with its parameters and a level's link, as it would a built-in preset
    const auto s = gp::parse_scenario(R"({"topology": {"preset": "my_pods", "pods": 3, "shelf_bandwidth": 60}})");
    REQUIRE(s.topology.levels.size() == 4);
    CHECK(*s.topology.name == "my_pods");
    CHECK(s.topology.levels[3].fanout == std::vector<std::uint32_t>{3});
    CHECK(s.topology.levels[1].bandwidth == 60.0);
    const gp::env e(s);
    CHECK(e.num_gpus() == 4 * 2 * 4 * 3);
    CHECK(gp::topology_preset("my_pods").levels.size() == 4);
    CHECK(gp::topology_config_of("my_pods").levels[0].name == "board");
    CHECK(gp::topology_preset_about("my_pods") == "two-tier pods of 4-GPU boards; parameters: boards_per_pod (pod fan-out), pods (spine fan-out)");
    const auto all = gp::all_registry_entries();
    CHECK(std::find_if(all.begin(), all.end(), [](const gp::registry_entry& r) { return r.kind == "topology" && r.name == "my_pods"; }) !=
          all.end());
    // the scenario's JSON holds the levels: it reads back without the registration
    const auto j = gp::to_json(s);
    CHECK_THROWS_WITH_AS(gp::register_topology("my_pods", entry), "topology \"my_pods\" is registered already (two-tier pods of 4-GPU boards)",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::parse_scenario(R"({"topology": {"preset": "my_pods", "racks": 3}})"),
                         "config /topology/racks: unknown key \"racks\" for preset \"my_pods\" (allowed: preset, boards_per_pod, pods, "
                         "board_bandwidth, board_latency, shelf_bandwidth, shelf_latency, pod_bandwidth, pod_latency, spine_bandwidth, spine_latency)",
                         gp::ConfigError);
    CHECK(gp::unregister_topology("my_pods"));
    CHECK(!gp::unregister_topology("my_pods"));
    CHECK(gp::to_json(gp::scenario_from_json(j)) == j);
    CHECK_THROWS_WITH_AS(gp::parse_scenario(R"({"topology": {"preset": "my_pods"}})"),
                         "config /topology/preset: unknown preset \"my_pods\" (allowed: dgx_a100, dgx1, proximity_drl, custom, nvl72, fat_tree, "
                         "heterogeneous)",
                         gp::ConfigError);
    // errors name the topology and the JSON path
    const std::pair<std::pair<const char*, const char*>, const char*> bad[] = {
        {{"nvl72", entry}, "topology \"nvl72\" is a built-in preset"},
        {{"custom", entry}, "topology \"custom\" is a built-in preset"},
        {{"a/b", entry}, "topology \"a/b\": an empty name or one with ':', '/', '\\' or '{' (they name a file or JSON text)"},
        {{"t", R"({"about": "x"})"}, "topology \"t\" config /: missing key \"levels\""},
        {{"t", R"({"levels": [{"name": "a", "fanout": 4, "bandwidth": 1}]})"},
         "topology \"t\" config /levels: 1 level: a topology needs at least two (a level of domains, e.g. \"node\", and the root, e.g. \"spine\")"},
        {{"t", R"({"levels": [{"name": "a", "fanout": 4, "bandwidth": 1}, {"name": "b", "fanout": 2, "bandwidth": 1}], "parameters": {"n": "c"}})"},
         "topology \"t\" config /parameters/n: expected the name of the level whose fan-out it sets (a, b), got \"c\""},
        {{"t", R"({"levels": [], "size": 3})"}, "topology \"t\" config /size: unknown key \"size\" (allowed: about, levels, parameters)"},
    };
    for (const auto& [args, msg] : bad) {
        INFO(args.first, " ", args.second);
        CHECK_THROWS_WITH_AS(gp::register_topology(args.first, args.second), msg, gp::ConfigError);
    }
    CHECK(gp::registered_topologies().empty());
}
