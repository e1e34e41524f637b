#pragma once
/// \file json/impl/workload_inl.hpp
/// The definitions json/workload.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../trace.hpp"
#include "../../trace_registry.hpp"
#include "../../workload.hpp"
#include "../parse.hpp"
#include "../workload.hpp"
#include "../workload_registry.hpp"
#include "job_fields_inl.hpp"

namespace gpuplace {

GPUPLACE_INLINE trace_options trace_options_from_json(const detail::json& j, std::string_view path, const std::vector<job_field>& fields) {
    using namespace detail;
    trace_options o;
    if (auto it = j.find("columns"); it != j.end()) {
        const auto p = join_path(path, "columns");
        if (!it->is_object() || it->empty())
            config_fail(p, "expected an object {\"<reader's column>\": \"<the file's column>\" or {\"column\": ..., \"unit\": ...}}, got " +
                               short_dump(*it));
        std::string allowed = "submit_time, num_gpus (or gpus), duration, steps, model, gpu_fraction";
        for (const auto& f : fields) allowed += ", " + f.name;
        for (auto e = it->begin(); e != it->end(); ++e) {
            const auto ep = join_path(p, e.key());
            trace_column c;
            c.role = e.key() == "gpus" ? "num_gpus" : e.key();
            const bool builtin = c.role == "submit_time" || c.role == "num_gpus" || c.role == "duration" || c.role == "steps" ||
                                 c.role == "model" || c.role == "gpu_fraction";
            if (!builtin && field_index(fields, c.role) == std::string_view::npos)
                config_fail(ep, "unknown column \"" + e.key() + "\" (allowed: " + allowed + "; a field of one's own must be declared in /job_fields)");
            for (const auto& other : o.columns)
                if (other.role == c.role) config_fail(ep, "\"" + e.key() + "\" is mapped twice (gpus is num_gpus)");
            if (e->is_string()) {
                c.name = e->get<std::string>();
            } else if (e->is_object()) {
                check_keys(*e, ep, {"column", "unit"});
                if (!e->contains("column")) config_fail(ep, "missing key \"column\" (the file's name for it)");
                read_string(*e, ep, "column", c.name);
                std::string u = "seconds";
                read_string(*e, ep, "unit", u);
                const auto unit = enum_from_name<time_unit>(u);
                if (!unit) config_fail(join_path(ep, "unit"), "unknown unit \"" + u + "\" (allowed: " + enum_name_list<time_unit>() + ")");
                if (*unit != time_unit::seconds && c.role != "submit_time" && c.role != "duration")
                    config_fail(join_path(ep, "unit"), "a unit applies to submit_time and duration only");
                if (*unit == time_unit::timestamp && c.role != "submit_time")
                    config_fail(join_path(ep, "unit"), "\"timestamp\" (a date and time) applies to submit_time only");
                c.unit = *unit;
            } else {
                config_fail(ep, "expected the file's column name or {\"column\": ..., \"unit\": ...}, got " + short_dump(*e));
            }
            if (c.name.empty()) config_fail(ep, "empty column name");
            o.columns.push_back(std::move(c));
        }
    }
    if (auto it = j.find("ignore_columns"); it != j.end()) {
        const auto p = join_path(path, "ignore_columns");
        if (!it->is_array()) config_fail(p, "expected an array of the file's column names, got " + short_dump(*it));
        for (std::size_t i = 0; i < it->size(); ++i) {
            if (!(*it)[i].is_string()) config_fail(join_path(p, std::to_string(i)), "expected a column name, got " + short_dump((*it)[i]));
            o.ignore.push_back((*it)[i].get<std::string>());
        }
    }
    if (auto it = j.find("model_mix"); it != j.end()) {
        const auto p = join_path(path, "model_mix");
        if (it->is_string()) {
            o.mix.mix = it->get<std::string>();
        } else if (it->is_object()) {
            check_keys(*it, p, {"mix", "seed", "weights"});
            read_string(*it, p, "mix", o.mix.mix);
            read_int(*it, p, "seed", o.mix.seed, 0, (1LL << 62));
            if (it->contains("weights")) read_model_weights(json{{"models", it->at("weights")}}, p, o.mix.weights);
        } else {
            config_fail(p, "expected a mix's name (by_row, uniform) or {\"mix\": ..., \"seed\": ..., \"weights\": {...}}, got " + short_dump(*it));
        }
        const auto& m = o.mix.mix;
        if (m != "by_row" && m != "uniform" && m != "weighted")
            config_fail(it->is_string() ? p : join_path(p, "mix"), "unknown model mix \"" + m + "\" (allowed: by_row, uniform, weighted)");
        if ((m == "weighted") != !o.mix.weights.empty())
            config_fail(p, m == "weighted" ? "mix \"weighted\" needs \"weights\": {\"<model name>\": weight}" : "weights go with mix \"weighted\"");
        if (m == "weighted") {
            double total = 0;
            for (const auto& w : o.mix.weights) total += w.second;
            if (!(total > 0)) config_fail(join_path(p, "weights"), "the weights sum to 0");
        }
        if (j.contains("model")) config_fail(p, "\"model\" (one model for every row) and \"model_mix\" exclude each other");
    }
    if (auto it = j.find("window"); it != j.end()) {
        const auto p = join_path(path, "window");
        if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !((*it)[1].is_number() || (*it)[1].is_null()))
            config_fail(p, "expected [start, end] in seconds (end may be null), got " + short_dump(*it));
        o.window_start = (*it)[0].get<double>();
        if ((*it)[1].is_number()) o.window_end = (*it)[1].get<double>();
        if (!(o.window_end > o.window_start)) config_fail(p, "the window " + short_dump(*it) + " is empty");
    }
    read_int(j, path, "max_jobs", o.max_jobs, 0, 1LL << 40);
    read_number(j, path, "time_scale", o.time_scale, min_time_scale, max_time_scale);
    read_number(j, path, "target_load", o.target_load, 0.0, 1e6);
    read_int(j, path, "max_gpus", o.max_gpus, 0, 1 << 24);
    read_bool(j, path, "drop_oversized", o.drop_oversized);
    read_bool(j, path, "skip_bad_rows", o.skip_bad_rows);
    read_string(j, path, "model", o.model);
    std::string u(to_string(o.unmeasured));
    read_string(j, path, "unmeasured", u);
    o.unmeasured = parse_unmeasured_size(u, join_path(path, "unmeasured"));
    return o;
}

