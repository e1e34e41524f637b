// Tests of include/gpuplace/discipline_registry.hpp: a preemptive discipline registered with one
// call plays exactly as the built-in one it restates (LAS, bit for bit), reads the declared job
// fields and the decision's view, is taken by name by a scenario's JSON, apply_queue(), heuristic()
// and the harness, is listed by the registry under kind "queue", and refuses bad names; an env
// keeps the discipline it was built with. Every registration is undone before its test ends.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <gpuplace/discipline_registry.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/heuristic_registry.hpp>
#include <gpuplace/evaluate.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy.hpp>
#include <gpuplace/registry.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using gp::test::json;

namespace {

/// Undoes a test's registration when it ends, whatever happens.
struct registered {
    std::string name;
    template <class F>
    registered(std::string n, F key, std::string about = "a test's") : name(std::move(n)) {
        gp::register_discipline(name, about, std::move(key));
    }
    ~registered() { gp::unregister_discipline(name); }
    registered(const registered&) = delete;
    registered& operator=(const registered&) = delete;
};

/// The default cluster with 40 jobs at offered load 1.5 and preemption on under `queue`.
gp::scenario busy(const std::string& queue) {
    auto s = gp::default_scenario();
    s.workload.synthetic.num_jobs = 40;
    s.workload.synthetic.load = 1.5;
    gp::apply_queue(s, queue);
    return s;
}

/// First fit to the end of episode `seed`: the return and the finished records.
std::pair<double, std::vector<gp::job_record>> play(const gp::scenario& s, std::uint64_t seed) {
    gp::env e(s);
    gp::first_fit_policy ff;
    const auto r = gp::run_episode(e, ff, seed);
    REQUIRE(r.terminated);
    const auto f = e.finished();
    return {r.episode_return, {f.begin(), f.end()}};
}

bool same(const std::vector<gp::job_record>& a, const std::vector<gp::job_record>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].id != b[i].id || a[i].start != b[i].start || a[i].end != b[i].end || a[i].preemptions != b[i].preemptions ||
            a[i].gpu_offset != b[i].gpu_offset || a[i].run_time != b[i].run_time)
            return false;
    return true;
}

}  // namespace

TEST_CASE("discipline registry: LAS restated as a registered key plays exactly as the built-in las") {
    const registered las("test_las", [](const gp::discipline_view&, const gp::discipline_job& j) { return j.attained; });
    // the same priority as a tuple (a constant first component changes nothing)
    const registered las2("test_las_tuple", [](const gp::discipline_view&, const gp::discipline_job& j) {
        return std::tuple{0, j.attained};
    });
    const auto s = busy("test_las");
    CHECK(s.env.order == gp::queue_order::registered);
    CHECK(s.env.discipline == "test_las");
    CHECK(s.preemption.enabled);
    std::size_t preempted = 0;
    for (std::uint64_t seed : {1, 2, 3}) {
        const auto [ret, recs] = play(busy("las"), seed);
        for (const auto& r : recs) preempted += r.preemptions;
        for (const auto* q : {"test_las", "test_las_tuple"}) {
            const auto [ret2, recs2] = play(busy(q), seed);
            CHECK(ret2 == ret);  // bit for bit
            CHECK(same(recs, recs2));
        }
    }
    CHECK(preempted > 0);  // the identity is about preemptive play
}

TEST_CASE("discipline registry: the key reads the declared fields and the decision's view") {
    // one GPU; A (priority 0): 100 s from 0, B (priority 5): 20 s from 10. Highest priority first
    // preempts A for B at 10; B ends at 30, A at 120.
    std::vector<double> nows;
    std::size_t most_active = 0;
    const registered prio("test_priority", [&](const gp::discipline_view& v, const gp::discipline_job& j) {
        nows.push_back(v.now);
        most_active = std::max(most_active, v.active);
        CHECK(v.num_gpus == 1);
        const auto f = v.field("priority");
        REQUIRE(f != gp::discipline_view::npos);
        CHECK(v.field("no_such_field") == gp::discipline_view::npos);
        CHECK(j.gpus == 1);
        CHECK(j.shown_duration == (j.index == 0 ? 100.0 : 20.0));  // durations oracle: the ideal ones
        return -j.fields[f];
    });
    const auto s = gp::scenario_from_json(json::parse(R"({
        "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 1, "gpus_per_node": 1},
        "zoo": {"models": [{"name": "m", "throughput": {"1": [1, 1]}}]},
        "job_fields": ["priority"],
        "workload": {"kind": "jobs", "jobs": [{"submit_time": 0, "num_gpus": 1, "model": 0, "work": 100, "priority": 0},
                                              {"submit_time": 10, "num_gpus": 1, "model": 0, "work": 20, "priority": 5}]},
        "env": {"queue_policy": "test_priority"},
        "preemption": {"enabled": true, "restart_overhead": 0}})"));
    CHECK(gp::to_json(s)["env"]["queue_policy"] == "test_priority");  // written back by name
    const auto [ret, recs] = play(s, 1);
    REQUIRE(recs.size() == 2);
    const auto& a = recs[0].id == 0 ? recs[0] : recs[1];
    const auto& b = recs[0].id == 0 ? recs[1] : recs[0];
    CHECK(b.start == 10);
    CHECK(b.end == 30);
    CHECK(a.end == 120);
    CHECK(a.preemptions == 1);
    CHECK(most_active == 2);
    CHECK(std::is_sorted(nows.begin(), nows.end()));
}

