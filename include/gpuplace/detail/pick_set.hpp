#pragma once
/// \file detail/pick_set.hpp
/// The GPUs picked so far for the job being placed, with how many of them each node and rack
/// holds (the observation's proximity feature reads those counts).

#include <cstdint>
#include <vector>

#include "../topology.hpp"
#include "bounded_vector.hpp"

namespace gpuplace::detail {

struct pick_set {
    bounded_vector<gpu_id> gpus;       ///< in pick order (capacity: the number of GPUs)
    std::vector<std::uint8_t> picked;  ///< per GPU: 1 when picked
    std::vector<std::uint32_t> node, rack;  ///< picks per node, per rack

    /// Sizes the set for a topology (allocates); nothing is picked.
    template <Topology T>
    void resize(const T& t) {
        gpus.reserve(t.num_gpus());
        gpus.clear();
        picked.assign(t.num_gpus(), 0);
        node.assign(t.num_nodes(), 0);
        rack.assign(t.num_racks(), 0);
    }
    /// Adds GPU g of node n and rack r. Precondition: g is not picked.
    void add(gpu_id g, std::size_t n, std::size_t r) noexcept {
        gpus.push_back(g);
        picked[g] = 1;
        ++node[n];
        ++rack[r];
    }
    /// Unpicks every GPU, in O(picks).
    template <Topology T>
    void clear(const T& t) noexcept {
        for (auto g : gpus) {
            picked[g] = 0;
            node[t.node_of(g)] = 0;
            rack[t.rack_of(g)] = 0;
        }
        gpus.clear();
    }
    [[nodiscard]] std::size_t size() const noexcept { return gpus.size(); }
    [[nodiscard]] bool empty() const noexcept { return gpus.empty(); }
};

}  // namespace gpuplace::detail
