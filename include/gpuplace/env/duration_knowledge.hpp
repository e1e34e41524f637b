#pragma once
/// \file env/duration_knowledge.hpp
/// What the scheduling core knows of the jobs' durations (information.hpp's durations_config): the
/// duration each job is shown (the truth, an estimate, or nothing), and the sampled distribution
/// of job sizes that the Gittins index, model_mean estimates and forked futures draw from.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../discipline_registry.hpp"
#include "../error.hpp"
#include "../information.hpp"
#include "../job.hpp"
#include "../model_zoo.hpp"
#include "../workload_source.hpp"
#include "../detail/rng.hpp"

namespace gpuplace::env_detail {

class duration_knowledge {
public:
    /// Checks the durations and preemption options against the queue policy and co-location
    /// (a ConfigError naming the key and the value).
    static void check(const scenario& cfg) {
        const auto& d = cfg.durations;
        const auto& p = cfg.preemption;
        const auto order = cfg.env.order;
        const std::string name = queue_policy_name(cfg.env);
        if (order == queue_order::registered) (void)require_discipline(name);  // a name no longer (or never) registered
        if (d.mode == duration_info::hidden && (order == queue_order::sjf || order == queue_order::srtf))
            throw ConfigError("config /env/queue_policy: \"" + name + "\" orders jobs by their duration, which durations \"hidden\" does not show");
        if (is_preemptive(order) && !p.enabled)
            throw ConfigError("config /env/queue_policy: \"" + name + "\" is a preemptive discipline: it needs /preemption/enabled");
        if (p.enabled && !is_preemptive(order))
            throw ConfigError("config /preemption/enabled: needs a preemptive /env/queue_policy (las, 2d_las, gittins, srtf, capacity, drf, themis, edf, edf_ac or a registered discipline), got \"" + name + "\"");
        if (p.enabled && cfg.colocation.enabled) throw ConfigError("config /preemption/enabled: not supported with co-location");
        if (d.mode != duration_info::oracle && cfg.colocation.enabled)
            throw ConfigError("config /durations/mode: \"" + std::string(to_string(d.mode)) + "\" is not supported with co-location");
        for (const auto& [key, v] : {std::pair{"restart_overhead", p.restart_overhead}, {"checkpoint_interval", p.checkpoint_interval},
                                     {"round", p.round}, {"starvation", p.starvation}})
            if (!(v >= 0) || !std::isfinite(v))
                throw ConfigError(std::string("config /preemption/") + key + ": must be a finite number >= 0 (got " + number(v) + ")");
        if (!(p.gittins_quantum > 0) || !std::isfinite(p.gittins_quantum))
            throw ConfigError("config /preemption/gittins_quantum: must be a finite number > 0 (got " + number(p.gittins_quantum) + ")");
        if (p.enabled && order == queue_order::two_d_las && p.thresholds.empty())
            throw ConfigError("config /preemption/thresholds: 2d_las needs at least one queue threshold (GPU-seconds; e.g. [3250, 7200]), got none");
        for (std::size_t i = 0; i < p.thresholds.size(); ++i)
            if (!(p.thresholds[i] > 0) || (i > 0 && !(p.thresholds[i] > p.thresholds[i - 1])))
                throw ConfigError("config /preemption/thresholds: must be positive and increasing (item " + std::to_string(i) + ")");
        if (!(d.sigma >= 0) || !std::isfinite(d.sigma)) throw ConfigError("config /durations/sigma: must be a finite number >= 0 (got " + number(d.sigma) + ")");
    }

    /// `v` as a message shows it ("30", "0.5", "nan", "inf", "-1").
    [[nodiscard]] static std::string number(double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%g", v);
        return b;
    }

    /// Whether the scenario needs the sample from the start (the Gittins index, model_mean
    /// estimates); forks of a hidden-duration env sample on first use.
    [[nodiscard]] static bool needs_sample(const scenario& cfg) noexcept {
        const auto& d = cfg.durations;
        const auto o = cfg.env.order;
        if (d.mode == duration_info::hidden && (o == queue_order::themis || o == queue_order::edf_ac)) return true;  // their estimates
        return o == queue_order::gittins || (d.mode == duration_info::predicted && d.error == duration_error::model_mean);
    }

