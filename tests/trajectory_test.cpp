// Trajectory hashes: whole episodes (every action, reward, observation and mask, bit for bit, and
// the final metrics) in every action mode, both comm models, co-location, heterogeneous clusters
// with and without confine_type, a trace workload, every queue order and every heuristic, hashed
// and compared with recorded values. A change to the env that changes any episode by one bit
// fails here; a deliberate change updates the table (each mismatch prints the new hash).

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gpuplace/colocation_policy.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/evaluate.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy.hpp>

#include "test_util.hpp"

namespace {

namespace gp = gpuplace;
using gp::test::json;

/// FNV-1a, 64 bits, over bytes.
struct fnv {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    void bytes(const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
    }
    template <class T>
    void value(const T& v) {
        bytes(&v, sizeof v);
    }
};

/// The scenarios of the table, by name.
gp::scenario trajectory_scenario(const std::string& name) {
    using gp::test::with;
    if (name == "default" || name == "proximity_drl" || name == "colocation" || name == "heterogeneous")
        return gp::preset_scenario(name);
    if (name == "heterogeneous_confine") return with(gp::preset_scenario("heterogeneous"), {{"env", {{"confine_type", true}}}});
    if (name == "philly") return gp::preset_scenario("philly");
    if (name == "dgx1_sjf_strict")
        return with(gp::test::small_scenario(gp::test::dgx1_2x4::config(), {{"1", 0.3}, {"2", 0.2}, {"3", 0.2}, {"8", 0.2}, {"12", 0.1}}, 40, 2.0),
                    {{"env", {{"queue_policy", "sjf"}, {"backfill", false}, {"allow_defer", true}}}});
    if (name == "odd_fewest_rewards")
        return with(gp::test::small_scenario(gp::test::odd_topo::config(), {{"1", 0.4}, {"2", 0.3}, {"4", 0.2}, {"7", 0.1}}, 40, 1.5),
                    {{"env", {{"queue_policy", "fewest_gpus"}, {"allow_defer", true}, {"queue_window", 3}}},
                     {"reward", {{"jct", 0.5}, {"makespan", 0.3}, {"comm", 0.2}, {"placement", 0.7}, {"time_scale", 900}}}});
    if (name == "tree_route_exponent")
        return with(gp::preset_scenario("proximity_drl"),
                    {{"comm", {{"model", "tree_route"}, {"slowdown_exponent", 0.5}}}, {"env", {{"allow_defer", true}}}});
    FAIL("unknown scenario " << name);
    return {};
}

gp::scenario in_mode(gp::scenario s, const std::string& mode) {
    if (mode == "gpu") return s;
    if (mode == "placement") return gp::test::with(s, {{"env", {{"action_mode", "placement"}}}});
    if (mode == "placement3") return gp::test::with(s, {{"env", {{"action_mode", "placement"}, {"slots", 3}}}});
    // job:<placer>
    return gp::test::with(s, {{"env", {{"action_mode", "job"}, {"placer", mode.substr(4)}}}});
}

/// Plays one episode and hashes it.
template <class E>
std::uint64_t episode_hash(gp::scenario s, const std::string& policy, std::uint64_t seed) {
    if (const auto plus = policy.find('+'); plus != std::string::npos) gp::apply_queue(s, policy.substr(plus + 1));
    E e(s);
    fnv h;
    for (const auto& seg : e.observation_layout()) {
        h.bytes(seg.name.data(), seg.name.size());
        h.value(seg.offset);
        h.value(seg.size);
    }
    std::function<std::int64_t(const E&)> act;
    gp::detail::rng r(seed ^ 0x5eedULL);
    gp::colocation_packer_policy packer;
    std::function<std::int64_t(const E&)> harness;
    if (policy == "random_defer") act = [&](const E& x) { return gp::test::random_action(x, r, 0.2); };
    else if (policy == "coloc_packer") act = [&](const E& x) { return gp::act(x, packer); };
    else {
        const auto p = gp::heuristic<E>(policy);
        harness = p.make(seed);
        act = harness;
    }
    e.reset(seed);
    const auto put_state = [&] {
        const auto o = e.observation();
        const auto m = e.action_mask();
        h.bytes(o.data(), o.size_bytes());
        h.bytes(m.data(), m.size_bytes());
    };
    put_state();
    while (!e.done()) {
        const auto a = act(e);
        const auto res = e.step(a);
        h.value(a);
        h.value(res.reward);
        h.value(res.elapsed);
        h.value(res.terminated);
        h.value(res.truncated);
        put_state();
    }
    const auto m = e.episode_metrics();
    for (double v : {m.avg_jct, m.p50_jct, m.p95_jct, m.p99_jct, m.avg_queueing_delay, m.makespan, m.avg_comm_cost,
                     m.total_comm_cost, m.avg_slowdown, m.utilization, e.episode_return()})
        h.value(v);
    h.value(m.jobs_done);
    h.value(e.steps());
    return h.h;
}

struct trajectory_case {
    const char* scenario;
    const char* mode;
    const char* policy;
    std::uint64_t seed;
    std::uint64_t expected;
};

// scenario, action mode, policy, seed, expected hash
const trajectory_case trajectory_cases[] = {
#include "trajectory_hashes.inc"
};

}  // namespace

TEST_CASE("trajectories: every recorded episode is reproduced bit for bit") {
    std::size_t checked = 0;
    std::string updated;
    for (const auto& c : trajectory_cases) {
        const auto s = in_mode(trajectory_scenario(c.scenario), c.mode);
        std::uint64_t got = 0;
        if (gp::comm_model_name(s) == gp::TreeRouteCost::name) got = episode_hash<gp::tree_route_env>(s, c.policy, c.seed);
        else got = episode_hash<gp::env>(s, c.policy, c.seed);
        char line[256];
        std::snprintf(line, sizeof line, "{\"%s\", \"%s\", \"%s\", %llu, 0x%016llxULL},\n", c.scenario, c.mode, c.policy,
                      static_cast<unsigned long long>(c.seed), static_cast<unsigned long long>(got));
        updated += line;
        CHECK_MESSAGE(got == c.expected, "episode changed: " << line);
        ++checked;
    }
    CHECK(checked == std::size(trajectory_cases));
    // every mismatch above prints its new line; all of them together: the new table
    if (doctest::getContextOptions()->success) MESSAGE("trajectory_hashes.inc:\n" << updated);
}
