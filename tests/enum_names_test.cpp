// detail/enum_names.hpp: one name table per enum serves to_string(), parsing and the "allowed"
// lists of the readers' messages.
#include <doctest/doctest.h>

#include <gpuplace/config.hpp>
#include <gpuplace/heuristics.hpp>
#include <gpuplace/rl/actor_critic.hpp>
#include <gpuplace/trace.hpp>

namespace gp = gpuplace;

namespace {
template <class E>
void round_trips() {
    for (const auto& [v, n] : gp::detail::enum_names<E>::values) {
        CHECK(gp::detail::enum_name(v) == n);
        CHECK(gp::detail::enum_from_name<E>(n) == v);
    }
    CHECK_FALSE(gp::detail::enum_from_name<E>("no such name").has_value());
    CHECK_FALSE(gp::detail::enum_from_name<E>("").has_value());
}
}  // namespace

TEST_CASE("enum_names: every table round-trips, and to_string() reads it") {
    round_trips<gp::queue_order>();
    round_trips<gp::action_mode>();
    round_trips<gp::placer_kind>();
    round_trips<gp::trace_format>();
    round_trips<gp::type_rule>();
    round_trips<gp::rl::activation>();
    round_trips<gp::rl::architecture>();
    CHECK(gp::to_string(gp::queue_order::fewest_gpus) == "fewest_gpus");
    CHECK(gp::to_string(gp::placer_kind::topology_greedy) == "topology_greedy");
    CHECK(gp::to_string(gp::type_rule::throughput_greedy) == "throughput_greedy");
    CHECK(gp::rl::to_string(gp::rl::architecture::flat) == "flat");
    CHECK(gp::to_string(static_cast<gp::queue_order>(200)) == "?");
}

TEST_CASE("enum_names: the allowed lists in declaration order") {
    CHECK(gp::detail::enum_name_list<gp::queue_order>() == "fifo, sjf, fewest_gpus, las, 2d_las, gittins, srtf, capacity, drf, themis, edf, edf_ac");
    CHECK(gp::detail::enum_name_list<gp::action_mode>() == "gpu, placement, job, round");
    CHECK(gp::detail::enum_name_list<gp::placer_kind>() == "pack, first_fit, load_balance, topology_greedy");
    CHECK(gp::detail::enum_name_list<gp::trace_format>() == "philly, openb, csv");
    CHECK(gp::detail::enum_name_list<gp::rl::activation>() == "tanh, relu");
    CHECK(gp::detail::enum_name_list<gp::rl::architecture>() == "per_gpu, flat");
    CHECK_THROWS_WITH_AS((void)gp::parse_action_mode("gpus"),
                         "config /env/action_mode: unknown action mode \"gpus\" (allowed: gpu, placement, job, round)", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::parse_trace_format("tsv"), doctest::Contains("unknown trace format \"tsv\" (allowed: philly, openb, csv)"),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::rl::parse_activation("gelu", "config /ppo/network/activation"),
                         "config /ppo/network/activation: unknown activation \"gelu\" (allowed: tanh, relu)", gp::ConfigError);
}
