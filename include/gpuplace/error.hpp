#pragma once
/// \file error.hpp
/// The exception hierarchy of gpuplace. Every message names the bad value and where it came from.

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuplace {

/// Base of every exception thrown by gpuplace.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A configuration value is missing, unknown or out of range. The message names the JSON path.
class ConfigError : public Error {
public:
    using Error::Error;
};

/// An action was not valid in the current state (masked GPU, out of range, DEFER not allowed).
/// The environment is left exactly as it was.
class InvalidAction : public Error {
public:
    using Error::Error;
};

/// A trace or table file could not be read. The message names file:line and column.
class TraceError : public Error {
public:
    using Error::Error;
};

/// A checkpoint is truncated, corrupted or of an unknown version.
class CheckpointError : public Error {
public:
    using Error::Error;
};

/// An operation was called in a state that does not allow it (e.g. step() before reset()).
class StateError : public Error {
public:
    using Error::Error;
};

namespace detail {

/// Appends a key to a JSON path ("/topology" + "racks" -> "/topology/racks").
[[nodiscard]] inline std::string join_path(std::string_view path, std::string_view key) {
    std::string out(path);
    out += '/';
    out += key;
    return out;
}

/// Throws the ConfigError of a bad value at a JSON path: "config <path>: <what>".
[[noreturn]] inline void config_fail(std::string_view path, std::string_view what) {
    throw ConfigError("config " + std::string(path.empty() ? "/" : path) + ": " + std::string(what));
}

}  // namespace detail

}  // namespace gpuplace
