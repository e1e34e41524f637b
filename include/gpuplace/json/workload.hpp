#pragma once
/// \file json/workload.hpp
/// JSON form of a workload (gpuplace/workload.hpp) and of trace options (gpuplace/trace.hpp):
/// workload_from_json(), trace_options_from_json(), to_json().

#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../compiled.hpp"
#include "../job_fields.hpp"
#include "../trace.hpp"
#include "../workload.hpp"
#include "parse.hpp"

namespace gpuplace {

/// Reads trace options from JSON keys of `j` (the workload object): "window": [start, end],
/// "max_jobs", "time_scale", "target_load", "max_gpus", "drop_oversized", "skip_bad_rows",
/// "model", "model_mix", "columns" (the reader's columns, or the declared `fields`, to the file's:
/// {"submit_time": "submission_time", "num_gpus": {"column": "num_gpu"}, "duration": {"column":
/// "runtime", "unit": "minutes"}}; "gpus" is num_gpus) and "ignore_columns". Errors name the JSON path.
[[nodiscard]] GPUPLACE_INLINE trace_options trace_options_from_json(const detail::json& j, std::string_view path,
                                                                    const std::vector<job_field>& fields = {});

/// The JSON keys trace_options_from_json reads back to the same options.
GPUPLACE_INLINE void trace_options_to_json(const trace_options& o, detail::json& j);

namespace detail {
/// Reads a workload's optional "models": {"<model name>": weight >= 0, ...} into `out`.
GPUPLACE_INLINE void read_model_weights(const json& j, std::string_view path, std::vector<std::pair<std::string, double>>& out);

/// Each built-in kind's keys of a workload's JSON read into `c` (its kind set), and written back.
GPUPLACE_INLINE void read_trace_workload(const json& j, std::string_view path, const std::vector<job_field>& fields, workload_config& c);
GPUPLACE_INLINE void read_mixture_workload(const json& j, std::string_view path, const std::vector<job_field>& fields, workload_config& c);
GPUPLACE_INLINE void read_proximity_drl_workload(const json& j, std::string_view path, const std::vector<job_field>& fields,
                                                 workload_config& c);
GPUPLACE_INLINE void read_generated_workload(const json& j, std::string_view path, const std::vector<job_field>& fields, workload_config& c);
GPUPLACE_INLINE void write_trace_workload(const workload_config& w, json& j);
GPUPLACE_INLINE void write_mixture_workload(const workload_config& w, json& j);
GPUPLACE_INLINE void write_proximity_drl_workload(const workload_config& w, json& j);
GPUPLACE_INLINE void write_synthetic_workload(const workload_config& w, json& j);
GPUPLACE_INLINE void write_jobs_workload(const workload_config& w, json& j);

/// The built-in kinds' readers and writers, in builtin_workload_kinds' order (workload.hpp).
using workload_reader_fn = void (*)(const json&, std::string_view, const std::vector<job_field>&, workload_config&);
using workload_writer_fn = void (*)(const workload_config&, json&);
inline constexpr workload_reader_fn builtin_workload_readers[] = {read_generated_workload, read_proximity_drl_workload, read_trace_workload,
                                                                  read_generated_workload, read_mixture_workload};
inline constexpr workload_writer_fn builtin_workload_writers[] = {write_synthetic_workload, write_proximity_drl_workload,
                                                                  write_trace_workload, write_jobs_workload, write_mixture_workload};
static_assert(std::size(builtin_workload_readers) == std::size(builtin_workload_kinds) &&
              std::size(builtin_workload_writers) == std::size(builtin_workload_kinds));
}  // namespace detail

/// Reads a workload: "kind" ("synthetic", default; "proximity_drl", "trace", "jobs", "mixture", or a
/// kind of one's own, json/workload_registry.hpp, whose factory reads the rest) and the kind's keys. A synthetic "load" or a GPU count's weight may be a range [lo, hi], and a
/// trace's "target_load" too (drawn per episode); a trace's "path" may be a list of files. A csv
/// trace's "columns" maps the reader's columns (and `fields`) to the file's, with units;
/// "ignore_columns" leaves some unread; "model_mix" says how rows without a model get one. A
/// `jobs` entry's "model" is a zoo name or an id, and it may give the declared `fields`; any other
/// key is refused, naming it.
[[nodiscard]] GPUPLACE_INLINE workload_config workload_from_json(const detail::json& j, std::string_view path = "/workload",
                                                                 const std::vector<job_field>& fields = {});

/// The JSON workload_from_json() reads back to the same workload (a kind of one's own: its JSON as read).
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const workload_config& w);

/// Reads declared job fields (scenario key "job_fields"): an array of known field names
/// ("tenant", "priority", "deadline", "min_gpus", "max_gpus") and objects {"name", "type":
/// "number"|"category", "default", "categories" (closes the list), "range": [lo, hi] (a number's
/// range in the observation), "observe": true|false}.
[[nodiscard]] GPUPLACE_INLINE std::vector<job_field> job_fields_from_json(const detail::json& j, std::string_view path = "/job_fields");

/// The JSON job_fields_from_json() reads back to the same fields.
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const std::vector<job_field>& fields);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/workload_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
