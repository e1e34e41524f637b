#pragma once
/// \file workload_source.hpp
/// The workload of an env at run time: workload_source makes each episode's jobs from a
/// workload_config (workload.hpp) and its seed, with the traces it replays read once and shared by
/// copies, the declared job fields' values and the episode's extras.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiled.hpp"
#include "feature_registry.hpp"
#include "job.hpp"
#include "job_fields.hpp"
#include "model_zoo.hpp"
#include "trace.hpp"
#include "trace_registry.hpp"
#include "workload.hpp"

namespace gpuplace {

/// Makes each episode's jobs from a workload_config. Traces are read once, at construction, and
/// shared by copies; reset-time generation is deterministic in the seed.
class workload_source {
public:
    workload_source() = default;
    /// Loads the traces of a "trace" workload (and of a mixture's): TraceError / ConfigError on bad
    /// input; a TraceError too when no job is left to replay, saying what removed the rows.
    /// `fields`: the scenario's declared job fields, read from traces and job lists; their
    /// categories go into `dict` (shared with a mixture's components; made when null).
    workload_source(const workload_config& c, const ModelZoo& zoo, std::size_t cluster_gpus, std::vector<job_field> fields = {},
                    std::shared_ptr<field_dictionary> dict = nullptr)
        : cfg_(c), fields_(std::move(fields)) {
        kind_ = resolve_kind(c);
        dict_ = dict ? std::move(dict) : std::make_shared<field_dictionary>(fields_);
        for (std::size_t k = 0; k < fields_.size(); ++k)  // computed fields: looked up once
            if (!fields_[k].feature.empty()) {
                auto f = find_observation_feature(fields_[k].feature);
                if (!f)
                    throw ConfigError("config /job_fields/" + std::to_string(k) + "/feature: observation feature \"" + fields_[k].feature +
                                      "\" is not registered (any more)");
                computed_.emplace_back(k, std::move(f));
            }
        resolve_job_list(zoo);
        if (kind_ == workload_kind_id::mixture) {
            for (const auto& comp : c.components) parts_.emplace_back(comp.workload, zoo, cluster_gpus, fields_, dict_);
            return;
        }
        if (kind_ != workload_kind_id::trace) return;
        auto opts = c.trace_opts;
        opts.fields = fields_;
        if (c.target_load_max > 0) opts.target_load = 0;  // compressed per episode instead
        const auto reader = c.format == trace_format::registered ? require_trace_format(c.format_name) : nullptr;  // looked up once
        if (!c.merge_as.empty()) opts.fields[merge_field()].default_value = std::nan("");  // set from the file, not read from it
        if (!c.merge_as.empty() && opts.target_load > 0) {  // the merged trace is compressed, per episode
            cfg_.target_load_max = std::max(cfg_.target_load_max, opts.target_load);
            cfg_.trace_opts.target_load = opts.target_load;
            opts.target_load = 0;
        }
        for (const auto& f : c.trace_paths()) {
            auto t = std::make_shared<const trace>(reader ? load_trace(reader->reader, f, zoo, opts, cluster_gpus)
                                                          : load_trace(c.format, f, zoo, opts, cluster_gpus));
            if (t->jobs.empty()) throw TraceError(t->empty_reason());
            raw_load_.push_back(t->offered_load(zoo, cluster_gpus));
            if (!fields_.empty()) trace_fields_.push_back(intern_trace_fields(*t));
            traces_.push_back(std::move(t));
        }
        if (!c.merge_as.empty()) merge_traces(zoo, cluster_gpus);
    }

    /// The loaded trace of a "trace" workload of one file, else nullptr.
    [[nodiscard]] const trace* loaded() const noexcept { return traces_.size() == 1 ? traces_[0].get() : nullptr; }

    /// Why episodes are shorter than asked, or "": per trace file with fewer jobs than episode_jobs,
    /// "the trace F has N jobs (after the trace options), fewer than the M jobs per episode asked
    /// (episode_jobs): each of its episodes replays all N" (a mixture's components too).
    [[nodiscard]] std::string short_episodes() const {
        std::string out;
        for (const auto& t : traces_)
            if (cfg_.episode_jobs > t->jobs.size())
                out += (out.empty() ? "" : "; ") + std::string("the trace ") + t->source + " has " + std::to_string(t->jobs.size()) +
                       " jobs (after the trace options), fewer than the " + std::to_string(cfg_.episode_jobs) +
                       " jobs per episode asked (episode_jobs): each of its episodes replays all " + std::to_string(t->jobs.size());
        for (const auto& p : parts_)
            if (auto s = p.short_episodes(); !s.empty()) out += (out.empty() ? "" : "; ") + s;
        return out;
    }

    /// The declared job fields, and the categories of those that are categories.
    [[nodiscard]] const std::vector<job_field>& fields() const noexcept { return fields_; }
    [[nodiscard]] const field_dictionary& dictionary() const noexcept { return *dict_; }

    /// generate(), and what the episode's jobs carry into `extras` (fields, models assigned, the
    /// computed fields' values: Error when a feature gives an infinite value).
    GPUPLACE_INLINE void generate(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed, std::vector<TrainingJob>& out,
                                  episode_extras& extras) const;

