#pragma once
/// \file json/topology.hpp
/// JSON form of a topology (gpuplace/topology.hpp, gpuplace/topology_levels.hpp):
/// topology_config_from_json(), topology_from_json(), to_json(), and the presets written as levels
/// (gpuplace/data/topologies.hpp): topology_preset(), topology_preset_names(); topology presets of
/// one's own by name: register_topology(), GPUPLACE_REGISTER_TOPOLOGY.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../compiled.hpp"
#include "../detail/named_store.hpp"
#include "../topology.hpp"
#include "parse.hpp"

namespace gpuplace {

/// A topology preset of one's own (register_topology()): its name, what it is, and its entry in
/// the catalogue's form (gpuplace/data/topologies.hpp: "about", "levels", "parameters").
struct registered_topology {
    std::string name, about;
    detail::json entry;
};

namespace detail {
[[nodiscard]] inline named_store<registered_topology>& registered_topologies_store() {
    static named_store<registered_topology> s;
    return s;
}
}  // namespace detail

/// Registers a topology preset of one's own under `name`, written as the catalogue
/// (gpuplace/data/topologies.hpp) writes the built-in ones: `entry` is JSON text of an object with
/// "levels" (level 1 first, the root last, as a scenario's levels), optionally "about" (one
/// sentence) and "parameters" (keys a scenario may set beside "preset", each naming the level
/// whose fan-out it sets, e.g. {"racks": "spine"}). The name then works wherever a built-in
/// preset's does: a scenario's {"topology": {"preset": name, ...}} with its parameters and
/// "<level>_bandwidth" / "<level>_latency", --topology, topology_preset(), Python's scenarios;
/// the registry lists it under kind "topology". Checked now: ConfigError naming `name` and the
/// JSON path for bad levels or parameters, an empty name, a built-in preset's name or one
/// registered already. Returns true (for an initializer at namespace scope).
GPUPLACE_INLINE bool register_topology(const std::string& name, std::string_view entry);

/// Removes the topology registered under `name`; returns whether there was one (scenarios read
/// with it keep their levels).
inline bool unregister_topology(std::string_view name) { return detail::registered_topologies_store().remove(name); }

/// The topologies registered by name, in registration order.
[[nodiscard]] inline std::vector<std::shared_ptr<const registered_topology>> registered_topologies() {
    return detail::registered_topologies_store().all();
}

/// Registers a topology preset (register_topology()) when the program starts; at namespace scope.
#define GPUPLACE_REGISTER_TOPOLOGY(name, entry)                                                           \
    [[maybe_unused]] static const bool GPUPLACE_DETAIL_CONCAT(gpuplace_registered_topology_, __LINE__) = \
        ::gpuplace::register_topology(name, entry)

/// Reads a topology config, in one of three forms:
///  - a tree: {"preset": "dgx_a100"|"dgx1"|"proximity_drl"|"custom", "racks", "nodes_per_rack",
///    "gpus_per_node", "node_bandwidth", "rack_bandwidth", "spine_bandwidth", "node_latency",
///    "rack_latency", "spine_latency", "fabric": "switched"|"cube_mesh", "pcie_bandwidth",
///    "gpu_types": a type name (every node) or an array of them, one per rack or one per node (names
///    of the model zoo's GPU types, e.g. "v100")}; keys after the preset override it;
///  - levels: {"name": "...", "levels": [{"name", "fanout": n or [n per domain], "bandwidth",
///    "latency", "gpu_types": name or [name per domain], "fabric", "pcie_bandwidth"}, ...]}, level
///    1 first and the root last (topology_levels.hpp);
///  - a preset written as levels ("nvl72", "fat_tree", "heterogeneous"; topology_preset_names();
///    or one registered, register_topology()):
///    {"preset": "nvl72", "racks": 8}, its parameters and "<level>_bandwidth" / "<level>_latency"
///    beside it; read into its levels.
[[nodiscard]] GPUPLACE_INLINE topology_config topology_config_from_json(const detail::json& j, std::string_view path = "/topology");

/// The topology presets written as levels (gpuplace/data/topologies.hpp), in catalogue order.
[[nodiscard]] GPUPLACE_INLINE std::vector<std::string> topology_preset_names();

/// A topology preset as levels (named after it), e.g. topology_preset("nvl72"), a registered one
/// too (register_topology()); ConfigError naming
/// the known ones otherwise. The tree presets (dgx_a100, dgx1, proximity_drl) come as levels too:
/// the same hierarchy as TreeTopology's preset of the same name.
[[nodiscard]] GPUPLACE_INLINE topology_config topology_preset(std::string_view name);

/// What a preset is (its "about" sentence) and its parameters ("racks -> spine fan-out", ...).
[[nodiscard]] GPUPLACE_INLINE std::string topology_preset_about(std::string_view name);

/// The topology a command-line value names: JSON text (it starts with '{'), a preset (a tree
/// preset or one of topology_preset_names()), else a JSON file holding a topology object. Errors
/// name `source` (e.g. "--topology") and the JSON path.
[[nodiscard]] GPUPLACE_INLINE topology_config topology_config_of(const std::string& value, std::string_view source = "--topology");

/// Reads levels: a non-empty array of level objects (see topology_config_from_json()).
[[nodiscard]] GPUPLACE_INLINE std::vector<level_config> levels_from_json(const detail::json& j, std::string_view path);

/// The JSON of levels that levels_from_json() reads back to the same levels.
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const std::vector<level_config>& levels);

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
