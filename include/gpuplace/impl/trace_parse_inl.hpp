#pragma once
/// \file impl/trace_parse_inl.hpp
/// The parts of the trace readers (impl/trace_inl.hpp): a line split into fields, the row parser
/// with its file:line:column errors, time units, how a row gets its model, and the finishing of a
/// read trace (window, cap, unmeasured sizes, shift, scale and target load). Compiled as
/// impl/trace_inl.hpp is.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <istream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../data.hpp"
#include "../detail/input_file.hpp"
#include "../detail/number_format.hpp"
#include "../detail/rng.hpp"
#include "../trace.hpp"

namespace gpuplace {

namespace detail {

/// One field of a row: its text and 1-based character column.
struct trace_field {
    std::string_view text;
    std::size_t column = 1;
};

/// Splits a line on `sep` (no quoting), recording each field's column.
GPUPLACE_INLINE void split_fields(std::string_view line, char sep, std::vector<trace_field>& out) {
    out.clear();
    std::size_t b = 0;
    for (;;) {
        const auto e = line.find(sep, b);
        out.push_back({line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b), b + 1});
        if (e == std::string_view::npos) break;
        b = e + 1;
    }
}

[[nodiscard]] GPUPLACE_INLINE std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

/// Reads rows and reports errors with file:line:column.
class trace_parser {
public:
    trace_parser(std::string source, bool skip) : source_(std::move(source)), skip_(skip) {}

    /// Throws TraceError "source:line:column: what".
    [[noreturn]] void fail(std::size_t line, std::size_t column, const std::string& what) const {
        throw TraceError(source_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
    }

    /// A finite number in the whole field; `name` names the field in errors.
    [[nodiscard]] double number(std::size_t line, const trace_field& f, std::string_view name) const {
        const auto t = trim(f.text);
        if (t.empty()) fail(line, f.column, std::string(name) + ": empty field, expected a number");
        double v = 0;
        const char* first = t.data();
        if (*first == '+') ++first;
        const auto [p, ec] = std::from_chars(first, t.data() + t.size(), v);
        if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v))
            fail(line, f.column, std::string(name) + ": expected a number, got \"" + std::string(t) + "\"");
        return v;
    }
    /// A time in seconds, >= 0, and (when `bounded`; else check it later with bound_time) <= max_trace_time.
    [[nodiscard]] double time(std::size_t line, const trace_field& f, std::string_view name, bool bounded = true) const {
        const double v = number(line, f, name);
        if (v < 0) fail(line, f.column, std::string(name) + ": negative time " + std::string(trim(f.text)));
        if (bounded) bound_time(line, f, name, v);
        return v;
    }
    /// Requires the time `v` of the field `f` to be at most max_trace_time.
    void bound_time(std::size_t line, const trace_field& f, std::string_view name, double v) const {
        if (v > max_trace_time)
            fail(line, f.column, std::string(name) + ": " + std::string(trim(f.text)) +
                                     " s is later than 1e10 s (about 317 years; trace times are in seconds)");
    }
    /// "<v> s", v with 6 significant digits.
    [[nodiscard]] static std::string seconds_text(double v) {
        char b[64];
        std::snprintf(b, sizeof b, "%.6g s", v);
        return b;
    }
    /// Checks a job's duration `seconds` (from the field `f`) is in [min_job_duration, max_trace_time];
    /// `what` says how it came from the field (default: the field's text in seconds).
    void duration(std::size_t line, const trace_field& f, std::string_view name, double seconds, std::string what = {}) const {
        if (seconds >= min_job_duration && seconds <= max_trace_time) return;
        if (what.empty()) what = std::string(trim(f.text)) + " s";
        fail(line, f.column, std::string(name) + ": " + what +
                                 (seconds < min_job_duration ? " is shorter than the 0.001 s minimum" : " is longer than the 1e10 s maximum"));
    }
    /// The same for a job given in steps: their duration at the consolidated throughput.
    void step_duration(std::size_t line, const trace_field& f, std::string_view name, double steps, double consolidated) const {
        const double sec = steps / consolidated;
        duration(line, f, name, sec, "a job of " + std::string(trim(f.text)) + " steps (" + seconds_text(sec) + " at the model's consolidated throughput)");
    }
    /// A GPU count: a whole number >= 1 (or >= 0 when allow_zero).
    [[nodiscard]] std::uint32_t gpus(std::size_t line, const trace_field& f, std::string_view name,
                                     bool allow_zero = false) const {
        const double v = number(line, f, name);
        if (v != std::floor(v) || v < 0 || v > double(1u << 24))
            fail(line, f.column, std::string(name) + ": expected a whole number of GPUs, got \"" + std::string(trim(f.text)) + "\"");
        if (v == 0 && !allow_zero) fail(line, f.column, std::string(name) + ": zero GPUs");
        return static_cast<std::uint32_t>(v);
    }
    /// Requires at least n fields; names the first missing one.
    void need_fields(std::size_t line, std::string_view text, const std::vector<trace_field>& f, std::size_t n,
                     std::initializer_list<std::string_view> names) const {
        if (f.size() >= n) return;
        const auto* it = names.begin() + std::min(f.size(), names.size() - 1);
        fail(line, text.size() + 1,
             "missing field " + std::to_string(f.size() + 1) + " (" + std::string(*it) + "): the row has " +
                 std::to_string(f.size()) + " of " + std::to_string(n) + " fields");
    }

