#pragma once
/// \file impl/topology_levels_inl.hpp
/// levels_layout_of()'s definition (topology_levels.hpp declares it): included by
/// topology_levels.hpp in the header-only library, compiled once into gpuplace::compiled
/// (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../topology_levels.hpp"

namespace gpuplace {

GPUPLACE_INLINE levels_layout levels_layout_of(const std::vector<level_config>& levels, std::string_view path) {
    using detail::config_fail;
    using detail::join_path;
    const std::size_t L = levels.size();
    const auto at = [&](std::size_t i, std::string_view key = {}) {
        const auto p = join_path(path, std::to_string(i));
        return key.empty() ? p : join_path(p, key);
    };
    if (L < 2)
        config_fail(path, std::to_string(L) + " level" + (L == 1 ? "" : "s") +
                              ": a topology needs at least two (a level of domains, e.g. \"node\", and the root, e.g. \"spine\")");
    if (L > level_hierarchy::max_levels)
        config_fail(path, std::to_string(L) + " levels (at most " + std::to_string(level_hierarchy::max_levels) + ")");
    std::size_t typed_level = L;
    for (std::size_t i = 0; i < L; ++i) {
        const auto& lv = levels[i];
        if (!detail::level_name_ok(lv.name))
            config_fail(at(i, "name"), "level name " + detail::quoted(lv.name) + ": expected letters, digits, '_', '-' or '.'");
        for (std::size_t k = 0; k < i; ++k)
            if (levels[k].name == lv.name) config_fail(at(i, "name"), "level name " + detail::quoted(lv.name) + " is used by level " + std::to_string(k) + " too");
        if (!(lv.bandwidth > 0)) config_fail(at(i, "bandwidth"), "bandwidth must be > 0 GB/s (got " + std::to_string(lv.bandwidth) + ")");
        if (!(lv.latency >= 0)) config_fail(at(i, "latency"), "latency must be >= 0 s (got " + std::to_string(lv.latency) + ")");
        if (lv.fanout.empty()) config_fail(at(i, "fanout"), "level " + detail::quoted(lv.name) + " needs a fan-out");
        for (std::size_t k = 0; k < lv.fanout.size(); ++k)
            if (lv.fanout[k] == 0) config_fail(lv.fanout.size() == 1 ? at(i, "fanout") : join_path(at(i, "fanout"), std::to_string(k)), "a fan-out of 0");
        if (!lv.gpu_types.empty()) {
            if (typed_level < L)
                config_fail(at(i, "gpu_types"), "GPU types are set on level " + detail::quoted(levels[typed_level].name) +
                                                    " already (one level sets them)");
            typed_level = i;
            for (std::size_t k = 0; k < lv.gpu_types.size(); ++k)
                if (lv.gpu_types[k].empty()) config_fail(join_path(at(i, "gpu_types"), std::to_string(k)), "empty GPU type name");
        }
        if (!lv.fabric.empty() && lv.fabric != "switched" && lv.fabric != "cube_mesh")
            config_fail(at(i, "fabric"), "unknown fabric " + detail::quoted(lv.fabric) + " (allowed: switched, cube_mesh)");
        if (i > 0 && !lv.fabric.empty()) config_fail(at(i, "fabric"), "a fabric is set on the first level only (inside its domains)");
        if (lv.pcie_bandwidth && lv.fabric != "cube_mesh") config_fail(at(i, "pcie_bandwidth"), "pcie_bandwidth needs \"fabric\": \"cube_mesh\"");
        if (lv.pcie_bandwidth && !(*lv.pcie_bandwidth > 0))
            config_fail(at(i, "pcie_bandwidth"), "pcie_bandwidth must be > 0 GB/s (got " + std::to_string(*lv.pcie_bandwidth) + ")");
    }
    // domains per level, from the root down: the root is one domain; each level's fan-outs give the
    // number of domains of the level below (children[l][d]: how many children domain d of level l has)
    constexpr std::uint64_t max_gpus = std::uint64_t{1} << 24;
    std::vector<std::vector<std::uint32_t>> children(L + 1);
    std::uint64_t domains = 1;  // of the level being read
    for (std::size_t l = L; l >= 1; --l) {
        const auto& lv = levels[l - 1];
        if (lv.fanout.size() != 1 && lv.fanout.size() != domains)
            config_fail(at(l - 1, "fanout"), std::to_string(lv.fanout.size()) + " fan-outs for the " + std::to_string(domains) +
                                                 " domains of level " + detail::quoted(lv.name) + " (give one for all, or one per domain)");
        std::uint64_t below = 0;
        auto& c = children[l];
        c.resize(domains);
        for (std::uint64_t d = 0; d < domains; ++d) {
            c[d] = lv.fanout.size() == 1 ? lv.fanout[0] : lv.fanout[d];
            below += c[d];
            if (below > max_gpus)
                config_fail(at(l - 1, "fanout"), "too many " + std::string(l == 1 ? "GPUs" : "domains") + " below level " +
                                                     detail::quoted(lv.name) + " (more than 16777216)");
        }
        domains = below;
    }
    // sizes in GPUs, from level 1 up
    std::vector<std::vector<std::uint32_t>> sizes(L - 1);
    std::vector<std::uint32_t> below = children[1];  // level 1's sizes in GPUs
    for (std::size_t l = 1; l < L; ++l) {
        sizes[l - 1] = below;
        std::vector<std::uint32_t> up(children[l + 1].size());
        std::size_t k = 0;
        for (std::size_t d = 0; d < up.size(); ++d)
            for (std::uint32_t c = 0; c < children[l + 1][d]; ++c) up[d] += below[k++];
        below = std::move(up);
    }
    const auto& f = levels[0];
    levels_layout out;
    out.cube_mesh = f.fabric == "cube_mesh";
    if (out.cube_mesh)
        for (auto s : sizes[0])
            if (s != 8) config_fail(at(0, "fabric"), "cube_mesh needs domains of 8 GPUs (a domain of level " + detail::quoted(f.name) + " has " + std::to_string(s) + ")");
    if (f.pcie_bandwidth) out.pcie_bandwidth = *f.pcie_bandwidth;
    std::vector<level_spec> spec;
    for (const auto& lv : levels) spec.push_back({lv.name, lv.bandwidth, lv.latency});
    out.hierarchy = level_hierarchy(std::move(spec), sizes, !out.cube_mesh);
    if (typed_level < L) {
        const auto& lv = levels[typed_level];
        const std::size_t l = typed_level + 1, n = out.hierarchy.num_domains(l);
        if (lv.gpu_types.size() != 1 && lv.gpu_types.size() != n)
            config_fail(at(typed_level, "gpu_types"), std::to_string(lv.gpu_types.size()) + " GPU types for the " + std::to_string(n) +
                                                          " domains of level " + detail::quoted(lv.name) + " (give one for all, or one per domain)");
        const auto& h = out.hierarchy;
        for (std::size_t d = 0; d < h.num_domains(1); ++d) {
            const auto up = h.domain_of(l, h.first(1, d));
            out.domain_types.push_back(lv.gpu_types.size() == 1 ? lv.gpu_types[0] : lv.gpu_types[up]);
        }
    }
    return out;
}

}  // namespace gpuplace