TEST_CASE("discipline registry: taken by name by policies, the harness and the registry's listing") {
    const registered las("test_las", [](const gp::discipline_view&, const gp::discipline_job& j) { return j.attained; },
                         "least attained service, restated");
    const auto queues = gp::registry_entries("queue");
    CHECK(std::count(queues.begin(), queues.end(), gp::registry_entry{"queue", "test_las", "least attained service, restated"}) == 1);
    const auto names = gp::all_queue_names();
    CHECK(std::find(names.begin(), names.end(), "test_las") != names.end());
    // "<placer>+<name>" in the harness: the same report as pack+las
    auto s = gp::default_scenario();
    s.workload.synthetic.num_jobs = 40;
    s.workload.synthetic.load = 1.5;
    const auto r = gp::evaluate(s, {gp::heuristic<gp::env>("pack+test_las"), gp::heuristic<gp::env>("pack+las")}, gp::held_out_seeds(2));
    REQUIRE(r.policies.size() == 2);
    for (const auto* m : {"avg_jct", "makespan", "avg_preemptions"}) CHECK(r.policies[0].get(m).mean == r.policies[1].get(m).mean);
    CHECK(r.policies[0].get("avg_preemptions").mean > 0);
}

TEST_CASE("discipline registry: bad names and unknown names are ConfigErrors naming the value") {
    const auto key = [](const gp::discipline_view&, const gp::discipline_job& j) { return j.submit_time; };
    gp::scenario s;
    CHECK_THROWS_WITH_AS(gp::register_discipline("las", "", key), "discipline \"las\" is a built-in queue policy", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_discipline("backfill", "", key), "discipline \"backfill\" is a built-in queue policy", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_discipline("max_min_fairness", "", key), "discipline \"max_min_fairness\" is a built-in queue policy",
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_discipline("a+b", "", key),
                         "discipline name \"a+b\": empty or with '+', ':' or ',' (they separate a placer, a rule or a list)", gp::ConfigError);
    CHECK_THROWS_AS(gp::register_discipline("", "", key), gp::ConfigError);
    {
        const registered once("test_oldest", key, "oldest first");
        CHECK_THROWS_WITH_AS(gp::register_discipline("test_oldest", "", key), "discipline \"test_oldest\" is registered already (oldest first)",
                             gp::ConfigError);
        std::string msg;
        try {
            (void)gp::scenario_from_json(json{{"env", {{"queue_policy", "test_newest"}}}});
        } catch (const gp::ConfigError& e) {
            msg = e.what();
        }
        CHECK(msg.find("/env/queue_policy") != std::string::npos);
        CHECK(msg.find("\"test_newest\"") != std::string::npos);
        CHECK(msg.find("edf_ac, test_oldest)") != std::string::npos);  // the built-in ones and the registered ones
        CHECK_THROWS_WITH_AS(gp::apply_queue(s, "test_newest"),
                             doctest::Contains("unknown queue policy \"test_newest\" (known: fifo, backfill"), gp::ConfigError);
    }
    CHECK_FALSE(gp::unregister_discipline("test_oldest"));  // undone already
    CHECK(gp::registered_discipline_names().empty());
}

TEST_CASE("discipline registry: an env keeps its discipline, one built after unregistering is refused") {
    std::optional<gp::env> kept;
    gp::scenario s;
    {
        const registered las("test_las", [](const gp::discipline_view&, const gp::discipline_job& j) { return j.attained; });
        s = busy("test_las");
        kept.emplace(s);
    }
    CHECK_THROWS_WITH_AS(gp::env{s}, "config /env/queue_policy: no discipline is registered as \"test_las\" (registered: none)", gp::ConfigError);
    gp::first_fit_policy ff;
    const auto r = gp::run_episode(*kept, ff, 1);
    CHECK(r.terminated);
    CHECK(r.episode_return == play(busy("las"), 1).first);
    // preemption off under a registered discipline: refused by its name
    const registered again("test_las", [](const gp::discipline_view&, const gp::discipline_job& j) { return j.attained; });
    s.preemption.enabled = false;
    CHECK_THROWS_WITH_AS(gp::env{s}, "config /env/queue_policy: \"test_las\" is a preemptive discipline: it needs /preemption/enabled",
                         gp::ConfigError);
}