    /// Requires at most n fields (a row longer than its header, or than the format's fields).
    void no_extra_fields(std::size_t line, const std::vector<trace_field>& f, std::size_t n, std::string_view of) const {
        if (f.size() <= n) return;
        fail(line, f[n].column,
             "extra field " + std::to_string(n + 1) + ": the row has " + std::to_string(f.size()) + " fields, " +
                 std::string(of) + " has " + std::to_string(n));
    }

    /// Passes the first non-empty line to `header(line_no, text)` when `has_header`, then runs
    /// `row(line_no, text)` for each further non-empty line not starting with '#'. A TraceError
    /// from a row is rethrown, or counted when skipping; header errors always propagate.
    template <class Header, class Row>
    void each_row(std::istream& in, bool has_header, trace& out, Header&& header, Row&& row) {
        std::string line;
        std::size_t no = 0;
        while (std::getline(in, line)) {
            ++no;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (trim(line).empty() || line.front() == '#') continue;
            if (has_header) {
                has_header = false;
                header(no, std::string_view(line));
                continue;
            }
            ++out.rows;
            if (!skip_) {
                row(no, std::string_view(line));
                continue;
            }
            try {
                row(no, std::string_view(line));
            } catch (const TraceError& e) {
                ++out.skipped_bad;
                if (out.bad_rows.size() < 10) out.bad_rows.emplace_back(e.what());
            }
        }
        if (has_header) fail(no + 1, 1, "missing header line");
    }

    [[nodiscard]] const std::string& source() const noexcept { return source_; }

private:
    std::string source_;
    bool skip_;
};

/// A fixed pseudo-random model for row `key` among zoo models measured at >= k GPUs (all if none).
[[nodiscard]] GPUPLACE_INLINE model_id mixed_model(const ModelZoo& zoo, std::uint32_t k, std::uint64_t key) {
    rng r(mix_seed(key, 0x7472616365ULL));
    return draw_model_measured_at(zoo, k, [&r](std::uint64_t n) { return r.below(n); });
}

