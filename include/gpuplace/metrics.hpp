#pragma once
/// \file metrics.hpp
/// What a finished job records, and the metrics of an episode.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

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
    std::uint32_t gpu_offset = 0;  ///< where its GPUs start in the env's placement list

    [[nodiscard]] double jct() const noexcept { return end - submit; }
    [[nodiscard]] double queueing_delay() const noexcept { return start - submit; }
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
    for (const auto& r : done) {
        scratch.push_back(r.jct());
        sum_jct += r.jct();
        sum_q += r.queueing_delay();
        sum_cost += r.comm_cost;
        sum_sd += r.slowdown;
        busy += double(r.num_gpus) * (r.end - r.start);
        useful += double(r.num_gpus) * r.ideal_duration * r.share;
        const double planned = r.ideal_duration * r.slowdown;
        interf += planned > 0 ? std::max(1.0, (r.end - r.start) / planned) : 1.0;
        last = std::max(last, r.end);
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
    return m;
}

}  // namespace gpuplace
