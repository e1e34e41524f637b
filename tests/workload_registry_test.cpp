// Tests of include/gpuplace/json/workload_registry.hpp: a workload kind registered with one call is
// a scenario's workload "kind" by name (its options read by its factory, written back as read, a
// mixture's component too), its episodes sorted by submit time and numbered, the same for a seed,
// and run by the env; the registry lists it under kind "workload" after the built-in kinds; an
// unknown kind is refused naming it and every known kind; duplicates, built-in names and a bad
// generator's jobs are refused by name. Every registration is undone before its test ends.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/json/registry.hpp>
#include <gpuplace/json/workload_registry.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using gp::test::json;

namespace {

/// `count` jobs of `gpus` GPUs each, arriving in reverse order (the source sorts them), model 0,
/// durations drawn from the seed.
class reverse_waves final : public gp::workload_generator {
public:
    reverse_waves(std::size_t count, std::uint32_t gpus) : count_(count), gpus_(gpus) {}
    void generate(const gp::ModelZoo&, std::size_t, std::uint64_t seed, std::vector<gp::TrainingJob>& out) const override {
        gp::rng r(seed);
        for (std::size_t i = 0; i < count_; ++i) {
            gp::TrainingJob j;
            j.id = 99;  // renumbered by the source
            j.submit_time = double(count_ - i) * 100;
            j.num_gpus = gpus_;
            j.model = 0;
            j.work = r.uniform(100.0, 1000.0);
            out.push_back(j);
        }
    }
    [[nodiscard]] std::size_t max_episode_gpus(std::size_t G) const override { return count_ * std::min<std::size_t>(gpus_, G); }

private:
    std::size_t count_;
    std::uint32_t gpus_;
};

std::shared_ptr<const gp::workload_generator> make_reverse_waves(const gp::json& j, const std::string& path) {
    const auto n = j.value("count", 5);
    if (n < 1) throw gp::ConfigError(path + "/count: expected >= 1, got " + std::to_string(n));
    return std::make_shared<reverse_waves>(std::size_t(n), j.value("gpus", 2u));
}

/// Undoes a test's registration when it ends, whatever happens.
struct registered_kind {
    std::string name;
    registered_kind(std::string n, gp::workload_factory f, std::string about = "a test's") : name(std::move(n)) {
        gp::register_workload_kind(name, about, std::move(f));
    }
    ~registered_kind() { gp::unregister_workload_kind(name); }
    registered_kind(const registered_kind&) = delete;
    registered_kind& operator=(const registered_kind&) = delete;
};

gp::scenario waves_scenario(const std::string& workload) {
    return gp::scenario_from_json(json::parse(R"({"topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2}, "workload": )" +
                                              workload + "}"));
}

}  // namespace

TEST_CASE("workload_registry: a registered kind is a scenario's workload by name, sorted, numbered and seeded") {
    registered_kind k("reverse_waves", make_reverse_waves);
    const auto s = waves_scenario(R"({"kind": "reverse_waves", "count": 7, "gpus": 4})");
    CHECK(s.workload.kind == "reverse_waves");
    const auto zoo = gp::ModelZoo::builtin();
    gp::workload_source w(s.workload, zoo, 16);
    std::vector<gp::TrainingJob> a, b, c;
    w.generate(zoo, 16, 5, a);
    w.generate(zoo, 16, 5, b);
    w.generate(zoo, 16, 6, c);
    REQUIRE(a.size() == 7);
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].id == gp::job_id(i));
        CHECK(a[i].submit_time == doctest::Approx(double(i + 1) * 100));
        CHECK(a[i].num_gpus == 4);
        CHECK(a[i].work == b[i].work);  // the same seed, the same jobs
    }
    CHECK(a[0].work != c[0].work);
    CHECK(w.max_episode_gpus(16) == 28);

    // written back as read, and read again to the same episodes
    const auto j = gp::to_json(s);
    CHECK(j["workload"] == json::parse(R"({"kind": "reverse_waves", "count": 7, "gpus": 4})"));
    const auto again = gp::scenario_from_json(j);
    gp::workload_source w2(again.workload, zoo, 16);
    w2.generate(zoo, 16, 5, b);
    CHECK(b.size() == 7);
    CHECK(b.back().work == a.back().work);

    // the env runs it: every job finishes
    gp::env e(s);
    e.reset(3);
    while (!e.done()) {
        const auto m = e.action_mask();
        std::int64_t act = 0;
        while (!m[std::size_t(act)]) ++act;
        e.step(act);
    }
    CHECK(e.finished().size() == 7);

    // a mixture's component may be one too
    const auto mix = waves_scenario(R"({"kind": "mixture", "components": [
        {"weight": 1, "workload": {"kind": "reverse_waves", "count": 3}},
        {"weight": 1, "workload": {"kind": "synthetic", "num_jobs": 4}}]})");
    gp::workload_source wm(mix.workload, zoo, 16);
    bool saw3 = false, saw4 = false;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        wm.generate(zoo, 16, seed, a);
        saw3 = saw3 || a.size() == 3;
        saw4 = saw4 || a.size() == 4;
    }
    CHECK(saw3);
    CHECK(saw4);
}

