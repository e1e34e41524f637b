#pragma once
/// \file impl/workload_source_inl.hpp
/// workload_source's declared job fields and episode extras (workload_source.hpp declares them): a job
/// list's models given by name and its fields' table, a trace's fields with their categories
/// interned into the workload's dictionary, and generate() with the extras: included by
/// workload_source.hpp in the header-only library, compiled once into gpuplace::compiled
/// (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../workload_source.hpp"

namespace gpuplace {

GPUPLACE_INLINE workload_kind_id workload_source::resolve_kind(const workload_config& c) {
    if (c.generator) return workload_kind_id::registered;
    const auto i = builtin_workload_kind_index(c.kind);
    if (i < std::size(builtin_workload_kinds)) return workload_kind_id(i);
    std::string known;
    for (const auto& k : builtin_workload_kinds) known += (known.empty() ? "" : ", ") + std::string(k.name);
    throw ConfigError("workload kind \"" + c.kind + "\": not a built-in kind (" + known +
                      ") and no generator (a kind of one's own is read from JSON: json/workload_registry.hpp)");
}

GPUPLACE_INLINE void workload_source::generate_registered(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed,
                                                          std::vector<TrainingJob>& out) const {
    out.clear();
    cfg_.generator->generate(zoo, cluster_gpus, seed, out);
    std::stable_sort(out.begin(), out.end(), detail::by_submit_time{});
    for (std::size_t i = 0; i < out.size(); ++i) {
        auto& j = out[i];
        const auto where = [&] { return "workload kind \"" + cfg_.kind + "\", episode seed " + std::to_string(seed) + ": job " + std::to_string(i); };
        if (j.num_gpus < 1 || j.num_gpus > cluster_gpus)
            throw ConfigError(where() + " requests " + std::to_string(j.num_gpus) + " GPUs (expected 1 to the cluster's " +
                              std::to_string(cluster_gpus) + ")");
        if (j.model >= zoo.size())
            throw ConfigError(where() + ": model id " + std::to_string(j.model) + " is not in the zoo (" + std::to_string(zoo.size()) + " models)");
        if (!(j.work > 0) || !std::isfinite(j.work) || !(j.submit_time >= 0) || !std::isfinite(j.submit_time))
            throw ConfigError(where() + ": expected work > 0 and a submit time >= 0, got work " + std::to_string(j.work) + ", submit time " +
                              std::to_string(j.submit_time));
        j.id = static_cast<job_id>(i);
    }
    if (out.empty()) throw ConfigError("workload kind \"" + cfg_.kind + "\", episode seed " + std::to_string(seed) + ": no jobs");
}

GPUPLACE_INLINE void workload_source::resolve_job_list(const ModelZoo& zoo) {
    if (kind_ != workload_kind_id::jobs) return;
    const std::string path = "config /workload/jobs/";
    for (std::size_t i = 0; i < cfg_.job_models.size() && i < cfg_.jobs.size(); ++i) {
        if (cfg_.job_models[i].empty()) continue;
        try {
            cfg_.jobs[i].model = zoo.find(cfg_.job_models[i]);
        } catch (const ConfigError& e) {
            throw ConfigError(path + std::to_string(i) + "/model: " + e.what());
        }
    }
    const std::size_t F = fields_.size();
    if (F == 0) return;
    job_table_.assign(cfg_.jobs.size() * F, std::nan(""));
    for (std::size_t i = 0; i < cfg_.jobs.size(); ++i) {
        for (std::size_t f = 0; f < F; ++f) job_table_[i * F + f] = fields_[f].default_value.value_or(std::nan(""));
        std::vector<bool> given(F, false);
        if (i < cfg_.job_values.size())
            for (const auto& v : cfg_.job_values[i]) {
                const auto f = field_index(fields_, v.field);
                if (f == std::string_view::npos)
                    throw ConfigError(path + std::to_string(i) + "/" + v.field + ": unknown job field \"" + v.field +
                                      "\" (declare it in /job_fields)");
                given[f] = true;
                if (fields_[f].type == field_type::number) {
                    job_table_[i * F + f] = v.number;
                    continue;
                }
                const auto idx = dict_->intern(f, v.category, fields_[f].closed);
                if (!idx) {
                    std::string list;
                    for (const auto& c : dict_->categories(f)) list += (list.empty() ? "" : ", ") + c;
                    throw ConfigError(path + std::to_string(i) + "/" + v.field + ": unknown category \"" + v.category + "\" (allowed: " + list + ")");
                }
                job_table_[i * F + f] = *idx;
            }
        for (std::size_t f = 0; f < F; ++f)
            if (!given[f] && !fields_[f].default_value && kind_ == workload_kind_id::jobs)
                throw ConfigError(path + std::to_string(i) + ": the job field \"" + fields_[f].name + "\" is missing, and it has no default");
    }
}

GPUPLACE_INLINE std::vector<double> workload_source::intern_trace_fields(const trace& t) {
    const std::size_t F = fields_.size();
    std::vector<double> out = t.field_values;
    for (std::size_t f = 0; f < F; ++f) {
        if (fields_[f].type != field_type::category) continue;
        std::vector<double> map(t.categories[f].size());
        for (std::size_t c = 0; c < map.size(); ++c) map[c] = dict_->intern(f, t.categories[f][c], false).value_or(std::nan(""));
        for (std::size_t j = 0; j < t.jobs.size(); ++j) {
            auto& v = out[j * F + f];
            if (v == v) v = map[std::size_t(v)];
        }
    }
    return out;
}

GPUPLACE_INLINE std::size_t workload_source::merge_field() const {
    const std::string path = "config /workload/merge_as";
    const auto f = field_index(fields_, cfg_.merge_as);
    if (f == std::string_view::npos) throw ConfigError(path + ": job field \"" + cfg_.merge_as + "\" is not declared (add it to /job_fields)");
    if (fields_[f].type != field_type::category) throw ConfigError(path + ": job field \"" + cfg_.merge_as + "\" must be a category");
    return f;
}

GPUPLACE_INLINE void workload_source::merge_traces(const ModelZoo& zoo, std::size_t cluster_gpus) {
    const std::string path = "config /workload/merge_as";
    const auto f = merge_field();
    const std::size_t F = fields_.size();
    struct row {
        double submit;
        std::size_t file, job;
    };
    std::vector<row> rows;
    auto m = std::make_shared<trace>();
    std::vector<double> value(traces_.size());
    for (std::size_t k = 0; k < traces_.size(); ++k) {
        const auto& t = *traces_[k];
        const std::string stem = std::filesystem::path(t.source).stem().string();
        const auto idx = dict_->intern(f, stem, fields_[f].closed);
        if (!idx) {
            std::string list;
            for (const auto& c : dict_->categories(f)) list += (list.empty() ? "" : ", ") + c;
            throw ConfigError(path + ": the file " + display_path(t.source) + " would be category \"" + stem + "\" of field \"" +
                              cfg_.merge_as + "\", which is not among its categories (" + list + ")");
        }
        value[k] = *idx;
        for (std::size_t j = 0; j < t.jobs.size(); ++j) rows.push_back({t.jobs[j].submit_time, k, j});
        m->source += (m->source.empty() ? "" : " + ") + t.source;
        m->rows += t.rows, m->skipped_bad += t.skipped_bad, m->filtered += t.filtered, m->outside += t.outside;
        m->capped += t.capped, m->dropped += t.dropped, m->unmeasured += t.unmeasured, m->models_assigned += t.models_assigned;
        m->bad_rows.insert(m->bad_rows.end(), t.bad_rows.begin(), t.bad_rows.end());
    }
    std::stable_sort(rows.begin(), rows.end(), [](const row& a, const row& b) { return a.submit < b.submit; });
    std::vector<double> fields(rows.size() * F);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& t = *traces_[rows[i].file];
        m->jobs.push_back(t.jobs[rows[i].job]);
        m->jobs.back().id = static_cast<job_id>(i);
        m->model_assigned.push_back(rows[i].job < t.model_assigned.size() ? t.model_assigned[rows[i].job] : 0);
        std::copy_n(trace_fields_[rows[i].file].begin() + std::ptrdiff_t(rows[i].job * F), F, fields.begin() + std::ptrdiff_t(i * F));
        fields[i * F + f] = value[rows[i].file];
    }
    traces_.assign(1, std::move(m));
    trace_fields_.assign(1, std::move(fields));
    raw_load_.assign(1, traces_[0]->offered_load(zoo, cluster_gpus));
}

