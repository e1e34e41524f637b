// Tests of include/gpuplace/comm_registry.hpp: a communication model registered by name (a CommModel
// type, or a factory of comm_model_interface) is a scenario's "comm" model like a built-in one: the
// env prices placements with it, the registry lists it, bad names and keys are ConfigErrors naming
// them, and an error a model's call meets (one written in another language) reaches the caller
// through step(). Every registration is undone before its test ends.

#include <doctest/doctest.h>

#include <string>

#include <gpuplace/comm_registry.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/registry.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using gp::test::json;

namespace {

/// 5% slower per level the ring crosses above level 1 (its GPUs' lowest common domain).
struct hop_penalty_model {
    static constexpr std::string_view name = "hop_penalty";
    double ideal_step_time(const gp::TreeTopology&, const gp::ModelZoo& z, gp::model_id m, std::uint32_t k) const noexcept {
        return 1.0 / z[m].at(k).consolidated;
    }
    gp::comm_result evaluate(const gp::TreeTopology& t, const gp::ModelZoo&, gp::model_id, std::span<const gp::gpu_id> gpus) const noexcept {
        const auto l = gpus.empty() ? std::size_t{0} : t.hierarchy().link(gpus.front(), gpus.back());
        const double c = 0.05 * double(l > 1 ? l - 1 : 0);
        return {c, 1.0 + c};
    }
    gp::cost_bounds bounds(const gp::TreeTopology& t, const gp::ModelZoo&, gp::model_id, std::uint32_t) const noexcept {
        return {0.0, 0.05 * double(t.hierarchy().num_levels() - 1)};
    }
};

gp::scenario comm_busy(const json& comm) {
    json j = {{"topology", {{"preset", "dgx_a100"}, {"racks", 2}, {"nodes_per_rack", 2}}},
              {"workload", {{"kind", "synthetic"}, {"num_jobs", 40}, {"load", 2.0}, {"gpu_counts", {{"4", 0.5}, {"16", 0.5}}}}},
              {"comm", comm}};
    return gp::scenario_from_json(j);
}

std::vector<gp::job_record> comm_play(const gp::scenario& s, const char* policy, std::uint64_t seed) {
    gp::env e(s);
    auto act = gp::heuristic<gp::env>(policy).make(seed);
    e.reset(seed);
    while (!e.done()) e.step(act(e));
    return {e.finished().begin(), e.finished().end()};
}

/// A model standing for one written in another language: its evaluate() fails on jobs of more
/// than 8 GPUs and says so through take_error().
class failing_model final : public gp::comm_model_interface {
public:
    std::string_view name() const noexcept override { return "failing"; }
    double ideal_step_time(const gp::TreeTopology& t, const gp::ModelZoo& z, gp::model_id m, std::uint32_t k) const noexcept override {
        return gp::RingAllReduce{}.ideal_step_time(t, z, m, k);
    }
    gp::comm_result evaluate(const gp::TreeTopology&, const gp::ModelZoo&, gp::model_id, std::span<const gp::gpu_id> gpus) const noexcept override {
        if (gpus.size() > 8 && error_.empty()) error_ = "comm model \"failing\": " + std::to_string(gpus.size()) + " GPUs is too many";
        return {};
    }
    gp::cost_bounds bounds(const gp::TreeTopology&, const gp::ModelZoo&, gp::model_id, std::uint32_t) const noexcept override { return {}; }
    std::string take_error() const override { return std::exchange(error_, {}); }

private:
    mutable std::string error_;
};

}  // namespace

