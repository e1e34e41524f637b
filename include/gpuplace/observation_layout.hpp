#pragma once
/// \file observation_layout.hpp
/// Where each feature of the observation is: the segments' names, their offsets (obs_layout, the
/// one place they are computed) and the typed handles that find them (gpu_feature, obs_part).
///
/// Layout for G GPUs and a queue window of K jobs: per GPU (G values each, segment
/// "gpu_<name>"): busy, picked, remaining, proximity, node_free, rack_free, and with co-location
/// occupancy, memory_headroom, interference, and on a heterogeneous cluster (GPUs of several
/// types) type_speed, type; then "job" (5 fields), "queue" (K x 4 fields), "global" (4 fields) and,
/// heterogeneous, "job_type" (1 field, best_type_speedup). On a heterogeneous cluster:
///  - gpu_type_speed: the speed of the GPU's type for the current job (its model at its GPU count)
///    over the fastest type's in the cluster, in (0, 1]; 0 when no job is current;
///  - gpu_type: the GPU's type index t (TreeTopology::gpu_types() order) as t / (types - 1);
///  - job_type/best_type_speedup: 1 - slowest / fastest type speed for the current job (the share
///    of its run time the best type saves over the worst), 0 when no job is current.


#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplace {

/// A named, contiguous part of the observation vector.
struct obs_segment {
    std::string name;                 ///< e.g. "gpu_busy"
    std::size_t offset = 0, size = 0; ///< position in the observation vector
    std::vector<std::string> fields;  ///< per-element names when the segment is not per GPU
};

/// Number of per-GPU observation features and their names (segment "gpu_<name>", G values each).
inline constexpr std::size_t gpu_features = 6;
inline constexpr std::string_view gpu_feature_names[gpu_features] = {"busy",      "picked",    "remaining",
                                                                      "proximity", "node_free", "rack_free"};
inline constexpr std::string_view job_feature_names[] = {"request", "remaining_picks", "ideal_duration",
                                                         "comm_intensity", "wait"};
inline constexpr std::string_view queue_feature_names[] = {"present", "request", "ideal_duration", "wait"};
inline constexpr std::string_view global_feature_names[] = {"load", "queue_length", "time", "progress"};
/// Extra per-GPU features when co-location is on (segments "gpu_<name>", after the six above).
inline constexpr std::size_t colocation_gpu_features = 3;
inline constexpr std::string_view colocation_feature_names[colocation_gpu_features] = {"occupancy", "memory_headroom",
                                                                                         "interference"};
/// Extra per-GPU features of a heterogeneous cluster (after the co-location ones), and the fields
/// of its "job_type" segment (after "global").
inline constexpr std::size_t type_gpu_features = 2;
inline constexpr std::string_view type_feature_names[type_gpu_features] = {"type_speed", "type"};
inline constexpr std::string_view job_type_feature_names[] = {"best_type_speedup"};

/// A per-GPU feature of the observation (segment "gpu_<name>", G values), in layout order: the
/// six of gpu_feature_names, the co-location ones, then a heterogeneous cluster's.
enum class gpu_feature : std::uint8_t {
    busy, picked, remaining, proximity, node_free, rack_free,
    occupancy, memory_headroom, interference,
    type_speed, type,
};
/// A segment of the observation after the per-GPU ones, in layout order.
enum class obs_part : std::uint8_t { job, queue, global, job_type };

/// Where each segment of the observation is, for `num_gpus` GPUs, a queue window of
/// `queue_window` jobs, co-location on or off and a heterogeneous cluster or not: the one place
/// offsets are computed. observation_writer writes at these offsets; segments() names them; code
/// finds a segment by its handle (gpu_feature, obs_part), never by its name.
class obs_layout {
public:
    static constexpr std::size_t absent = ~std::size_t{0};
    static constexpr std::size_t num_gpu_features = 11;  ///< every gpu_feature
    static constexpr std::size_t num_parts = 4;          ///< every obs_part

    obs_layout() { gpu_.fill(absent), part_.fill(absent), part_size_.fill(0); }
    obs_layout(std::size_t num_gpus, std::size_t queue_window, bool colocation, bool heterogeneous)
        : G_(num_gpus), K_(queue_window) {
        gpu_.fill(absent), part_.fill(absent), part_size_.fill(0);
        std::size_t off = 0;
        const auto per_gpu = [&](gpu_feature first, std::size_t n) {
            for (std::size_t i = 0; i < n; ++i) {
                const auto f = gpu_feature(std::size_t(first) + i);
                gpu_[std::size_t(f)] = gpu_offset(f, G_, colocation);
                off = gpu_[std::size_t(f)] + G_;
            }
        };
        per_gpu(gpu_feature::busy, gpu_features);
        if (colocation) per_gpu(gpu_feature::occupancy, colocation_gpu_features);
        if (heterogeneous) per_gpu(gpu_feature::type_speed, type_gpu_features);
        const auto part = [&](obs_part p, std::size_t n) {
            part_[std::size_t(p)] = off;
            part_size_[std::size_t(p)] = n;
            off += n;
        };
        part(obs_part::job, std::size(job_feature_names));
        part(obs_part::queue, K_ * std::size(queue_feature_names));
        part(obs_part::global, std::size(global_feature_names));
        if (heterogeneous) part(obs_part::job_type, std::size(job_type_feature_names));
        size_ = off;
    }