GPUPLACE_INLINE void workload_source::generate(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed,
                                               std::vector<TrainingJob>& out, episode_extras& extras) const {
    fill_extras(zoo, cluster_gpus, seed, out, extras);
    if (computed_.empty()) return;
    const std::size_t F = extras.width;
    for (const auto& [k, feature] : computed_)  // in declaration order: a feature sees the ones before it
        for (std::size_t i = 0; i < out.size(); ++i) {
            const std::span<const double> row(extras.fields.data() + i * F, F);
            const double v = feature->value(job_feature_view{out[i], zoo[out[i].model].name, row, fields_});
            if (std::isinf(v))
                throw Error("observation feature \"" + feature->name + "\": job " + std::to_string(i) + " of the episode of seed " +
                            std::to_string(seed) + ": value " + std::to_string(v) + ", not a finite number (NaN marks a missing one)");
            extras.fields[i * F + k] = v;
        }
}

GPUPLACE_INLINE void workload_source::fill_extras(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed,
                                                  std::vector<TrainingJob>& out, episode_extras& extras) const {
    if (kind_ == workload_kind_id::mixture) {
        parts_[pick_component(seed)].fill_extras(zoo, cluster_gpus, seed, out, extras);
        return;
    }
    generate(zoo, cluster_gpus, seed, out);
    const std::size_t F = fields_.size(), n = out.size();
    extras.width = F;
    extras.models_assigned = 0;
    extras.fields.assign(n * F, std::nan(""));
    if (kind_ == workload_kind_id::trace) {
        const std::size_t f = trace_file(seed);
        const auto& t = *traces_[f];
        // the window generate() took: a run of n consecutive jobs, found again from the seed
        std::size_t first = 0;
        if (cfg_.episode_jobs > 0 && cfg_.episode_jobs < t.jobs.size()) {
            detail::rng r(detail::mix_seed(seed, 0x657069736f6465ULL));
            first = r.below(t.jobs.size() - cfg_.episode_jobs + 1);
        }
        for (std::size_t i = 0; i < n && first + i < t.model_assigned.size(); ++i) extras.models_assigned += t.model_assigned[first + i];
        if (F > 0) std::copy_n(trace_fields_[f].begin() + std::ptrdiff_t(first * F), n * F, extras.fields.begin());
        return;
    }
    if (F == 0) return;
    if (kind_ == workload_kind_id::jobs) {  // the list sorted by submit time as generate() sorted it (stably), its indices in the ids
        std::vector<TrainingJob> order(cfg_.jobs.begin(), cfg_.jobs.end());
        for (std::size_t i = 0; i < order.size(); ++i) order[i].id = static_cast<job_id>(i);
        std::stable_sort(order.begin(), order.end(), detail::by_submit_time{});
        for (std::size_t i = 0; i < n; ++i)
            std::copy_n(job_table_.begin() + std::ptrdiff_t(std::size_t(order[i].id) * F), F, extras.fields.begin() + std::ptrdiff_t(i * F));
        return;
    }
    // generated jobs: each field drawn (a stream of the seed's own, so the jobs are what they are
    // without fields), or its default
    detail::rng r(detail::mix_seed(seed, 0x6669656c6473ULL));  // "fields"
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < F; ++k) {
            const auto& f = fields_[k];
            double v = f.default_value.value_or(std::nan(""));
            if (f.type == field_type::number && f.draw_hi > f.draw_lo) {
                v = r.uniform(f.draw_lo, f.draw_hi);
            } else if (!f.draw_weights.empty()) {
                double total = 0;
                for (double w : f.draw_weights) total += w;
                double u = r.uniform() * total;
                std::size_t c = f.draw_weights.size() - 1;
                for (std::size_t t = 0; t < f.draw_weights.size(); ++t) {
                    if (u < f.draw_weights[t]) {
                        c = t;
                        break;
                    }
                    u -= f.draw_weights[t];
                }
                v = double(c);
            }
            extras.fields[i * F + k] = v;
        }
}

}  // namespace gpuplace
