#pragma once
/// \file json/impl/topology_inl.hpp
/// The definitions json/topology.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <string_view>

#include "../../topology.hpp"
#include "../parse.hpp"
#include "../topology.hpp"

namespace gpuplace {

GPUPLACE_INLINE topology_config topology_config_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path,
               {"preset", "racks", "nodes_per_rack", "gpus_per_node", "node_bandwidth", "rack_bandwidth", "spine_bandwidth",
                "node_latency", "rack_latency", "spine_latency", "fabric", "pcie_bandwidth", "gpu_types"});
    topology_config c;
    if (auto it = j.find("gpu_types"); it != j.end()) {
        const auto p = join_path(path, "gpu_types");
        c.gpu_types.emplace();
        if (it->is_string()) c.gpu_types->push_back(it->get<std::string>());
        else if (it->is_array() && !it->empty()) {
            for (std::size_t i = 0; i < it->size(); ++i) {
                if (!(*it)[i].is_string()) config_fail(join_path(p, std::to_string(i)), "expected a GPU type name, got " + short_dump((*it)[i]));
                c.gpu_types->push_back((*it)[i].get<std::string>());
            }
        } else
            config_fail(p, "expected a GPU type name or a non-empty array of them (one per rack or per node), got " + short_dump(*it));
    }
    auto str = [&](const char* key, std::optional<std::string>& out) {
        if (!j.contains(key)) return;
        out.emplace();
        read_string(j, path, key, *out);
    };
    auto integer = [&](const char* key, std::optional<std::size_t>& out, long long hi) {
        if (!j.contains(key)) return;
        out.emplace();
        read_int(j, path, key, *out, 1, hi);
    };
    auto number = [&](const char* key, std::optional<double>& out, double lo) {
        if (!j.contains(key)) return;
        out.emplace();
        read_number(j, path, key, *out, lo);
    };
    str("preset", c.preset);
    integer("racks", c.racks, 1 << 16);
    integer("nodes_per_rack", c.nodes_per_rack, 1 << 16);
    integer("gpus_per_node", c.gpus_per_node, 1 << 12);
    number("node_bandwidth", c.node_bandwidth, 1e-9);
    number("rack_bandwidth", c.rack_bandwidth, 1e-9);
    number("spine_bandwidth", c.spine_bandwidth, 1e-9);
    number("pcie_bandwidth", c.pcie_bandwidth, 1e-9);
    number("node_latency", c.node_latency, 0.0);
    number("rack_latency", c.rack_latency, 0.0);
    number("spine_latency", c.spine_latency, 0.0);
    str("fabric", c.fabric);
    return c;
}

GPUPLACE_INLINE TreeTopology topology_from_json(const detail::json& j, std::string_view path) {
    return TreeTopology::from_config(topology_config_from_json(j, path), path);
}

GPUPLACE_INLINE detail::json to_json(const topology_config& c) {
    detail::json j = detail::json::object();
    auto put = [&](const char* key, const auto& v) {
        if (v) j[key] = *v;
    };
    put("preset", c.preset);
    put("racks", c.racks);
    put("nodes_per_rack", c.nodes_per_rack);
    put("gpus_per_node", c.gpus_per_node);
    put("node_bandwidth", c.node_bandwidth);
    put("rack_bandwidth", c.rack_bandwidth);
    put("spine_bandwidth", c.spine_bandwidth);
    put("node_latency", c.node_latency);
    put("rack_latency", c.rack_latency);
    put("spine_latency", c.spine_latency);
    put("fabric", c.fabric);
    put("pcie_bandwidth", c.pcie_bandwidth);
    put("gpu_types", c.gpu_types);
    return j;
}

GPUPLACE_INLINE detail::json to_json(const TreeTopology& t) {
    const auto& p = t.params();
    detail::json j = {{"preset", "custom"},
            {"racks", p.racks},
            {"nodes_per_rack", p.nodes_per_rack},
            {"gpus_per_node", p.gpus_per_node},
            {"node_bandwidth", p.node_bandwidth},
            {"rack_bandwidth", p.rack_bandwidth},
            {"spine_bandwidth", p.spine_bandwidth},
            {"node_latency", p.node_latency},
            {"rack_latency", p.rack_latency},
            {"spine_latency", p.spine_latency},
            {"fabric", p.fabric == node_fabric::cube_mesh ? "cube_mesh" : "switched"},
            {"pcie_bandwidth", p.pcie_bandwidth}};
    if (!p.node_types.empty()) j["gpu_types"] = p.node_types;
    return j;
}

}  // namespace gpuplace
