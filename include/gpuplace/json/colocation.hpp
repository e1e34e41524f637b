#pragma once
/// \file json/colocation.hpp
/// JSON form of co-location options and profiles (gpuplace/colocation.hpp): colocation_from_json(),
/// read_json_profile(), to_json().

#include <string>
#include <string_view>

#include "../colocation.hpp"
#include "../compiled.hpp"
#include "../model_zoo.hpp"
#include "parse.hpp"

namespace gpuplace {

/// Reads co-location options: {"enabled", "max_jobs_per_gpu" (1..64), "gpu_memory_gb", "profile"}.
[[nodiscard]] GPUPLACE_INLINE colocation_config colocation_from_json(const detail::json& j, std::string_view path = "/colocation");

[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const colocation_config& c);

/// Reads a JSON co-location profile {"<model>": {"<other>": factor}} (`file` already resolved)
/// into `base`, whose size matches the zoo; errors name file:/path. interference_table::load_profile() calls it.
[[nodiscard]] GPUPLACE_INLINE interference_table read_json_profile(const std::string& file, const ModelZoo& zoo, interference_table base);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/colocation_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
