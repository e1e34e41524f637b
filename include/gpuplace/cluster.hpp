#pragma once
/// \file cluster.hpp
/// Occupancy of the cluster's GPUs, with free-GPU counts per domain of every level of the
/// hierarchy (nodes, racks, ...) kept up to date in O(levels) per change.

#include <cstdint>
#include <algorithm>
#include <limits>
#include <span>
#include <vector>

#include "detail/constant.hpp"
#include "detail/inline.hpp"
#include "hierarchy.hpp"
#include "topology.hpp"

namespace gpuplace {

/// Which jobs hold each GPU (up to `max_jobs_per_gpu()`, 1 unless co-location is on), their memory
/// and GPU shares, and how many GPUs are free (hold no job) per domain of each level and in total.
///
/// Exclusive mode (max_jobs_per_gpu() 1 and no change tracking: the simulator without co-location):
/// a job holds a GPU wholly, so memory and share are not kept (the arguments are ignored; a busy
/// GPU's share_used() is 1 and its memory_used() 0), and allocate() / release() touch only the
/// holder, end time and free counts.
class cluster_state {
public:
    static constexpr std::uint32_t no_job = std::numeric_limits<std::uint32_t>::max();
    /// The holder of a GPU out of service (failures.hpp): not free, and no job.
    static constexpr std::uint32_t failed = no_job - 1;
    /// A free GPU's end time: so that `end - now` clamped at 0 needs no test of the holder.
    static constexpr double free_end = -std::numeric_limits<double>::infinity();
    /// The latest end time kept: a later one (a job slowed down by an absurd link latency) is kept
    /// as this, so that an end time less the time now fits a float, in which the observation's
    /// remaining times are computed for all GPUs at once without a test (1e38 s: no job of a sane
    /// scenario comes near).
    static constexpr double max_end = 1e38;

    cluster_state() = default;
    // The first conjunct stops overload resolution for a copy from asking whether cluster_state is
    // itself a Topology (a recursive constraint clang rejects).
    template <class T>
        requires(!std::same_as<T, cluster_state>) && Topology<T>
    explicit cluster_state(const T& t) {
        resize(t);
    }

    /// Sizes the state for a topology and frees every GPU.
    template <Topology T>
    void resize(const T& t) {
        resize(t.hierarchy());
    }
    void resize(const level_hierarchy& h) {
        h_ = h;
        const std::size_t G = h.num_gpus();
        holder_.assign(G, no_job);
        end_.assign(G, free_end);
        count_.assign(G, 0);
        mem_.assign(G, 0.0);
        share_.assign(G, 0.0);
        slots_.assign(G * max_jobs_, no_job);
        levels_ = h.num_levels() - 1;
        flat_ = h.flat_domains();
        level_off_.assign(levels_ + 1, 0);
        for (std::size_t l = 0; l <= levels_; ++l) level_off_[l] = h.flat_offset(l + 1);
        full_.resize(level_off_[levels_]);
        for (std::size_t l = 0; l < levels_; ++l)
            for (std::size_t d = 0; d < h.num_domains(l + 1); ++d) full_[level_off_[l] + d] = h.size(l + 1, d);
        domain_free_ = full_;
        free_ = G;
        slot_free_ = G;
        log_capacity_ = 4 * G + 64;
        changes_.clear();
        if (track_) changes_.reserve(log_capacity_);
        ++change_generation_;
    }

    /// Frees every GPU (no allocation, except once after a copy, whose change log has no spare room).
    void clear() {
        std::fill(holder_.begin(), holder_.end(), no_job);
        std::fill(end_.begin(), end_.end(), free_end);
        std::fill(count_.begin(), count_.end(), 0);
        std::fill(mem_.begin(), mem_.end(), 0.0);
        std::fill(share_.begin(), share_.end(), 0.0);
        std::fill(slots_.begin(), slots_.end(), no_job);
        mem_total_ = 0;
        std::copy(full_.begin(), full_.end(), domain_free_.begin());
        free_ = holder_.size();
        slot_free_ = holder_.size();
        changes_.clear();
        if (track_) changes_.reserve(log_capacity_);
        ++change_generation_;
    }

    /// Allows up to `max_jobs` jobs per GPU (call before resize()).
    void set_max_jobs_per_gpu(std::size_t max_jobs) noexcept { max_jobs_ = max_jobs < 1 ? 1 : max_jobs; }
    [[nodiscard]] std::size_t max_jobs_per_gpu() const noexcept { return max_jobs_; }
    /// Keeps the change log (changes()) from now on (call before resize()); off by default.
    void track_changes(bool on) noexcept { track_ = on; }

