#pragma once
/// \file heuristics/typed.hpp
/// Type-aware placement on heterogeneous clusters (GPUs of several types, gpu_types.hpp):
/// typed_policy<Rule, Base> chooses the GPU type of each job (fastest_type or throughput_greedy)
/// and lets Base place the job on that type's GPUs.

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "../detail/enum_names.hpp"
#include "../topology.hpp"
#include "placer.hpp"

namespace gpuplace {

/// How typed_policy chooses a job's GPU type among the types with room for the whole job.
enum class type_rule : std::uint8_t {
    /// the type on which the job's model (at its GPU count) runs fastest
    fastest_type,
    /// Gavel's max-throughput idea, one decision at a time: the type where the job's speedup over
    /// its slowest type, divided by the mean speedup on that type of the first 16 waiting jobs (the
    /// job included), is largest - each type goes to the jobs that gain most from it relative to
    /// the others. Ties (e.g. a queue of one job): the faster type.
    throughput_greedy,
};

template <>
struct detail::enum_names<type_rule> {
    static constexpr std::array<std::pair<type_rule, std::string_view>, 2> values{
        {{type_rule::fastest_type, "fastest_type"}, {type_rule::throughput_greedy, "throughput_greedy"}}};
};
[[nodiscard]] constexpr std::string_view to_string(type_rule r) noexcept { return detail::enum_name(r); }

/// A type-aware placer: Rule chooses the job's GPU type among the types whose allowed GPUs can
/// hold the whole job (after the first pick: the first pick's type), and Base places the job on
/// that type's GPUs (it sees the mask restricted to them). When no type can hold the job alone,
/// or the cluster is not heterogeneous, Base acts on the whole mask. Named "<rule>:<base>", e.g.
/// "fastest_type:pack_wait".
template <type_rule Rule, class Base>
class typed_policy {
public:
    static constexpr type_rule rule = Rule;
    void reset(std::uint64_t seed) { base_.reset(seed); }
    void reserve(const level_hierarchy& h) {
        base_.reserve(h);
        mask_.reserve(h.num_gpus());
    }
    template <Topology T>
    void reserve(const T& t) { reserve(t.hierarchy()); }

    template <class E>
    std::int64_t act(const E& e) {
        return e.heuristic_action(*this);
    }
    template <class V>
    bool plan(const V& v, std::vector<gpu_id>& out) {
        const auto target = choose(v);
        return target == none ? base_.plan(v, out) : base_.plan(v.with_mask(mask_), out);
    }
    template <class V>
    std::int64_t next(const V& v) {
        const auto target = choose(v);
        return target == none ? base_.next(v) : base_.next(v.with_mask(mask_));
    }

private:
    static constexpr std::size_t none = ~std::size_t{0};

    /// The job's type (and mask_ restricted to it), or none to place it on every type.
    template <class V>
    std::size_t choose(const V& v) {
        const auto& types = v.gpu_types();
        if (!types.heterogeneous()) return none;
        const auto mask = v.mask();
        const std::size_t G = mask.size(), T = types.num_types();
        avail_.assign(T, 0);
        for (std::size_t g = 0; g < G; ++g) avail_[types.type_of(gpu_id(g))] += mask[g];
        const auto picked = v.picked();
        for (auto g : picked) ++avail_[types.type_of(g)];  // planning availability: the picks count
        const auto& job = v.job();
        std::size_t target = T;
        if (!picked.empty()) {
            const auto t0 = types.type_of(picked.front());
            if (avail_[t0] >= job.num_gpus) target = t0;
        } else {
            target = best_type(v, job.model, job.num_gpus);
        }
        if (target == T) return none;
        mask_.assign(mask.begin(), mask.end());
        for (std::size_t g = 0; g < G; ++g)
            if (types.type_of(gpu_id(g)) != target) mask_[g] = 0;
        return target;
    }

    /// The type for model m at k GPUs among those with room for k GPUs, or T when none has.
    template <class V>
    std::size_t best_type(const V& v, model_id m, std::uint32_t k) {
        const auto& types = v.gpu_types();
        const auto& zoo = v.zoo();
        const std::size_t T = types.num_types();
        auto gain = [&](model_id mm, std::uint32_t kk, std::size_t t) {
            double slow = 1e300;
            for (std::size_t u = 0; u < T; ++u) slow = std::min(slow, types.speed(zoo, mm, u, kk));
            return types.speed(zoo, mm, t, kk) / slow;
        };
        score_.assign(T, 0.0);
        if constexpr (Rule == type_rule::throughput_greedy) {
            mean_.assign(T, 0.0);
            std::size_t n = 0;
            bool self = false;
            for (auto j : v.queue()) {
                if (n == 16) break;
                const auto& w = v.simulator().job(j);
                for (std::size_t t = 0; t < T; ++t) mean_[t] += gain(w.model, w.num_gpus, t);
                self = self || j == v.job_index();
                ++n;
            }
            if (!self) {
                for (std::size_t t = 0; t < T; ++t) mean_[t] += gain(m, k, t);
                ++n;
            }
            for (std::size_t t = 0; t < T; ++t) score_[t] = gain(m, k, t) / (mean_[t] / double(n));
        }
        std::size_t best = T;
        for (std::size_t t = 0; t < T; ++t) {
            if (avail_[t] < k) continue;
            const double sp = types.speed(zoo, m, t, k);
            if (best == T || score_[t] > score_[best] || (score_[t] == score_[best] && sp > types.speed(zoo, m, best, k))) best = t;
        }
        return best;
    }

    Base base_;
    std::vector<std::uint8_t> mask_;
    std::vector<std::uint32_t> avail_;
    std::vector<double> score_, mean_;
};

}  // namespace gpuplace
