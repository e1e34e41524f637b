#pragma once
/// \file json/information.hpp
/// JSON form of what the scheduler knows and may do (gpuplace/information.hpp): the "durations" and
/// "preemption" keys of a scenario, and its "rounds" (gpuplace/round_config.hpp).

#include <string_view>

#include "../compiled.hpp"
#include "../information.hpp"
#include "../round_config.hpp"
#include "parse.hpp"

namespace gpuplace {

/// Reads {"mode": "oracle"|"hidden"|"predicted", "error": "lognormal"|"model_mean", "sigma",
/// "sample_files": [...]}.
[[nodiscard]] GPUPLACE_INLINE durations_config durations_from_json(const detail::json& j, std::string_view path = "/durations");
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const durations_config& d);

/// Reads {"enabled", "restart_overhead", "checkpoint_interval", "round", "thresholds": [...],
/// "starvation", "gittins_quantum"}.
[[nodiscard]] GPUPLACE_INLINE preemption_config preemption_from_json(const detail::json& j, std::string_view path = "/preemption");
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const preemption_config& p);

/// Reads {"enabled", "policy", "length", "min_reset_interval", "restore": {"seconds", "per_gb",
/// "models": {"<model>": seconds, ...}}}. The policy name is checked where the rounds run
/// (round_env.hpp), against the names the build knows.
[[nodiscard]] GPUPLACE_INLINE rounds_config rounds_from_json(const detail::json& j, std::string_view path = "/rounds");
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const rounds_config& r);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/information_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
