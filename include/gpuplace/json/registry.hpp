#pragma once
/// \file json/registry.hpp
/// The registry (gpuplace/registry.hpp) with what the JSON layer declares: the topology presets
/// written as levels (gpuplace/data/topologies.hpp) and those of one's own, the preset scenarios and
/// the workload kinds of one's own (workload_registry.hpp).

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "../registry.hpp"
#include "presets.hpp"
#include "topology.hpp"
#include "workload_registry.hpp"

namespace gpuplace {

/// Adds the topology presets (kind "topology") and the preset scenarios (kind "scenario") to the
/// registry, once.
inline void register_json_presets() {
    static const bool done = [] {
        for (const auto& n : topology_preset_names()) register_entry({"topology", n, topology_preset_about(n)});
        for (const auto& n : preset_names()) register_entry({"scenario", n, preset_about(n)});
        register_entry({"scenario", "philly:<file>", "one Philly-derived trace file at offered load 1.0 (philly_hidden:<file> too)"});
        return true;
    }();
    (void)done;
}

/// Every registry entry, the JSON layer's presets included, and the topologies, workload kinds and
/// scenarios of one's own after the built-in ones.
[[nodiscard]] inline std::vector<registry_entry> all_registry_entries() {
    register_json_presets();
    auto all = registry_entries();
    auto at_topology = std::find_if(all.rbegin(), all.rend(), [](const registry_entry& e) { return e.kind == "topology"; }).base();
    for (const auto& t : registered_topologies()) at_topology = std::next(all.insert(at_topology, {"topology", t->name, topology_preset_about(t->name)}));
    auto at = std::find_if(all.rbegin(), all.rend(), [](const registry_entry& e) { return e.kind == "workload"; }).base();
    for (const auto& k : registered_workload_kinds()) at = std::next(all.insert(at, {"workload", k->name, k->about}));
    at = std::find_if(all.rbegin(), all.rend(), [](const registry_entry& e) { return e.kind == "scenario"; }).base();
    for (const auto& r : registered_scenarios()) at = std::next(all.insert(at, {"scenario", r->name, r->about}));
    return all;
}

}  // namespace gpuplace
