#pragma once
/// \file rounds/gittins.hpp
/// class_gittins (docs/rounds.md, "The Gittins index of a job's class"): a round policy for hidden
/// durations that runs, each round, the jobs with the highest Gittins index per GPU-second, the
/// index computed from the size distribution of the job's own class (its model and GPU count) in
/// a sample of other episodes (durations.sample_files: the training files for the presets), scaled
/// to the episode by what its own jobs have shown so far.
///
/// A job of class c that has done a steps has the index (Gittins 1989; Aalto, Ayesta and
/// Righter, "On the Gittins index in the M/G/1 queue", 2009)
///
///     G(a) = sup over D > 0 of  P(W <= a + D | W > a) / (E[min(W, a + D) - a | W > a] + r)
///
/// over the steps W of c's sampled jobs times the episode's scale k: the chance of finishing per
/// step of service spent on it. r is what running it costs before it makes progress: a job that
/// ran before and holds no GPUs now pays its restore time (rounds.restore.seconds, in its steps);
/// a running job and a job that never ran pay nothing, so a running job is preferred to an equal
/// one that would pay to resume. Divided by the job's GPU count times its ideal step time, G(a) is
/// completions per GPU-second; the round grants the jobs in that order, highest first, while their
/// GPUs fit (locked jobs first), ties to the earlier arrival.
///
/// The tail: with few sampled sizes left above a, an empirical distribution's index is the least
/// to be trusted: with one left, w, it is 1 / (w - a), growing without bound as a nears w, so a
/// file whose jobs run longer than the sample's would run such jobs first for nothing. Where fewer
/// than 5% of its class's sampled sizes lie above a (or none), a job's index is 1 / (a + r), its
/// expected remaining work taken as the work it has done (a heavy tail's guess).
///
/// The scale: trace files differ in their jobs' lengths by an order of magnitude while the classes
/// keep their ratios (in every Philly-derived file the Recommendation jobs run one to two orders of
/// magnitude shorter than the others). At each boundary k is the maximum a posteriori over a grid of log k from
/// -4 to 4 (a normal prior of sd 1.5 on log k) of the episode's jobs so far: a job that finished
/// during the last round finished within what it could have done in it (interval-censored), an
/// active job will do more than it has (right-censored); the class's sizes smoothed in log space
/// give the likelihood (gittins_prior::log_survival). Everything it reads is on the round_view.
///
/// A class with fewer than min_class sampled jobs takes its model's jobs at every GPU count, and
/// a model with fewer than that every sampled job. The event-driven `gittins` discipline
/// (information.hpp) computes its index over one distribution of GPU-seconds for every job with a
/// fixed quantum; here each class has its own distribution and the sup is over every quantum.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "../round_allocation.hpp"

namespace gpuplace {

/// The size distribution of jobs by class (model, GPU count), from a sample, and the Gittins index
/// of a job of a class that has done some of its steps.
class gittins_prior {
public:
    struct sample {
        model_id model = 0;
        std::uint32_t gpus = 1;
        double steps = 0;  ///< the job's training steps
    };
    gittins_prior() = default;
    /// O(n log n) for n samples (those with steps <= 0 or not finite are left out).
    explicit gittins_prior(std::vector<sample> s, std::size_t min_class = 30) : min_(std::max<std::size_t>(1, min_class)) {
        s.erase(std::remove_if(s.begin(), s.end(), [](const sample& x) { return !(x.steps > 0) || !std::isfinite(x.steps); }), s.end());
        auto by = [&](auto key) {
            std::vector<group> out;
            std::vector<std::pair<std::uint64_t, double>> k;
            k.reserve(s.size());
            for (const auto& x : s) k.emplace_back(key(x), x.steps);
            std::sort(k.begin(), k.end());
            for (std::size_t i = 0; i < k.size();) {
                group g;
                g.key = k[i].first;
                for (; i < k.size() && k[i].first == g.key; ++i) g.steps.push_back(k[i].second);
                if (g.steps.size() >= min_) out.push_back(std::move(g));
            }
            return out;
        };
        class_ = by([](const sample& x) { return std::uint64_t{x.model} << 32 | x.gpus; });
        model_ = by([](const sample& x) { return std::uint64_t{x.model}; });
        all_.steps.reserve(s.size());
        for (const auto& x : s) all_.steps.push_back(x.steps);
        std::sort(all_.steps.begin(), all_.steps.end());
        for (auto* gs : {&class_, &model_}) for (auto& g : *gs) g.survival = survival_table(g.steps);
        all_.survival = survival_table(all_.steps);
    }