GPUPLACE_INLINE void trace_options_to_json(const trace_options& o, detail::json& j) {
    j["window"] = {o.window_start, std::isfinite(o.window_end) ? detail::json(o.window_end) : detail::json(nullptr)};
    j["max_jobs"] = o.max_jobs;
    j["time_scale"] = o.time_scale;
    j["target_load"] = o.target_load;
    j["max_gpus"] = o.max_gpus;
    j["drop_oversized"] = o.drop_oversized;
    j["skip_bad_rows"] = o.skip_bad_rows;
    if (!o.model.empty()) j["model"] = o.model;
    if (o.unmeasured != unmeasured_size::extrapolate) j["unmeasured"] = to_string(o.unmeasured);  // other scenarios' JSON is unchanged
    if (!o.mix.mix.empty()) {
        detail::json m = {{"mix", o.mix.mix}, {"seed", o.mix.seed}};
        if (!o.mix.weights.empty()) {
            m["weights"] = detail::json::object();
            for (const auto& [n, w] : o.mix.weights) m["weights"][n] = w;
        }
        j["model_mix"] = m;
    }
    if (!o.columns.empty()) {
        detail::json c = detail::json::object();
        for (const auto& col : o.columns)
            c[col.role] = col.unit == time_unit::seconds ? detail::json(col.name) : detail::json{{"column", col.name}, {"unit", to_string(col.unit)}};
        j["columns"] = c;
    }
    if (!o.ignore.empty()) j["ignore_columns"] = o.ignore;
}

GPUPLACE_INLINE void detail::read_model_weights(const json& j, std::string_view path, std::vector<std::pair<std::string, double>>& out) {
    const auto it = j.find("models");
    if (it == j.end()) return;
    const auto p = join_path(path, "models");
    if (!it->is_object()) config_fail(p, "expected an object {\"<model name>\": weight}, got " + short_dump(*it));
    for (auto e = it->begin(); e != it->end(); ++e) {
        if (!e->is_number() || e->get<double>() < 0) config_fail(join_path(p, e.key()), "expected a weight >= 0, got " + short_dump(*e));
        out.emplace_back(e.key(), e->get<double>());
    }
}