TEST_CASE("workload_registry: listed under kind workload after the built-in kinds") {
    registered_kind k("reverse_waves", make_reverse_waves, "jobs in reverse order");
    std::vector<std::string> names;
    for (const auto& e : gp::all_registry_entries())
        if (e.kind == "workload") names.push_back(e.name);
    CHECK(names == std::vector<std::string>{"synthetic", "proximity_drl", "trace", "jobs", "mixture", "reverse_waves"});
    CHECK(gp::workload_kind_names() == "synthetic, proximity_drl, trace, jobs, mixture, reverse_waves");
    CHECK(gp::find_workload_kind("reverse_waves")->about == "jobs in reverse order");
}

TEST_CASE("workload_registry: an unknown kind is refused, naming it and every known kind") {
    registered_kind k("reverse_waves", make_reverse_waves);
    try {
        (void)waves_scenario(R"({"kind": "reverse_wave"})");
        FAIL("no error");
    } catch (const gp::ConfigError& e) {
        CHECK(std::string(e.what()).find("/workload/kind: unknown workload kind \"reverse_wave\" (allowed: synthetic, proximity_drl, trace, "
                                         "jobs, mixture, reverse_waves)") != std::string::npos);
    }
    // the factory's own errors name the path
    CHECK_THROWS_WITH_AS((void)waves_scenario(R"({"kind": "reverse_waves", "count": 0})"),
                         doctest::Contains("/workload/count: expected >= 1, got 0"), gp::ConfigError);
}

TEST_CASE("workload_registry: duplicates, built-in names, empty names and no factory are refused") {
    registered_kind k("reverse_waves", make_reverse_waves, "the first");
    CHECK_THROWS_WITH_AS(gp::register_workload_kind("reverse_waves", "again", make_reverse_waves),
                         "workload kind \"reverse_waves\" is registered already (the first)", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_workload_kind("trace", "mine", make_reverse_waves), "workload kind \"trace\" is a built-in kind",
                         gp::ConfigError);
    CHECK_THROWS_AS(gp::register_workload_kind("", "empty", make_reverse_waves), gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_workload_kind("none", "no factory", nullptr), "workload kind \"none\": no factory", gp::ConfigError);
    CHECK(gp::registered_workload_kinds().size() == 1);
    CHECK(gp::unregister_workload_kind("reverse_waves"));
    CHECK_FALSE(gp::unregister_workload_kind("reverse_waves"));
    gp::register_workload_kind("reverse_waves", "back", make_reverse_waves);  // undone by k
}

TEST_CASE("workload_registry: a generator's job that can never run is refused at reset, naming the kind") {
    registered_kind k("reverse_waves", make_reverse_waves);
    const auto s = waves_scenario(R"({"kind": "reverse_waves", "count": 2, "gpus": 64})");
    gp::env e(s);
    CHECK_THROWS_WITH_AS(e.reset(1), doctest::Contains("workload kind \"reverse_waves\", episode seed 1: job 0 requests 64 GPUs"),
                         gp::ConfigError);
}
