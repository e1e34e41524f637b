#pragma once
/// \file json/topology.hpp
/// JSON form of a topology (gpuplace/topology.hpp): topology_config_from_json(), topology_from_json(),
/// to_json().

#include <string_view>

#include "../compiled.hpp"
#include "../topology.hpp"
#include "parse.hpp"

namespace gpuplace {

/// Reads a topology config: {"preset": "dgx_a100"|"dgx1"|"proximity_drl"|"custom", "racks",
/// "nodes_per_rack", "gpus_per_node", "node_bandwidth", "rack_bandwidth", "spine_bandwidth",
/// "node_latency", "rack_latency", "spine_latency", "fabric": "switched"|"cube_mesh",
/// "pcie_bandwidth", "gpu_types": a type name (every node) or an array of them, one per rack or one
/// per node (names of the model zoo's GPU types, e.g. "v100")}. Keys after the preset override it.
[[nodiscard]] GPUPLACE_INLINE topology_config topology_config_from_json(const detail::json& j, std::string_view path = "/topology");

/// Reads a topology (see topology_config_from_json()).
[[nodiscard]] GPUPLACE_INLINE TreeTopology topology_from_json(const detail::json& j, std::string_view path = "/topology");

/// The keys a topology config sets.
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const topology_config& c);

/// The JSON that topology_from_json() reads back to an equal topology.
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const TreeTopology& t);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/topology_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
