// The registry (registry.hpp): every kind's built-in entries, a placer of one's own registered with
// one call and then taken by name (under a queue policy and a GPU-type rule, and by a planner), a
// name registered twice refused, and the JSON layer's presets (json/registry.hpp).

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/json/registry.hpp>
#include <gpuplace/level_topology.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/registry.hpp>

namespace gp = gpuplace;

namespace {
/// The highest-numbered allowed GPU.
class registry_test_last_fit : public gp::gpu_picker<registry_test_last_fit> {
public:
    void reset(std::uint64_t) {}
    template <class View>
    std::int64_t next(const View& v) {
        for (std::size_t g = v.mask().size(); g-- > 0;)
            if (v.mask()[g]) return std::int64_t(g);
        return -1;
    }
};
/// An env type of the test's own, so that the placer registered for it leaves gp::env's names as they are.
using registry_test_env = gp::basic_env<gp::LevelTopology>;

bool has(const std::vector<gp::registry_entry>& v, std::string_view kind, std::string_view name) {
    return std::any_of(v.begin(), v.end(), [&](const gp::registry_entry& e) { return e.kind == kind && e.name == name; });
}
}  // namespace

TEST_CASE("registry: every kind lists the library's entries, declared where they are") {
    const auto all = gp::all_registry_entries();
    for (const auto& n : gp::heuristic_names()) CHECK(has(all, "placer", n));
    for (const auto& q : gp::all_queue_names()) CHECK(has(all, "queue", q));
    for (const auto& t : gp::topology_preset_names()) CHECK(has(all, "topology", t));
    for (const auto& s : gp::preset_names()) CHECK(has(all, "scenario", s));
    for (const char* w : {"synthetic", "proximity_drl", "trace", "jobs", "mixture"}) CHECK(has(all, "workload", w));
    for (const char* f : {"philly", "openb", "csv"}) CHECK(has(all, "trace_format", f));
    CHECK(has(all, "comm_model", "ring_allreduce"));
    CHECK(has(all, "reward_term", "jct"));
    CHECK(has(all, "observation_feature", "job_fields"));
    CHECK(has(all, "job_field", "tenant"));
    CHECK(has(all, "planner", "rollout:<policy>"));
    CHECK(has(all, "planner", "rollout<F>h<H>m<M>:<policy>"));
    CHECK(has(all, "planner", "rollout<F>:<policy>/<policy>[+queue]"));
    CHECK(has(all, "planner", "rollout<F>h<H>v:<placer>+class_gittins"));
    CHECK(has(all, "planner", "hindsighth<H>v:<placer>+class_gittins"));
    // kinds are open: a new one is a new string
    gp::register_entry({"round_policy", "registry_test_round", "a test's"});
    CHECK(has(gp::registry_entries("round_policy"), "round_policy", "registry_test_round"));
    CHECK_THROWS_WITH_AS(gp::register_entry({"queue", "sjf", "again"}),
                         "registry: queue \"sjf\" is registered already (shortest ideal duration first, with backfill (its estimate "
                         "with durations predicted))",
                         gp::ConfigError);
}

TEST_CASE("registry: a placer registered with one call is taken by name, with a queue, a GPU-type rule and by a planner") {
    CHECK(gp::register_placer<registry_test_last_fit, registry_test_env>("registry_test_last_fit", "the test's last fit"));
    CHECK(has(gp::registry_entries("placer"), "placer", "registry_test_last_fit"));
    CHECK_THROWS_WITH_AS((gp::register_placer<registry_test_last_fit, registry_test_env>("pack", "no")),
                         "registry: placer \"pack\" is a built-in heuristic", gp::ConfigError);
    auto s = gp::parse_scenario(R"({"topology": {"preset": "nvl72", "racks": 2}, "workload": {"num_jobs": 20}})");
    registry_test_env e(gp::LevelTopology::nvl72(2), gp::comm_model{}, gp::ModelZoo::builtin(), s);
    const auto p = gp::heuristic<registry_test_env>("registry_test_last_fit+sjf");
    CHECK(p.name == "registry_test_last_fit+sjf");
    CHECK(p.queue == "sjf");
    auto act = p.make(1);
    e.reset(1);
    CHECK(act(e) == std::int64_t(e.num_gpus() - 1));  // the highest GPU of an empty cluster
    (void)gp::heuristic<registry_test_env>("fastest_type:registry_test_last_fit");
    (void)gp::named_policy<registry_test_env>("rollout2:registry_test_last_fit+sjf");
    // gp::env knows nothing of it
    CHECK_THROWS_AS((void)gp::heuristic<gp::env>("registry_test_last_fit"), gp::ConfigError);
    CHECK(gp::unregister_policy<registry_test_env>("registry_test_last_fit"));
    CHECK_THROWS_AS((void)gp::heuristic<registry_test_env>("registry_test_last_fit"), gp::ConfigError);
}