// Each built-in kind's keys (builtin_workload_kinds' order: detail::builtin_workload_readers)

GPUPLACE_INLINE void detail::read_trace_workload(const json& j, std::string_view path, const std::vector<job_field>& fields, workload_config& c) {
    using namespace detail;
    check_keys(j, path, {"kind", "format", "path", "window", "max_jobs", "time_scale", "target_load", "max_gpus",
                         "drop_oversized", "skip_bad_rows", "model", "model_mix", "columns", "ignore_columns", "episode_jobs", "unmeasured", "merge_as"});
    std::string fmt;
    read_string(j, path, "format", fmt);
    if (!j.contains("format")) config_fail(path, "kind \"trace\" needs \"format\" (philly, openb or csv)");
    if (!detail::enum_from_name<trace_format>(fmt) && find_trace_format(fmt)) {  // a format registered by name (trace_registry.hpp)
        c.format = trace_format::registered;
        c.format_name = fmt;
    } else if (!detail::enum_from_name<trace_format>(fmt)) {
        config_fail(join_path(path, "format"), "unknown trace format \"" + fmt + "\" (allowed: " + trace_format_names() + ")");
    } else {
        c.format = parse_trace_format(fmt, join_path(path, "format"));
    }
    if (auto it = j.find("path"); it != j.end() && it->is_array()) {  // several files: each episode replays one
        const auto p = join_path(path, "path");
        if (it->empty()) config_fail(p, "expected a file name or a non-empty list of file names");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const auto& f = (*it)[i];
            if (!f.is_string() || f.get<std::string>().empty())
                config_fail(join_path(p, std::to_string(i)), "expected a file name, got " + short_dump(f));
            (i == 0 ? c.path : c.more_paths.emplace_back()) = f.get<std::string>();
        }
    } else {
        read_string(j, path, "path", c.path);
    }
    if (c.path.empty()) config_fail(join_path(path, "path"), "kind \"trace\" needs the trace file's path");
    auto opts = j;
    if (auto it = j.find("target_load"); it != j.end() && it->is_array()) {  // a range: drawn per episode
        const auto range = read_range(*it, join_path(path, "target_load"), 1e-6, 1e6);
        opts["target_load"] = range.first;
        c.target_load_max = range.second;
    }
    c.trace_opts = trace_options_from_json(opts, path, fields);
    if ((!c.trace_opts.columns.empty() || !c.trace_opts.ignore.empty()) && c.format != trace_format::csv)
        config_fail(join_path(path, c.trace_opts.columns.empty() ? "ignore_columns" : "columns"),
                    "maps a csv trace's header; format \"" + (c.format_name.empty() ? std::string(to_string(c.format)) : c.format_name) +
                        "\" has its own columns");
    read_int(j, path, "episode_jobs", c.episode_jobs, 0, 1LL << 40);
    read_string(j, path, "merge_as", c.merge_as);
}

GPUPLACE_INLINE void detail::read_mixture_workload(const json& j, std::string_view path, const std::vector<job_field>& fields, workload_config& c) {
    using namespace detail;
    check_keys(j, path, {"kind", "components"});
    const auto p = join_path(path, "components");
    const auto it = j.find("components");
    if (it == j.end() || !it->is_array() || it->empty())
        config_fail(p, "kind \"mixture\" needs a non-empty list of {\"weight\": w, \"workload\": {...}}");
    double total = 0;
    for (std::size_t i = 0; i < it->size(); ++i) {
        const auto cp = join_path(p, std::to_string(i));
        const auto& e = (*it)[i];
        check_keys(e, cp, {"weight", "workload"});
        workload_component comp;
        read_number(e, cp, "weight", comp.weight, 0.0, 1e12);
        if (!e.contains("workload")) config_fail(cp, "missing key \"workload\"");
        comp.workload = workload_from_json(e["workload"], join_path(cp, "workload"), fields);
        total += comp.weight;
        c.components.push_back(std::move(comp));
    }
    if (!(total > 0)) config_fail(p, "the weights sum to 0");
}