    /// Where a per-GPU feature's G values start when the layout has it: the features in enum order,
    /// G values each, the co-location ones only with co-location. The constructor places every
    /// per-GPU segment by it; the writer's hot loops call it too, so that the compiler sees each
    /// row as a multiple of G past the first.
    [[nodiscard]] static constexpr std::size_t gpu_offset(gpu_feature f, std::size_t G, bool colocation) noexcept {
        const auto i = std::size_t(f);
        return (i < gpu_features + colocation_gpu_features || colocation ? i : i - colocation_gpu_features) * G;
    }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return G_; }
    [[nodiscard]] std::size_t queue_window() const noexcept { return K_; }
    /// The observation's length.
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool has(gpu_feature f) const noexcept { return offset(f) != absent; }
    [[nodiscard]] bool has(obs_part p) const noexcept { return offset(p) != absent; }
    /// Where a per-GPU feature's G values start (absent when the layout has none).
    [[nodiscard]] std::size_t offset(gpu_feature f) const noexcept { return gpu_[std::size_t(f)]; }
    /// Where a segment after the per-GPU ones starts (absent when the layout has none).
    [[nodiscard]] std::size_t offset(obs_part p) const noexcept { return part_[std::size_t(p)]; }
    /// A segment's length (0 when absent).
    [[nodiscard]] std::size_t size(obs_part p) const noexcept { return part_size_[std::size_t(p)]; }
    /// How many per-GPU segments there are (they come first).
    [[nodiscard]] std::size_t num_gpu_segments() const noexcept {
        return std::size_t(std::count_if(gpu_.begin(), gpu_.end(), [](std::size_t o) { return o != absent; }));
    }
    /// Where the context (everything after the per-GPU segments) starts.
    [[nodiscard]] std::size_t context_offset() const noexcept { return offset(obs_part::job); }

    /// A per-GPU feature's name ("busy", ..., "type").
    [[nodiscard]] static std::string_view name(gpu_feature f) noexcept {
        const auto i = std::size_t(f);
        if (i < gpu_features) return gpu_feature_names[i];
        if (i < gpu_features + colocation_gpu_features) return colocation_feature_names[i - gpu_features];
        return type_feature_names[i - gpu_features - colocation_gpu_features];
    }
    /// A context segment's name ("job", "queue", "global", "job_type").
    [[nodiscard]] static std::string_view name(obs_part p) noexcept {
        constexpr std::string_view names[num_parts] = {"job", "queue", "global", "job_type"};
        return names[std::size_t(p)];
    }

    /// The named segments, in order; the last one ends at size().
    [[nodiscard]] std::vector<obs_segment> segments() const {
        std::vector<obs_segment> out;
        for (std::size_t i = 0; i < num_gpu_features; ++i)
            if (gpu_[i] != absent) out.push_back({"gpu_" + std::string(name(gpu_feature(i))), gpu_[i], G_, {}});
        const auto add = [&](obs_part p, std::span<const std::string_view> names, std::size_t repeat) {
            if (!has(p)) return;
            obs_segment s{std::string(name(p)), offset(p), size(p), {}};
            for (std::size_t r = 0; r < repeat; ++r)
                for (auto n : names) s.fields.push_back(repeat > 1 ? std::to_string(r) + "." + std::string(n) : std::string(n));
            out.push_back(std::move(s));
        };
        add(obs_part::job, job_feature_names, 1);
        add(obs_part::queue, queue_feature_names, K_);
        add(obs_part::global, global_feature_names, 1);
        add(obs_part::job_type, job_type_feature_names, 1);
        return out;
    }

private:
    std::size_t G_ = 0, K_ = 0, size_ = 0;
    std::array<std::size_t, num_gpu_features> gpu_{};
    std::array<std::size_t, num_parts> part_{}, part_size_{};
};

/// The segments of the observation for `num_gpus` GPUs and a queue window of `queue_window` jobs,
/// in order; the last one ends at the observation's size (obs_layout(...).segments()).
[[nodiscard]] inline std::vector<obs_segment> observation_layout(std::size_t num_gpus, std::size_t queue_window,
                                                                 bool colocation, bool heterogeneous = false) {
    return obs_layout(num_gpus, queue_window, colocation, heterogeneous).segments();
}

}  // namespace gpuplace
