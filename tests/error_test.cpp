// Tests of include/gpuplace/error.hpp: one hierarchy, messages preserved, thrown by the library.

#include <doctest/doctest.h>

#include <string>
#include <type_traits>

#include <gpuplace/config.hpp>
#include <gpuplace/error.hpp>
#include <gpuplace/json.hpp>

namespace gp = gpuplace;

TEST_CASE_TEMPLATE("error hierarchy", E, gp::ConfigError, gp::InvalidAction, gp::TraceError, gp::CheckpointError,
                   gp::StateError) {
    static_assert(std::is_base_of_v<gp::Error, E>);
    static_assert(std::is_base_of_v<std::runtime_error, E>);
    try {
        throw E("bad value 3 at /env/x");
    } catch (const gp::Error& e) {
        CHECK(std::string(e.what()) == "bad value 3 at /env/x");
        CHECK(dynamic_cast<const E*>(&e) != nullptr);
    }
}

TEST_CASE("errors from the library are gpuplace::Error") {
    CHECK_THROWS_AS((void)gp::parse_scenario("{\"env\": {\"queue_policy\": 3}}"), gp::Error);
    CHECK_THROWS_AS((void)gp::parse_scenario("{\"env\": {\"queue_policy\": 3}}"), gp::ConfigError);
    CHECK_THROWS_AS((void)gp::preset_scenario("nope"), std::runtime_error);
}
