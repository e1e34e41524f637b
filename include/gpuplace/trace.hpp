#pragma once
/// \file trace.hpp
/// Trace readers: Gavel's Philly-derived job traces, Alibaba's openb pod lists and a plain CSV
/// schema, turned into TrainingJobs of a model zoo. Options select a time window or the first N
/// jobs, scale time, compress arrivals to a target load and cap GPU requests to fit the cluster.
///
/// A bad row (missing field, non-number, negative time, zero GPUs, unknown model) is a TraceError
/// naming "file:line:column" (column = 1-based character position of the field); with
/// trace_options::skip_bad_rows such rows are skipped and counted instead.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "compiled.hpp"
#include "detail/enum_names.hpp"
#include "error.hpp"
#include "job.hpp"
#include "job_fields.hpp"
#include "model_zoo.hpp"

namespace gpuplace {

/// File formats the readers understand.
enum class trace_format : std::uint8_t {
    philly,  ///< Gavel's Philly-derived .trace: tab-separated, 7 fields, no header
    openb,   ///< Alibaba cluster-trace-gpu-v2023 openb_pod_list_*.csv
    csv,     ///< header "submit_time,num_gpus,duration|steps[,model][,gpu_fraction]", or any names mapped by trace_options::columns
    registered,  ///< a reader registered by name (trace_registry.hpp; workload_config::format_name), not in the name table
};

template <>
struct detail::enum_names<trace_format> {
    static constexpr std::array<std::pair<trace_format, std::string_view>, 3> values{
        {{trace_format::philly, "philly"}, {trace_format::openb, "openb"}, {trace_format::csv, "csv"}}};
};
[[nodiscard]] inline std::string_view to_string(trace_format f) noexcept { return detail::enum_name(f); }

/// Parses "philly", "openb" or "csv"; throws ConfigError naming `path` otherwise.
[[nodiscard]] inline trace_format parse_trace_format(std::string_view name, std::string_view path = "/workload/format") {
    if (const auto f = detail::enum_from_name<trace_format>(name)) return *f;
    detail::config_fail(path, "unknown trace format \"" + std::string(name) + "\" (allowed: " + detail::enum_name_list<trace_format>() + ")");
}

/// The latest time a trace may name, in seconds (about 317 years: a Unix timestamp in seconds fits;
/// one in milliseconds does not). Submit, creation, scheduling and deletion times above it are row errors.
inline constexpr double max_trace_time = 1e10;
/// The shortest job a trace may hold: its duration (or its steps at the model's consolidated
/// throughput) must be at least this many seconds, and at most max_trace_time.
inline constexpr double min_job_duration = 1e-3;
/// The range of trace_options::time_scale (JSON "time_scale", gpuplace-eval --time-scale).
inline constexpr double min_time_scale = 1e-12, max_time_scale = 1e12;

/// What a trace does with a job whose model has no measured throughput at its GPU count (the zoo
/// measures 1, 2, 4 and 8 GPUs, some models 1 only): trace_options::unmeasured.
enum class unmeasured_size : std::uint8_t {
    /// keep it, at the throughput ModelProfile::at() gives: the per-GPU throughput interpolated
    /// linearly between the measured counts around it, held at the largest measured count's above
    /// it (so linear scaling past the largest measurement); counted in trace::unmeasured
    extrapolate,
    drop,    ///< leave it out, counted in trace::unmeasured
    refuse,  ///< a row error (TraceError naming file:line:column), or a bad row with skip_bad_rows
};

template <>
struct detail::enum_names<unmeasured_size> {
    static constexpr std::array<std::pair<unmeasured_size, std::string_view>, 3> values{
        {{unmeasured_size::extrapolate, "extrapolate"}, {unmeasured_size::drop, "drop"}, {unmeasured_size::refuse, "refuse"}}};
};
[[nodiscard]] inline std::string_view to_string(unmeasured_size u) noexcept { return detail::enum_name(u); }
/// Parses "extrapolate", "drop" or "refuse"; throws ConfigError naming `path` otherwise.
[[nodiscard]] inline unmeasured_size parse_unmeasured_size(std::string_view name, std::string_view path = "/workload/unmeasured") {
    if (const auto u = detail::enum_from_name<unmeasured_size>(name)) return *u;
    detail::config_fail(path, "unknown value \"" + std::string(name) + "\" (allowed: " + detail::enum_name_list<unmeasured_size>() + ")");
}
/// Whether model m of `zoo` has a measured throughput at exactly k GPUs.
[[nodiscard]] inline bool measured_at(const ModelZoo& zoo, model_id m, std::uint32_t k) noexcept {
    for (const auto& p : zoo[m].points)
        if (p.gpus == k) return true;
    return false;
}
/// How a csv trace's time column is written (trace_column::unit): a number of seconds,
/// milliseconds, minutes or hours, or a date and time ("2017-10-03 04:40:25", "T" between them
/// and a trailing "Z" allowed, fractions of a second too; read as UTC).
enum class time_unit : std::uint8_t { seconds, milliseconds, minutes, hours, timestamp };

template <>
struct detail::enum_names<time_unit> {
    static constexpr std::array<std::pair<time_unit, std::string_view>, 5> values{
        {{time_unit::seconds, "seconds"}, {time_unit::milliseconds, "milliseconds"}, {time_unit::minutes, "minutes"},
         {time_unit::hours, "hours"}, {time_unit::timestamp, "timestamp"}}};
};
[[nodiscard]] inline std::string_view to_string(time_unit u) noexcept { return detail::enum_name(u); }

/// Where a csv trace holds one of the reader's columns (trace_options::columns): the column's
/// name in the file's header and, for submit_time and duration, its unit.
struct trace_column {
    std::string role;     ///< the reader's name: submit_time, num_gpus, duration, steps, model, gpu_fraction, job_id, or a declared job field
    std::string name;     ///< the column's name in the file's header
    time_unit unit = time_unit::seconds;
    friend bool operator==(const trace_column&, const trace_column&) = default;
};

/// How trace rows without a model get one (trace_options::model_mix), a named, seeded choice:
///  - "by_row": a fixed pseudo-random zoo model per row (by its line number), among the models
///    measured at the row's GPU count or more (all when none is): what a trace without a mapping
///    and without "model" gets;
///  - "uniform": the same draw from a stream of `seed`;
///  - "weighted": a model drawn by `weights` (zoo names) from a stream of `seed`.
struct model_mix {
    std::string mix;  ///< "" (unset), "by_row", "uniform" or "weighted"
    std::uint64_t seed = 0;
    std::vector<std::pair<std::string, double>> weights;
    friend bool operator==(const model_mix&, const model_mix&) = default;
};

/// How a trace becomes a workload. Steps are applied in this order: read and sort by submit time,
/// time window, GPU cap, unmeasured sizes, first N jobs, shift so the first job arrives at 0, time
/// scale, target load.
struct trace_options {
    double window_start = 0.0;                                   ///< keep jobs submitted at or after (trace seconds)
    double window_end = std::numeric_limits<double>::infinity(); ///< ... and strictly before this
    std::size_t max_jobs = 0;        ///< keep the first N jobs (0 = all)
    double time_scale = 1.0;         ///< multiplies submit times and job durations
    double target_load = 0.0;        ///< > 0: scale inter-arrival times so the offered load is this
    std::uint32_t max_gpus = 0;      ///< GPU cap (0 = the cluster size when known, else none)
    bool drop_oversized = false;     ///< above the cap: drop the job (true) or clamp its request (false; counted in trace::capped)
    unmeasured_size unmeasured = unmeasured_size::extrapolate;  ///< a model without a measurement at the job's GPU count
    bool skip_bad_rows = false;      ///< skip and count bad rows instead of throwing
    std::string model;               ///< openb, or csv without a model column: every job's model
                                     ///< (empty: model_mix)
    /// openb, or csv without a model column: how each row gets a model when `model` is empty
    /// (unset: "by_row"; a csv trace read through `columns` must say).
    model_mix mix;
    /// csv: the file's names for the reader's columns (empty: the header uses the reader's names). A
    /// column neither mapped, nor named as the reader names it, nor in `ignore` is an error.
    std::vector<trace_column> columns;
    std::vector<std::string> ignore;  ///< csv: header columns to leave unread (e.g. a trace's own job ids)
    /// Declared job fields (job_fields.hpp) to read from csv columns of their name or mapped to
    /// them (set by the workload, from the scenario's job_fields).
    std::vector<job_field> fields;
};

/// A loaded trace: jobs sorted by submit time (ids 0..n-1, first at time 0) and what was left out.
struct trace {
    std::string source;                 ///< file name
    std::vector<TrainingJob> jobs;
    std::size_t rows = 0;               ///< data rows read
    std::size_t skipped_bad = 0;        ///< bad rows skipped (skip_bad_rows)
    std::vector<std::string> bad_rows;  ///< messages of the first 10 skipped rows
    std::size_t filtered = 0;           ///< rows left out by design (openb: no GPU, never scheduled)
    std::size_t outside = 0;            ///< rows outside the window or beyond max_jobs
    std::size_t capped = 0;             ///< jobs whose GPU request was clamped to the cap
    std::size_t dropped = 0;            ///< jobs dropped for exceeding the cap
    /// Jobs (kept, or dropped with unmeasured drop) whose model has no measured throughput at their
    /// GPU count (trace_options::unmeasured)
    std::size_t unmeasured = 0;
    double arrival_scale = 1.0;         ///< factor target_load applied to submit times
    /// Per job: whether its model was assigned (the row gave none; trace_options::model, or the
    /// model mix), and how many of the jobs were.
    std::vector<std::uint8_t> model_assigned;
    std::size_t models_assigned = 0;
    /// Declared fields (trace_options::fields): per job, one value per field (NaN: not given and no
    /// default; a category's index into `categories`), and per field its categories as they appear.
    std::vector<double> field_values;
    std::vector<std::vector<std::string>> categories;

