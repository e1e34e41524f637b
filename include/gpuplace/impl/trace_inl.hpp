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
#include "trace_parse_inl.hpp"

namespace gpuplace {

namespace detail {
/// The options every reader checks first.
inline void check_trace_options(const trace_options& o) {
    if (!(o.time_scale > 0)) throw ConfigError("trace options: time_scale must be > 0 (got " + std::to_string(o.time_scale) + ")");
    if (!(o.target_load >= 0)) throw ConfigError("trace options: target_load must be >= 0 (got " + std::to_string(o.target_load) + ")");
    if (!(o.window_end > o.window_start))
        throw ConfigError("trace options: the window [" + std::to_string(o.window_start) + ", " + std::to_string(o.window_end) +
                          ") is empty");
}
}  // namespace detail

GPUPLACE_INLINE trace read_trace(trace_format format, std::istream& in, std::string source, const ModelZoo& zoo,
                                 const trace_options& o, std::size_t cluster_gpus) {
    using namespace detail;
    if (format == trace_format::registered)
        throw ConfigError("trace options: the format \"registered\" is read through its reader (read_trace(reader, ...), trace_registry.hpp)");
    check_trace_options(o);
    if (format != trace_format::csv) {
        if (!o.columns.empty() || !o.ignore.empty())
            throw ConfigError("trace options: columns and ignore_columns map a csv trace's header (format " + std::string(to_string(format)) + ")");
        for (const auto& fd : o.fields)
            if (!fd.default_value)
                throw ConfigError("trace options: the " + std::string(to_string(format)) + " format has no column for the job field \"" +
                                  fd.name + "\", which has no default");
    }
    const model_assigner assign(zoo, o);
    trace t;
    t.source = source;
    t.categories.resize(o.fields.size());
    for (std::size_t f = 0; f < o.fields.size(); ++f) t.categories[f] = o.fields[f].categories;
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
            t.model_assigned.push_back(0);
            for (const auto& fd : o.fields) t.field_values.push_back(fd.default_value.value_or(std::nan("")));
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
                j.model = assign(k, line);
                j.work = (deleted - sched) * zoo[j.model].at(k).consolidated;
                if (!std::isfinite(j.work))
                    p.fail(line, del_f.column, "deletion_time: run time " + detail::format_number(deleted - sched) + " s is too long");
                p.bound_time(line, del_f, "deletion_time", deleted);
                p.duration(line, del_f, "deletion_time", deleted - sched, "a run time of " + trace_parser::seconds_text(deleted - sched));
                t.jobs.push_back(j);
                t.model_assigned.push_back(1);
                for (const auto& fd : o.fields) t.field_values.push_back(fd.default_value.value_or(std::nan("")));
            });
        } else {
            // submit_time,num_gpus,duration|steps[,model][,gpu_fraction][,declared fields], or the
            // file's own names for them (o.columns)
            std::vector<std::string> roles = {"submit_time", "num_gpus", "duration", "steps", "model", "gpu_fraction"};
            for (const auto& fd : o.fields) roles.push_back(fd.name);
            const std::size_t F = o.fields.size();
            std::vector<time_unit> unit(roles.size(), time_unit::seconds);
            std::vector<double> row_fields;
            std::vector<std::string> shown(roles.begin(), roles.end());  // each role's column as the file names it
            bool by_steps = false;
            auto header = [&](std::size_t line, std::string_view text) {
                std::vector<trace_field> h;
                split_fields(text, ',', h);
                header_fields = h.size();
                col.assign(roles.size(), -1);
                auto role_of = [&](std::string_view r) {
                    return std::size_t(std::find(roles.begin(), roles.end(), r) - roles.begin());
                };
                for (const auto& m : o.columns) {
                    const auto r = role_of(m.role);
                    if (r == roles.size()) throw ConfigError("trace options: columns maps \"" + m.role + "\", which the csv reader does not read");
                    unit[r] = m.unit;
                    shown[r] = m.name;
                }
                for (std::size_t c = 0; c < h.size(); ++c) {
                    const auto name = trim(h[c].text);
                    std::size_t r = roles.size();
                    for (const auto& m : o.columns)
                        if (m.name == name) r = role_of(m.role);
                    if (r == roles.size() && std::find(o.ignore.begin(), o.ignore.end(), name) != o.ignore.end()) continue;
                    if (r == roles.size()) {  // a column under the reader's own name, unless that name is mapped elsewhere
                        const auto k = role_of(name);
                        bool mapped = false;
                        for (const auto& m : o.columns) mapped = mapped || m.role == name;
                        if (k < roles.size() && !mapped) r = k;
                    }
                    if (r == roles.size()) {
                        std::string allowed;
                        for (const auto& n : roles) allowed += (allowed.empty() ? "" : ", ") + n;
                        p.fail(line, h[c].column, "unknown column \"" + std::string(name) + "\" (allowed: " + allowed + ")" +
                                                      (o.columns.empty() && F == 0 ? ""
                                                                                   : "; map it in the workload's \"columns\", or list it in "
                                                                                     "\"ignore_columns\""));
                    }
                    if (col[r] >= 0) p.fail(line, h[c].column, "column \"" + std::string(name) + "\" appears twice");
                    col[r] = int(c);
                }
                for (const auto& m : o.columns)
                    if (col[role_of(m.role)] < 0)
                        p.fail(line, 1, "the header has no column \"" + m.name + "\" (the columns mapping's " + m.role + ")");
                for (std::size_t r : {std::size_t{0}, std::size_t{1}})
                    if (col[r] < 0) p.fail(line, 1, "the header has no column \"" + shown[r] + "\"");
                if ((col[2] >= 0) == (col[3] >= 0))
                    p.fail(line, 1, "the header needs exactly one of the columns \"" + shown[2] + "\" and \"" + shown[3] + "\"");
                by_steps = col[3] >= 0;
                if (col[4] < 0 && o.model.empty() && o.mix.mix.empty() && !o.columns.empty())
                    p.fail(line, 1, "no model column: say how rows get a model, with the workload's \"model\" (one zoo model for "
                                    "every row) or \"model_mix\" (by_row, uniform or weighted; docs/workloads.md)");
                for (std::size_t k = 0; k < F; ++k)
                    if (col[6 + k] < 0 && !o.fields[k].default_value)
                        p.fail(line, 1, "no column for the job field \"" + o.fields[k].name + "\", which has no default");
            };
            p.each_row(in, true, t, header, [&](std::size_t line, std::string_view text) {
                split_fields(text, ',', f);
                p.no_extra_fields(line, f, header_fields, "the header");
                TrainingJob j;
                j.submit_time = time_in_seconds(p, line, field(line, text, col[0], shown[0]), shown[0], unit[0]);
                if (j.submit_time < 0) p.fail(line, f[std::size_t(col[0])].column, shown[0] + ": negative time " + std::string(trim(f[std::size_t(col[0])].text)));
                p.bound_time(line, f[std::size_t(col[0])], shown[0], j.submit_time);
                j.num_gpus = p.gpus(line, field(line, text, col[1], shown[1]), shown[1]);
                const auto& name = by_steps ? shown[3] : shown[2];
                const auto& wf = field(line, text, by_steps ? col[3] : col[2], name);
                const double w = by_steps ? p.number(line, wf, name) : time_in_seconds(p, line, wf, name, unit[2]);
                if (!(w > 0)) p.fail(line, wf.column, name + ": expected a value > 0, got " + std::string(trim(wf.text)));
                bool assigned = col[4] < 0;
                if (!assigned) j.model = field_model(p, zoo, line, field(line, text, col[4], shown[4]), shown[4]);
                else j.model = assign(j.num_gpus, line);
                if (o.unmeasured == unmeasured_size::refuse) refuse_unmeasured(p, zoo, line, field(line, text, col[1], shown[1]), j);
                if (col[5] >= 0) {
                    const auto& ff = field(line, text, col[5], shown[5]);
                    j.gpu_fraction = p.number(line, ff, shown[5]);
                    if (!(j.gpu_fraction > 0 && j.gpu_fraction <= 1))
                        p.fail(line, ff.column, shown[5] + ": expected a value in (0, 1], got " + std::string(trim(ff.text)));
                }
                const double consolidated = zoo[j.model].at(j.num_gpus).consolidated;
                j.work = by_steps ? w : w * consolidated;
                if (!std::isfinite(j.work)) p.fail(line, wf.column, name + ": value " + std::string(trim(wf.text)) + " is too large");
                if (by_steps) p.step_duration(line, wf, name, w, consolidated);
                else p.duration(line, wf, name, w, unit[2] == time_unit::seconds ? std::string() : detail::format_number(w) + " s");
                // declared fields: read before the job is kept, so that a bad one leaves the row out whole
                row_fields.clear();
                for (std::size_t k = 0; k < F; ++k) {
                    const auto& fd = o.fields[k];
                    double v = fd.default_value.value_or(std::nan(""));
                    if (col[6 + k] >= 0) {
                        const auto& ff = field(line, text, col[6 + k], shown[6 + k]);
                        const auto txt = trim(ff.text);
                        if (txt.empty() && fd.default_value) {
                        } else if (fd.type == field_type::number) {
                            v = p.number(line, ff, shown[6 + k]);
                        } else {
                            auto& cats = t.categories[k];
                            const auto it = std::find(cats.begin(), cats.end(), txt);
                            if (it != cats.end()) v = double(it - cats.begin());
                            else if (fd.closed) {
                                std::string list;
                                for (const auto& c : cats) list += (list.empty() ? "" : ", ") + c;
                                p.fail(line, ff.column, shown[6 + k] + ": unknown category \"" + std::string(txt) + "\" (allowed: " + list + ")");
                            } else {
                                cats.emplace_back(txt);
                                v = double(cats.size() - 1);
                            }
                        }
                    }
                    row_fields.push_back(v);
                }
                t.field_values.insert(t.field_values.end(), row_fields.begin(), row_fields.end());
                t.jobs.push_back(j);
                t.model_assigned.push_back(assigned ? 1 : 0);
            });
        }
    }
    detail::finish_trace(t, zoo, o, cluster_gpus);
    return t;
}

