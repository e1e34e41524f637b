#pragma once
/// \file json/scenario.hpp
/// JSON form of a whole scenario (gpuplace/config.hpp): scenario_from_json(), parse_scenario(),
/// load_scenario() (a scenario file), to_json(). This is the loading layer: the files a scenario
/// names (a zoo file, a JSON co-location profile) are read here, not by the env.

#include <string>
#include <string_view>

#include "../compiled.hpp"
#include "../config.hpp"
#include "colocation.hpp"
#include "comm.hpp"
#include "information.hpp"
#include "tenancy.hpp"
#include "topology.hpp"
#include "workload.hpp"
#include "zoo.hpp"
#include "parse.hpp"

namespace gpuplace {

/// Reads a scenario; every key is optional (defaults: config.hpp), unknown keys are errors.
[[nodiscard]] GPUPLACE_INLINE scenario scenario_from_json(const detail::json& j);

/// Parses a scenario from JSON text (source names it in errors).
[[nodiscard]] GPUPLACE_INLINE scenario parse_scenario(std::string_view text, std::string_view source = "<string>");

/// Reads a scenario file. Relative file paths in it (trace, zoo file, co-location profile) are
/// relative to the file's folder: they are made absolute (scenario::resolve_paths()).
[[nodiscard]] GPUPLACE_INLINE scenario load_scenario(const std::string& file);

/// The JSON that scenario_from_json() reads back to the same scenario.
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const scenario& s);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/scenario_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
