#pragma once
/// \file rounds/gavel.hpp
/// Gavel's round-based scheduling mechanism (Narayanan et al., "Heterogeneity-Aware Cluster
/// Scheduling Policies for Deep Learning Workloads", OSDI 2020, section 5; docs/rounds.md), over
/// any policy that computes Gavel's allocation: the matrix X (active jobs x GPU types) of the time
/// fraction each job should spend on each type. Written from the paper and Gavel's scheduler
/// (stanford-futuredata/gavel, MIT licence), not copied:
///  - the allocation is computed again after jobs arrived or finished, but at most once per
///    rounds.min_reset_interval seconds (Gavel's simulator: 1920); then each job's time on each
///    type restarts at half a round, and its deficit (the time it should have had minus what it
///    had) carries over;
///  - every round, a job's priority on type t is X[j][t] over the fraction of type t's time it
///    received since the last reset (X x 1e9 when it received none; 0 without an allocation);
///  - types are visited in the cluster's order (heterogeneity-agnostic policies: a random order
///    each round); on each, the jobs in decreasing priority (then deficit, then allocation, then
///    arrival) get the type's GPUs while their GPU counts fit, each job once a round. FIFO
///    policies skip jobs of priority 0.
/// Jobs the progress rule locks (env/round_front.hpp) keep their GPUs first.
/// gavel_fifo_allocation is Gavel's fifo_perf allocation (no LP); the LP ones are in
/// rounds/gavel_lp.hpp (the optional component gpuplace::lp).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "../detail/rng.hpp"
#include "../round_allocation.hpp"

namespace gpuplace {

/// Gavel's allocation over the active jobs of a round_view (rows in jobs() order) and its types.
class gavel_allocation {
public:
    void assign(std::size_t jobs, std::size_t types) {
        types_ = types;
        x_.assign(jobs * types, 0.0);
    }
    [[nodiscard]] double& at(std::size_t i, std::size_t t) noexcept { return x_[i * types_ + t]; }
    [[nodiscard]] double at(std::size_t i, std::size_t t) const noexcept { return x_[i * types_ + t]; }
    [[nodiscard]] std::size_t jobs() const noexcept { return types_ ? x_.size() / types_ : 0; }
    [[nodiscard]] std::size_t types() const noexcept { return types_; }

private:
    std::size_t types_ = 0;
    std::vector<double> x_;
};

/// An allocation policy for the mechanism: reset() per episode, then compute(view, X) whenever
/// the mechanism asks for a new allocation (X arrives sized jobs x types, zero).
template <class A>
concept GavelAllocator = requires(A& a, const round_view& v, gavel_allocation& x) {
    a.reset();
    a.compute(v, x);
};

/// How the mechanism visits types and treats jobs of priority 0.
struct gavel_options {
    bool shuffle_types = false;     ///< heterogeneity-agnostic policies: a random type order each round
    bool fifo = false;              ///< FIFO policies: a job of priority 0 does not run
    double min_reset_interval = 1920;  ///< seconds between allocations at least (rounds.min_reset_interval)
};

/// A round policy (RoundPolicy): Gavel's mechanism over allocator A.
template <GavelAllocator A>
class gavel_policy {
public:
    gavel_policy() = default;
    gavel_policy(A allocator, gavel_options o) : alloc_(std::move(allocator)), o_(o) {}

    void reset(std::uint64_t seed) {
        alloc_.reset();
        rng_ = detail::rng(detail::mix_seed(seed, 0x676176656cULL));  // "gavel"
        known_.clear();
        time_.clear();
        deficit_.clear();
        x_.clear();
        in_alloc_.clear();
        mark_.clear();
        prev_.clear();
        worker_time_.clear();
        first_ = true;
        need_update_ = false;
        last_reset_ = 0;
        stamp_ = 0;
        allocations_ = 0;
    }