GPUPLACE_INLINE void detail::read_proximity_drl_workload(const json& j, std::string_view path, const std::vector<job_field>& fields, workload_config& c) {
    using namespace detail;
    check_keys(j, path, {"kind", "num_jobs", "max_length", "max_request", "time_step", "arrival_rate", "models"});
    auto& w = c.proximity_drl;
    read_int(j, path, "num_jobs", w.num_jobs, 1, 10'000'000);
    read_int(j, path, "max_length", w.max_length, 1, 1'000'000);
    read_int(j, path, "max_request", w.max_request, 1, 1 << 24);
    read_number(j, path, "time_step", w.time_step, 1e-9, 1e12);
    read_number(j, path, "arrival_rate", w.arrival_rate, 0.0, 1e12);
    read_model_weights(j, path, w.models);
    (void)fields;
}

// synthetic and jobs: the same keys (a synthetic workload may give a job list, which kind "jobs" replays)
GPUPLACE_INLINE void detail::read_generated_workload(const json& j, std::string_view path, const std::vector<job_field>& fields, workload_config& c) {
    using namespace detail;
    check_keys(j, path, {"kind", "num_jobs", "load", "gpu_counts", "duration_min", "duration_max", "models", "jobs"});
    auto& s = c.synthetic;
    read_int(j, path, "num_jobs", s.num_jobs, 1, 10'000'000);
    if (auto it = j.find("load"); it != j.end() && it->is_array()) {
        const auto range = read_range(*it, join_path(path, "load"), 1e-6, 1e6);
        s.load = range.first;
        s.load_max = range.second;
    } else {
        read_number(j, path, "load", s.load, 1e-6, 1e6);
    }
    read_number(j, path, "duration_min", s.duration_min, min_job_duration, max_trace_time);
    read_number(j, path, "duration_max", s.duration_max, min_job_duration, max_trace_time);
    if (s.duration_max < s.duration_min)
        config_fail(join_path(path, "duration_max"), "value " + std::to_string(s.duration_max) +
                                                         " is below duration_min " + std::to_string(s.duration_min));
    if (auto it = j.find("gpu_counts"); it != j.end()) {
        const auto p = join_path(path, "gpu_counts");
        if (!it->is_object() || it->empty()) config_fail(p, "expected an object {\"<gpus>\": probability}, got " + short_dump(*it));
        s.gpu_counts.clear();
        for (auto e = it->begin(); e != it->end(); ++e) {
            const auto ep = join_path(p, e.key());
            long k = 0;
            try {
                std::size_t pos = 0;
                k = std::stol(e.key(), &pos);
                if (pos != e.key().size()) k = 0;
            } catch (const std::exception&) { k = 0; }
            if (k < 1 || k > (1 << 24)) config_fail(ep, "GPU count \"" + e.key() + "\" is not an integer >= 1");
            std::pair<double, double> w;
            if (e->is_array()) {  // a range: the weight is drawn per episode
                w = read_range(*e, ep, 0.0, 1e12);
            } else {
                if (!e->is_number() || e->get<double>() < 0)
                    config_fail(ep, "expected a probability >= 0 or a range [lo, hi], got " + short_dump(*e));
                w = {e->get<double>(), e->get<double>()};
            }
            s.gpu_counts.emplace_back(static_cast<std::uint32_t>(k), w.first);
            s.gpu_counts_max.push_back(w.second);
        }
        // sorted by GPU count, the ranges' tops along
        std::vector<std::size_t> order(s.gpu_counts.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return s.gpu_counts[a] < s.gpu_counts[b]; });
        std::vector<std::pair<std::uint32_t, double>> counts;
        std::vector<double> tops;
        bool ranged = false;
        for (auto i : order) {
            counts.push_back(s.gpu_counts[i]);
            tops.push_back(s.gpu_counts_max[i]);
            ranged = ranged || s.gpu_counts_max[i] != s.gpu_counts[i].second;
        }
        s.gpu_counts = std::move(counts);
        s.gpu_counts_max = ranged ? std::move(tops) : std::vector<double>{};
        if (ranged && s.gpu_counts.size() > 64) config_fail(p, "ranges of weights need at most 64 GPU counts");
        double tot = 0, tot_hi = 0;
        for (std::size_t i = 0; i < s.gpu_counts.size(); ++i) {
            tot += s.gpu_counts[i].second;
            tot_hi += ranged ? s.gpu_counts_max[i] : s.gpu_counts[i].second;
        }
        if (!(tot > 0) && !(ranged && tot_hi > 0)) config_fail(p, "probabilities sum to 0");
    }
    read_model_weights(j, path, s.models);
    if (auto it = j.find("jobs"); it != j.end()) {
        const auto p = join_path(path, "jobs");
        if (!it->is_array() || it->empty()) config_fail(p, "expected a non-empty array of jobs");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const auto& jj = (*it)[i];
            const auto jp = join_path(p, std::to_string(i));
            if (!jj.is_object()) config_fail(jp, "expected an object, got " + short_dump(jj));
            std::vector<job_field_value> values;
            for (auto k = jj.begin(); k != jj.end(); ++k) {
                const auto& key = k.key();
                if (key == "submit_time" || key == "num_gpus" || key == "model" || key == "work") continue;
                const auto f = field_index(fields, key);
                if (f == std::string_view::npos) {
                    std::string declared;
                    for (const auto& fd : fields) declared += ", " + fd.name;
                    config_fail(join_path(jp, key), "unknown field \"" + key + "\" (allowed: submit_time, num_gpus, model, work" + declared +
                                                        "; a field of one's own must be declared in /job_fields)");
                }
                if (!fields[f].feature.empty())
                    config_fail(join_path(jp, key), "field \"" + key + "\" is computed by observation feature \"" + fields[f].feature +
                                                        "\"; a job does not give it");
                job_field_value v;
                v.field = key;
                if (fields[f].type == field_type::number) {
                    if (!k->is_number()) config_fail(join_path(jp, key), "expected a number, got " + short_dump(*k));
                    v.number = k->get<double>();
                } else {
                    if (!k->is_string() || k->get<std::string>().empty())
                        config_fail(join_path(jp, key), "expected a category name, got " + short_dump(*k));
                    v.category = k->get<std::string>();
                    if (fields[f].closed &&
                        std::find(fields[f].categories.begin(), fields[f].categories.end(), v.category) == fields[f].categories.end())
                        config_fail(join_path(jp, key), "unknown category \"" + v.category + "\" (not in /job_fields' categories)");
                }
                values.push_back(std::move(v));
            }
            for (std::size_t f = 0; f < fields.size(); ++f)
                if (!fields[f].default_value && !jj.contains(fields[f].name))
                    config_fail(jp, "missing field \"" + fields[f].name + "\" (declared in /job_fields without a default)");
            TrainingJob job;
            job.id = static_cast<job_id>(i);
            for (const char* req : {"submit_time", "num_gpus", "model", "work"})
                if (!jj.contains(req)) config_fail(jp, std::string("missing key \"") + req + "\"");
            read_number(jj, jp, "submit_time", job.submit_time, 0.0, max_trace_time);
            read_int(jj, jp, "num_gpus", job.num_gpus, 1, 1 << 24);
            std::string model_name;
            if (jj["model"].is_string()) {
                model_name = jj["model"].get<std::string>();
                if (model_name.empty()) config_fail(join_path(jp, "model"), "expected a zoo model's name or id, got \"\"");
            } else if (jj["model"].is_number_integer()) {
                read_int(jj, jp, "model", job.model, 0, 65535);
            } else {
                config_fail(join_path(jp, "model"), "expected a zoo model's name or id, got " + short_dump(jj["model"]));
            }
            read_number(jj, jp, "work", job.work, 1e-12, 1e18);
            c.jobs.push_back(job);
            if (!model_name.empty()) {
                c.job_models.resize(c.jobs.size());
                c.job_models.back() = model_name;
            }
            if (!values.empty()) {
                c.job_values.resize(c.jobs.size());
                c.job_values.back() = std::move(values);
            }
        }
    }
    if (c.kind == "jobs" && c.jobs.empty()) config_fail(join_path(path, "jobs"), "kind \"jobs\" needs a job list");
}