    /// The share of a class's largest sampled sizes that is its tail: a job with fewer sizes than
    /// that above its work done is judged by the heavy-tail guess (its work left is the work done).
    static constexpr double tail = 0.05;

    /// The log-grid of the survival tables: log steps from grid_lo in steps of grid_step.
    static constexpr double grid_lo = -4.0, grid_step = 0.05, bandwidth = 0.25;
    static constexpr std::size_t grid_n = 560;  // up to e^24 steps
    /// log P(W > x) for a job of (model, gpus), W smoothed in log space (a normal kernel of
    /// bandwidth 0.25 around each sampled log size), at log x = `lx`: O(1).
    [[nodiscard]] double log_survival(model_id model, std::uint32_t gpus, double lx) const noexcept {
        return log_survival_at(survival(model, gpus), lx);
    }
    /// The smoothed log survival table of the sizes a job of (model, gpus) is judged by, for
    /// log_survival_at() (one lookup for many points).
    [[nodiscard]] std::span<const double> survival(model_id model, std::uint32_t gpus) const noexcept { return group_of(model, gpus).survival; }
    /// log P(W > x) at log x = `lx` on a table of survival(): O(1).
    [[nodiscard]] static double log_survival_at(std::span<const double> t, double lx) noexcept {
        const double u = (lx - grid_lo) / grid_step;
        if (!(u > 0)) return t.front();
        if (u >= double(grid_n - 1)) return t.back();
        const auto i = std::size_t(u);
        const double f = u - double(i);
        return t[i] * (1 - f) + t[i + 1] * f;
    }
    [[nodiscard]] bool empty() const noexcept { return all_.steps.empty(); }
    [[nodiscard]] std::size_t classes() const noexcept { return class_.size(); }

    /// The sorted steps a job of (model, gpus) is judged by: its class's, its model's, or all.
    [[nodiscard]] const std::vector<double>& sizes(model_id model, std::uint32_t gpus) const noexcept { return group_of(model, gpus).steps; }

    /// The position in `w` (a sizes() vector) of its first size above `done`, or w.size() where a
    /// job that did `done` steps is judged by the tail: fewer than `tail` of the sizes above it,
    /// or none.
    [[nodiscard]] static std::size_t first_above(const std::vector<double>& w, double done) noexcept {
        const auto lo = std::size_t(std::upper_bound(w.begin(), w.end(), done) - w.begin());
        const std::size_t m = w.size() - lo;
        return m == 0 || double(m) < tail * double(w.size()) ? w.size() : lo;
    }

