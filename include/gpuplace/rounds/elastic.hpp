#pragma once
/// \file rounds/elastic.hpp
/// Round policies for elastic jobs (docs/rounds.md, "Elastic jobs"): they hand out a round's GPUs
/// a step at a time. A job's first step gives it its min_gpus (a job that is not elastic: its
/// request) on one GPU type: the type it runs on when that has room, else its fastest type with
/// room; each further step gives it one more GPU of that type, up to its max_gpus. Jobs the
/// progress rule locks keep their GPUs first. A step is taken while one fits; which one is the
/// policy's choice:
///
///  - afs_l: AFS-L of Hwang et al., "Elastic Resource Sharing for Distributed Deep Learning"
///    (NSDI 2021). A job without GPUs comes before any job with GPUs (its first step's relative
///    gain is 1, the largest possible); among those, the shortest remaining time at its first step
///    first (hidden durations: the least attained service first, as LAS). Among jobs with GPUs, the
///    next GPU goes to the largest relative throughput gain (T(n + 1) - T(n)) / T(n + 1), ties to
///    the job with fewer GPUs. (The rule as a public reimplementation states it, the pairwise
///    comparison of the paper's algorithm: czq693497091/DeepBoot, afs.py, get_afs_weight and
///    top_priority.)
///  - greedy_gain: a marginal-gain allocator in the manner of Optimus (Peng et al., EuroSys 2018):
///    first steps as afs_l (shortest remaining time first), then each next GPU to the job whose
///    remaining time drops most per GPU added: R / T(n) - R / T(n + 1), R its remaining steps.
///    It needs remaining work: refused under hidden durations (round_policy_registry.hpp).
///
/// T(k) is round_view::throughput_at (the zoo's measurements, per-GPU throughput interpolated
/// linearly between measured counts, never past the largest). Ties: arrival order.

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../round_allocation.hpp"

namespace gpuplace {

enum class elastic_rule : std::uint8_t { afs_l, greedy_gain };

/// A round policy (RoundPolicy): the step-at-a-time allocator of rule R.
class elastic_policy {
public:
    explicit elastic_policy(elastic_rule rule = elastic_rule::afs_l) : rule_(rule) {}

    void reset(std::uint64_t) {}

    void allocate(const round_view& v, round_allocation& out) {
        const auto jobs = v.jobs();
        const std::size_t m = jobs.size(), T = v.num_types();
        left_.assign(T, 0);
        for (std::size_t t = 0; t < T; ++t) left_[t] = v.type_gpus(t);
        n_.assign(m, 0);
        type_.assign(m, none);
        fixed_.assign(m, 0);
        for (std::size_t i = 0; i < m; ++i)
            if (jobs[i].locked && jobs[i].type != round_job::none) {  // keeps its GPUs
                fixed_[i] = 1;
                type_[i] = jobs[i].type;
                n_[i] = jobs[i].held;
                left_[jobs[i].type] -= std::min(left_[jobs[i].type], jobs[i].held);
            }
        const bool hidden = v.information() == duration_info::hidden;
        for (;;) {
            std::size_t best = m;
            double best_key = 0;
            std::uint32_t best_t = none;
            bool best_first = false;
            for (std::size_t i = 0; i < m; ++i) {
                if (fixed_[i]) continue;
                const auto& r = jobs[i];
                if (n_[i] == 0) {  // a first step: min_gpus on a type
                    const auto t = first_type(v, i);
                    if (t == none) continue;
                    // shortest remaining time first (hidden: least attained service first)
                    const double key = hidden ? r.attained : v.remaining_steps(i) / v.throughput_at(i, t, r.min_gpus);
                    if (best == m || !best_first || key < best_key) {
                        best = i, best_key = key, best_t = t, best_first = true;
                    }
                } else if (!best_first && n_[i] < r.max_gpus && left_[type_[i]] > 0) {  // one more GPU
                    const double now = v.throughput_at(i, type_[i], n_[i]), next = v.throughput_at(i, type_[i], n_[i] + 1);
                    if (!(next > 0)) continue;
                    const double key = rule_ == elastic_rule::afs_l ? (next - now) / next
                                                                    : v.remaining_steps(i) * (1.0 / now - 1.0 / next);
                    if (!(key > 0)) continue;  // another GPU would not make it faster
                    if (best == m || key > best_key || (key == best_key && n_[i] < n_[best])) {
                        best = i, best_key = key, best_t = type_[i];
                    }
                }
            }
            if (best == m) break;
            const auto k = n_[best] == 0 ? jobs[best].min_gpus : 1;
            n_[best] += k;
            type_[best] = best_t;
            left_[best_t] -= k;
        }
        for (std::size_t i = 0; i < m; ++i)
            if (n_[i] > 0) out.grant(jobs[i].job, type_[i], n_[i]);
    }

private:
    static constexpr std::uint32_t none = round_job::none;

    /// The type of job i's first step: the one it runs on when that has room for its min_gpus,
    /// else the fastest with room (none when none has).
    [[nodiscard]] std::uint32_t first_type(const round_view& v, std::size_t i) const noexcept {
        const auto& r = v.jobs()[i];
        if (r.type != none && left_[r.type] >= r.min_gpus && v.throughput_at(i, r.type, r.min_gpus) > 0) return r.type;
        std::uint32_t best = none;
        for (std::size_t t = 0; t < v.num_types(); ++t)
            if (left_[t] >= r.min_gpus && v.throughput_at(i, t, r.min_gpus) > 0 &&
                (best == none || v.throughput_at(i, t, r.min_gpus) > v.throughput_at(i, best, r.min_gpus)))
                best = static_cast<std::uint32_t>(t);
        return best;
    }

    elastic_rule rule_;
    std::vector<std::uint32_t> left_, n_, type_;
    std::vector<std::uint8_t> fixed_;
};

}  // namespace gpuplace
