#pragma once
/// \file trace_registry.hpp
/// Trace formats of one's own, by name. A reader (trace.hpp's trace_reader) turns a file's rows
/// into jobs and their declared fields, the types the built-in readers make; registered with one
/// call,
///
///     gpuplace::register_trace_format("tsv_jobs", "submit, GPUs, seconds, model name; tab-separated", my_reader);
///
/// or at namespace scope with GPUPLACE_REGISTER_TRACE_FORMAT("tsv_jobs", "...", my_reader), the name
/// is then a trace workload's "format" in a scenario (the workload's options, declared job fields
/// and errors as for the built-in formats), in the program that registered it; the registry
/// (registry.hpp) lists it under kind "trace_format". A workload looks the name up once, when its
/// env is built (the trace is read then).

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "detail/named_store.hpp"
#include "detail/enum_names.hpp"
#include "error.hpp"
#include "trace.hpp"

namespace gpuplace {

/// A registered trace format: its name, what it is, its reader.
struct registered_trace_format {
    std::string name, about;
    trace_reader reader;
};

namespace detail {
[[nodiscard]] inline named_store<registered_trace_format>& trace_formats() {
    static named_store<registered_trace_format> s;
    return s;
}
}  // namespace detail

/// Registers `reader` as trace format `name`. Returns true (for an initializer at namespace
/// scope). ConfigError for an empty name, a built-in format's name, one registered already, or no
/// reader.
inline bool register_trace_format(const std::string& name, const std::string& about, trace_reader reader) {
    if (name.empty()) throw ConfigError("trace format name \"\": empty");
    if (detail::enum_from_name<trace_format>(name)) throw ConfigError("trace format \"" + name + "\" is a built-in format");
    if (!reader) throw ConfigError("trace format \"" + name + "\": no reader");
    detail::trace_formats().add<ConfigError>(std::make_shared<const registered_trace_format>(registered_trace_format{name, about, std::move(reader)}),
                                "trace format");
    return true;
}

/// Removes the format registered under `name`; returns whether there was one. For a test or a
/// plugin that must leave the registry as it found it.
inline bool unregister_trace_format(std::string_view name) {
    return detail::trace_formats().remove(name);
}

/// The registered formats, in registration order.
[[nodiscard]] inline std::vector<std::shared_ptr<const registered_trace_format>> registered_trace_formats() {
    return detail::trace_formats().all();
}

/// The format registered under `name`, or null.
[[nodiscard]] inline std::shared_ptr<const registered_trace_format> find_trace_format(std::string_view name) {
    return detail::trace_formats().find(name);
}

/// Every trace format's name: the built-in ones, then the registered ones.
[[nodiscard]] inline std::string trace_format_names() {
    std::string s = detail::enum_name_list<trace_format>();
    for (const auto& f : registered_trace_formats()) s += ", " + f->name;
    return s;
}

/// The format registered under `name`; a ConfigError naming `where`, the value and every format
/// otherwise.
[[nodiscard]] inline std::shared_ptr<const registered_trace_format> require_trace_format(std::string_view name,
                                                                                       std::string_view where = "/workload/format") {
    if (auto f = find_trace_format(name)) return f;
    throw ConfigError("config " + std::string(where) + ": unknown trace format \"" + std::string(name) + "\" (allowed: " +
                      trace_format_names() + ")");
}

/// Registers a trace format (register_trace_format()) when the program starts; at namespace scope.
#define GPUPLACE_REGISTER_TRACE_FORMAT(name, about, reader)                                                     \
    [[maybe_unused]] static const bool GPUPLACE_DETAIL_CONCAT(gpuplace_registered_trace_format_, __LINE__) = \
        ::gpuplace::register_trace_format(name, about, reader)

}  // namespace gpuplace
