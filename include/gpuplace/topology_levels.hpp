#pragma once
/// \file topology_levels.hpp
/// A topology described level by level, as a scenario writes it (key "topology": {"levels": [...]},
/// docs/extending.md): each level above the GPU, the root last, with its name, its fan-out (how many
/// children each of its domains holds: GPUs for level 1), the bandwidth and latency of two GPUs
/// whose lowest common domain is on it, and optionally the GPU types below it. A fan-out is one
/// number (every domain of the level alike) or one number per domain (non-uniform domains, e.g.
/// servers of one or two switches). levels_layout() turns the levels into a level_hierarchy
/// (hierarchy.hpp) and the GPU type of every level-1 domain; errors name the JSON path and the value.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiled.hpp"
#include "error.hpp"
#include "hierarchy.hpp"

namespace gpuplace {

/// One level of a topology described as data.
struct level_config {
    std::string name;                    ///< e.g. "node", "rack", "spine"; unique, letters, digits, '_', '-' and '.'
    std::vector<std::uint32_t> fanout;   ///< children per domain: one value (every domain) or one per domain of the level
    double bandwidth = 1;                ///< GB/s per GPU
    double latency = 0;                  ///< seconds per hop
    std::vector<std::string> gpu_types;  ///< empty, one type (every GPU below the level) or one per domain of the level
    std::string fabric;                  ///< level 1 only: "" or "switched", or "cube_mesh" (a DGX-1's hybrid cube-mesh)
    std::optional<double> pcie_bandwidth;  ///< cube_mesh: the pairs without NVLink (GB/s; default 12)
    friend bool operator==(const level_config&, const level_config&) = default;
};

/// What levels describe: the hierarchy, the GPU type of each level-1 domain (empty when untyped)
/// and the fabric inside a level-1 domain.
struct levels_layout {
    level_hierarchy hierarchy;
    std::vector<std::string> domain_types;
    bool cube_mesh = false;
    double pcie_bandwidth = 12.0;
};

namespace detail {
[[nodiscard]] inline bool level_name_ok(std::string_view n) noexcept {
    if (n.empty()) return false;
    return std::all_of(n.begin(), n.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    });
}
[[nodiscard]] inline std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }
}  // namespace detail

/// The hierarchy `levels` describe (level 1 first, the root last). ConfigError naming
/// `path`/<i>/<key> and the value: fewer than two levels, a bad or repeated name, a fan-out of 0 or
/// with as many values as neither 1 nor the level's domains, more than 16,777,216 GPUs, a bandwidth
/// <= 0, a latency < 0, GPU types on two levels or not one per domain, a cube-mesh fabric on a level
/// above 1 or on domains not of 8 GPUs.
[[nodiscard]] GPUPLACE_INLINE levels_layout levels_layout_of(const std::vector<level_config>& levels,
                                                          std::string_view path = "/topology/levels");

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/topology_levels_inl.hpp"  // its definition (compiled once in gpuplace::compiled otherwise)
#endif
