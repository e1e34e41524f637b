#pragma once
/// \file impl/trace_inl.hpp
/// The trace readers' definitions (trace.hpp declares them): included by trace.hpp in the
/// header-only library, compiled once into gpuplace::compiled (src/compiled/gpuplace.cpp) when
/// GPUPLACE_COMPILED is defined.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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
    std::size_t eligible = 0;
    for (std::size_t z = 0; z < zoo.size(); ++z) eligible += zoo[model_id(z)].max_measured_gpus() >= k;
    rng r(mix_seed(key, 0x7472616365ULL));
    if (eligible == 0) return static_cast<model_id>(r.below(zoo.size()));
    auto pick = r.below(eligible);
    for (std::size_t z = 0; z < zoo.size(); ++z)
        if (zoo[model_id(z)].max_measured_gpus() >= k && pick-- == 0) return model_id(z);
    return 0;
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
    std::stable_sort(v.begin(), v.end(), [](const TrainingJob& a, const TrainingJob& b) { return a.submit_time < b.submit_time; });
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

GPUPLACE_INLINE trace read_trace(trace_format format, std::istream& in, std::string source, const ModelZoo& zoo,
                                 const trace_options& o, std::size_t cluster_gpus) {
    using namespace detail;
    if (!(o.time_scale > 0)) throw ConfigError("trace options: time_scale must be > 0 (got " + std::to_string(o.time_scale) + ")");
    if (!(o.target_load >= 0)) throw ConfigError("trace options: target_load must be >= 0 (got " + std::to_string(o.target_load) + ")");
    if (!(o.window_end > o.window_start))
        throw ConfigError("trace options: the window [" + std::to_string(o.window_start) + ", " + std::to_string(o.window_end) +
                          ") is empty");
    const bool fixed_model = !o.model.empty();
    const model_id fixed = fixed_model ? zoo.find(o.model) : model_id(0);
    trace t;
    t.source = source;
    trace_parser p(std::move(source), o.skip_bad_rows);
    std::vector<trace_field> f;

    if (format == trace_format::philly) {
        // job type, command, steps flag, needs-data-dir flag, total steps, arrival time (s), GPUs
        p.each_row(in, false, t, [](std::size_t, std::string_view) {}, [&](std::size_t line, std::string_view text) {
            split_fields(text, '\t', f);
            p.need_fields(line, text, f, 7,
                          {"job type", "command", "steps flag", "needs data dir", "total steps", "arrival time", "GPU count"});
            p.no_extra_fields(line, f, 7, "the philly format");
            TrainingJob j;
            j.model = field_model(p, zoo, line, f[0], "job type");
            j.work = p.number(line, f[4], "total steps");
            if (j.work < 0) p.fail(line, f[4].column, "total steps: negative value " + std::string(trim(f[4].text)));
            if (j.work == 0) p.fail(line, f[4].column, "total steps: zero steps");
            j.submit_time = p.time(line, f[5], "arrival time");
            j.num_gpus = p.gpus(line, f[6], "GPU count");
            if (o.unmeasured == unmeasured_size::refuse) refuse_unmeasured(p, zoo, line, f[6], j);
            p.step_duration(line, f[4], "total steps", j.work, zoo[j.model].at(j.num_gpus).consolidated);
            t.jobs.push_back(j);
        });
    } else {
        std::vector<int> col;  // index in the row of each wanted, then optional, column (-1: absent)
        std::size_t header_fields = 0;
        auto resolve = [&](std::size_t line, std::string_view header, std::initializer_list<std::string_view> wanted,
                           std::initializer_list<std::string_view> optional, bool strict) {
            std::vector<trace_field> h;
            split_fields(header, ',', h);
            header_fields = h.size();
            col.assign(wanted.size() + optional.size(), -1);
            for (std::size_t c = 0; c < h.size(); ++c) {
                const auto name = trim(h[c].text);
                std::size_t i = 0;
                bool known = false;
                for (auto list : {wanted, optional})
                    for (auto w : list) {
                        if (name == w) {
                            if (col[i] >= 0) p.fail(line, h[c].column, "column \"" + std::string(name) + "\" appears twice");
                            col[i] = int(c);
                            known = true;
                        }
                        ++i;
                    }
                if (strict && !known)
                    p.fail(line, h[c].column, "unknown column \"" + std::string(name) +
                                                  "\" (allowed: submit_time, num_gpus, duration, steps, model, gpu_fraction)");
            }
            std::size_t i = 0;
            for (auto w : wanted) {
                if (col[i] < 0) p.fail(line, 1, "the header has no column \"" + std::string(w) + "\"");
                ++i;
            }
        };
        auto field = [&](std::size_t line, std::string_view text, int c, std::string_view name) -> const trace_field& {
            if (std::size_t(c) >= f.size())
                p.fail(line, text.size() + 1, "missing field " + std::to_string(c + 1) + " (" + std::string(name) +
                                                  "): the row has " + std::to_string(f.size()) + " fields");
            return f[std::size_t(c)];
        };
        if (format == trace_format::openb) {
            // name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
            auto header = [&](std::size_t line, std::string_view text) {
                resolve(line, text, {"num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"}, {}, false);
            };
            p.each_row(in, true, t, header, [&](std::size_t line, std::string_view text) {
                split_fields(text, ',', f);
                p.no_extra_fields(line, f, header_fields, "the header");
                const auto k = p.gpus(line, field(line, text, col[0], "num_gpu"), "num_gpu", true);
                const auto& milli_f = field(line, text, col[1], "gpu_milli");
                const double created = p.time(line, field(line, text, col[2], "creation_time"), "creation_time");
                const auto& del_f = field(line, text, col[3], "deletion_time");
                const auto& sched_f = field(line, text, col[4], "scheduled_time");
                if (k == 0 || trim(sched_f.text).empty()) {  // CPU-only pod, or never scheduled
                    ++t.filtered;
                    return;
                }
                const double milli = p.number(line, milli_f, "gpu_milli");
                if (milli < 0 || milli > 1000)
                    p.fail(line, milli_f.column, "gpu_milli: expected a value in [0, 1000], got " + std::string(trim(milli_f.text)));
                const double deleted = p.time(line, del_f, "deletion_time", false);
                const double sched = p.time(line, sched_f, "scheduled_time");
                if (deleted < sched)
                    p.fail(line, del_f.column, "deletion_time: " + std::string(trim(del_f.text)) + " is before scheduled_time " +
                                                   std::string(trim(sched_f.text)));
                if (deleted == sched) {  // ran for no time: nothing to schedule
                    ++t.filtered;
                    return;
                }
                TrainingJob j;
                j.submit_time = created;
                j.num_gpus = k;
                j.gpu_fraction = milli > 0 ? milli / 1000.0 : 1.0;
                j.model = fixed_model ? fixed : mixed_model(zoo, k, line);
                j.work = (deleted - sched) * zoo[j.model].at(k).consolidated;
                if (!std::isfinite(j.work))
                    p.fail(line, del_f.column, "deletion_time: run time " + detail::format_number(deleted - sched) + " s is too long");
                p.bound_time(line, del_f, "deletion_time", deleted);
                p.duration(line, del_f, "deletion_time", deleted - sched, "a run time of " + trace_parser::seconds_text(deleted - sched));
                t.jobs.push_back(j);
            });
        } else {
            // submit_time,num_gpus,duration|steps[,model][,gpu_fraction]
            bool by_steps = false;
            auto header = [&](std::size_t line, std::string_view text) {
                resolve(line, text, {"submit_time", "num_gpus"}, {"duration", "steps", "model", "gpu_fraction"}, true);
                if ((col[2] >= 0) == (col[3] >= 0))
                    p.fail(line, 1, "the header needs exactly one of the columns \"duration\" and \"steps\"");
                by_steps = col[3] >= 0;
            };
            p.each_row(in, true, t, header, [&](std::size_t line, std::string_view text) {
                split_fields(text, ',', f);
                p.no_extra_fields(line, f, header_fields, "the header");
                TrainingJob j;
                j.submit_time = p.time(line, field(line, text, col[0], "submit_time"), "submit_time");
                j.num_gpus = p.gpus(line, field(line, text, col[1], "num_gpus"), "num_gpus");
                const auto name = by_steps ? "steps" : "duration";
                const auto& wf = field(line, text, by_steps ? col[3] : col[2], name);
                const double w = p.number(line, wf, name);
                if (!(w > 0)) p.fail(line, wf.column, std::string(name) + ": expected a value > 0, got " + std::string(trim(wf.text)));
                if (col[4] >= 0) j.model = field_model(p, zoo, line, field(line, text, col[4], "model"), "model");
                else j.model = fixed_model ? fixed : mixed_model(zoo, j.num_gpus, line);
                if (o.unmeasured == unmeasured_size::refuse) refuse_unmeasured(p, zoo, line, field(line, text, col[1], "num_gpus"), j);
                if (col[5] >= 0) {
                    const auto& ff = field(line, text, col[5], "gpu_fraction");
                    j.gpu_fraction = p.number(line, ff, "gpu_fraction");
                    if (!(j.gpu_fraction > 0 && j.gpu_fraction <= 1))
                        p.fail(line, ff.column, "gpu_fraction: expected a value in (0, 1], got " + std::string(trim(ff.text)));
                }
                const double consolidated = zoo[j.model].at(j.num_gpus).consolidated;
                j.work = by_steps ? w : w * consolidated;
                if (!std::isfinite(j.work)) p.fail(line, wf.column, std::string(name) + ": value " + std::string(trim(wf.text)) + " is too large");
                if (by_steps) p.step_duration(line, wf, name, w, consolidated);
                else p.duration(line, wf, name, w);
                t.jobs.push_back(j);
            });
        }
    }
    detail::finish_trace(t, zoo, o, cluster_gpus);
    return t;
}

GPUPLACE_INLINE trace load_trace(trace_format format, const std::string& path, const ModelZoo& zoo,
                                 const trace_options& o, std::size_t cluster_gpus) {
    const std::string file = resolve_data_path(path);
    if (auto d = detail::directory_not_file(file, display_path(file)); !d.empty()) throw TraceError(d);
    std::ifstream in(file);
    if (!in) throw TraceError(display_path(file) + ": cannot open the trace file");
    return read_trace(format, in, file, zoo, o, cluster_gpus);
}

}  // namespace gpuplace
