#pragma once
/// \file heuristics/pack.hpp
/// First-fit, pack (best fit) and pack that waits.

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../topology.hpp"
#include "placer.hpp"

namespace gpuplace {

/// First fit: the lowest-index GPUs the mask allows.
class first_fit_policy : public whole_placer<first_fit_policy> {
public:
    static constexpr std::string_view name = "first_fit";
    void reset(std::uint64_t) {}
    void reserve(const level_hierarchy& h) { reserve_plan(h); }
    template <Topology T>
    void reserve(const T& t) { reserve(t.hierarchy()); }

    template <class V>
    bool plan(const V& v, std::vector<gpu_id>& out) const {
        out.clear();
        const auto mask = v.mask();
        const std::size_t k = v.remaining();
        for (std::size_t g = 0; g < mask.size() && out.size() < k; ++g)
            if (mask[g]) out.push_back(gpu_id(g));
        return true;
    }
    /// The lowest GPU the mask allows, or -1 (its plan's first GPU, without planning).
    template <class V>
    std::int64_t next(const V& v) const {
        return detail::first_allowed(v.mask(), {});
    }
};

/// Pack / best fit: consolidates the job onto the fullest level-1 domain (node) that can hold it
/// (fewest available GPUs >= request; ties: the fuller parent domain, then the lower index); when
/// none can, from the root down: the children of a domain are filled best fit (the child with the
/// fewest available GPUs that holds the rest, else all of the child with most, and again), each
/// child filled the same way (detail::best_fit_fill). On a tree: the fullest node, else the
/// fullest rack filling its nodes best fit, else racks in turn. Never opens an empty node while a
/// partly-used node can hold the job. The plan counts the job's picks as available (so it is the
/// same at every pick). O(G + domains log domains) per plan.
class pack_policy : public whole_placer<pack_policy> {
public:
    static constexpr std::string_view name = "pack";
    void reset(std::uint64_t) {}
    void reserve(const level_hierarchy& h) {
        reserve_plan(h);
        a_.reserve(h);
        order_.resize(h.num_levels() + 1);
        for (std::size_t l = 1; l < h.num_levels(); ++l) order_[l].reserve(h.num_domains(l));
    }
    template <Topology T>
    void reserve(const T& t) { reserve(t.hierarchy()); }

    template <class V>
    bool plan(const V& v, std::vector<gpu_id>& out) {
        const auto& h = v.hierarchy();
        const std::size_t L = h.num_levels();
        a_.compute(v);
        out.clear();
        if (order_.size() < L + 1) order_.resize(L + 1);
        const std::uint32_t need = v.request();
        // 1. the fullest level-1 domain that can hold the whole job
        const std::uint32_t* n1 = a_.at(1);
        const std::uint32_t* n2 = L > 2 ? a_.at(2) : nullptr;
        const std::size_t N = h.num_domains(1);
        std::size_t best = N;
        for (std::size_t n = 0; n < N; ++n) {
            if (n1[n] < need) continue;
            if (best == N || n1[n] < n1[best] || (n1[n] == n1[best] && n2 && n2[h.parent(1, n)] < n2[h.parent(1, best)])) best = n;
        }
        if (best != N) {
            a_.take(best, need, out);
            return true;
        }
        // 2. from the root down, each domain's children filled best fit
        fill(h, L, 0, need, out);
        return true;
    }

private:
    /// Takes `need` GPUs from domain d of level l, its children filled best fit.
    template <class H>
    std::uint32_t fill(const H& h, std::size_t l, std::size_t d, std::uint32_t need, std::vector<gpu_id>& out) {
        if (l == 1) return a_.take(d, need, out);
        const std::size_t first = h.first_child(l, d), n = h.end_child(l, d) - first;
        return detail::best_fit_fill(first, n, a_.at(l - 1), need, order_[l - 1],
                                     [&](std::size_t c, std::uint32_t m) { return fill(h, l - 1, c, m, out); });
    }

    detail::availability a_;
    std::vector<std::vector<std::size_t>> order_;  ///< per level: best_fit_fill's scratch
};

/// Pack that waits: a job that one node could hold (or, when it is larger than a node, one rack;
/// generally: one domain of the lowest level whose domains are large enough) but that no such
/// domain has room for now is held back with DEFER until one has, instead of being spread;
/// every other decision is pack's. The rule for "when to hold a job back": consolidation at the
/// price of waiting. Where DEFER is disabled or not valid it is pack.
class pack_wait_policy : public whole_placer<pack_wait_policy> {
public:
    static constexpr std::string_view name = "pack_wait";
    void reset(std::uint64_t seed) { pack_.reset(seed); }
    void reserve(const level_hierarchy& h) {
        reserve_plan(h);
        pack_.reserve(h);
        a_.reserve(h);
    }
    template <Topology T>
    void reserve(const T& t) { reserve(t.hierarchy()); }

    template <class V>
    bool plan(const V& v, std::vector<gpu_id>& out) {
        if (v.picked().empty() && v.may_defer() && should_wait(v)) {
            out.clear();
            return false;
        }
        return pack_.plan(v, out);
    }

private:
    template <class V>
    bool should_wait(const V& v) {
        const auto& h = v.hierarchy();
        const std::size_t k = v.request();
        a_.compute(v);  // the GPUs the mask allows, per domain
        for (std::size_t l = 1; l < h.num_levels(); ++l) {
            if (k > h.max_size(l)) continue;
            const std::uint32_t* c = a_.at(l);
            return std::none_of(c, c + h.num_domains(l), [k](std::uint32_t n) { return n >= k; });
        }
        return false;  // larger than any domain below the root: it spans them whatever happens
    }

    pack_policy pack_;
    detail::availability a_;
};

}  // namespace gpuplace