    [[nodiscard]] std::size_t num_gpus() const noexcept { return holder_.size(); }
    /// Number of jobs on GPU g.
    [[nodiscard]] std::uint32_t jobs_on_count(gpu_id g) const noexcept { return count_[g]; }
    /// The jobs on GPU g.
    [[nodiscard]] std::span<const std::uint32_t> jobs_on(gpu_id g) const noexcept {
        if (max_jobs_ == 1) return std::span<const std::uint32_t>(holder_).subspan(g, count_[g]);  // its only job
        return std::span<const std::uint32_t>(slots_).subspan(std::size_t(g) * max_jobs_, count_[g]);
    }
    /// GPU memory (GB) and GPU share used on g by its jobs.
    [[nodiscard]] double memory_used(gpu_id g) const noexcept { return exclusive() ? 0.0 : mem_[g]; }
    [[nodiscard]] double share_used(gpu_id g) const noexcept { return exclusive() ? double(count_[g]) : share_[g]; }
    /// Whether the cluster is in exclusive mode (see the class comment).
    [[nodiscard]] bool exclusive() const noexcept { return max_jobs_ == 1 && !track_; }
    /// Memory used on all GPUs.
    [[nodiscard]] double memory_used_total() const noexcept { return mem_total_; }
    [[nodiscard]] bool is_free(gpu_id g) const noexcept { return holder_[g] == no_job; }
    /// The job on GPU g, or no_job.
    [[nodiscard]] std::uint32_t holder(gpu_id g) const noexcept { return holder_[g]; }
    /// When the job on GPU g is due to end (free_end, minus infinity, when free).
    [[nodiscard]] double end_time(gpu_id g) const noexcept { return end_[g]; }
    /// Every GPU's holder (no_job when free) and due end time (free_end when free), for loops over all GPUs.
    [[nodiscard]] std::span<const std::uint32_t> holders() const noexcept { return holder_; }
    [[nodiscard]] std::span<const double> end_times() const noexcept { return end_; }
    [[nodiscard]] std::size_t free_gpus() const noexcept { return free_; }
    [[nodiscard]] std::size_t busy_gpus() const noexcept { return holder_.size() - free_; }
    /// GPUs holding fewer than max_jobs_per_gpu() jobs (= free_gpus() when GPUs are exclusive).
    [[nodiscard]] std::size_t gpus_with_free_slot() const noexcept { return slot_free_; }
    /// Free GPUs in domain d of level l (1 .. L-1 of the hierarchy; level L: free_gpus()).
    [[nodiscard]] std::uint32_t free_in(std::size_t l, std::size_t d) const noexcept {
        return l > levels_ ? static_cast<std::uint32_t>(free_) : domain_free_[level_off_[l - 1] + d];
    }
    /// Every domain's free GPUs on level l (1 .. L-1), in domain order.
    [[nodiscard]] std::span<const std::uint32_t> free_on(std::size_t l) const noexcept {
        return std::span<const std::uint32_t>(domain_free_).subspan(level_off_[l - 1], level_off_[l] - level_off_[l - 1]);
    }
    /// free_in(1, node) and free_in(2, rack): a tree's nodes and racks.
    [[nodiscard]] std::uint32_t node_free(std::size_t node) const noexcept { return free_in(1, node); }
    [[nodiscard]] std::uint32_t rack_free(std::size_t rack) const noexcept { return free_in(2, rack); }
    /// The hierarchy the state was sized for.
    [[nodiscard]] const level_hierarchy& hierarchy() const noexcept { return h_; }

    /// Change log, kept only when track_changes(true) was called: the GPUs whose jobs changed (allocate()
    /// or release()), in order, since the log was last cleared; the generation changes whenever it
    /// is cleared (clear(), resize(), or when it is full). A reader that remembers (generation,
    /// position) can replay exactly the GPUs that changed since, or must rescan every GPU when
    /// the generation moved. Caches of "which GPUs can host X" are kept up to date this way.
    [[nodiscard]] std::span<const gpu_id> changes() const noexcept { return changes_; }
    [[nodiscard]] std::uint64_t change_generation() const noexcept { return change_generation_; }