namespace detail {
/// A trace file's text as a stream; TraceError when it cannot be read.
inline std::istringstream open_trace(const std::string& file) {
    std::string text;
    if (!detail::read_input_file<TraceError>(file, text, display_path(file), ""))
        throw TraceError(display_path(file) + ": cannot open the trace file");
    return std::istringstream(std::move(text));
}
}  // namespace detail

GPUPLACE_INLINE trace load_trace(trace_format format, const std::string& path, const ModelZoo& zoo,
                                 const trace_options& o, std::size_t cluster_gpus) {
    const std::string file = resolve_data_path(path);
    auto in = detail::open_trace(file);
    return read_trace(format, in, file, zoo, o, cluster_gpus);
}

GPUPLACE_INLINE trace read_trace(const trace_reader& reader, std::istream& in, std::string source, const ModelZoo& zoo,
                                 const trace_options& o, std::size_t cluster_gpus) {
    detail::check_trace_options(o);
    trace t = reader(in, source, zoo, o);
    t.source = source;
    const std::size_t n = t.jobs.size(), F = o.fields.size();
    if (t.field_values.size() != n * F)
        throw ConfigError("trace reader of " + display_path(source) + ": " + std::to_string(t.field_values.size()) +
                          " field values for " + std::to_string(n) + " jobs and " + std::to_string(F) + " declared fields (expected " +
                          std::to_string(n * F) + ")");
    t.categories.resize(F);
    for (std::size_t f = 0; f < F; ++f) {
        if (t.categories[f].empty()) t.categories[f] = o.fields[f].categories;
        if (!o.fields[f].default_value) continue;
        for (std::size_t i = 0; i < n; ++i)
            if (double& v = t.field_values[i * F + f]; !(v == v)) v = *o.fields[f].default_value;
    }
    if (t.model_assigned.size() != n) t.model_assigned.assign(n, 0);
    if (t.rows < n) t.rows = n;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& j = t.jobs[i];
        const auto bad = [&](const std::string& why) { throw TraceError(display_path(source) + ": job " + std::to_string(i) + " of the reader: " + why); };
        const auto g = [](double v) {  // as a person writes it: "nan", "-1", "1e+10"
            char b[32];
            std::snprintf(b, sizeof b, "%g", v);
            return std::string(b);
        };
        if (j.num_gpus < 1) bad("no GPU requested");
        if (j.model >= zoo.size()) bad("model id " + std::to_string(j.model) + " is not in the zoo (" + std::to_string(zoo.size()) + " models)");
        if (!(j.work > 0) || !std::isfinite(j.work)) bad("work " + g(j.work) + " steps: expected a finite number > 0");
        if (!(j.submit_time >= 0) || !(j.submit_time <= max_trace_time))
            bad("submit time " + g(j.submit_time) + " s: expected a number in [0, " + g(max_trace_time) + "]");
        if (!(j.gpu_fraction > 0 && j.gpu_fraction <= 1)) bad("gpu_fraction " + g(j.gpu_fraction) + ": expected a value in (0, 1]");
    }
    detail::finish_trace(t, zoo, o, cluster_gpus);
    return t;
}

GPUPLACE_INLINE trace load_trace(const trace_reader& reader, const std::string& path, const ModelZoo& zoo,
                                 const trace_options& o, std::size_t cluster_gpus) {
    const std::string file = resolve_data_path(path);
    auto in = detail::open_trace(file);
    return read_trace(reader, in, file, zoo, o, cluster_gpus);
}

}  // namespace gpuplace