    /// The duration distribution of durations.sample_files (or of the scenario's own workload):
    /// 32 episodes' jobs, their GPU-seconds (the Gittins index) and each model's mean duration at
    /// each GPU count (model_mean estimates). ideal(job) is a job's ideal duration.
    ///
    /// The sample is read once per env and shared with its copies (drawn once, kept in a cache the
    /// copies share): a planner's forks of an env that never sampled it would otherwise each read
    /// the sample files again, most of a fork's cost. Only this object's sampled() turns true.
    template <class Ideal>
    void sample(const scenario& cfg, const ModelZoo& zoo, std::size_t num_gpus, Ideal&& ideal) {
        const std::lock_guard lock(cache_->m);
        if (!cache_->filled) {
            draw(cfg, zoo, num_gpus, ideal);
            cache_->sizes = sizes_;
            cache_->model_mean = model_mean_;
            cache_->mean_all = mean_all_;
            cache_->filled = true;
        } else {
            sizes_ = cache_->sizes;
            model_mean_ = cache_->model_mean;
            mean_all_ = cache_->mean_all;
        }
        sampled_ = true;
    }
    [[nodiscard]] bool sampled() const noexcept { return sampled_; }

private:
    template <class Ideal>
    void draw(const scenario& cfg, const ModelZoo& zoo, std::size_t num_gpus, Ideal& ideal) {
        const workload_source src(duration_sample_workload(cfg), zoo, num_gpus);
        std::vector<TrainingJob> jobs;
        std::vector<std::pair<std::uint64_t, std::pair<double, std::size_t>>> sums;
        double all = 0;
        std::size_t count = 0;
        sizes_.clear();
        model_mean_.clear();
        for (std::uint64_t e = 0; e < 32; ++e) {
            src.generate(zoo, num_gpus, (std::uint64_t{1} << 40) + e, jobs);
            for (const auto& j : jobs) {
                const double t = ideal(j);
                sizes_.push_back(t * double(j.num_gpus));
                const std::uint64_t key = std::uint64_t{j.model} << 32 | j.num_gpus;
                auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& x) { return x.first == key; });
                if (it == sums.end()) sums.push_back({key, {t, 1}});
                else it->second.first += t, ++it->second.second;
                all += t;
                ++count;
            }
        }
        std::sort(sizes_.begin(), sizes_.end());
        for (const auto& [key, s] : sums) model_mean_.emplace_back(key, s.first / double(s.second));
        mean_all_ = count ? all / double(count) : 0.0;
    }

public:
    /// The sampled jobs' sizes in GPU-seconds, ascending.
    [[nodiscard]] const std::vector<double>& sizes() const noexcept { return sizes_; }

    /// The duration the scheduler is shown of job `j` (durations mode `d`), whose true ideal
    /// duration is `truth`: the truth, an estimate, or nothing (hidden: 0; its attained service
    /// is shown as the job runs). Estimates are a function of (episode seed, j).
    template <class J>
    [[nodiscard]] double shown(const durations_config& d, std::uint32_t j, const J& job, double truth, std::uint64_t seed) const {
        if (d.mode == duration_info::oracle) return truth;
        if (d.mode == duration_info::hidden) return 0.0;
        if (d.error == duration_error::model_mean) {
            for (const auto& [key, mean] : model_mean_)
                if (key == (std::uint64_t{job.model} << 32 | job.num_gpus)) return mean;
            return mean_all_;
        }
        detail::rng r(detail::mix_seed(seed ^ (std::uint64_t{j} << 20), 0x657374696d617465ULL));  // "estimate"
        return truth * std::exp(d.sigma * r.normal());
    }

    /// A forked future's size (GPU-seconds) for a job of `k` GPUs that attained `attained`: one
    /// above it, uniformly among the sample's; past them all, 10% more. Precondition: sampled().
    [[nodiscard]] double redraw(double attained, double k, detail::rng& r) const {
        const auto above = std::upper_bound(sizes_.begin(), sizes_.end(), attained);
        const auto m = std::size_t(sizes_.end() - above);
        return m ? *(above + std::ptrdiff_t(r.below(m))) : attained * 1.1 + k;
    }

private:
    struct shared_sample {
        std::mutex m;
        bool filled = false;
        std::vector<double> sizes;
        std::vector<std::pair<std::uint64_t, double>> model_mean;
        double mean_all = 0;
    };
    std::shared_ptr<shared_sample> cache_ = std::make_shared<shared_sample>();  ///< shared by this env's copies
    std::vector<double> sizes_;                                 ///< GPU-seconds of sampled jobs, ascending
    std::vector<std::pair<std::uint64_t, double>> model_mean_;  ///< (model << 32 | GPUs) -> mean ideal duration
    double mean_all_ = 0;
    bool sampled_ = false;
};

}  // namespace gpuplace::env_detail