    /// Gives GPU g to job j until `end` (with its memory and GPU share). Precondition: g has a
    /// free slot (it is free when co-location is off).
    void allocate(gpu_id g, std::uint32_t j, double end, double memory = 0.0, double share = 1.0) noexcept {
        if (exclusive()) {
            assign_exclusive<true>(std::span<const gpu_id>(&g, 1), j, end);
            return;
        }
        if (track_) log_change(g);
        if (count_[g] == 0) {
            holder_[g] = j;
            end_[g] = std::min(end, max_end);
            count_free(g, -1);
            --free_;
        }
        slots_[std::size_t(g) * max_jobs_ + count_[g]] = j;
        if (++count_[g] == max_jobs_) --slot_free_;
        mem_[g] += memory;
        share_[g] += share;
        mem_total_ += memory;
    }
    /// allocate(g, j, end) for each of `gpus` (exclusive mode only: exclusive() must hold), in
    /// one loop that reads the cluster's layout once.
    void allocate_exclusive(std::span<const gpu_id> gpus, std::uint32_t j, double end) noexcept {
        assign_exclusive<true>(gpus, j, end);
    }
    /// Moves the due end time of the job on `gpus` to `end` (a redrawn duration).
    void set_end_time(std::span<const gpu_id> gpus, double end) noexcept {
        end = std::min(end, max_end);
        for (auto g : gpus) end_[g] = end;
    }
    /// release(g) for each of `gpus` (exclusive mode only: exclusive() must hold).
    void release_exclusive(std::span<const gpu_id> gpus) noexcept { assign_exclusive<false>(gpus, no_job, free_end); }
    /// Removes job j (with the memory and share it was allocated) from GPU g; with co-location off
    /// the GPU's only job. Precondition: j is on g.
    void release(gpu_id g, std::uint32_t j = no_job, double memory = 0.0, double share = 1.0) noexcept {
        if (exclusive()) {
            assign_exclusive<false>(std::span<const gpu_id>(&g, 1), no_job, free_end);
            return;
        }
        if (track_) log_change(g);
        mem_[g] -= memory;
        share_[g] -= share;
        mem_total_ -= memory;
        std::uint32_t* s = slots_.data() + std::size_t(g) * max_jobs_;
        std::uint32_t i = 0;
        while (i + 1 < count_[g] && s[i] != j) ++i;
        s[i] = s[count_[g] - 1];
        s[count_[g] - 1] = no_job;
        if (count_[g]-- == max_jobs_) ++slot_free_;
        if (count_[g] == 0) {
            holder_[g] = no_job;
            end_[g] = free_end;
            mem_total_ -= mem_[g];
            mem_[g] = 0.0;
            share_[g] = 0.0;
            count_free(g, +1);
            ++free_;
        } else {
            holder_[g] = s[0];
        }
    }

private:
    /// Adds `delta` to the free counts of GPU g's domains.
    void count_free(gpu_id g, std::int32_t delta) noexcept {
        const std::uint32_t* d = flat_ + std::size_t(g) * levels_;
        for (std::size_t l = 0; l < levels_; ++l) domain_free_[d[l]] += static_cast<std::uint32_t>(delta);
    }

    /// Exclusive mode: gives `gpus` to job j until `end` (Take), or frees them (j = no_job, end =
    /// free_end), with the free counts of their domains.
    /// (Inlined into allocate_exclusive() and release_exclusive(): a start and a completion call
    /// them once each, and the call cost about a tenth of the work; callgrind.)
    template <bool Take>
    GPUPLACE_ALWAYS_INLINE void assign_exclusive(std::span<const gpu_id> gpus, std::uint32_t j, double end) noexcept {
        std::uint32_t* holder = holder_.data();
        double* ends = end_.data();
        std::uint32_t* count = count_.data();
        std::uint32_t* dfree = domain_free_.data();
        const std::uint32_t delta = Take ? ~std::uint32_t{0} : 1u;  // -1 or +1, modulo 2^32
        if constexpr (Take) end = std::min(end, max_end);
        const std::uint32_t* flat = flat_;
        // the levels as a constant for the common hierarchies: per GPU, L - 1 updates in a row
        detail::with_constant<2, 3>(levels_, [&](auto NL) {
            const std::size_t L = NL() ? NL() : levels_;
            for (const auto g : gpus) {
                holder[g] = j;
                ends[g] = end;
                count[g] = Take ? 1 : 0;
                const std::uint32_t* d = flat + std::size_t(g) * L;
                for (std::size_t l = 0; l < L; ++l) dfree[d[l]] += delta;
            }
        });
        if constexpr (Take) {
            free_ -= gpus.size();
            slot_free_ -= gpus.size();
        } else {
            free_ += gpus.size();
            slot_free_ += gpus.size();
        }
    }

    /// Appends g to the change log without allocating: a full log is cleared (new generation).
    void log_change(gpu_id g) noexcept {
        if (changes_.size() == changes_.capacity()) {
            changes_.clear();
            ++change_generation_;
            if (changes_.capacity() == 0) return;  // a copy not yet reset: readers rescan
        }
        changes_.push_back(g);
    }

    // what allocate(), release() and a step's reads touch first, together
    std::vector<std::uint32_t> holder_;
    std::vector<double> end_;
    std::vector<std::uint32_t> count_;
    std::vector<std::uint32_t> domain_free_;  ///< free GPUs per domain, by flat number (level_hierarchy::flat_offset)
    std::size_t free_ = 0, slot_free_ = 0;
    std::size_t max_jobs_ = 1;
    double mem_total_ = 0;
    std::size_t levels_ = 0;                ///< domain levels (L - 1)
    const std::uint32_t* flat_ = nullptr;  ///< h_.flat_domains(): per GPU, its domains' indices into domain_free_
    std::vector<std::size_t> level_off_;    ///< per domain level: where its counts start in domain_free_
    bool track_ = false;
    std::vector<std::uint32_t> full_;       ///< per domain: its size (the free counts of an empty cluster)
    level_hierarchy h_;
    std::vector<double> mem_, share_;
    std::vector<std::uint32_t> slots_;
    std::vector<gpu_id> changes_;
    std::size_t log_capacity_ = 64;
    std::uint64_t change_generation_ = 0;
};

}  // namespace gpuplace