GPUPLACE_INLINE workload_config workload_from_json(const detail::json& j, std::string_view path, const std::vector<job_field>& fields) {
    using namespace detail;
    workload_config c;
    if (!j.is_object()) config_fail(path, "expected an object, got " + short_dump(j));
    read_string(j, path, "kind", c.kind);
    if (const auto i = builtin_workload_kind_index(c.kind); i < std::size(builtin_workload_kinds)) {
        builtin_workload_readers[i](j, path, fields, c);
        return c;
    }
    const auto k = find_workload_kind(c.kind);  // a kind of one's own (workload_registry.hpp)
    if (!k) config_fail(join_path(path, "kind"), "unknown workload kind \"" + c.kind + "\" (allowed: " + workload_kind_names() + ")");
    c.generator = k->make(j, std::string(path));
    if (!c.generator) config_fail(path, "workload kind \"" + c.kind + "\": its factory made no generator");
    c.options = j.dump();
    return c;
}

GPUPLACE_INLINE void detail::write_trace_workload(const workload_config& w, json& j) {
    j["format"] = w.format == trace_format::registered ? w.format_name : std::string(to_string(w.format));
    j["path"] = w.more_paths.empty() ? detail::json(w.path) : detail::json(w.trace_paths());
    trace_options_to_json(w.trace_opts, j);
    if (w.target_load_max > 0) j["target_load"] = {w.trace_opts.target_load, w.target_load_max};
    j["episode_jobs"] = w.episode_jobs;
    if (!w.merge_as.empty()) j["merge_as"] = w.merge_as;  // written only when set: other scenarios are unchanged
}

