#pragma once
/// \file json/tenancy.hpp
/// JSON form of a scenario's tenants, spot class and deadlines (gpuplace/tenancy.hpp): the keys
/// "tenants", "spot" and "deadlines". Errors name the JSON path and the value.

#include <string_view>

#include "../compiled.hpp"
#include "../tenancy.hpp"
#include "parse.hpp"

namespace gpuplace {

/// Reads {"enabled", "field", "quotas": {"<tenant>": GPUs or share, ...}, "share": bool,
/// "weights": {"<tenant>": weight, ...}}; "enabled" defaults to true when the key is given.
[[nodiscard]] GPUPLACE_INLINE tenants_config tenants_from_json(const detail::json& j, std::string_view path = "/tenants");
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const tenants_config& t);

/// Reads {"enabled", "field", "value"}; "enabled" defaults to true when the key is given.
[[nodiscard]] GPUPLACE_INLINE spot_config spot_from_json(const detail::json& j, std::string_view path = "/spot");
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const spot_config& s);

/// Reads {"enabled", "field", "factor": [lo, hi]}; "enabled" defaults to true when the key is given.
[[nodiscard]] GPUPLACE_INLINE deadlines_config deadlines_from_json(const detail::json& j, std::string_view path = "/deadlines");
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const deadlines_config& d);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/tenancy_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
