#pragma once
/// \file cluster.hpp
/// Occupancy of the cluster's GPUs, with free-GPU counts per node and rack kept up to date in O(1)
/// per change.

#include <cstdint>
#include <limits>
#include <vector>

#include "topology.hpp"

namespace gpuplace {

/// Which job holds each GPU, and how many GPUs are free per node, per rack and in total.
class cluster_state {
public:
    static constexpr std::uint32_t no_job = std::numeric_limits<std::uint32_t>::max();

    cluster_state() = default;
    template <Topology T>
    explicit cluster_state(const T& t) {
        resize(t);
    }

    /// Sizes the state for a topology and frees every GPU.
    template <Topology T>
    void resize(const T& t) {
        gpus_per_node_ = t.gpus_per_node();
        gpus_per_rack_ = t.gpus_per_node() * t.nodes_per_rack();
        holder_.assign(t.num_gpus(), no_job);
        end_.assign(t.num_gpus(), 0.0);
        node_free_.assign(t.num_nodes(), static_cast<std::uint32_t>(gpus_per_node_));
        rack_free_.assign(t.num_racks(), static_cast<std::uint32_t>(gpus_per_rack_));
        free_ = t.num_gpus();
    }

    /// Frees every GPU (no allocation).
    void clear() noexcept {
        std::fill(holder_.begin(), holder_.end(), no_job);
        std::fill(end_.begin(), end_.end(), 0.0);
        std::fill(node_free_.begin(), node_free_.end(), static_cast<std::uint32_t>(gpus_per_node_));
        std::fill(rack_free_.begin(), rack_free_.end(), static_cast<std::uint32_t>(gpus_per_rack_));
        free_ = holder_.size();
    }

    [[nodiscard]] std::size_t num_gpus() const noexcept { return holder_.size(); }
    [[nodiscard]] bool is_free(gpu_id g) const noexcept { return holder_[g] == no_job; }
    /// The job on GPU g, or no_job.
    [[nodiscard]] std::uint32_t holder(gpu_id g) const noexcept { return holder_[g]; }
    /// When the job on GPU g is due to end (meaningless when free).
    [[nodiscard]] double end_time(gpu_id g) const noexcept { return end_[g]; }
    [[nodiscard]] std::size_t free_gpus() const noexcept { return free_; }
    [[nodiscard]] std::size_t busy_gpus() const noexcept { return holder_.size() - free_; }
    [[nodiscard]] std::uint32_t node_free(std::size_t node) const noexcept { return node_free_[node]; }
    [[nodiscard]] std::uint32_t rack_free(std::size_t rack) const noexcept { return rack_free_[rack]; }
    [[nodiscard]] std::size_t gpus_per_node() const noexcept { return gpus_per_node_; }
    [[nodiscard]] std::size_t gpus_per_rack() const noexcept { return gpus_per_rack_; }

    /// Gives GPU g to job j until `end`. Precondition: g is free.
    void allocate(gpu_id g, std::uint32_t j, double end) noexcept {
        holder_[g] = j;
        end_[g] = end;
        --node_free_[g / gpus_per_node_];
        --rack_free_[g / gpus_per_rack_];
        --free_;
    }
    /// Frees GPU g. Precondition: g is held.
    void release(gpu_id g) noexcept {
        holder_[g] = no_job;
        ++node_free_[g / gpus_per_node_];
        ++rack_free_[g / gpus_per_rack_];
        ++free_;
    }

private:
    std::vector<std::uint32_t> holder_;
    std::vector<double> end_;
    std::vector<std::uint32_t> node_free_, rack_free_;
    std::size_t free_ = 0, gpus_per_node_ = 1, gpus_per_rack_ = 1;
};

}  // namespace gpuplace