    /// G(a) in completions per step for a job of (model, gpus) that did `done` steps and must pay
    /// `cost` steps before progress: O(sizes of its class).
    [[nodiscard]] double index(model_id model, std::uint32_t gpus, double done, double cost) const noexcept {
        const auto& w = sizes(model, gpus);
        const std::size_t lo = first_above(w, done), m = w.size() - lo;
        if (m == 0) return 1.0 / (std::max(done, 1.0) + cost);  // in the tail, past it, or no sample
        // D = w[j] - done for each j: P = (j - lo + 1) / m, E = (sum_{lo..j} (w - done) + (n - j - 1) D) / m
        double best = 0, sum = 0;
        for (std::size_t j = lo; j < w.size(); ++j) {
            const double d = w[j] - done;
            sum += d;
            const double finished = double(j - lo + 1);
            const double e = sum + double(w.size() - j - 1) * d + double(m) * cost;
            if (e > 0) best = std::max(best, finished / e);
        }
        return best;
    }

private:
    struct group {
        std::uint64_t key = 0;
        std::vector<double> steps;  ///< ascending
        std::vector<double> survival;  ///< log P(W > e^(grid_lo + k grid_step)), k < grid_n
    };
    /// The smoothed log survival on the grid: the sizes binned on it, each bin spread by the kernel
    /// over the bins within 4 bandwidths (O(grid_n) per bin window, not per size).
    [[nodiscard]] static std::vector<double> survival_table(const std::vector<double>& w) {
        std::vector<double> t(grid_n, 0.0), cnt(grid_n, 0.0), above(grid_n + 1, 0.0);
        if (w.empty()) return t;
        for (double x : w) {
            const double u = std::round((std::log(x) - grid_lo) / grid_step);
            cnt[std::size_t(std::clamp(u, 0.0, double(grid_n - 1)))] += 1;
        }
        for (std::size_t k = grid_n; k-- > 0;) above[k] = above[k + 1] + cnt[k];
        constexpr auto reach = std::size_t(4 * bandwidth / grid_step);
        for (std::size_t k = 0; k < grid_n; ++k) {
            const std::size_t a = k > reach ? k - reach : 0, b = std::min(grid_n - 1, k + reach);
            double p = above[b + 1];
            for (std::size_t j = a; j <= b; ++j)
                p += cnt[j] * 0.5 * std::erfc((double(k) - double(j)) * grid_step / (bandwidth * std::sqrt(2.0)));
            t[k] = std::log(std::max(p / double(w.size()), 1e-300));
        }
        return t;
    }
    [[nodiscard]] static const group* find(const std::vector<group>& gs, std::uint64_t key) noexcept {
        const auto it = std::lower_bound(gs.begin(), gs.end(), key, [](const group& g, std::uint64_t k) { return g.key < k; });
        return it != gs.end() && it->key == key ? &*it : nullptr;
    }
    [[nodiscard]] const group& group_of(model_id model, std::uint32_t gpus) const noexcept {
        if (const auto* g = find(class_, std::uint64_t{model} << 32 | gpus)) return *g;
        if (const auto* g = find(model_, std::uint64_t{model})) return *g;
        return all_;
    }
    std::size_t min_ = 30;
    std::vector<group> class_, model_;
    group all_;
};

/// A round policy (RoundPolicy): each round, the active jobs by their class's Gittins index per
/// GPU-second, highest first, while their GPUs fit. `prior(cluster_gpus)` gives the distribution
/// (made once and shared: round_policy_registry.hpp samples the scenario's sample files).
class gittins_round_policy {
public:
    using prior_fn = std::function<std::shared_ptr<const gittins_prior>(std::size_t cluster_gpus)>;
    gittins_round_policy(prior_fn prior, double restore_seconds) : make_(std::move(prior)), restore_(restore_seconds) {}

    void reset(std::uint64_t) {
        seen_.clear();
        prev_.clear();
        ll_done_.assign(scales, 0.0);
        log_scale_ = 0;
        round_ = 0;
    }

    /// Room for an episode of `jobs` jobs, so that allocate() allocates nothing in it (after the
    /// first call, which samples the prior).
    void reserve(std::size_t jobs) {
        key_.reserve(jobs);
        order_.reserve(jobs);
        prev_.reserve(jobs);
        seen_.reserve(jobs);
    }

    /// The last allocate()'s ranking: the positions in its view's jobs() of the jobs that are not
    /// locked, highest index per GPU-second first (ties to the earlier position).
    [[nodiscard]] const std::vector<std::uint32_t>& ranked() const noexcept { return order_; }

    void allocate(const round_view& v, round_allocation& out) {
        const auto jobs = v.jobs();
        std::size_t left = 0;
        for (std::size_t t = 0; t < v.num_types(); ++t) left += v.type_gpus(t);
        if (!prior_) prior_ = make_(left);
        ++round_;
        calibrate(v);
        key_.assign(jobs.size(), 0.0);
        order_.clear();
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const auto& r = jobs[i];
            if (r.locked) {  // keeps its GPUs whatever the allocation says
                out.grant(r.job, r.type, r.held);
                left -= std::min<std::size_t>(left, r.held);
                continue;
            }
            key_[i] = priority(r, 1.0 / v.reference_throughput(i));
            order_.push_back(static_cast<std::uint32_t>(i));
        }
        std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {  // ties by position (std::stable_sort allocates)
            return key_[a] > key_[b] || (key_[a] == key_[b] && a < b);
        });
        for (auto i : order_) {
            const auto& r = jobs[i];
            if (r.gpus > left) continue;
            out.grant(r.job, round_grant::any_type, r.gpus);
            left -= r.gpus;
        }
    }

    /// Job r's index per GPU-second (its ideal step time `step`, seconds).
    [[nodiscard]] double priority(const round_job& r, double step) const noexcept {
        if (!(step > 0)) return 0.0;
        const bool resumes = r.held == 0 && r.done > 0;
        const double cost = resumes ? restore_ / step : 0.0;
        const double k = std::exp(log_scale_);
        return prior_->index(r.model, r.gpus, r.done / step / k, cost / k) / (k * double(r.gpus) * step);
    }
    /// The episode's scale estimate: its jobs' sizes over the sample's (log).
    [[nodiscard]] double log_scale() const noexcept { return log_scale_; }

    /// A duration for job r (ideal step time `step`, seconds) as this policy believes it: the
    /// size at quantile `u` (in [0, 1)) of its class's sampled sizes above the steps it has done,
    /// times the episode's scale, in seconds. NaN where the index judges the job by the tail
    /// (fewer than 5% of its class's sizes above what it has done, or none) and before the first
    /// allocate(). A planner's futures draw the active jobs' durations so (round_env::fork(seed,
    /// draw), rounds/rollout.hpp).
    [[nodiscard]] double draw_duration(const round_job& r, double step, double u) const noexcept {
        if (!prior_ || !(step > 0)) return std::numeric_limits<double>::quiet_NaN();
        const double k = std::exp(log_scale_);
        const auto& w = prior_->sizes(r.model, r.gpus);
        const std::size_t lo = gittins_prior::first_above(w, r.done / step / k), m = w.size() - lo;
        if (m == 0) return std::numeric_limits<double>::quiet_NaN();
        return w[lo + std::min(m - 1, std::size_t(u * double(m)))] * k * step;
    }

