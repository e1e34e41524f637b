#pragma once
/// \file json/impl/presets_inl.hpp
/// The definitions json/presets.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <string>
#include <string_view>

#include "../../data/presets.hpp"
#include "../scenario.hpp"
#include "../presets.hpp"

namespace gpuplace {

GPUPLACE_INLINE scenario preset_scenario(std::string_view name) {
    if (name == "default") return parse_scenario(default_scenario_json, "default scenario");
    if (name == "proximity_drl") return parse_scenario(proximity_drl_scenario_json, "proximity_drl scenario");
    if (name == "colocation") return parse_scenario(colocation_scenario_json, "colocation scenario");
    if (name == "heterogeneous") return parse_scenario(heterogeneous_scenario_json, "heterogeneous scenario");
    if (name == "heterogeneous_gavel") return parse_scenario(heterogeneous_gavel_scenario_json, "heterogeneous_gavel scenario");
    if (name == "elastic") return parse_scenario(elastic_scenario_json, "elastic scenario");
    if (name == "tenants") return parse_scenario(tenants_scenario_json, "tenants scenario");
    if (name == "philly_tenants") return parse_scenario(philly_tenants_scenario_json, "philly_tenants scenario");
    if (name == "spot") return parse_scenario(spot_scenario_json, "spot scenario");
    if (name == "deadlines") return parse_scenario(deadlines_scenario_json, "deadlines scenario");
    if (name == "nvl72") return parse_scenario(nvl72_scenario_json, "nvl72 scenario");
    if (name == "failures") {
        auto j = detail::parse_json(philly_scenario_json, "philly scenario");
        for (const auto& f : philly_training_files()) j["workload"]["path"].push_back("$GPUPLACE_DATA/philly/" + f + ".trace");
        j.merge_patch(detail::parse_json(failures_overrides_json, "failures scenario"));
        j["name"] = "failures";
        return scenario_from_json(j);
    }
    const bool hidden = name == "philly_hidden" || name.starts_with("philly_hidden:");
    if (hidden || name == "philly" || name.starts_with("philly:")) {
        const std::string_view base = hidden ? "philly_hidden" : "philly";
        auto j = detail::parse_json(philly_scenario_json, "philly scenario");
        auto& w = j["workload"];
        if (name == base) {
            for (const auto& f : philly_training_files()) w["path"].push_back("$GPUPLACE_DATA/philly/" + f + ".trace");
        } else {
            const auto file = std::string(name.substr(base.size() + 1));
            if (file.empty() || file.find_first_of("/\\.") != std::string::npos)
                throw ConfigError("scenario preset \"" + std::string(name) + "\": expected " + std::string(base) +
                                  ":<file>, a file of data/philly/ without its extension (e.g. " + std::string(base) + ":0e4a51)");
            w["path"] = "$GPUPLACE_DATA/philly/" + file + ".trace";
            w["target_load"] = 1.0;
        }
        if (hidden) {
            j.merge_patch(detail::parse_json(philly_hidden_overrides_json, "philly_hidden scenario"));
            for (const auto& f : philly_training_files()) j["durations"]["sample_files"].push_back("$GPUPLACE_DATA/philly/" + f + ".trace");
        }
        j["name"] = std::string(name);
        return scenario_from_json(j);
    }
    if (const auto r = detail::registered_scenarios_store().find(name)) return scenario_from_json(r->doc);  // register_scenario()
    std::string known;
    for (const auto& p : preset_names()) known += (known.empty() ? "" : ", ") + p;
    known += ", philly:<file>, philly_hidden:<file>";
    for (const auto& r : registered_scenarios()) known += ", " + r->name;
    throw ConfigError("unknown scenario preset \"" + std::string(name) + "\" (allowed: " + known + ")");
}

GPUPLACE_INLINE bool is_preset_name(std::string_view name) {
    for (const auto& p : preset_names())
        if (name == p) return true;
    return name.starts_with("philly:") || name.starts_with("philly_hidden:") || detail::registered_scenarios_store().find(name) != nullptr;
}

}  // namespace gpuplace