    void allocate(const round_view& v, round_allocation& out) {
        const auto jobs = v.jobs();
        const std::size_t T = v.num_types(), m = jobs.size();
        const double L = v.round_length(), now = v.now();
        T_ = T;
        if (worker_time_.size() != T) worker_time_.assign(T, 0.0);
        std::uint32_t top = 0;
        for (const auto& r : jobs) top = std::max(top, r.job + 1);
        grow(top);
        // the last round's time on each type
        for (const auto& r : jobs)
            if (known_[r.job] && r.last_type != round_job::none && r.ran_last_round > 0) {
                time_[r.job * T + r.last_type] += r.ran_last_round;
                worker_time_[r.last_type] += r.ran_last_round;
            }
        // arrivals and departures since the last round
        ++stamp_;
        bool changed = false;
        for (const auto& r : jobs) {
            mark_[r.job] = stamp_;
            if (known_[r.job]) continue;
            known_[r.job] = 1;
            in_alloc_[r.job] = 0;
            for (std::size_t t = 0; t < T; ++t) {
                time_[r.job * T + t] = L / 2;
                deficit_[r.job * T + t] = 0;
                x_[r.job * T + t] = 0;
            }
            changed = true;
        }
        for (auto j : prev_)
            if (mark_[j] != stamp_) {
                known_[j] = 0;
                changed = true;
            }
        prev_.clear();
        for (const auto& r : jobs) prev_.push_back(r.job);
        need_update_ = need_update_ || changed;
        bool running = false;
        for (const auto& r : jobs) running = running || r.type != round_job::none;
        // Gavel's simulator computes an allocation again early when nothing runs and nothing is to arrive
        const bool due = first_ || now - last_reset_ >= o_.min_reset_interval || (!running && !v.arrivals_pending());
        if (need_update_ && due && m > 0) {
            const double elapsed = now - last_reset_;
            std::fill(worker_time_.begin(), worker_time_.end(), 0.0);
            for (const auto& r : jobs)
                for (std::size_t t = 0; t < T; ++t) {
                    auto& tm = time_[r.job * T + t];
                    const double should = in_alloc_[r.job] ? x_[r.job * T + t] * elapsed : 0.0;
                    deficit_[r.job * T + t] += should - (tm - L / 2);
                    tm = L / 2;
                    worker_time_[t] += tm;
                }
            last_reset_ = now;
            first_ = false;
            need_update_ = false;
            X_.assign(m, T);
            alloc_.compute(v, X_);
            ++allocations_;
            for (std::size_t i = 0; i < m; ++i) {
                in_alloc_[jobs[i].job] = 1;
                for (std::size_t t = 0; t < T; ++t) x_[jobs[i].job * T + t] = std::clamp(X_.at(i, t), 0.0, 1.0);
            }
        }
        // the round: locked jobs keep their GPUs, then each type's queue in priority order
        left_.assign(T, 0);
        for (std::size_t t = 0; t < T; ++t) left_[t] = v.type_gpus(t);
        sched_.assign(m, 0);
        for (std::size_t i = 0; i < m; ++i)
            if (jobs[i].locked && jobs[i].type != round_job::none) {
                sched_[i] = 1;
                left_[jobs[i].type] -= std::min(left_[jobs[i].type], jobs[i].gpus);
                out.grant(jobs[i].job, jobs[i].type, jobs[i].gpus);
            }
        order_.resize(T);
        std::iota(order_.begin(), order_.end(), std::size_t{0});
        if (o_.shuffle_types)
            for (std::size_t t = T; t > 1; --t) std::swap(order_[t - 1], order_[rng_.below(t)]);
        idx_.resize(m);
        prio_.resize(m);
        for (auto t : order_) {
            for (std::size_t i = 0; i < m; ++i) prio_[i] = priority(v, i, t);
            std::iota(idx_.begin(), idx_.end(), std::size_t{0});
            std::stable_sort(idx_.begin(), idx_.end(), [&](std::size_t a, std::size_t b) {
                if (prio_[a] != prio_[b]) return prio_[a] > prio_[b];
                const double da = deficit_[jobs[a].job * T + t], db = deficit_[jobs[b].job * T + t];
                if (da != db) return da > db;
                return x_[jobs[a].job * T + t] > x_[jobs[b].job * T + t];
            });
            for (auto i : idx_) {
                if (left_[t] == 0) break;
                if (sched_[i] || !(v.throughput(i, t) > 0)) continue;
                if (o_.fifo && !(prio_[i] > 0)) continue;
                if (jobs[i].gpus > left_[t]) continue;
                left_[t] -= jobs[i].gpus;
                sched_[i] = 1;
                out.grant(jobs[i].job, static_cast<std::uint32_t>(t), jobs[i].gpus);
            }
        }
    }