    /// Why no job is left, for an error message: the rows read and what removed each.
    [[nodiscard]] std::string empty_reason() const {
        std::string r = display_path(source) + ": no jobs to replay: " + std::to_string(rows) + " data row" + (rows == 1 ? "" : "s");
        if (rows == 0) return r + " (an empty file, or a header alone)";
        std::string parts;
        auto add = [&](std::size_t n, const char* what) {
            if (n == 0) return;
            parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + what;
        };
        add(skipped_bad, "bad (skip_bad_rows)");
        add(filtered, "without a GPU or never scheduled");
        add(outside, "outside the time window or beyond max_jobs");
        add(dropped, "larger than the GPU cap (drop_oversized)");
        add(unmeasured, "of a model not measured at its GPU count (unmeasured: drop)");
        return r + (parts.empty() ? "" : ", of which " + parts);
    }

    /// Offered load on `cluster_gpus` GPUs: sum of GPUs x consolidated duration / (GPUs x span).
    [[nodiscard]] double offered_load(const ModelZoo& zoo, std::size_t cluster_gpus) const noexcept {
        if (jobs.size() < 2 || cluster_gpus == 0) return 0.0;
        double gpu_seconds = 0;
        for (const auto& j : jobs) gpu_seconds += double(j.num_gpus) * j.work / zoo[j.model].at(j.num_gpus).consolidated;
        const double span = jobs.back().submit_time - jobs.front().submit_time;
        return span > 0 ? gpu_seconds / (double(cluster_gpus) * span) : 0.0;
    }
};


/// Reads a trace from a stream; `source` names it in errors. `cluster_gpus` (0 = unknown) is the
/// default GPU cap and the cluster of target_load. Throws TraceError (bad rows, unless skipped) or
/// ConfigError (bad options).
[[nodiscard]] GPUPLACE_INLINE trace read_trace(trace_format format, std::istream& in, std::string source, const ModelZoo& zoo,
                                               const trace_options& o = {}, std::size_t cluster_gpus = 0);

/// Reads a trace file (see read_trace). "$GPUPLACE_DATA/..." names a file of the data folder
/// (data.hpp); errors show the file's absolute path.
[[nodiscard]] GPUPLACE_INLINE trace load_trace(trace_format format, const std::string& path, const ModelZoo& zoo,
                                               const trace_options& o = {}, std::size_t cluster_gpus = 0);

/// A reader of a trace format of one's own (trace_registry.hpp): the rows of stream `in` (named
/// `source` in errors) as a `trace` of jobs in file order, each with its submit_time (s), num_gpus,
/// model (a zoo id) and work (steps: a duration in seconds times the model's consolidated
/// throughput, zoo[model].at(num_gpus).consolidated), optionally gpu_fraction; `field_values`: per
/// job one value per declared field of `o.fields` (NaN where the row gives none: the field's
/// default is then used), a category as an index into `categories[f]` (which the reader extends);
/// `model_assigned` per job (optional: none assigned); `rows`, `filtered`, `skipped_bad` and
/// `bad_rows` as it counted them. read_trace() then checks it and applies the options (window, cap,
/// unmeasured sizes, max_jobs, time scale, target load) as for the built-in formats.
using trace_reader = std::function<trace(std::istream& in, const std::string& source, const ModelZoo& zoo, const trace_options& o)>;

/// read_trace() through a reader of one's own. A job the reader made wrong (no GPU, a model not in
/// the zoo, work not > 0 or not finite, a negative or non-finite submit time) is a TraceError naming
/// `source` and the job; field values of the wrong count a ConfigError.
[[nodiscard]] GPUPLACE_INLINE trace read_trace(const trace_reader& reader, std::istream& in, std::string source, const ModelZoo& zoo,
                                               const trace_options& o = {}, std::size_t cluster_gpus = 0);
/// load_trace() through a reader of one's own.
[[nodiscard]] GPUPLACE_INLINE trace load_trace(const trace_reader& reader, const std::string& path, const ModelZoo& zoo,
                                               const trace_options& o = {}, std::size_t cluster_gpus = 0);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/trace_inl.hpp"  // the readers' definitions (compiled once in gpuplace::compiled otherwise)
#endif
