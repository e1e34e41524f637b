#pragma once
/// \file level_topology.hpp
/// A topology of any level hierarchy (hierarchy.hpp): trees of any depth and fanout, domains of
/// different sizes on one level, and optionally a GPU type per level-1 domain. Presets: an
/// NVL72-style cluster (racks of 72 GPUs in one NVLink domain under a spine) and a fat tree.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"
#include "hierarchy.hpp"

namespace gpuplace {

class LevelTopology {
public:
    /// A topology named `name` on hierarchy `h`; `domain_types` (optional): the GPU type of each
    /// level-1 domain, names as in the model zoo (e.g. "v100").
    LevelTopology(std::string name, level_hierarchy h, std::vector<std::string> domain_types = {})
        : name_(std::move(name)), h_(std::move(h)) {
        if (domain_types.empty()) return;
        const std::size_t N = h_.num_domains(1);
        if (domain_types.size() != N)
            throw ConfigError("topology: " + std::to_string(domain_types.size()) + " GPU types for " + std::to_string(N) +
                              " domains of level \"" + h_.level(1).name + "\"");
        type_.resize(h_.num_gpus());
        for (std::size_t d = 0; d < N; ++d) {
            const auto& t = domain_types[d];
            if (t.empty()) throw ConfigError("topology: domain " + std::to_string(d) + " has an empty GPU type");
            std::size_t i = 0;
            while (i < types_.size() && types_[i] != t) ++i;
            if (i == types_.size()) {
                if (types_.size() == 255) throw ConfigError("topology: more than 255 GPU types");
                types_.push_back(t);
            }
            for (gpu_id g = h_.first(1, d); g < h_.end(1, d); ++g) type_[g] = static_cast<std::uint8_t>(i);
        }
    }

    /// NVIDIA GB200 NVL72-style: `racks` racks of 72 GPUs, each rack one NVLink domain (900 GB/s
    /// per GPU per direction, NVLink 5), the racks under a spine of 400 Gb/s InfiniBand per GPU
    /// (50 GB/s).
    [[nodiscard]] static LevelTopology nvl72(std::size_t racks = 4) {
        return {"nvl72", level_hierarchy::uniform({{"nvl", 900.0, 1e-6}, {"spine", 50.0, 10e-6}}, {72, racks})};
    }
    /// A three-tier fat tree of DGX-style nodes: `gpus_per_node` GPUs on NVSwitch (300 GB/s),
    /// `nodes_per_leaf` nodes per leaf switch (25 GB/s per GPU), `leaves_per_pod` leaves per pod
    /// (25 GB/s, more hops), `pods` pods under an oversubscribed spine (12.5 GB/s).
    [[nodiscard]] static LevelTopology fat_tree(std::size_t pods = 2, std::size_t leaves_per_pod = 2, std::size_t nodes_per_leaf = 4,
                                                std::size_t gpus_per_node = 8) {
        return {"fat_tree", level_hierarchy::uniform({{"node", 300.0, 2e-6}, {"leaf", 25.0, 5e-6}, {"pod", 25.0, 8e-6}, {"spine", 12.5, 12e-6}},
                                                     {gpus_per_node, nodes_per_leaf, leaves_per_pod, pods})};
    }

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const level_hierarchy& hierarchy() const noexcept { return h_; }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return h_.num_gpus(); }

    /// Whether the GPUs have types (otherwise all are of the model zoo's reference type).
    [[nodiscard]] bool typed() const noexcept { return !types_.empty(); }
    [[nodiscard]] bool heterogeneous() const noexcept { return types_.size() > 1; }
    /// The GPU types in order of first appearance; empty when untyped.
    [[nodiscard]] const std::vector<std::string>& gpu_types() const noexcept { return types_; }
    /// The index (into gpu_types()) of GPU g's type; 0 when untyped.
    [[nodiscard]] std::size_t type_of(gpu_id g) const noexcept { return types_.empty() ? 0 : type_[g]; }

private:
    std::string name_;
    level_hierarchy h_;
    std::vector<std::string> types_;
    std::vector<std::uint8_t> type_;  ///< per GPU: index into types_
};

}  // namespace gpuplace