    /// Fills `out` with the jobs of the episode of `seed`, sorted by submit time.
    void generate(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed, std::vector<TrainingJob>& out) const {
        if (kind_ == workload_kind_id::synthetic) {
            generate_synthetic(cfg_.synthetic, zoo, cluster_gpus, seed, out);
        } else if (kind_ == workload_kind_id::proximity_drl) {
            generate_proximity_drl(cfg_.proximity_drl, zoo, seed, out);
        } else if (kind_ == workload_kind_id::trace) {
            const std::size_t f = trace_file(seed);
            const auto& v = traces_[f]->jobs;
            std::size_t first = 0, n = v.size();
            if (cfg_.episode_jobs > 0 && cfg_.episode_jobs < v.size()) {
                detail::rng r(detail::mix_seed(seed, 0x657069736f6465ULL));
                n = cfg_.episode_jobs;
                first = r.below(v.size() - n + 1);
            }
            out.assign(v.begin() + std::ptrdiff_t(first), v.begin() + std::ptrdiff_t(first + n));
            double scale = 1.0;
            if (cfg_.target_load_max > 0 && raw_load_[f] > 0) {  // the file compressed to a load drawn for this episode
                detail::rng r(detail::mix_seed(seed, 0x6c6f6164ULL));  // "load"
                scale = raw_load_[f] / r.uniform(cfg_.trace_opts.target_load, cfg_.target_load_max);
            }
            const double t0 = out.empty() ? 0.0 : out.front().submit_time;
            for (std::size_t i = 0; i < out.size(); ++i) {
                out[i].id = static_cast<job_id>(i);
                out[i].submit_time -= t0;
                if (scale != 1.0) out[i].submit_time *= scale;
            }
        } else if (kind_ == workload_kind_id::mixture) {
            parts_[pick_component(seed)].generate(zoo, cluster_gpus, seed, out);
        } else if (kind_ == workload_kind_id::registered) {
            generate_registered(zoo, cluster_gpus, seed, out);
        } else {
            out.assign(cfg_.jobs.begin(), cfg_.jobs.end());
            std::stable_sort(out.begin(), out.end(), detail::by_submit_time{});
        }
    }

    /// An upper bound on the GPUs all jobs of one episode request on a cluster of G GPUs (0 for a
    /// fixed job list, whose first episode sizes the buffers for all).
    [[nodiscard]] std::size_t max_episode_gpus(std::size_t G) const {
        if (kind_ == workload_kind_id::registered) return cfg_.generator->max_episode_gpus(G);
        if (kind_ == workload_kind_id::synthetic) {
            std::size_t k = 0;
            for (std::size_t c = 0; c < cfg_.synthetic.gpu_counts.size(); ++c) {
                const double hi = c < cfg_.synthetic.gpu_counts_max.size() ? cfg_.synthetic.gpu_counts_max[c] : 0.0;
                if (cfg_.synthetic.gpu_counts[c].second > 0 || hi > 0)
                    k = std::max<std::size_t>(k, cfg_.synthetic.gpu_counts[c].first);
            }
            return cfg_.synthetic.num_jobs * std::min(k, G);
        }
        if (kind_ == workload_kind_id::proximity_drl) return cfg_.proximity_drl.num_jobs * std::min<std::size_t>(cfg_.proximity_drl.max_request, G);
        std::size_t best = 0;
        for (const auto& t : traces_) {
            std::size_t total = 0;
            for (const auto& j : t->jobs) total += std::min<std::size_t>(j.num_gpus, G);
            best = std::max(best, total);
        }
        for (const auto& p : parts_) best = std::max(best, p.max_episode_gpus(G));
        return best;
    }

    /// An upper bound on the distinct (model, GPU share, memory) kinds of job in one episode, for
    /// a zoo of `zoo_models` models: the zoo's models for generated workloads, the distinct
    /// (model, share) pairs of a trace, the jobs of a fixed list.
    [[nodiscard]] std::size_t max_job_kinds(std::size_t zoo_models) const {
        std::size_t n = zoo_models;
        for (const auto& t : traces_) {
            std::vector<std::pair<model_id, double>> keys;
            keys.reserve(t->jobs.size());
            for (const auto& j : t->jobs) keys.emplace_back(j.model, double(j.gpu_fraction));
            std::sort(keys.begin(), keys.end());
            n = std::max<std::size_t>(n, std::size_t(std::unique(keys.begin(), keys.end()) - keys.begin()));
        }
        if (kind_ == workload_kind_id::jobs) n = std::max(n, cfg_.jobs.size());
        for (const auto& p : parts_) n = std::max(n, p.max_job_kinds(zoo_models));
        return n;
    }