private:
    static constexpr std::size_t scales = 161;  // log scale from -4 to 4 in steps of 0.05
    static constexpr double scale_lo = -4.0, scale_step = 0.05, scale_prior_sd = 1.5;

    struct seen_job {
        double lo = 0, hi = 0;  ///< steps done at the last boundary it was seen, and what it could do by the next
        model_id model = 0;
        std::uint32_t gpus = 0;
        std::uint64_t round = 0;  ///< the last round it was seen active (0: never)
    };

    /// Estimates the episode's scale: the maximum a posteriori of log k over the grid, where the
    /// sizes of this episode's jobs are k times the sample's (a normal prior of sd 1.5 on log k).
    /// A job that finished since the last boundary finished within what it could do in the round
    /// (interval-censored); an active job has done more than its steps so far (right-censored).
    void calibrate(const round_view& v) {
        const auto jobs = v.jobs();
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const auto& r = jobs[i];
            if (r.job >= seen_.size()) seen_.resize(std::size_t(r.job) + 1);
            const double step = 1.0 / v.reference_throughput(i);
            auto& s = seen_[r.job];
            s.lo = r.done / step;
            s.hi = s.lo + v.round_length() / step;
            s.model = r.model;
            s.gpus = r.gpus;
            s.round = round_;
        }
        for (auto j : prev_)
            if (seen_[j].round != round_) {  // finished during the last round
                const auto& s = seen_[j];
                for (std::size_t g = 0; g < scales; ++g) {
                    const double ls = scale_lo + double(g) * scale_step;
                    const double a = s.lo > 0 ? prior_->log_survival(s.model, s.gpus, std::log(s.lo) - ls) : 0.0;
                    const double b = prior_->log_survival(s.model, s.gpus, std::log(s.hi) - ls);
                    ll_done_[g] += a + std::log(std::max(-std::expm1(b - a), 1e-12));
                }
            }
        prev_.clear();
        for (const auto& r : jobs) prev_.push_back(r.job);
        // the log posterior on the grid, job by job (each job's table and log found once; the
        // sum at each point in the same order as point by point)
        for (std::size_t g = 0; g < scales; ++g) {
            const double ls = scale_lo + double(g) * scale_step;
            ll_[g] = ll_done_[g] - 0.5 * ls * ls / (scale_prior_sd * scale_prior_sd);
        }
        for (const auto& r : jobs) {
            const auto& s = seen_[r.job];
            if (!(s.lo > 0)) continue;
            const auto table = prior_->survival(s.model, s.gpus);
            const double lx = std::log(s.lo);
            for (std::size_t g = 0; g < scales; ++g) ll_[g] += gittins_prior::log_survival_at(table, lx - (scale_lo + double(g) * scale_step));
        }
        double best = -std::numeric_limits<double>::infinity();
        for (std::size_t g = 0; g < scales; ++g)
            if (ll_[g] > best) best = ll_[g], log_scale_ = scale_lo + double(g) * scale_step;
    }

    prior_fn make_;
    double restore_ = 30.0;
    std::shared_ptr<const gittins_prior> prior_;
    std::vector<double> key_, ll_done_ = std::vector<double>(scales, 0.0), ll_ = std::vector<double>(scales, 0.0);
    std::vector<std::uint32_t> order_, prev_;
    std::vector<seen_job> seen_;
    double log_scale_ = 0;
    std::uint64_t round_ = 0;
};

}  // namespace gpuplace
