#pragma once
/// \file gpu_types.hpp
/// Heterogeneous clusters: the GPU type of every GPU (TreeTopology::gpu_types()) matched to the
/// model zoo's types (ModelZoo::gpu_types()), and how fast a job runs on them. A job runs at its
/// slowest GPU: on GPUs of several types, at the speed of the type on which its model is slowest at
/// its GPU count; a type's speed is its consolidated throughput over the reference type's
/// (ModelZoo::type_speed()). The env evaluates the communication model with the zoo of that type
/// (ModelZoo::of_type()), so a placement's slowdown keeps its meaning (step time over the best
/// step time of the same GPUs' type), and scales the job's ideal duration (on the reference type)
/// by the ratio of the two types' ideal step times.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "error.hpp"
#include "metrics.hpp"
#include "model_zoo.hpp"
#include "topology.hpp"

namespace gpuplace {

/// The GPU types of a cluster, as indices into the zoo's types.
class gpu_type_map {
public:
    gpu_type_map() = default;

    /// For topology t and zoo z: every type of t must be one of z's (ConfigError naming
    /// /topology/gpu_types and the zoo's types otherwise). An untyped topology gives an untyped map.
    template <Topology T>
    gpu_type_map(const T& t, const ModelZoo& z) {
        if constexpr (requires { t.typed(); t.gpu_types(); t.type_of(gpu_id{}); }) {
            if (!t.typed()) return;
            names_ = t.gpu_types();
            for (const auto& n : names_) {
                const auto i = z.type_index(n);
                if (i == z.num_types()) {
                    std::string known;
                    for (const auto& k : z.gpu_types()) known += (known.empty() ? "" : ", ") + k;
                    throw ConfigError("config /topology/gpu_types: GPU type \"" + n + "\" is not in the model zoo (its types: " + known + ")");
                }
                zoo_type_.push_back(i);
                zoos_.push_back(z.of_type(i));
            }
            const std::size_t G = t.hierarchy().num_gpus();
            gpu_type_.resize(G);
            count_.assign(names_.size(), 0);
            for (std::size_t g = 0; g < G; ++g) {
                gpu_type_[g] = static_cast<std::uint8_t>(t.type_of(gpu_id(g)));
                ++count_[gpu_type_[g]];
            }
        }
    }

    /// Whether the cluster's GPUs have types (otherwise all are of the zoo's reference type).
    [[nodiscard]] bool typed() const noexcept { return !names_.empty(); }
    /// Whether the GPUs are of more than one type (the observation then describes the types).
    [[nodiscard]] bool heterogeneous() const noexcept { return names_.size() > 1; }
    /// The cluster's types (topology order); empty when untyped.
    [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
    [[nodiscard]] std::size_t num_types() const noexcept { return names_.size(); }
    /// GPU g's type (index into names()); 0 when untyped.
    [[nodiscard]] std::size_t type_of(gpu_id g) const noexcept { return gpu_type_.empty() ? 0 : gpu_type_[g]; }
    /// How many GPUs type t has.
    [[nodiscard]] std::size_t count(std::size_t t) const noexcept { return count_[t]; }
    /// The zoo index of cluster type t, and that type's zoo.
    [[nodiscard]] std::size_t zoo_type(std::size_t t) const noexcept { return zoo_type_[t]; }
    [[nodiscard]] const ModelZoo& zoo_of(std::size_t t) const noexcept { return zoos_[t]; }

    /// Speed of model m at k GPUs on cluster type t relative to the zoo's reference type.
    [[nodiscard]] double speed(const ModelZoo& z, model_id m, std::size_t t, std::uint32_t k) const noexcept {
        return z.type_speed(m, zoo_type_[t], k);
    }
    /// The cluster type on which model m at k = |gpus| GPUs is slowest among the types of `gpus`
    /// (non-empty; ties: the lower index).
    [[nodiscard]] std::size_t slowest(const ModelZoo& z, model_id m, std::span<const gpu_id> gpus) const noexcept {
        const auto k = static_cast<std::uint32_t>(gpus.size());
        std::size_t best = type_of(gpus[0]);
        double sp = speed(z, m, best, k);
        for (auto g : gpus) {
            const auto t = type_of(g);
            if (t == best) continue;
            const double s = speed(z, m, t, k);
            if (s < sp || (s == sp && t < best)) best = t, sp = s;
        }
        return best;
    }

    /// Busy time of each type's GPUs over (its GPUs x makespan), from finished jobs' records and
    /// placements (up to max_metric_types types; exclusive GPUs: with co-location a GPU shared by
    /// two jobs counts twice).
    [[nodiscard]] std::array<double, max_metric_types> utilization(std::span<const job_record> done,
                                                                   std::span<const gpu_id> placements, double makespan) const {
        std::array<double, max_metric_types> u{};
        if (!typed() || !(makespan > 0)) return u;
        for (const auto& r : done)
            for (std::size_t i = 0; i < r.num_gpus; ++i) {
                const auto t = type_of(placements[r.gpu_offset + i]);
                if (t < u.size()) u[t] += r.end - r.start;
            }
        for (std::size_t t = 0; t < u.size() && t < names_.size(); ++t) u[t] /= double(count_[t]) * makespan;
        return u;
    }

private:
    std::vector<std::string> names_;
    std::vector<std::size_t> zoo_type_, count_;
    std::vector<ModelZoo> zoos_;
    std::vector<std::uint8_t> gpu_type_;  ///< per GPU: index into names_
};

}  // namespace gpuplace
