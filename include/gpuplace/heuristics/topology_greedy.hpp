#pragma once
/// \file heuristics/topology_greedy.hpp
/// Topology-greedy: each pick minimises the communication cost of the job's completed placement.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../comm.hpp"
#include "../topology.hpp"
#include "placer.hpp"

namespace gpuplace {

namespace detail {

/// Sorted GPUs as two runs, every GPU of the first below every GPU of the second: a sorted list
/// with a range cut out of it.
struct sorted_runs {
    const gpu_id* a = nullptr;
    std::size_t na = 0;
    const gpu_id* b = nullptr;
    std::size_t nb = 0;

    /// list[0, n) without list[cut, cut + len).
    [[nodiscard]] static sorted_runs without(const gpu_id* list, std::size_t n, std::size_t cut, std::size_t len) noexcept {
        return {list, cut, list + cut + len, n - cut - len};
    }
    [[nodiscard]] bool empty() const noexcept { return na == 0 && nb == 0; }
    [[nodiscard]] gpu_id front() const noexcept { return na ? *a : *b; }
    void pop() noexcept {
        if (na) ++a, --na;
        else ++b, --nb;
    }
};

/// Appends the lowest `n` GPUs of x and y together (fewer when they hold fewer) to out; returns
/// how many.
inline std::size_t append_lowest(sorted_runs x, sorted_runs y, std::size_t n, std::vector<gpu_id>& out) {
    std::size_t got = 0;
    for (; got < n && !(x.empty() && y.empty()); ++got) {
        auto& from = y.empty() || (!x.empty() && x.front() < y.front()) ? x : y;
        out.push_back(from.front());
        from.pop();
    }
    return got;
}

/// topology_greedy's choice among candidates offered in index order: a candidate's placement is
/// the better of its two completions (lower cost, then lower slowdown; ties: the first), and the
/// candidate with the best placement wins (the same order; ties: the earlier candidate).
struct greedy_choice {
    std::int64_t gpu = -1;
    comm_result best;

    void offer(std::int64_t g, comm_result first, const comm_result& second) noexcept {
        if (second.cost < first.cost || (second.cost == first.cost && second.slowdown < first.slowdown)) first = second;
        if (gpu < 0 || first.cost < best.cost || (first.cost == best.cost && first.slowdown < best.slowdown)) {
            gpu = g;
            best = first;
        }
    }
};

}  // namespace detail

/// Topology-greedy: each pick takes the GPU that minimises the communication cost (view.evaluate,
/// i.e. the scenario's comm model) of the job's completed placement: the picks so far, this GPU,
/// and the better of two completions of the rest - lowest-index available GPUs, or a compact fill
/// (the level-1 domains already used, then the rest of the level-2 domains used, and so on up,
/// each in index order). Both completions are prefix-consistent, so the cost never rises from
/// one pick to the next and the final placement costs no more than first-fit's on the same state.
/// Candidates: the lowest available GPU of each level-1 domain (every available GPU when a
/// domain's GPUs are not interchangeable, e.g. DGX-1 cube-mesh nodes). Ties: lower slowdown, then
/// lower index. O(G x levels + C x (k log k + log G)) per pick for C candidates and a job of k
/// GPUs: the available GPUs are split once per pick into classes by the lowest level they share
/// with the picks, and each candidate's compact fill is merged from them.
class topology_greedy_policy : public gpu_picker<topology_greedy_policy> {
public:
    static constexpr std::string_view name = "topology_greedy";
    void reset(std::uint64_t) {}
    void reserve(const level_hierarchy& h) {
        reserve_plan(h);
        free_.reserve(h.num_gpus());
        set_.reserve(h.num_gpus());
        cls_.resize(h.num_levels());
        for (auto& c : cls_) c.reserve(h.num_gpus());
        std::size_t n = 0;
        for (std::size_t l = 1; l < h.num_levels(); ++l) n += h.num_domains(l);
        used_.reserve(n);
        for (auto* x : {&off_, &lo_, &hi_}) x->reserve(h.num_levels());
        dom_.reserve(h.num_levels());
    }
    template <Topology T>
    void reserve(const T& t) { reserve(t.hierarchy()); }

