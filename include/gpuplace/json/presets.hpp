#pragma once
/// \file json/presets.hpp
/// The preset scenarios by name: preset_scenario(), is_preset_name(); their JSON texts are the
/// catalogue of gpuplace/data/presets.hpp.

#include <string>
#include <string_view>

#include "../data/presets.hpp"
#include "scenario.hpp"

namespace gpuplace {

/// A named preset scenario: "default", "proximity_drl", "colocation", "philly", "heterogeneous",
/// "philly_hidden", "nvl72", "philly:<file>" or "philly_hidden:<file>".
[[nodiscard]] GPUPLACE_INLINE scenario preset_scenario(std::string_view name);

/// Whether a name is a preset (preset_names(), "philly:<file>" or "philly_hidden:<file>").
[[nodiscard]] GPUPLACE_INLINE bool is_preset_name(std::string_view name);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/presets_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
