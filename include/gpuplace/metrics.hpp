#pragma once
/// \file metrics.hpp
/// What a finished job records, and the metrics of an episode.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "group_metrics.hpp"
#include "job.hpp"

namespace gpuplace {

/// A finished job.
struct job_record {
    job_id id = 0;
    model_id model = 0;
    std::uint32_t num_gpus = 0;
    double submit = 0, start = 0, end = 0;
    double ideal_duration = 0;  ///< run time on the best placement of an empty cluster
    double share = 1;           ///< GPU share it asked for on each GPU (co-location)
    double comm_cost = 0;
    double slowdown = 1;
    std::uint32_t gpu_offset = 0;  ///< where its GPUs start in the env's placement list (its last placement)
    std::uint32_t preemptions = 0; ///< how often it was suspended (preemption.hpp); start is its first start
    double run_time = 0;           ///< seconds it held GPUs (end - start unless it was preempted)
    double lost_gpu_time = 0;      ///< GPU-seconds lost to restarts: overheads and progress since the last checkpoint
    double contention = 1;         ///< mean number of jobs in the system over its life (Themis' N)
    std::uint32_t interruptions = 0;  ///< how often a hardware failure stopped it (failures.hpp)
    double checkpoint_gpu_time = 0;   ///< GPU-seconds it spent writing checkpoints (failures' checkpoint_cost)

