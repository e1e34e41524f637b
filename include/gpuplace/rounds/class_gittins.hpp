#pragma once
/// \file rounds/class_gittins.hpp
/// The round policy class_gittins (docs/rounds.md): each round the active jobs run in decreasing
/// Gittins index, each granted its request while its GPUs fit (later jobs fill what is left).
/// Under hidden durations a job's index is round_job::index: the Gittins index of its class (model
/// and GPU count) at the work it has done, from the scenario's sample of job sizes (for
/// philly_hidden, the training files), so the policy is causal; with durations shown, the index of
/// a known size, 1 / (its remaining GPU-seconds). Jobs the progress rule locks keep their GPUs
/// first. A job goes to the type it runs on when that has room, else to its fastest type with
/// room. Ties: the least attained service, then arrival order.
///
/// Where Gittins (a discipline, information.hpp) ranks every job by one distribution of sizes,
/// this ranks each by its own class's: on the Philly-derived files the class explains about half
/// of the variance of a job's log size.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "../round_allocation.hpp"

namespace gpuplace {

/// A round policy (RoundPolicy): the greedy fill of each round in decreasing class Gittins index.
class class_gittins_policy {
public:
    void reset(std::uint64_t) {}

    void allocate(const round_view& v, round_allocation& out) {
        const auto jobs = v.jobs();
        const std::size_t m = jobs.size(), T = v.num_types();
        left_.assign(T, 0);
        for (std::size_t t = 0; t < T; ++t) left_[t] = v.type_gpus(t);
        order_.clear();
        key_.assign(m, 0.0);
        const bool hidden = v.information() == duration_info::hidden;
        for (std::size_t i = 0; i < m; ++i) {
            const auto& r = jobs[i];
            if (r.locked && r.type != round_job::none) {  // keeps its GPUs
                left_[r.type] -= std::min(left_[r.type], r.held);
                out.grant(r.job, r.type, r.held);
                continue;
            }
            const double rest = r.remaining * double(r.gpus);
            key_[i] = hidden ? r.index : rest > 0 ? 1.0 / rest : std::numeric_limits<double>::infinity();
            order_.push_back(i);
        }
        std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
            return key_[a] != key_[b] ? key_[a] > key_[b] : jobs[a].attained < jobs[b].attained;
        });
        for (const auto i : order_) {
            const auto& r = jobs[i];
            const auto k = std::clamp(r.gpus, r.min_gpus, r.max_gpus);
            const auto t = type_for(v, i, k);
            if (t == round_job::none) continue;
            left_[t] -= k;
            out.grant(r.job, t, k);
        }
    }

private:
    /// The type it runs on when that has room for k GPUs, else the fastest with room (none: none has).
    [[nodiscard]] std::uint32_t type_for(const round_view& v, std::size_t i, std::uint32_t k) const noexcept {
        const auto& r = v.jobs()[i];
        if (r.type != round_job::none && left_[r.type] >= k) return r.type;
        std::uint32_t best = round_job::none;
        for (std::size_t t = 0; t < v.num_types(); ++t)
            if (left_[t] >= k && v.throughput_at(i, t, k) > 0 && (best == round_job::none || v.throughput_at(i, t, k) > v.throughput_at(i, best, k)))
                best = static_cast<std::uint32_t>(t);
        return best;
    }

    std::vector<std::uint32_t> left_;
    std::vector<std::size_t> order_;
    std::vector<double> key_;
};

}  // namespace gpuplace