/// How rows without a model get one (trace_options::model and model_mix), resolved once.
class model_assigner {
public:
    model_assigner(const ModelZoo& zoo, const trace_options& o) : zoo_(&zoo), mix_(o.mix.mix.empty() ? "by_row" : o.mix.mix), seed_(o.mix.seed) {
        if (!o.model.empty()) {
            fixed_ = zoo.find(o.model);
            mix_ = "model";
        } else if (mix_ == "weighted") {
            for (const auto& [name, w] : o.mix.weights) {
                weights_.emplace_back(zoo.find(name), w);
                total_ += w;
            }
            if (!(total_ > 0)) throw ConfigError("trace options: model_mix \"weighted\" needs weights that sum to more than 0");
        } else if (mix_ != "by_row" && mix_ != "uniform") {
            throw ConfigError("trace options: unknown model mix \"" + mix_ + "\" (allowed: by_row, uniform, weighted)");
        }
    }
    /// The model of a row of k GPUs at line `line`.
    [[nodiscard]] model_id operator()(std::uint32_t k, std::uint64_t line) const {
        if (mix_ == "model") return fixed_;
        if (mix_ == "by_row") return mixed_model(*zoo_, k, line);
        rng r(mix_seed(mix_seed(seed_, line), 0x6d6f64656c6d6978ULL));  // "modelmix"
        if (mix_ == "weighted") {
            double v = r.uniform() * total_;
            for (const auto& [m, w] : weights_) {
                if (v < w) return m;
                v -= w;
            }
            return weights_.back().first;
        }
        return draw_model_measured_at(*zoo_, k, [&r](std::uint64_t n) { return r.below(n); });
    }

private:
    const ModelZoo* zoo_;
    std::string mix_;
    std::uint64_t seed_ = 0;
    model_id fixed_ = 0;
    std::vector<std::pair<model_id, double>> weights_;
    double total_ = 0;
};

/// A time field of a csv trace in seconds, written in `unit` (a date and time: seconds since
/// 1970-01-01 UTC). `name` names the field in errors.
[[nodiscard]] GPUPLACE_INLINE double time_in_seconds(const trace_parser& p, std::size_t line, const trace_field& f, std::string_view name,
                                                     time_unit unit) {
    if (unit != time_unit::timestamp) {
        const double v = p.number(line, f, name);
        const double scale = unit == time_unit::milliseconds ? 1e-3 : unit == time_unit::minutes ? 60.0 : unit == time_unit::hours ? 3600.0 : 1.0;
        return v * scale;
    }
    const auto t = trim(f.text);
    auto bad = [&] {
        p.fail(line, f.column, std::string(name) + ": expected a date and time like 2017-10-03 04:40:25, got \"" + std::string(t) + "\"");
    };
    // YYYY-MM-DD[ T]HH:MM:SS[.fff][Z]
    std::size_t i = 0;
    auto digits = [&](std::size_t n) {
        long v = 0;
        if (i + n > t.size()) bad();
        for (std::size_t k = 0; k < n; ++k, ++i) {
            if (t[i] < '0' || t[i] > '9') bad();
            v = v * 10 + (t[i] - '0');
        }
        return v;
    };
    auto expect = [&](char c) {
        if (i >= t.size() || t[i] != c) bad();
        ++i;
    };
    const long y = digits(4);
    expect('-');
    const long mo = digits(2);
    expect('-');
    const long d = digits(2);
    if (i >= t.size() || (t[i] != ' ' && t[i] != 'T')) bad();
    ++i;
    const long h = digits(2);
    expect(':');
    const long mi = digits(2);
    expect(':');
    const long sec = digits(2);
    double frac = 0;
    if (i < t.size() && t[i] == '.') {
        ++i;
        double scale = 0.1;
        if (i >= t.size() || t[i] < '0' || t[i] > '9') bad();
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') frac += (t[i++] - '0') * scale, scale /= 10;
    }
    if (i < t.size() && t[i] == 'Z') ++i;
    if (i != t.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970) bad();
    // days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days inverse)
    const long yy = y - (mo <= 2);
    const long era = yy / 400, yoe = yy - era * 400;
    const long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    const long days = era * 146097 + doe - 719468;
    return double(days) * 86400.0 + double(h * 3600 + mi * 60 + sec) + frac;
}

/// Model named in a field; unknown names are row errors.
[[nodiscard]] GPUPLACE_INLINE model_id field_model(const trace_parser& p, const ModelZoo& zoo, std::size_t line,
                                          const trace_field& f, std::string_view name) {
    const auto t = trim(f.text);
    for (std::size_t i = 0; i < zoo.size(); ++i)
        if (zoo[model_id(i)].name == t) return model_id(i);
    p.fail(line, f.column, std::string(name) + ": unknown model \"" + std::string(t) + "\" (not in the " +
                               zoo.gpu_type() + " zoo of " + std::to_string(zoo.size()) + " models)");
}

