#pragma once
/// \file json/presets.hpp
/// The preset scenarios by name: preset_scenario(), is_preset_name(); their JSON texts are the
/// catalogue of gpuplace/data/presets.hpp.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../data/presets.hpp"
#include "../detail/named_store.hpp"
#include "scenario.hpp"

namespace gpuplace {

/// A scenario registered by name (register_scenario()): its name, what it is, its JSON.
struct registered_scenario {
    std::string name, about;
    json doc;
};

namespace detail {
[[nodiscard]] inline named_store<registered_scenario>& registered_scenarios_store() {
    static named_store<registered_scenario> s;
    return s;
}
}  // namespace detail

/// Registers scenario `doc` (a scenario's JSON, checked now: a ConfigError naming the path) under
/// `name`: preset_scenario(name), a program's --scenario and Python's scenario names then take it,
/// and the registry lists it under kind "scenario". Its "name" becomes `name`. ConfigError for an
/// empty name, one with ':' or '/', a preset's name or one registered already. Returns true (for
/// an initializer at namespace scope).
inline bool register_scenario(const std::string& name, const std::string& about, json doc) {
    if (name.empty() || name.find_first_of(":/\\") != std::string::npos)
        throw ConfigError("scenario name \"" + name + "\": empty or with ':', '/' or '\\' (they name a trace file or a path)");
    for (const auto& p : preset_names())
        if (p == name) throw ConfigError("scenario \"" + name + "\" is a preset");
    if (!doc.is_object()) throw ConfigError("scenario \"" + name + "\": expected a scenario object, got " + detail::short_dump(doc));
    doc["name"] = name;
    (void)scenario_from_json(doc);  // checked now
    auto entry = std::make_shared<const registered_scenario>(registered_scenario{name, about, std::move(doc)});
    detail::registered_scenarios_store().add<ConfigError>(std::move(entry), "scenario");
    return true;
}

/// Removes the scenario registered under `name`; returns whether there was one.
inline bool unregister_scenario(std::string_view name) { return detail::registered_scenarios_store().remove(name); }

/// The registered scenarios, in registration order.
[[nodiscard]] inline std::vector<std::shared_ptr<const registered_scenario>> registered_scenarios() {
    return detail::registered_scenarios_store().all();
}

/// A named preset scenario: "default", "proximity_drl", "colocation", "philly", "heterogeneous",
/// "philly_hidden", "nvl72", "philly:<file>" or "philly_hidden:<file>".
[[nodiscard]] GPUPLACE_INLINE scenario preset_scenario(std::string_view name);

/// Whether a name is a preset (preset_names(), "philly:<file>" or "philly_hidden:<file>") or a
/// registered scenario.
[[nodiscard]] GPUPLACE_INLINE bool is_preset_name(std::string_view name);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/presets_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
