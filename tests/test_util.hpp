#pragma once
// Shared helpers of the C++ test suite: small scenarios, topology presets as types (for
// TEST_CASE_TEMPLATE), random valid actions and byte-wise comparison.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

namespace gpuplace::test {

using json = detail::json;

// ---- topology presets as types -------------------------------------------------------------------

struct dgx_a100_2x4 {
    static constexpr const char* name = "dgx_a100(2, 4)";
    static TreeTopology make() { return TreeTopology::dgx_a100(2, 4); }
    static json config() { return {{"preset", "dgx_a100"}, {"racks", 2}, {"nodes_per_rack", 4}}; }
};
struct dgx1_2x4 {
    static constexpr const char* name = "dgx1(2, 4)";
    static TreeTopology make() { return TreeTopology::dgx1(2, 4); }
    static json config() { return {{"preset", "dgx1"}, {"racks", 2}, {"nodes_per_rack", 4}}; }
};
struct dgx1_1x2 {
    static constexpr const char* name = "dgx1(1, 2)";
    static TreeTopology make() { return TreeTopology::dgx1(1, 2); }
    static json config() { return {{"preset", "dgx1"}, {"racks", 1}, {"nodes_per_rack", 2}}; }
};
struct proximity_drl_topo {
    static constexpr const char* name = "proximity_drl";
    static TreeTopology make() { return TreeTopology::proximity_drl(); }
    static json config() { return {{"preset", "proximity_drl"}}; }
};
/// A tiny custom tree: 1 rack x 2 nodes x 2 GPUs.
struct tiny_topo {
    static constexpr const char* name = "custom 1x2x2";
    static TreeTopology make() {
        tree_params p;
        p.racks = 1;
        p.nodes_per_rack = 2;
        p.gpus_per_node = 2;
        return TreeTopology(p);
    }
    static json config() { return {{"preset", "custom"}, {"racks", 1}, {"nodes_per_rack", 2}, {"gpus_per_node", 2}}; }
};
/// An odd-sized custom tree: 3 racks x 2 nodes x 3 GPUs.
struct odd_topo {
    static constexpr const char* name = "custom 3x2x3";
    static TreeTopology make() {
        tree_params p;
        p.racks = 3;
        p.nodes_per_rack = 2;
        p.gpus_per_node = 3;
        return TreeTopology(p);
    }
    static json config() { return {{"preset", "custom"}, {"racks", 3}, {"nodes_per_rack", 2}, {"gpus_per_node", 3}}; }
};

// ---- scenarios ----------------------------------------------------------------------------------

/// A small synthetic scenario on the given topology: `num_jobs` jobs with GPU requests from
/// `gpu_counts` (a JSON object {"<k>": p}), durations 60 s .. 3600 s, at load `load`.
inline scenario small_scenario(const json& topology, const json& gpu_counts, std::size_t num_jobs = 12,
                               double load = 1.5) {
    json j = {{"topology", topology},
              {"workload",
               {{"kind", "synthetic"},
                {"num_jobs", num_jobs},
                {"load", load},
                {"gpu_counts", gpu_counts},
                {"duration_min", 60},
                {"duration_max", 3600}}}};
    return scenario_from_json(j);
}

/// Applies a JSON patch of "env" / "reward" / "comm" options to a scenario (through its JSON form).
inline scenario with(const scenario& s, const json& patch) {
    json j = to_json(s);
    j.merge_patch(patch);
    return scenario_from_json(j);
}

// ---- actions ------------------------------------------------------------------------------------

/// A uniformly random valid GPU (in the placement and job action modes: candidate or queue slot),
/// or DEFER (wait) with probability `defer_prob` when the mask allows it.
template <class E>
std::int64_t random_action(const E& e, detail::rng& r, double defer_prob = 0.0) {
    const auto mask = e.action_mask();
    const std::size_t G = e.num_actions() - 1;
    if (mask[G] && r.uniform() < defer_prob) return static_cast<std::int64_t>(G);
    std::size_t n = 0;
    for (std::size_t g = 0; g < G; ++g) n += mask[g];
    if (n == 0) return static_cast<std::int64_t>(G);
    auto k = r.below(n);
    for (std::size_t g = 0; g < G; ++g)
        if (mask[g] && k-- == 0) return static_cast<std::int64_t>(g);
    return static_cast<std::int64_t>(G);
}

/// The sum of the JCTs of finished jobs.
inline double sum_jct(std::span<const job_record> recs) {
    double s = 0;
    for (const auto& r : recs) s += r.jct();
    return s;
}

/// Byte-wise equality of two spans.
template <class T>
bool same_bytes(std::span<const T> a, std::span<const T> b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// Relative closeness: |a - b| <= rel * max(|a|, |b|, tiny).
inline bool close_rel(double a, double b, double rel = 1e-9) {
    const double scale = std::max({std::abs(a), std::abs(b), 1e-300});
    return std::abs(a - b) <= rel * scale;
}

}  // namespace gpuplace::test