TEST_CASE("registry: a policy registered by a factory (no placer type) is taken by name, a rule is refused, a second registration replaces") {
    const auto first_valid = [](std::uint64_t) {
        return std::function<std::int64_t(const gp::env&)>([](const gp::env& e) {
            const auto m = e.action_mask();
            return std::int64_t(std::find(m.begin(), m.end(), std::uint8_t{1}) - m.begin());
        });
    };
    CHECK(gp::register_policy<gp::env>("registry_test_first_valid", "the first valid action", first_valid));
    auto s = gp::default_scenario();
    s.workload.synthetic.num_jobs = 20;
    const auto by_name = gp::heuristic<gp::env>("registry_test_first_valid+sjf");
    CHECK(by_name.queue == "sjf");
    auto sq = s;
    gp::apply_queue(sq, "sjf");
    gp::env a(sq), b(sq);
    auto act = by_name.make(3);
    a.reset(3);
    while (!a.done()) a.step(act(a));
    auto ff = gp::heuristic<gp::env>("first_fit").make(3);  // the lowest valid GPU: the same actions in the GPU mode
    b.reset(3);
    while (!b.done()) b.step(ff(b));
    CHECK(a.episode_return() == b.episode_return());
    CHECK_THROWS_WITH_AS((void)gp::heuristic<gp::env>("fastest_type:registry_test_first_valid"),
                         doctest::Contains("wraps a placer's plan()"), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::register_policy<gp::env>("pack", "", first_valid), doctest::Contains("is a built-in heuristic"), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::register_policy<gp::env>("a+b", "", first_valid), doctest::Contains("with '+', ':' or ','"), gp::ConfigError);
    // registered again (a module imported again): replaced, listed once
    CHECK(gp::register_policy<gp::env>("registry_test_first_valid", "again", [](std::uint64_t) {
        return std::function<std::int64_t(const gp::env&)>([](const gp::env& e) { return e.defer_action(); });
    }));
    const auto placers = gp::registry_entries("placer");
    CHECK(std::count_if(placers.begin(), placers.end(), [](const gp::registry_entry& e) { return e.name == "registry_test_first_valid"; }) == 1);
    CHECK(std::find(placers.begin(), placers.end(), gp::registry_entry{"placer", "registry_test_first_valid", "again"}) != placers.end());
    gp::env c(sq);
    c.reset(3);
    CHECK(gp::heuristic<gp::env>("registry_test_first_valid").make(3)(c) == c.defer_action());
    // unregistered: gp::env's names are as they were (the tests share one registry when run in one process)
    CHECK(gp::unregister_policy<gp::env>("registry_test_first_valid"));
    CHECK_FALSE(gp::unregister_policy<gp::env>("registry_test_first_valid"));
    CHECK_FALSE(has(gp::registry_entries("placer"), "placer", "registry_test_first_valid"));
    CHECK_THROWS_AS((void)gp::heuristic<gp::env>("registry_test_first_valid"), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::unregister_policy<gp::env>("pack"), doctest::Contains("built-in heuristic"), gp::ConfigError);
}

TEST_CASE("registry: a scenario registered by name is a preset's equal: built, listed, refused by name") {
    auto doc = gp::to_json(gp::preset_scenario("default"));
    doc["workload"]["num_jobs"] = 12;
    REQUIRE(gp::register_scenario("small_default", "the default with 12 jobs", doc));
    const auto s = gp::preset_scenario("small_default");
    CHECK(s.name == "small_default");
    CHECK(s.workload.synthetic.num_jobs == 12);
    CHECK(gp::is_preset_name("small_default"));
    const auto all = gp::all_registry_entries();
    CHECK(std::find_if(all.begin(), all.end(), [](const gp::registry_entry& e) {
              return e.kind == "scenario" && e.name == "small_default" && e.about == "the default with 12 jobs";
          }) != all.end());
    CHECK_THROWS_WITH_AS(gp::register_scenario("small_default", "again", doc),
                         "scenario \"small_default\" is registered already (the default with 12 jobs)", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_scenario("philly", "mine", doc), "scenario \"philly\" is a preset", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_scenario("a:b", "mine", doc), doctest::Contains("with ':', '/' or"), gp::ConfigError);
    doc["env"]["queue_window"] = 5000;
    CHECK_THROWS_WITH_AS(gp::register_scenario("bad", "mine", doc), "config /env/queue_window: value 5000 out of range [0, 1024]",
                         gp::ConfigError);
    CHECK(gp::unregister_scenario("small_default"));
    CHECK(!gp::is_preset_name("small_default"));
    CHECK_THROWS_WITH_AS(gp::preset_scenario("small_default"), doctest::Contains("unknown scenario preset \"small_default\""),
                         gp::ConfigError);
}