    /// A job that can never run on G GPUs, or a model the zoo does not have, is a ConfigError naming
    /// its JSON path (checked when the env is built, not at the first reset()).
    void validate(const ModelZoo& zoo, std::size_t G, const std::string& path = "config /workload") const {
        if (kind_ == workload_kind_id::jobs)
            for (std::size_t i = 0; i < cfg_.jobs.size(); ++i) {
                const auto p = path + "/jobs/" + std::to_string(i);
                if (cfg_.jobs[i].num_gpus > G)
                    throw ConfigError(p + "/num_gpus: job " + std::to_string(i) + " requests " + std::to_string(cfg_.jobs[i].num_gpus) +
                                      " GPUs, which can never fit in a cluster of " + std::to_string(G) + " GPUs");
                if (cfg_.jobs[i].model >= zoo.size())
                    throw ConfigError(p + "/model: model id " + std::to_string(cfg_.jobs[i].model) + " is not in the zoo (" +
                                      std::to_string(zoo.size()) + " models)");
            }
        if (kind_ == workload_kind_id::synthetic) {
            for (std::size_t c = 0; c < cfg_.synthetic.gpu_counts.size(); ++c) {
                const auto [k, p] = cfg_.synthetic.gpu_counts[c];
                const double hi = c < cfg_.synthetic.gpu_counts_max.size() ? cfg_.synthetic.gpu_counts_max[c] : 0.0;
                if ((p > 0 || hi > 0) && k > G)
                    throw ConfigError(path + "/gpu_counts/" + std::to_string(k) + ": jobs of " + std::to_string(k) +
                                      " GPUs can never fit in a cluster of " + std::to_string(G) + " GPUs");
            }
            for (const auto& m : cfg_.synthetic.models) {
                try {
                    (void)zoo.find(m.first);
                } catch (const ConfigError& e) {
                    throw ConfigError(path + "/models/" + m.first + ": " + e.what());
                }
            }
        }
        for (std::size_t i = 0; i < parts_.size(); ++i) parts_[i].validate(zoo, G, path + "/components/" + std::to_string(i) + "/workload");
    }

private:
    /// The kind of `c`: a built-in one by name, or one of one's own (its generator); ConfigError
    /// for a name that is neither.
    [[nodiscard]] GPUPLACE_INLINE static workload_kind_id resolve_kind(const workload_config& c);
    /// A kind of one's own: its generator's jobs, sorted and numbered, each checked.
    GPUPLACE_INLINE void generate_registered(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed,
                                             std::vector<TrainingJob>& out) const;
    /// generate(extras) but the computed fields (a mixture's component fills them, its parent computes them).
    GPUPLACE_INLINE void fill_extras(const ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed, std::vector<TrainingJob>& out,
                                     episode_extras& extras) const;
    /// A mixture's component for the episode of `seed`, drawn by weight.
    [[nodiscard]] std::size_t pick_component(std::uint64_t seed) const noexcept {
        double total = 0;
        for (const auto& c : cfg_.components) total += c.weight;
        detail::rng r(detail::mix_seed(seed, 0x6d6978747572ULL));  // "mixtur"
        double u = r.uniform() * total;
        for (std::size_t i = 0; i < cfg_.components.size(); ++i) {
            if (u < cfg_.components[i].weight) return i;
            u -= cfg_.components[i].weight;
        }
        return cfg_.components.size() - 1;
    }

    /// Kind "jobs": the models given by name, and the fields' table in list order (job_table_).
    GPUPLACE_INLINE void resolve_job_list(const ModelZoo& zoo);
    /// A trace's fields with its categories' indices into the dictionary's.
    [[nodiscard]] GPUPLACE_INLINE std::vector<double> intern_trace_fields(const trace& t);
    /// merge_as: its declared category field (ConfigError naming it otherwise).
    [[nodiscard]] GPUPLACE_INLINE std::size_t merge_field() const;
    /// merge_as: the loaded files merged into one trace, the field merge_as set to each job's file.
    GPUPLACE_INLINE void merge_traces(const ModelZoo& zoo, std::size_t cluster_gpus);
    /// The trace file an episode of `seed` replays.
    [[nodiscard]] std::size_t trace_file(std::uint64_t seed) const noexcept {
        if (traces_.size() <= 1) return 0;
        detail::rng r(detail::mix_seed(seed, 0x7472616365ULL));  // "trace": which file
        return r.below(traces_.size());
    }

    workload_config cfg_;
    workload_kind_id kind_ = workload_kind_id::synthetic;
    std::vector<job_field> fields_;
    std::shared_ptr<field_dictionary> dict_;
    std::vector<double> job_table_;                     ///< kind "jobs": jobs x fields, in list order
    std::vector<std::vector<double>> trace_fields_;     ///< kind "trace": per file, its jobs x fields (dictionary indices)
    std::vector<std::shared_ptr<const trace>> traces_;  ///< kind "trace": one per file
    std::vector<double> raw_load_;                      ///< per file: its offered load as loaded
    std::vector<workload_source> parts_;                ///< kind "mixture": one per component
    std::vector<std::pair<std::size_t, std::shared_ptr<const registered_job_feature>>> computed_;  ///< computed fields: column, feature
};

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/workload_source_inl.hpp"  // its job fields and extras (compiled once in gpuplace::compiled otherwise)
#endif
