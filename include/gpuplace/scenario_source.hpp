#pragma once
/// \file scenario_source.hpp
/// One rule for a string that names a scenario, shared by the programs and the Python package:
///  1. JSON text, when its first non-blank character is '{';
///  2. else a preset name (preset_names(), "philly:<file>" or "philly_hidden:<file>");
///  3. else the path of a scenario file ("$GPUPLACE_DATA/..." too; with a base folder, a relative
///     path is under it), which must exist.
/// A preset wins over a file of the same name: write "./default" for a file called "default".
/// Anything else is a ConfigError that names what was tried.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "data.hpp"
#include "detail/enum_names.hpp"
#include "error.hpp"
#include "json.hpp"

namespace gpuplace {

/// What a scenario string names (scenario_source_of()).
enum class scenario_source_kind : std::uint8_t {
    json_text,  ///< a JSON object, e.g. {"topology": {"preset": "dgx1"}}
    preset,     ///< a preset name: default, proximity_drl, ..., philly:<file>
    file,       ///< the path of a JSON scenario file
};

template <>
struct detail::enum_names<scenario_source_kind> {
    static constexpr std::array<std::pair<scenario_source_kind, std::string_view>, 3> values{
        {{scenario_source_kind::json_text, "json_text"}, {scenario_source_kind::preset, "preset"},
         {scenario_source_kind::file, "file"}}};
};
[[nodiscard]] inline std::string_view to_string(scenario_source_kind k) noexcept { return detail::enum_name(k); }

namespace detail {

[[nodiscard]] inline std::string_view trim_blank(std::string_view s) noexcept {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace detail

/// How read_scenario() takes `source` (see the rule above); a ConfigError naming what was tried
/// when it is none of them: not JSON text, not a preset (listing them), no such file.
[[nodiscard]] inline scenario_source_kind scenario_source_of(std::string_view source, std::string_view base_dir = {}) {
    const auto s = detail::trim_blank(source);
    if (s.starts_with('{')) return scenario_source_kind::json_text;
    if (s.empty())
        throw ConfigError("scenario \"" + std::string(source) + "\": empty (expected a preset name, a scenario file or JSON text)");
    if (is_preset_name(s)) return scenario_source_kind::preset;
    const auto path = resolve_data_path(s, base_dir);
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return scenario_source_kind::file;
    std::string presets;
    for (const auto& p : preset_names()) presets += p + ", ";
    throw ConfigError("scenario \"" + std::string(s) + "\": not JSON text (it does not start with '{'), not a preset (" +
                      presets + "philly:<file>, philly_hidden:<file>) and not a file (no file \"" + display_path(path) + "\")");
}

/// The scenario a string names: JSON text, a preset name or a scenario file, by the rule above.
/// Relative paths inside a scenario file are under that file's folder (load_scenario()); with
/// `base_dir`, a relative file name is under that folder too. Errors name the source: JSON
/// syntax and values (with the JSON path), an unknown preset, a file that cannot be read.
[[nodiscard]] inline scenario read_scenario(std::string_view source, std::string_view base_dir = {}) {
    switch (scenario_source_of(source, base_dir)) {
        case scenario_source_kind::json_text: return parse_scenario(source, "scenario JSON text");
        case scenario_source_kind::preset: return preset_scenario(detail::trim_blank(source));
        case scenario_source_kind::file: break;
    }
    return load_scenario(resolve_data_path(detail::trim_blank(source), base_dir));
}

}  // namespace gpuplace