    [[nodiscard]] double jct() const noexcept { return end - submit; }
    /// Time not running: start - submit unless the job was preempted, then JCT - run time.
    [[nodiscard]] double queueing_delay() const noexcept { return preemptions || interruptions ? jct() - run_time : start - submit; }
    /// Themis' finish-time fairness rho = JCT / the JCT with a 1/N share of a cluster of `cluster_gpus`
    /// GPUs (N = contention): the ideal duration, stretched when the job needs more than G / N GPUs.
    [[nodiscard]] double finish_time_fairness(std::size_t cluster_gpus) const noexcept {
        const double t = ideal_duration * std::max(1.0, double(num_gpus) * contention / double(cluster_gpus));
        return t > 0 ? jct() / t : 1.0;
    }
};

/// How many GPU types of a heterogeneous cluster metrics::type_utilization reports.
inline constexpr std::size_t max_metric_types = 4;

/// Metrics of an episode (or of the jobs finished so far). Times in seconds.
struct metrics {
    double avg_jct = 0, p50_jct = 0, p95_jct = 0, p99_jct = 0;
    double avg_queueing_delay = 0;
    double makespan = 0;           ///< last end - first submit
    double avg_comm_cost = 0, total_comm_cost = 0;
    double avg_slowdown = 0;
    double utilization = 0;        ///< GPU-time busy / (GPUs x makespan)
    double sm_utilization = 0;     ///< GPU-time of useful work at isolated speed (GPUs x ideal x share) / (GPUs x makespan)
    double memory_utilization = 0; ///< GPU memory x time used / (capacity x makespan); 0 without co-location
    double avg_interference = 1;   ///< mean of run time / (ideal duration x placement slowdown), >= 1
    /// Heterogeneous clusters: per GPU type (TreeTopology::gpu_types() order, the first
    /// max_metric_types), its GPUs' busy time / (its GPUs x makespan); 0 otherwise.
    std::array<double, max_metric_types> type_utilization{};
    std::size_t jobs_done = 0, jobs_total = 0;
    double p99_queueing_delay = 0;
    double avg_preemptions = 0;       ///< preemptions per finished job
    double lost_gpu_hours = 0;        ///< GPU-hours lost to restarts (overheads and progress since the last checkpoint)
    double avg_fairness = 0, max_fairness = 0;  ///< finish-time fairness rho (job_record::finish_time_fairness): mean, worst
    /// Rounds (round_env.hpp) only: whether the episode ran in rounds, and per finished job its
    /// moves (restarts on another GPU type), resizes (on another GPU count) and seconds suspended.
    bool rounds = false;
    double avg_moves = 0, avg_resizes = 0, avg_suspended_time = 0;
    /// Useful GPU-time (request x ideal duration x share) / GPU-time held, of the finished jobs
    /// (round_env.hpp counts each run's GPUs of an elastic job). Reports write it for rounds only.
    double gpu_time_efficiency = 0;
    /// Failures (failures.hpp) only: whether the episode had them on, and goodput (allocated
    /// GPU-time less the wasted / allocated), wasted GPU-hours (restart overheads, progress lost
    /// since the last checkpoint, checkpoint writes), interruptions per finished job, hardware
    /// failures in the episode, and the mean JCT of the jobs that completed.
    bool failures = false;
    double goodput = 1, wasted_gpu_hours = 0, avg_interruptions = 0, hardware_failures = 0, avg_jct_completed = 0;
    /// With tenants, a spot class or deadlines on (tenancy.hpp): metrics by group of jobs.
    group_metrics groups;
};

/// Percentile (nearest-rank with linear interpolation) of sorted values, q in [0, 1].
[[nodiscard]] inline double percentile_sorted(std::span<const double> v, double q) noexcept {
    if (v.empty()) return 0;
    const double pos = q * double(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, v.size() - 1);
    const double t = pos - double(lo);
    return v[lo] * (1 - t) + v[hi] * t;
}

/// Computes metrics of finished jobs. `scratch` is reused (no allocation once large enough).
/// `first_submit` is the earliest submit time of the workload.
[[nodiscard]] inline metrics compute_metrics(std::span<const job_record> done, std::size_t jobs_total,
                                             std::size_t num_gpus, double first_submit,
                                             std::vector<double>& scratch) {
    metrics m;
    m.jobs_done = done.size();
    m.jobs_total = jobs_total;
    if (done.empty()) return m;
    scratch.clear();
    double sum_jct = 0, sum_q = 0, sum_cost = 0, sum_sd = 0, busy = 0, useful = 0, interf = 0, last = first_submit;
    double preempt = 0, lost = 0, fair = 0, fair_max = 0;
    for (const auto& r : done) {
        scratch.push_back(r.jct());
        sum_jct += r.jct();
        sum_q += r.queueing_delay();
        sum_cost += r.comm_cost;
        sum_sd += r.slowdown;
        const double ran = r.preemptions || r.interruptions ? r.run_time : r.end - r.start;
        busy += double(r.num_gpus) * ran;
        useful += double(r.num_gpus) * r.ideal_duration * r.share;
        const double planned = r.ideal_duration * r.slowdown;
        interf += planned > 0 ? std::max(1.0, ran / planned) : 1.0;
        last = std::max(last, r.end);
        preempt += r.preemptions;
        lost += r.lost_gpu_time;
        const double f = r.finish_time_fairness(num_gpus);
        fair += f;
        fair_max = std::max(fair_max, f);
    }
    std::sort(scratch.begin(), scratch.end());
    const double n = double(done.size());
    m.avg_jct = sum_jct / n;
    m.p50_jct = percentile_sorted(scratch, 0.50);
    m.p95_jct = percentile_sorted(scratch, 0.95);
    m.p99_jct = percentile_sorted(scratch, 0.99);
    m.avg_queueing_delay = sum_q / n;
    m.makespan = last - first_submit;
    m.total_comm_cost = sum_cost;
    m.avg_comm_cost = sum_cost / n;
    m.avg_slowdown = sum_sd / n;
    m.utilization = m.makespan > 0 ? busy / (double(num_gpus) * m.makespan) : 0;
    m.sm_utilization = m.makespan > 0 ? useful / (double(num_gpus) * m.makespan) : 0;
    m.avg_interference = interf / n;
    m.gpu_time_efficiency = busy > 0 ? useful / busy : 0;
    m.avg_preemptions = preempt / n;
    m.lost_gpu_hours = lost / 3600.0;
    m.avg_fairness = fair / n;
    m.max_fairness = fair_max;
    scratch.clear();
    for (const auto& r : done) scratch.push_back(r.queueing_delay());
    std::sort(scratch.begin(), scratch.end());
    m.p99_queueing_delay = percentile_sorted(scratch, 0.99);
    return m;
}

}  // namespace gpuplace