TEST_CASE("comm_registry: a CommModel type registered by name prices every placement of a scenario naming it") {
    REQUIRE(gp::register_comm_model<hop_penalty_model>("5% slower per level the ring crosses"));
    const auto s = comm_busy({{"model", "hop_penalty"}});
    CHECK(gp::to_json(s)["comm"] == json{{"model", "hop_penalty"}});
    CHECK(gp::env(s).comm().name() == "hop_penalty");
    // the slowdowns are the model's: 1, 1.05 (across nodes) or 1.10 (across racks); spreading jobs costs more
    for (const char* policy : {"pack", "random"}) {
        const auto jobs = comm_play(s, policy, 5);
        REQUIRE(jobs.size() == 40);
        std::size_t slowed = 0;
        for (const auto& r : jobs) {
            CHECK(r.comm_cost == doctest::Approx(r.slowdown - 1.0).epsilon(1e-12));
            const bool one_of = r.slowdown == 1.0 || r.slowdown == doctest::Approx(1.05) || r.slowdown == doctest::Approx(1.10);
            CHECK(one_of);
            slowed += r.slowdown > 1.0;
        }
        CHECK(slowed > 0);  // the 16-GPU jobs span a rack at least
    }
    // a built-in model on the same episode gives other slowdowns: the name chose the model
    const auto slowdowns = [](const std::vector<gp::job_record>& v) {
        std::vector<double> out;
        for (const auto& r : v) out.push_back(r.slowdown);
        return out;
    };
    CHECK(slowdowns(comm_play(comm_busy({{"model", "ring_allreduce"}}), "random", 5)) != slowdowns(comm_play(s, "random", 5)));
    bool listed = false;
    for (const auto& e : gp::registry_entries()) listed = listed || (e.kind == "comm_model" && e.name == "hop_penalty");
    CHECK(listed);
    // errors name the path, the key and the models known
    CHECK_THROWS_WITH_AS(comm_busy({{"model", "hop_penalty"}, {"rack_weight", 1}}),
                         "config /comm/rack_weight: unknown key \"rack_weight\" (allowed: model)", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_comm_model<hop_penalty_model>("again"),
                         "comm model \"hop_penalty\" is registered already (5% slower per level the ring crosses)", gp::ConfigError);
    CHECK_THROWS_WITH_AS(comm_busy({{"model", "hops"}}),
                         "config /comm/model: unknown model \"hops\" (allowed: ring_allreduce, tree_route, hop_penalty)", gp::ConfigError);
    CHECK(gp::unregister_comm_model("hop_penalty"));
    CHECK(!gp::unregister_comm_model("hop_penalty"));
    CHECK_THROWS_WITH_AS(comm_busy({{"model", "hop_penalty"}}), "config /comm/model: unknown model \"hop_penalty\" (allowed: ring_allreduce, tree_route)",
                         gp::ConfigError);
}

TEST_CASE("comm_registry: bad registrations are ConfigErrors, and a model's error reaches step()") {
    CHECK_THROWS_WITH_AS(gp::register_comm_model("tree_route", "mine", [](const gp::comm_config&, std::string_view) { return nullptr; }),
                         "comm model \"tree_route\" is a built-in model", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_comm_model("", "mine", [](const gp::comm_config&, std::string_view) { return nullptr; }),
                         "comm model name \"\": empty", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_comm_model("x", "mine", nullptr), "comm model \"x\": no factory", gp::ConfigError);
    REQUIRE(gp::register_comm_model("null", "makes nothing", [](const gp::comm_config&, std::string_view) { return nullptr; }));
    CHECK_THROWS_WITH_AS(gp::env(comm_busy({{"model", "null"}})), "config /comm/model: comm model \"null\"'s factory made no model", gp::ConfigError);
    gp::unregister_comm_model("null");

    REQUIRE(gp::register_comm_model("failing", "fails on more than 8 GPUs", [](const gp::comm_config&, std::string_view) {
        return std::make_shared<const failing_model>();
    }));
    gp::env e(comm_busy({{"model", "failing"}}));
    e.reset(1);
    gp::first_fit_policy ff;
    bool thrown = false;
    while (!e.done() && !thrown) {
        try {
            e.step(e.heuristic_action(ff));
        } catch (const gp::Error& x) {
            CHECK(std::string(x.what()) == "comm model \"failing\": 16 GPUs is too many");
            thrown = true;
        }
    }
    CHECK(thrown);
    gp::unregister_comm_model("failing");
}