    template <class V>
    std::int64_t next(const V& v) {
        const auto& h = v.hierarchy();
        const std::size_t L = h.num_levels();
        const auto mask = v.mask();
        const std::size_t G = mask.size();
        const auto picked = v.picked();
        const std::size_t k = v.request();
        const std::size_t rest = k - picked.size() - 1;  // GPUs to add after the candidate
        const bool all_slots = !h.symmetric();
        // which domains the picks use, per level (level 1's first)
        off_.assign(L, 0);
        for (std::size_t l = 1; l + 1 < L; ++l) off_[l] = off_[l - 1] + h.num_domains(l);
        used_.assign(off_[L - 2] + h.num_domains(L - 1), 0);
        for (auto g : picked)
            for (std::size_t l = 1; l < L; ++l) used_[off_[l - 1] + h.domain_of(l, g)] = 1;
        // the available GPUs, and by class: the lowest level l they share with a pick gives class
        // l - 1 (L - 1: none below the root); each in index order
        if (cls_.size() < L) cls_.resize(L);
        free_.clear();
        for (auto& c : cls_) c.clear();
        for (std::size_t g = 0; g < G; ++g)
            if (mask[g]) {
                free_.push_back(gpu_id(g));
                cls_[class_of(h, gpu_id(g))].push_back(gpu_id(g));
            }
        // per level l >= 2: the candidate's level-l domain and its available GPUs, free_[lo_[l], hi_[l])
        lo_.assign(L, 0);
        hi_.assign(L, 0);
        dom_.assign(L, ~std::uint32_t{0});
        detail::greedy_choice choice;
        for (std::size_t lo = 0, hi; lo < free_.size(); lo = hi) {
            // level-1 domain nd's available GPUs: free_[lo, hi)
            const auto nd = h.domain_of(1, free_[lo]);
            hi = lo + 1;
            while (hi < free_.size() && free_[hi] < h.end(1, nd)) ++hi;
            lo_[1] = lo, hi_[1] = hi;
            for (std::size_t l = 2; l < L; ++l) {
                const auto d = h.domain_of(l, free_[lo]);
                if (d == dom_[l]) continue;
                dom_[l] = d;
                lo_[l] = lo;
                hi_[l] = std::size_t(std::lower_bound(free_.begin() + std::ptrdiff_t(lo), free_.end(), h.end(l, d)) - free_.begin());
            }
            // With the candidate, the GPUs of its domains up to the level of its class move to lower
            // classes: its class without its domain on that level, and what joins each lower class.
            const std::size_t c_nd = class_of(h, free_[lo]);
            const std::size_t cut_level = std::max<std::size_t>(c_nd, 1);
            const auto& moved = cls_[c_nd];
            const std::size_t cut_len = hi_[cut_level] - lo_[cut_level];
            const auto cut = std::size_t(std::lower_bound(moved.begin(), moved.end(), free_[lo_[cut_level]]) - moved.begin());
            for (std::size_t p = lo; p < (all_slots ? hi : lo + 1); ++p) {
                const auto g = free_[p];
                // completion 1: lowest-index available GPUs
                set_.assign(picked.begin(), picked.end());
                set_.push_back(g);
                for (std::size_t i = 0, added = 0; i < free_.size() && added < rest; ++i)
                    if (free_[i] != g) {
                        set_.push_back(free_[i]);
                        ++added;
                    }
                const auto r1 = score(v);
                // completion 2: compact fill around the picks and g
                set_.assign(picked.begin(), picked.end());
                set_.push_back(g);
                std::size_t added = 0;
                for (std::size_t c = 0; c < L && added < rest; ++c) {
                    const auto base = c == c_nd ? detail::sorted_runs::without(cls_[c].data(), cls_[c].size(), cut, cut_len)
                                                : detail::sorted_runs{cls_[c].data(), cls_[c].size(), nullptr, 0};
                    // class 0 gains g's level-1 domain but g; class c < c_nd gains its level-(c + 1)
                    // domain without its level-c one
                    detail::sorted_runs joins{};
                    if (c == 0) joins = detail::sorted_runs::without(free_.data() + lo, hi - lo, p - lo, 1);
                    else if (c < c_nd)
                        joins = detail::sorted_runs::without(free_.data() + lo_[c + 1], hi_[c + 1] - lo_[c + 1], lo_[c] - lo_[c + 1],
                                                             hi_[c] - lo_[c]);
                    added += detail::append_lowest(base, joins, rest - added, set_);
                }
                choice.offer(std::int64_t(g), r1, score(v));
            }
        }
        return choice.gpu;
    }

private:
    template <class H>
    [[nodiscard]] std::size_t class_of(const H& h, gpu_id g) const noexcept {
        const std::size_t L = h.num_levels();
        for (std::size_t l = 1; l < L; ++l)
            if (used_[off_[l - 1] + h.domain_of(l, g)]) return l - 1;
        return L - 1;
    }

    template <class V>
    comm_result score(const V& v) {
        std::sort(set_.begin(), set_.end());
        return v.evaluate(set_);
    }

    std::vector<gpu_id> free_, set_;
    std::vector<std::vector<gpu_id>> cls_;  ///< the available GPUs by class (see next())
    std::vector<std::uint8_t> used_;        ///< per domain (level 1's first): whether a pick is in it
    std::vector<std::size_t> off_, lo_, hi_;
    std::vector<std::uint32_t> dom_;
};

}  // namespace gpuplace
