#pragma once
/// \file env/wait_queue.hpp
/// The jobs waiting to start, in queue-policy order, with the per-job facts that the scan for a
/// job that fits and the observation's queue window read.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpuplace::env_detail {

/// What the scans and the observation read of a job, in one place (32 bytes).
struct job_entry {
    float request_feat, ideal_feat, comm_feat;  ///< its observation features
    double submit;
    std::uint64_t deferred;  ///< the epoch in which it was deferred (skipped until the epoch moves)
};

class wait_queue {
public:
    static constexpr std::size_t npos = ~std::size_t{0};
    static constexpr std::uint32_t no_job = ~std::uint32_t{0};

    /// Empties the queue for an episode of n jobs (allocates only for more jobs than before).
    void reset(std::size_t n) {
        jobs_.clear();
        jobs_.reserve(n);
        gpus_.clear();
        gpus_.reserve(n);
        info_.resize(n);
        epoch_ = 1;
    }

    /// Makes room for the entries of n jobs in all, keeping the queue (a fork's new future jobs).
    void resize_jobs(std::size_t n) {
        info_.resize(n);
        jobs_.reserve(n);
        gpus_.reserve(n);
    }
    /// Per job (waiting or not): its entry.
    [[nodiscard]] job_entry& info(std::uint32_t j) noexcept { return info_[j]; }
    [[nodiscard]] const job_entry& info(std::uint32_t j) const noexcept { return info_[j]; }
    /// The waiting jobs in queue order.
    [[nodiscard]] std::span<const std::uint32_t> jobs() const noexcept { return jobs_; }
    [[nodiscard]] std::size_t size() const noexcept { return jobs_.size(); }
    [[nodiscard]] bool empty() const noexcept { return jobs_.empty(); }
    /// The job at position i and its GPU request.
    [[nodiscard]] std::uint32_t job_at(std::size_t i) const noexcept { return jobs_[i]; }
    [[nodiscard]] std::uint32_t gpus_at(std::size_t i) const noexcept { return gpus_[i]; }

    /// Adds job j (requesting `gpus`) after every waiting job that is not less(j, it).
    template <class Less>
    void insert(std::uint32_t j, std::uint32_t gpus, Less less) {
        const auto pos = std::upper_bound(jobs_.begin(), jobs_.end(), j, less);
        gpus_.insert(gpus_.begin() + (pos - jobs_.begin()), gpus);
        jobs_.insert(pos, j);
    }
    /// Puts the waiting jobs in the order of `order` (every waiting job once; a preemptive
    /// discipline's priorities change over time). No allocation.
    template <class GpusOf>
    void reorder(std::span<const std::uint32_t> order, GpusOf&& gpus_of) noexcept {
        jobs_.clear();
        gpus_.clear();
        for (auto j : order) {
            jobs_.push_back(j);
            gpus_.push_back(gpus_of(j));
        }
    }
    /// Adds job j at the end.
    void push_back(std::uint32_t j, std::uint32_t gpus) noexcept {
        jobs_.push_back(j);
        gpus_.push_back(gpus);
    }
    /// Removes the job at position i.
    void erase(std::size_t i) noexcept {
        jobs_.erase(jobs_.begin() + std::ptrdiff_t(i));
        gpus_.erase(gpus_.begin() + std::ptrdiff_t(i));
    }

    /// Skips job j until the next epoch.
    void defer(std::uint32_t j) noexcept { info_[j].deferred = epoch_; }
    /// Whether job j was deferred in this epoch.
    [[nodiscard]] bool deferred(std::uint32_t j) const noexcept { return info_[j].deferred == epoch_; }
    /// Starts a new epoch: deferred jobs may be chosen again.
    void next_epoch() noexcept { ++epoch_; }

    /// The position of the first job (other than `skip`, and not deferred in this epoch) that
    /// fits, or npos. Strict head-of-line (backfill false) looks at the first such job only.
    /// Exclusive GPUs: a job fits iff it requests at most `free` GPUs, and the scan reads only the
    /// dense array of requests until one does (queues can be long); otherwise fits(j) decides.
    template <class Fits>
    [[nodiscard]] std::size_t find(std::uint32_t skip, std::size_t free, bool backfill, bool exclusive, Fits&& fits) const {
        const std::uint32_t* gpus = gpus_.data();
        const std::size_t n = gpus_.size();
        if (exclusive && backfill) {  // the common case, written apart so that its scan is a tight loop
            for (std::size_t i = 0; i < n; ++i) {
                if (gpus[i] > free) continue;
                const auto j = jobs_[i];
                if (j == skip || info_[j].deferred == epoch_) continue;
                return i;
            }
            return npos;
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (exclusive && gpus[i] > free) {
                if (!backfill && jobs_[i] != skip && info_[jobs_[i]].deferred != epoch_) return npos;
                continue;
            }
            const auto j = jobs_[i];
            if (j == skip || info_[j].deferred == epoch_) continue;
            if (exclusive || fits(j)) return i;
            if (!backfill) return npos;
        }
        return npos;
    }

private:
    std::vector<std::uint32_t> jobs_;
    /// The waiting jobs' requests, parallel to jobs_: the scan for a job that fits reads only this
    /// dense array (and a start erases 8 bytes per entry after it, not more).
    std::vector<std::uint32_t> gpus_;
    std::vector<job_entry> info_;  ///< per job
    std::uint64_t epoch_ = 1;
};

}  // namespace gpuplace::env_detail
