#pragma once
/// \file json/parse.hpp
/// The JSON value type gpuplace reads and writes (nlohmann::json) and its strict parser: the one
/// parser of every JSON document gpuplace reads (scenarios, zoos, profiles, configs, checkpoints).

#include <string_view>

#include "util.hpp"

namespace gpuplace {

/// A JSON value (nlohmann::json): what the readers of gpuplace/json.hpp take and to_json() returns.
using detail::json;

/// parse_json(text, source): parses JSON text strictly. A syntax error, a number too large for a
/// double, a binary file or a key that appears twice in an object (nlohmann would keep the last
/// value silently) is a ConfigError naming `source` and the byte offset or the JSON path.
using detail::parse_json;

}  // namespace gpuplace