    /// The allocation the mechanism holds for job j on type t (0 for a job without one).
    [[nodiscard]] double allocation(std::uint32_t j, std::size_t t) const noexcept {
        return j < known_.size() && known_[j] && in_alloc_[j] ? x_[j * T_ + t] : 0.0;
    }
    /// How many allocations were computed this episode.
    [[nodiscard]] std::size_t allocations() const noexcept { return allocations_; }
    [[nodiscard]] const A& allocator() const noexcept { return alloc_; }

private:
    [[nodiscard]] double priority(const round_view& v, std::size_t i, std::size_t t) const noexcept {
        const auto j = v.jobs()[i].job;
        if (!in_alloc_[j]) return 0.0;
        const double x = x_[j * T_ + t];
        if (x == 0.0 || !(v.throughput(i, t) > 0)) return 0.0;
        const double f = worker_time_[t] > 0 ? time_[j * T_ + t] / worker_time_[t] : 0.0;
        return f > 0 ? x / f : x * 1e9;
    }

    void grow(std::uint32_t n) {
        if (known_.size() >= n) return;
        known_.resize(n, 0);
        in_alloc_.resize(n, 0);
        mark_.resize(n, 0);
        time_.resize(std::size_t(n) * T_, 0.0);
        deficit_.resize(std::size_t(n) * T_, 0.0);
        x_.resize(std::size_t(n) * T_, 0.0);
    }

    A alloc_;
    gavel_options o_;
    detail::rng rng_{0};
    std::size_t T_ = 0;
    std::vector<std::uint8_t> known_, in_alloc_;
    std::vector<std::uint64_t> mark_;
    std::vector<double> time_, deficit_, x_;  ///< per job x type: time since the last reset, deficit, allocation
    std::vector<std::uint32_t> prev_;
    std::vector<double> worker_time_;  ///< per type: the time of its jobs since the last reset
    bool first_ = true, need_update_ = false;
    double last_reset_ = 0;
    std::uint64_t stamp_ = 0;
    std::size_t allocations_ = 0;
    gavel_allocation X_;
    std::vector<std::uint32_t> left_;
    std::vector<std::uint8_t> sched_;
    std::vector<std::size_t> order_, idx_;
    std::vector<double> prio_;
};

/// Gavel's fifo_perf allocation: the jobs in arrival order, each on the type where it is fastest
/// among those with room for all its GPUs, until one fits nowhere (strict FIFO). X is 1 on that
/// type. (Gavel's heterogeneity-agnostic fifo is gpuplace's queue policy "fifo": non-preemptive
/// FIFO, the placer choosing the GPUs.)
struct gavel_fifo_allocation {
    void reset() {}
    void compute(const round_view& v, gavel_allocation& x) {
        const auto jobs = v.jobs();
        const std::size_t T = v.num_types();
        avail_.resize(T);
        for (std::size_t t = 0; t < T; ++t) avail_[t] = v.type_gpus(t);
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            std::size_t best = T;
            for (std::size_t t = 0; t < T; ++t)
                if (avail_[t] >= jobs[i].gpus && (best == T || v.throughput(i, t) > v.throughput(i, best))) best = t;
            if (best == T) break;  // fits on no type: the jobs behind it wait too
            if (!(v.throughput(i, best) > 0)) continue;
            x.at(i, best) = 1.0;
            avail_[best] -= jobs[i].gpus;
        }
    }
    std::vector<std::uint32_t> avail_;
};

}  // namespace gpuplace
