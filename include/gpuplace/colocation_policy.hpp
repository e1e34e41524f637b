#pragma once
/// \file colocation_policy.hpp
/// A co-location aware packer: uses free GPUs first (consolidated, best-fit by node), shares a GPU
/// only with jobs it runs well next to, and defers a job rather than place it badly.

#include <cstdint>
#include <string_view>

#include "heuristics/placer.hpp"
#include "placement_view.hpp"
#include "topology.hpp"

namespace gpuplace {

/// Scores a shared GPU by the combined throughput of its jobs after adding the job (sum of
/// everyone's rate factor; a free GPU scores 1 + 1 = 2, an exclusive job alone counts 1). Shares a
/// GPU only when that combined throughput is at least `min_gain` (default 1.4, i.e. 40% more work
/// per second than leaving the job waiting), and defers (when DEFER is allowed and the job has no
/// picks yet) when its GPUs cannot all be free or good shares.
class colocation_packer_policy : public gpu_picker<colocation_packer_policy> {
public:
    static constexpr std::string_view name = "coloc_packer";
    explicit colocation_packer_policy(double min_gain = 1.4) : min_gain_(min_gain) {}
    void reset(std::uint64_t) {}
    void reserve(const level_hierarchy& h) { reserve_plan(h); }
    template <Topology T>
    void reserve(const T& t) { reserve(t.hierarchy()); }

    /// Combined throughput on GPU g if the view's job joins it (0 when it cannot).
    template <class V>
    [[nodiscard]] static double combined(const V& v, gpu_id g) {
        const auto j = v.job_index();
        if (!v.has_room(g, j)) return 0.0;
        const auto& cl = v.cluster();
        if (cl.is_free(g)) return 2.0;
        const auto& sim = v.simulator();
        const auto* t = sim.interference();
        const auto& job = sim.job(j);
        const double sj = sim.share_of(job);
        double total = v.expected_interference(g, j);
        for (auto o : cl.jobs_on(g)) {
            const auto& oj = sim.job(o);
            double f = t ? t->factor(oj.model, sim.share_of(oj), job.model, sj) : 0.0;
            for (auto p : cl.jobs_on(g))
                if (p != o && t) f *= t->factor(oj.model, sim.share_of(oj), sim.job(p).model, sim.share_of(sim.job(p)));
            total += f;
        }
        return total;
    }

    /// The packer's score of GPU g for a pick with `remaining` picks to go: a free GPU best fit by
    /// node (the fewest free GPUs in a node that still holds the remaining picks; +500 in the node of
    /// the job's first pick), above any shared one, which scores its combined throughput.
    template <class V>
    [[nodiscard]] static double score(const V& v, gpu_id g, std::size_t remaining, bool same_node = false) {
        const auto& cl = v.cluster();
        if (!cl.is_free(g)) return combined(v, g);
        const double nf = double(cl.free_in(1, v.hierarchy().domain_of(1, g)));
        return 1000.0 + (same_node ? 500.0 : 0.0) + (nf >= double(remaining) ? 100.0 - nf : -nf);
    }

    template <class V>
    std::int64_t next(const V& v) const {
        const auto mask = v.mask();
        const std::size_t G = mask.size();
        const auto& h = v.hierarchy();
        const auto k = v.job().num_gpus;
        const std::size_t remaining = k - v.picked().size();
        // Would this job's GPUs all be free or good shares?
        if (v.picked().empty() && v.may_defer()) {
            std::size_t good = 0;
            for (std::size_t g = 0; g < G && good < remaining; ++g)
                if (mask[g] && combined(v, gpu_id(g)) >= min_gain_) ++good;
            if (good < remaining) return -1;
        }
        // Free GPUs: best fit (fewest free GPUs in the node that still hold the remaining picks,
        // preferring nodes already used by this job).
        std::int64_t best = -1;
        double best_score = -1e300;
        for (std::size_t g = 0; g < G; ++g) {
            if (!mask[g]) continue;
            const auto gg = gpu_id(g);
            const bool same_node = !v.picked().empty() && h.domain_of(1, v.picked()[0]) == h.domain_of(1, gg);
            const double s = score(v, gg, remaining, same_node);
            if (s > best_score) {
                best_score = s;
                best = static_cast<std::int64_t>(g);
            }
        }
        return best;
    }

private:
    double min_gain_;
};

}  // namespace gpuplace
