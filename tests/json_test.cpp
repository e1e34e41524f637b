// Tests of include/gpuplace/json.hpp: the JSON forms of the typed configs (exactly the keys that
// are set, read back to the same value), the default scenario built without JSON against the
// preset, the zoo's JSON form, comm models by name, and the file readers it installs.

#include <doctest/doctest.h>

#include <string>

#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

TEST_CASE("json: default_scenario() is the preset \"default\"") {
    CHECK(gp::to_json(gp::default_scenario()) == gp::to_json(gp::preset_scenario("default")));
    // and every preset reads back to itself
    for (const auto& n : gp::preset_names()) {
        const auto j = gp::to_json(gp::preset_scenario(n));
        CHECK(gp::to_json(gp::scenario_from_json(j)) == j);
    }
}

TEST_CASE("json: a topology config holds exactly the keys it sets") {
    const json j = {{"preset", "dgx1"}, {"racks", 1}, {"pcie_bandwidth", 16.0}, {"fabric", "cube_mesh"}};
    const auto c = gp::topology_config_from_json(j);
    CHECK(c.preset == "dgx1");
    CHECK(c.racks == 1u);
    CHECK(!c.nodes_per_rack);
    CHECK(gp::to_json(c) == j);
    const auto t = gp::TreeTopology::from_config(c);
    CHECK(t.num_gpus() == 32);  // 1 rack x 4 nodes (the default) x 8 GPUs
    CHECK(t.params().pcie_bandwidth == 16.0);
    CHECK(gp::to_json(gp::topology_config{}) == json::object());
    CHECK(gp::TreeTopology::from_config(gp::topology_config{}).name() == "custom");
    CHECK_THROWS_WITH_AS((void)gp::TreeTopology::from_config(gp::topology_config::of("dgx2", 1, 1)),
                         "config /topology/preset: unknown preset \"dgx2\" (allowed: dgx_a100, dgx1, proximity_drl, custom)",
                         gp::ConfigError);
}

TEST_CASE("json: comm configs by model") {
    const json tree = {{"model", "tree_route"}, {"rack_weight", 1.0}};
    const auto c = gp::comm_config_from_json(tree);
    CHECK(c.model == "tree_route");
    CHECK(c.rack_weight == 1.0);
    CHECK(!c.gpu_weight);
    CHECK(gp::to_json(c) == tree);
    CHECK(gp::TreeRouteCost::from_config(c).rack_weight == 1.0);
    CHECK(gp::TreeRouteCost::from_config(c).node_weight == 0.25);
    CHECK(gp::to_json(gp::comm_config_from_json(json::object())) == json{{"model", "ring_allreduce"}});
    CHECK_THROWS_WITH_AS((void)gp::comm_config_from_json(json{{"model", "mesh"}}),
                         "config /comm/model: unknown model \"mesh\" (allowed: ring_allreduce, tree_route)", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::comm_config_from_json(json{{"rack_weight", 1.0}}),
                         "config /comm/rack_weight: unknown key \"rack_weight\" (allowed: model)", gp::ConfigError);
    gp::comm_config ring;
    ring.gpu_weight = 1.0;  // a tree_route key on a ring: refused as the JSON reader would
    CHECK_THROWS_WITH_AS((void)gp::RingAllReduce::from_config(ring),
                         "config /comm/gpu_weight: unknown key \"gpu_weight\" (allowed: model)", gp::ConfigError);
}

TEST_CASE("json: a zoo reads back from its JSON form, co-location pairs included") {
    const auto z = gp::ModelZoo::builtin();
    const auto j = gp::to_json(z);
    const auto back = gp::zoo_from_json(j);
    CHECK(gp::to_json(back) == j);
    REQUIRE(back.size() == z.size());
    CHECK(back[3].name == z[3].name);
    CHECK(back[3].at(8).spread == z[3].at(8).spread);
    CHECK(back.colocation(1, 2) == z.colocation(1, 2));
    // an inline zoo in a scenario: written back as its JSON form
    auto s = gp::default_scenario();
    s.zoo.zoo = z;
    CHECK(gp::to_json(s)["zoo"] == j);
    CHECK(gp::to_json(gp::scenario_from_json(gp::to_json(s))) == gp::to_json(s));
}

TEST_CASE("json: the loading layer reads the zoo file a scenario names, no reader, a clear error") {
    const std::string file = std::string(GPUPLACE_SOURCE_DIR) + "/data/model_zoo_v100.json";
    // read through json/scenario.hpp: the scenario carries the reader of its zoo file
    const auto read = gp::scenario_from_json({{"zoo", file}});
    CHECK((read.zoo.read_file == &gp::load_zoo));
    gp::env e(read);
    CHECK(e.zoo().size() == gp::ModelZoo::builtin().size());
    CHECK(e.zoo()[0].name == gp::ModelZoo::builtin()[0].name);
    CHECK(gp::to_json(read)["zoo"] == file);  // written back as the file, not its contents
    // made by hand: the reader is set by hand too, else the env names what is missing
    auto s = small_scenario(tiny_topo::config(), {{"1", 1.0}});
    s.zoo.file = file;
    CHECK_THROWS_WITH_AS(gp::env{s}, doctest::Contains("no reader for zoo files"), gp::ConfigError);
    s.zoo.read_file = &gp::load_zoo;
    CHECK(gp::env(s).zoo().size() == gp::ModelZoo::builtin().size());
    CHECK(gp::ModelZoo::load(file).size() == gp::ModelZoo::builtin().size());  // json/zoo.hpp's reader
}
