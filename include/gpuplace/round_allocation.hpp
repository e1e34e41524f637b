#pragma once
/// \file round_allocation.hpp
/// Rounds (docs/rounds.md): what a round policy reads at a round boundary (round_view: the active
/// jobs, waiting and running, and the cluster's GPU types) and what it returns (round_allocation:
/// which jobs run in the next round, on which GPU type, on how many GPUs). The front end
/// (env/round_front.hpp) applies an allocation: a running job granted its type and GPU count keeps
/// its GPUs; one granted another type moves; a running job not granted is suspended; the others
/// start or resume, placed by a placer on GPUs of their type. An allocation can be built a grant
/// at a time (an agent's steps) or whole (a policy's).

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "information.hpp"
#include "job.hpp"

namespace gpuplace {

/// One grant of a round: job `job` (index into the simulator's jobs) runs the next round on `gpus`
/// GPUs of cluster GPU type `type` (gpu_type_map's index; any_type: the placer chooses among all).
struct round_grant {
    static constexpr std::uint32_t any_type = std::numeric_limits<std::uint32_t>::max();
    std::uint32_t job = 0;
    std::uint32_t type = any_type;
    std::uint32_t gpus = 0;  ///< the job's GPU count: its request, or for an elastic job any count in its bounds
    friend bool operator==(const round_grant&, const round_grant&) = default;
};

/// The grants of one round, in the order they were made (the front end places the new placements
/// largest first, ties in this order).
class round_allocation {
public:
    void clear() noexcept { grants_.clear(); }
    void reserve(std::size_t n) { grants_.reserve(n); }
    /// Grants job `job` `gpus` GPUs of type `type` for the next round.
    void grant(std::uint32_t job, std::uint32_t type, std::uint32_t gpus) { grants_.push_back({job, type, gpus}); }
    [[nodiscard]] std::span<const round_grant> grants() const noexcept { return grants_; }
    [[nodiscard]] std::size_t size() const noexcept { return grants_.size(); }
    [[nodiscard]] bool empty() const noexcept { return grants_.empty(); }

private:
    std::vector<round_grant> grants_;
};

/// An active job (arrived, not finished) as a round policy sees it.
struct round_job {
    static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    std::uint32_t job = 0;    ///< index into the simulator's jobs
    model_id model = 0;
    std::uint32_t gpus = 0;   ///< GPUs it requests (Gavel's scale factor)
    /// The GPU counts it may be granted: min_gpus = max_gpus = gpus unless it is elastic
    /// (docs/rounds.md, "Elastic jobs"; max_gpus is capped at its model's largest measured count).
    std::uint32_t min_gpus = 0, max_gpus = 0;
    std::uint32_t held = 0;   ///< GPUs it holds now (0: waiting)
    std::uint32_t scaling = 0;  ///< where its throughputs at each count start in round_view's table (elastic jobs)
    double submit = 0;        ///< arrival time, s
    double attained = 0;      ///< GPU-seconds it held GPUs so far
    /// Ideal seconds of work (on the zoo's reference type, consolidated) it has left as the
    /// scheduler knows it: the truth (durations oracle), the estimate minus what it did (predicted),
    /// NaN (hidden).
    double remaining = 0;
    double done = 0;          ///< ideal seconds of work it has done
    std::uint32_t type = none;       ///< the GPU type it runs on now, or none (waiting)
    std::uint32_t last_type = none;  ///< the type it ran on in the last round, or none
    double ran_last_round = 0;       ///< seconds it held GPUs in the last round
    /// It keeps its GPUs this round whatever the allocation says: it has not yet made, since its
    /// last (re)start, as much progress as that restart's restore time (and some): docs/rounds.md.
    bool locked = false;
};

/// What a round policy reads at a round boundary. Valid until the front end changes (apply()).
class round_view {
public:
    struct state {
        double now = 0, round_length = 0;
        duration_info information = duration_info::oracle;
        std::span<const round_job> jobs;
        std::span<const double> throughput;  ///< jobs x types: steps/s at the job's GPU count, consolidated, on each type
        std::span<const double> step_time_ref;  ///< per active job: its ideal step time on the reference type (s)
        /// Elastic jobs: from each one's round_job::scaling on, per type and per count from min_gpus
        /// to max_gpus, its throughput (steps/s, consolidated) at that count.
        std::span<const double> scaling;
        std::span<const std::string> type_names;
        std::span<const std::uint32_t> type_gpus;  ///< GPUs of each type
        bool arrivals_pending = false;              ///< jobs of the workload have not arrived yet
    };
    explicit round_view(const state& s) noexcept : s_(s) {}

    [[nodiscard]] double now() const noexcept { return s_.now; }
    [[nodiscard]] double round_length() const noexcept { return s_.round_length; }
    /// What the scheduler knows of durations (round_job::remaining is NaN when hidden).
    [[nodiscard]] duration_info information() const noexcept { return s_.information; }
    /// The active jobs, in arrival order.
    [[nodiscard]] std::span<const round_job> jobs() const noexcept { return s_.jobs; }
    [[nodiscard]] std::size_t num_types() const noexcept { return s_.type_gpus.size(); }
    [[nodiscard]] const std::string& type_name(std::size_t t) const noexcept { return s_.type_names[t]; }
    [[nodiscard]] std::uint32_t type_gpus(std::size_t t) const noexcept { return s_.type_gpus[t]; }
    /// Active job i's (position in jobs()) throughput on type t: steps/s of the whole job at its GPU
    /// count on a consolidated placement of this cluster (Gavel's throughput matrix).
    [[nodiscard]] double throughput(std::size_t i, std::size_t t) const noexcept { return s_.throughput[i * num_types() + t]; }
    /// Active job i's throughput on type t at k GPUs (steps/s of the whole job, consolidated): at its
    /// request throughput(i, t); an elastic job's other counts from the zoo's measurements, the
    /// per-GPU throughput interpolated linearly between the two nearest measured counts
    /// (docs/rounds.md); 0 outside [min_gpus, max_gpus].
    [[nodiscard]] double throughput_at(std::size_t i, std::size_t t, std::uint32_t k) const noexcept {
        const auto& r = s_.jobs[i];
        if (k == r.gpus) return throughput(i, t);
        if (k < r.min_gpus || k > r.max_gpus) return 0.0;
        return s_.scaling[r.scaling + t * (r.max_gpus - r.min_gpus + 1) + (k - r.min_gpus)];
    }
    /// Whether active job i may run on other GPU counts than its request.
    [[nodiscard]] bool elastic(std::size_t i) const noexcept { return s_.jobs[i].min_gpus != s_.jobs[i].max_gpus; }
    /// Active job i's throughput on the zoo's reference type (steps/s, consolidated): what a
    /// heterogeneity-agnostic policy assumes on every type.
    [[nodiscard]] double reference_throughput(std::size_t i) const noexcept { return 1.0 / s_.step_time_ref[i]; }
    /// Steps active job i has left as the scheduler knows them (NaN when durations are hidden).
    [[nodiscard]] double remaining_steps(std::size_t i) const noexcept { return s_.jobs[i].remaining / s_.step_time_ref[i]; }
    /// Whether jobs of the workload are still to arrive.
    [[nodiscard]] bool arrivals_pending() const noexcept { return s_.arrivals_pending; }

private:
    state s_;
};

}  // namespace gpuplace