GPUPLACE_INLINE void detail::write_mixture_workload(const workload_config& w, json& j) {
    j["components"] = detail::json::array();
    for (const auto& comp : w.components) j["components"].push_back({{"weight", comp.weight}, {"workload", to_json(comp.workload)}});
}

GPUPLACE_INLINE void detail::write_proximity_drl_workload(const workload_config& w, json& j) {
    const auto& p = w.proximity_drl;
    j["num_jobs"] = p.num_jobs;
    j["max_length"] = p.max_length;
    j["max_request"] = p.max_request;
    j["time_step"] = p.time_step;
    j["arrival_rate"] = p.arrival_rate;
    if (!p.models.empty()) {
        detail::json m = detail::json::object();
        for (auto& [n, wt] : p.models) m[n] = wt;
        j["models"] = m;
    }
}

GPUPLACE_INLINE void detail::write_synthetic_workload(const workload_config& w, json& j) {
    j["num_jobs"] = w.synthetic.num_jobs;
    j["load"] = w.synthetic.load_max > 0 ? detail::json{w.synthetic.load, w.synthetic.load_max} : detail::json(w.synthetic.load);
    j["duration_min"] = w.synthetic.duration_min;
    j["duration_max"] = w.synthetic.duration_max;
    detail::json g = detail::json::object();
    for (std::size_t i = 0; i < w.synthetic.gpu_counts.size(); ++i) {
        const auto [k, p] = w.synthetic.gpu_counts[i];
        g[std::to_string(k)] = w.synthetic.gpu_counts_max.empty() ? detail::json(p) : detail::json{p, w.synthetic.gpu_counts_max[i]};
    }
    j["gpu_counts"] = g;
    if (!w.synthetic.models.empty()) {
        detail::json m = detail::json::object();
        for (auto& [n, p] : w.synthetic.models) m[n] = p;
        j["models"] = m;
    }
}

GPUPLACE_INLINE void detail::write_jobs_workload(const workload_config& w, json& j) {
    detail::json arr = detail::json::array();
    for (std::size_t i = 0; i < w.jobs.size(); ++i) {
        const auto& jb = w.jobs[i];
        detail::json e = {{"submit_time", jb.submit_time}, {"num_gpus", jb.num_gpus}, {"model", jb.model}, {"work", jb.work}};
        if (i < w.job_models.size() && !w.job_models[i].empty()) e["model"] = w.job_models[i];
        if (i < w.job_values.size())
            for (const auto& v : w.job_values[i]) e[v.field] = v.category.empty() ? detail::json(v.number) : detail::json(v.category);
        arr.push_back(std::move(e));
    }
    j["jobs"] = arr;
}

GPUPLACE_INLINE detail::json to_json(const workload_config& w) {
    if (w.generator) return detail::json::parse(w.options);  // a kind of one's own: its JSON as read
    detail::json j;
    j["kind"] = w.kind;
    if (const auto i = builtin_workload_kind_index(w.kind); i < std::size(builtin_workload_kinds)) detail::builtin_workload_writers[i](w, j);
    return j;
}

}  // namespace gpuplace
