#pragma once
/// \file heuristics/placer.hpp
/// What every placer shares: the two shapes of a placer and the base classes that give each the
/// other, and the availability of a job's GPUs per domain that the planning heuristics read.
///
/// A placer reads a basic_placement_view (placement_view.hpp) and either
///  - plans a whole placement, `bool plan(const V& view, std::vector<gpu_id>& out)` (whole_placer):
///    `out` gets the GPUs it would give the job, in the order it would pick them (GPUs already
///    picked may appear: they are skipped when followed); false holds the job back (DEFER). Its
///    next GPU is the first GPU of its plan the mask allows (else the lowest the mask allows); or
///  - picks the next GPU, `std::int64_t next(const V& view)`, -1 to hold the job back (gpu_picker).
///    Its plan is its picks one after another on a scratch copy of the mask, as the GPU action mode
///    would follow them.
/// Either way act(env) is the placer's action in the env's action mode (basic_env::heuristic_action()).
/// reserve() sizes a placer's buffers for a cluster, after which it allocates nothing.

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "../hierarchy.hpp"

namespace gpuplace {

namespace detail {
/// The first GPU of `plan` the mask allows, else the lowest the mask allows, else -1.
[[nodiscard]] inline std::int64_t first_allowed(std::span<const std::uint8_t> mask, std::span<const gpu_id> plan) noexcept {
    for (auto g : plan)
        if (mask[g]) return std::int64_t(g);
    for (std::size_t g = 0; g < mask.size(); ++g)
        if (mask[g]) return std::int64_t(g);
    return -1;
}
}  // namespace detail

/// Base of a placer that plans whole placements (D::plan); gives it next() and act().
template <class D>
class whole_placer {
public:
    /// The placer's action in env e's action mode.
    template <class E>
    std::int64_t act(const E& e) {
        return e.heuristic_action(static_cast<D&>(*this));
    }
    /// The next GPU of its plan the view's mask allows (else the lowest allowed), or -1 to hold
    /// the job back.
    template <class V>
    std::int64_t next(const V& v) {
        next_.clear();
        if (!static_cast<D&>(*this).plan(v, next_)) return -1;
        return detail::first_allowed(v.mask(), next_);
    }

protected:
    void reserve_plan(const level_hierarchy& h) { next_.reserve(h.num_gpus()); }

private:
    std::vector<gpu_id> next_;
};

/// Base of a placer that picks GPU by GPU (D::next); gives it plan() and act().
template <class D>
class gpu_picker {
public:
    template <class E>
    std::int64_t act(const E& e) {
        return e.heuristic_action(static_cast<D&>(*this));
    }
    /// Its picks one after another (DEFER allowed before the first only), on a scratch copy of the
    /// view's mask; false (with the picks so far in `out`) when it holds the job back or picks a
    /// GPU the mask does not allow.
    template <class V>
    bool plan(const V& v, std::vector<gpu_id>& out) {
        mask_.assign(v.mask().begin(), v.mask().end());
        picks_.assign(v.picked().begin(), v.picked().end());
        out.clear();
        const std::size_t k = v.request();
        bool defer = v.may_defer();
        while (picks_.size() < k) {
            const auto g = static_cast<D&>(*this).next(v.with_picks(mask_, picks_, defer));
            if (g < 0 || std::size_t(g) >= mask_.size() || !mask_[std::size_t(g)]) return false;
            mask_[std::size_t(g)] = 0;
            picks_.push_back(gpu_id(g));
            out.push_back(gpu_id(g));
            defer = false;
        }
        return true;
    }

protected:
    void reserve_plan(const level_hierarchy& h) {
        mask_.reserve(h.num_gpus());
        picks_.reserve(h.num_gpus());
    }

private:
    std::vector<std::uint8_t> mask_;
    std::vector<gpu_id> picks_;
};

namespace detail {

/// Availability of a job's GPUs, per GPU and per domain of each level. "Planning" availability
/// counts the job's own picks as available, so a whole-job plan computed before the first pick is
/// computed again, unchanged, at every later pick of the same job.
class availability {
public:
    std::vector<std::uint8_t> gpu;  ///< available now, or picked for the job

