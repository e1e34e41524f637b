// Tests of include/gpuplace/json/adl.hpp: gpuplace's types as nlohmann values, a user's type that
// nests them, and a user's comm model read through its own from_json hook.
#include <doctest/doctest.h>

#include <string>

#include <gpuplace/json.hpp>

namespace adl_user {

/// A user's own record that holds a gpuplace scenario.
struct experiment {
    std::string name;
    gpuplace::scenario s;
};
void to_json(gpuplace::json& j, const experiment& e) { j = {{"name", e.name}, {"scenario", e.s}}; }
void from_json(const gpuplace::json& j, experiment& e) {
    e.name = j.at("name").get<std::string>();
    e.s = j.at("scenario").get<gpuplace::scenario>();
}

/// A user's comm model with nlohmann hooks of its own.
struct flat_cost {
    static constexpr std::string_view name = "flat";
    double per_gpu = 0;
};
void from_json(const gpuplace::json& j, flat_cost& c) { c.per_gpu = j.at("per_gpu").get<double>(); }

}  // namespace adl_user

TEST_CASE("json adl: gpuplace's types convert with json j = x and j.get<T>()") {
    const auto s = gpuplace::preset_scenario("proximity_drl");
    const gpuplace::json j = s;
    CHECK(j == gpuplace::to_json(s));
    CHECK(gpuplace::to_json(j.get<gpuplace::scenario>()) == j);
    const gpuplace::json t = s.topology;
    CHECK(gpuplace::to_json(t.get<gpuplace::topology_config>()) == t);
    const gpuplace::json z = gpuplace::ModelZoo::builtin();
    CHECK(gpuplace::to_json(z.get<gpuplace::ModelZoo>()) == z);
    // a bad value names its JSON path from the document's root
    const gpuplace::json bad = {{"racks", 0}};
    CHECK_THROWS_WITH_AS((void)bad.get<gpuplace::topology_config>(), doctest::Contains("/racks"), gpuplace::ConfigError);
}

TEST_CASE("json adl: a user's type nests a scenario, and a user's comm model is read by its own hook") {
    const adl_user::experiment e{"trial", gpuplace::preset_scenario("colocation")};
    const gpuplace::json j = e;
    CHECK(j["scenario"] == gpuplace::to_json(e.s));
    const auto back = j.get<adl_user::experiment>();
    CHECK(back.name == "trial");
    CHECK(gpuplace::to_json(back.s) == gpuplace::to_json(e.s));
    CHECK(gpuplace::comm_from_json<adl_user::flat_cost>(gpuplace::json{{"per_gpu", 2.5}}).per_gpu == 2.5);
    // gpuplace's own models still read their keys
    CHECK(gpuplace::comm_from_json<gpuplace::TreeRouteCost>(gpuplace::json{{"rack_weight", 3.0}}).rack_weight == 3.0);
}