/// unmeasured "refuse": a row error when job j's model has no measurement at its GPU count.
GPUPLACE_INLINE void refuse_unmeasured(const trace_parser& p, const ModelZoo& zoo, std::size_t line, const trace_field& f,
                                       const TrainingJob& j) {
    if (measured_at(zoo, j.model, j.num_gpus)) return;
    std::string sizes;
    for (const auto& q : zoo[j.model].points) sizes += (sizes.empty() ? "" : ", ") + std::to_string(q.gpus);
    p.fail(line, f.column, std::to_string(j.num_gpus) + " GPUs: model \"" + zoo[j.model].name + "\" is measured at " + sizes +
                               " GPUs only (unmeasured: refuse; \"drop\" leaves such jobs out, \"extrapolate\" keeps them)");
}

/// Window, cap, unmeasured sizes, first N, shift, scale and target load (see trace_options).
GPUPLACE_INLINE void finish_trace(trace& t, const ModelZoo& zoo, const trace_options& o, std::size_t cluster_gpus) {
    auto& v = t.jobs;
    // ids are the rows' order until the jobs are kept: the side arrays (model_assigned,
    // field_values) follow them by it
    for (std::size_t i = 0; i < v.size(); ++i) v[i].id = static_cast<job_id>(i);
    std::stable_sort(v.begin(), v.end(), detail::by_submit_time{});
    std::vector<TrainingJob> kept;
    kept.reserve(v.size());
    const std::uint32_t cap = o.max_gpus ? o.max_gpus : static_cast<std::uint32_t>(cluster_gpus);
    for (const auto& j : v) {
        if (j.submit_time < o.window_start || !(j.submit_time < o.window_end)) {
            ++t.outside;
            continue;
        }
        TrainingJob x = j;
        if (cap && x.num_gpus > cap) {
            if (o.drop_oversized) {
                ++t.dropped;
                continue;
            }
            x.num_gpus = cap;
            ++t.capped;
        }
        if (!measured_at(zoo, x.model, x.num_gpus)) {
            ++t.unmeasured;
            if (o.unmeasured == unmeasured_size::drop) continue;
        }
        if (o.max_jobs && kept.size() == o.max_jobs) {
            ++t.outside;
            continue;
        }
        kept.push_back(x);
    }
    v = std::move(kept);
    {
        const std::size_t F = t.categories.size();
        std::vector<std::uint8_t> assigned(v.size(), 0);
        std::vector<double> fields(v.size() * F);
        t.models_assigned = 0;
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto r = v[i].id;
            if (r < t.model_assigned.size()) t.models_assigned += assigned[i] = t.model_assigned[r];
            for (std::size_t f = 0; f < F; ++f) fields[i * F + f] = t.field_values[std::size_t(r) * F + f];
        }
        t.model_assigned = std::move(assigned);
        t.field_values = std::move(fields);
    }
    const double t0 = v.empty() ? 0.0 : v.front().submit_time;
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i].id = static_cast<job_id>(i);
        v[i].submit_time = (v[i].submit_time - t0) * o.time_scale;
        v[i].work *= o.time_scale;
    }
    if (o.target_load > 0 && cluster_gpus > 0) {
        const double now = t.offered_load(zoo, cluster_gpus);
        if (now > 0) {
            t.arrival_scale = now / o.target_load;
            for (auto& j : v) j.submit_time *= t.arrival_scale;
        }
    }
    for (const auto& j : v)
        if (!std::isfinite(j.submit_time) || !std::isfinite(j.work))
            throw ConfigError("trace options: time_scale " + detail::format_number(o.time_scale) + " and target_load " +
                              detail::format_number(o.target_load) + " overflow the submit time or work of job " +
                              std::to_string(j.id) + " of " + t.source);
}

}  // namespace detail

}  // namespace gpuplace