    void reserve(const level_hierarchy& h) {
        gpu.reserve(h.num_gpus());
        std::size_t n = 0;
        for (std::size_t l = 1; l < h.num_levels(); ++l) n += h.num_domains(l);
        count_.reserve(n);
        off_.reserve(h.num_levels());
    }
    /// From a view: the GPUs its mask allows or it has picked.
    template <class V>
    void compute(const V& v) {
        h_ = &v.hierarchy();
        const auto mask = v.mask();
        const std::size_t L = h_->num_levels();
        gpu.assign(mask.begin(), mask.end());
        for (auto g : v.picked()) gpu[g] = 1;
        off_.assign(L, 0);
        for (std::size_t l = 1; l + 1 < L; ++l) off_[l] = off_[l - 1] + h_->num_domains(l);
        count_.assign(off_[L - 2] + h_->num_domains(L - 1), 0);
        // level 1 by its domains' GPU ranges, each level above by its children's counts: O(G +
        // domains) instead of a pass over the GPUs per level
        std::uint32_t* c1 = count_.data();
        for (std::size_t d = 0, D = h_->num_domains(1); d < D; ++d) {
            std::uint32_t n = 0;
            for (gpu_id g = h_->first(1, d), end = h_->end(1, d); g < end; ++g) n += gpu[g] != 0;
            c1[d] = n;
        }
        for (std::size_t l = 2; l < L; ++l) {
            std::uint32_t* c = count_.data() + off_[l - 1];
            const std::uint32_t* below = count_.data() + off_[l - 2];
            for (std::size_t d = 0, D = h_->num_domains(l); d < D; ++d) {
                std::uint32_t n = 0;
                for (std::size_t k = h_->first_child(l, d), end = h_->end_child(l, d); k < end; ++k) n += below[k];
                c[d] = n;
            }
        }
    }
    /// Available GPUs of each domain of level l (1 .. L-1), indexed by domain.
    [[nodiscard]] std::uint32_t* at(std::size_t l) noexcept { return count_.data() + off_[l - 1]; }
    [[nodiscard]] const std::uint32_t* at(std::size_t l) const noexcept { return count_.data() + off_[l - 1]; }

    /// Appends up to `n` available GPUs of level-1 domain d (lowest index first), marking them
    /// taken in every level's counts; returns how many.
    std::uint32_t take(std::size_t d, std::uint32_t n, std::vector<gpu_id>& plan) {
        std::uint32_t got = 0;
        const gpu_id first = h_->first(1, d), end = h_->end(1, d);
        for (gpu_id g = first; g < end && got < n; ++g)
            if (gpu[g]) {
                gpu[g] = 0;
                plan.push_back(g);
                ++got;
            }
        for (std::size_t l = 1; l < h_->num_levels(); ++l) at(l)[h_->domain_of(l, first)] -= got;
        return got;
    }

private:
    const level_hierarchy* h_ = nullptr;
    std::vector<std::uint32_t> count_;  ///< per domain, level 1's first
    std::vector<std::size_t> off_;      ///< per domain level: where its counts start
};

/// Takes `need` GPUs from items first, first + 1, ... (the children of a domain) with avail[i]
/// available each: best fit (the item with the fewest available >= the rest, ties the lower index)
/// when one holds the rest, else all of the item with most available (ties the lower index), and
/// again. take(i, n) takes n of item i's GPUs and returns how many it took (all of them; it lowers
/// avail[i] by as many and changes no other item). One scan when an item holds the whole need;
/// else the items with GPUs are sorted once, most first, and taken in that order (taking all of
/// an item changes no other), so O(n log n) for n items instead of a scan per item taken.
/// `order` is scratch (reserved for n).
template <class Take>
std::uint32_t best_fit_fill(std::size_t first, std::size_t n, const std::uint32_t* avail, std::uint32_t need,
                            std::vector<std::size_t>& order, Take&& take) {
    const std::size_t end = first + n;
    std::size_t fit = end;
    for (std::size_t i = first; i < end; ++i)
        if (avail[i] >= need && (fit == end || avail[i] < avail[fit])) fit = i;
    if (need == 0) return 0;
    if (fit != end) return take(fit, need);
    order.clear();
    for (std::size_t i = first; i < end; ++i)
        if (avail[i] > 0) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return avail[x] > avail[y] || (avail[x] == avail[y] && x < y); });
    std::uint32_t got = 0;
    for (std::size_t p = 0; p < order.size() && got < need; ++p) {
        const std::uint32_t rest = need - got;
        if (avail[order[p]] < rest) {  // no item holds the rest: all of the one with most
            got += take(order[p], avail[order[p]]);
            continue;
        }
        // the items left that hold the rest are order[p, q); the fewest available among them is
        // the last value there, and its lowest index the first position with that value
        std::size_t q = p;
        while (q < order.size() && avail[order[q]] >= rest) ++q;
        std::size_t b = q - 1;
        while (b > p && avail[order[b - 1]] == avail[order[q - 1]]) --b;
        return got + take(order[b], rest);
    }
    return got;
}

}  // namespace detail
}  // namespace gpuplace
