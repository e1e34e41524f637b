#pragma once
/// \file heuristics/load_balance.hpp
/// Proximity-DRL's load balance.

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../topology.hpp"
#include "placer.hpp"

namespace gpuplace {

/// Proximity-DRL's load balance: walks down from the root into the child domain with the most
/// available GPUs (ties: the lower index) as long as that child can hold the whole job, and takes
/// the job's GPUs in the domain where it stops: from its children with the most available GPUs
/// first (ties: lower index), each taken the same way. On a tree: the rack, then the node, with
/// the most available GPUs. The plan counts the job's picks as available (so it is the same at
/// every pick).
class load_balance_policy : public whole_placer<load_balance_policy> {
public:
    static constexpr std::string_view name = "load_balance";
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
        a_.compute(v);
        out.clear();
        if (order_.size() < h.num_levels() + 1) order_.resize(h.num_levels() + 1);
        const std::uint32_t need = v.request();
        std::size_t l = h.num_levels(), d = 0;
        while (l > 1) {  // into the child with most available while it holds the job
            const std::uint32_t* c = a_.at(l - 1);
            std::size_t best = h.first_child(l, d);
            for (std::size_t x = best + 1; x < h.end_child(l, d); ++x)
                if (c[x] > c[best]) best = x;
            if (c[best] < need) break;
            --l;
            d = best;
        }
        spread(h, l, d, need, out);
        return true;
    }

private:
    /// Takes up to `need` GPUs of domain d of level l: from its children with most available
    /// first (ties: the lower index), each taken the same way.
    template <class H>
    std::uint32_t spread(const H& h, std::size_t l, std::size_t d, std::uint32_t need, std::vector<gpu_id>& out) {
        if (l == 1) return a_.take(d, need, out);
        const std::uint32_t* c = a_.at(l - 1);
        auto& order = order_[l - 1];
        order.clear();
        for (std::size_t x = h.first_child(l, d); x < h.end_child(l, d); ++x) order.push_back(x);
        // most available first, ties by index: stable_sort's order without its buffer (no allocation)
        std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return c[x] > c[y] || (c[x] == c[y] && x < y); });
        std::uint32_t got = 0;
        for (auto x : order) {
            if (got == need) break;
            got += spread(h, l - 1, x, std::min(need - got, c[x]), out);
        }
        return got;
    }

    detail::availability a_;
    std::vector<std::vector<std::size_t>> order_;  ///< per level: children in the order taken
};

}  // namespace gpuplace
