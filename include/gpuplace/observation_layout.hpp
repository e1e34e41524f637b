#pragma once
/// \file observation_layout.hpp
/// Where each feature of the observation is: the segments' names, their offsets (obs_layout, the
/// one place they are computed) and the typed handles that find them (gpu_feature, obs_part).
///
/// Layout for G GPUs and a queue window of K jobs: per GPU (G values each, segment
/// "gpu_<name>"): busy, picked, remaining, proximity, one "<level>_free" per domain level of the
/// hierarchy (node_free and rack_free on a tree of nodes and racks), and with co-location
/// occupancy, memory_headroom, interference, and on a heterogeneous cluster (GPUs of several
/// types) type_speed, type; then "job" (5 fields), "queue" (K x 4 fields), "global" (4 fields) and,
/// heterogeneous, "job_type" (1 field, best_type_speedup), and with observed job fields,
/// "job_fields" ((K + 1) x fields: the current job's, then each queue slot's). On a heterogeneous cluster:
///  - gpu_type_speed: the speed of the GPU's type for the current job (its model at its GPU count)
///    over the fastest type's in the cluster, in (0, 1]; 0 when no job is current;
///  - gpu_type: the GPU's type index t (TreeTopology::gpu_types() order) as t / (types - 1);
///  - job_type/best_type_speedup: 1 - slowest / fastest type speed for the current job (the share
///    of its run time the best type saves over the worst), 0 when no job is current.
/// With durations "hidden" (information.hpp) no feature carries a duration: gpu_remaining becomes
/// gpu_elapsed (the run time of the GPU's job so far) and the job's and queue's ideal_duration
/// becomes attained (its attained service per GPU). With preemption on, the job and each queue
/// slot end with "preemptions" (n / (n + 1) for n preemptions so far).


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
    /// What a per-item segment has one value for ("gpu", "candidate" or "slot": what every action
    /// but the last chooses), "" for a context segment. Per-item segments come first; a network
    /// finds them by this, never by their names.
    std::string item{};
};

/// The per-GPU features every layout has first (segment "gpu_<name>", G values each), before the
/// per-level free counts.
inline constexpr std::size_t base_gpu_features = 4;
inline constexpr std::string_view base_gpu_feature_names[base_gpu_features] = {"busy", "picked", "remaining", "proximity"};
inline constexpr std::string_view job_feature_names[] = {"request", "remaining_picks", "ideal_duration",
                                                         "comm_intensity", "wait"};
inline constexpr std::string_view queue_feature_names[] = {"present", "request", "ideal_duration", "wait"};
inline constexpr std::string_view global_feature_names[] = {"load", "queue_length", "time", "progress"};
/// Extra per-GPU features when co-location is on (segments "gpu_<name>", after the free counts).
inline constexpr std::size_t colocation_gpu_features = 3;
inline constexpr std::string_view colocation_feature_names[colocation_gpu_features] = {"occupancy", "memory_headroom",
                                                                                         "interference"};
/// Extra per-GPU features of a heterogeneous cluster (after the co-location ones), and the fields
/// of its "job_type" segment (after "global").
inline constexpr std::size_t type_gpu_features = 2;
inline constexpr std::string_view type_feature_names[type_gpu_features] = {"type_speed", "type"};
inline constexpr std::string_view job_type_feature_names[] = {"best_type_speedup"};

/// A per-GPU feature of the observation (segment "gpu_<name>", G values), in layout order:
/// busy, picked, remaining, proximity, the free count of each domain level (domain_free, one per
/// level: node_free, rack_free on a tree), the co-location ones, then a heterogeneous cluster's.
enum class gpu_feature : std::uint8_t {
    busy, picked, remaining, proximity, domain_free,
    occupancy, memory_headroom, interference,
    type_speed, type,
};
/// A segment of the observation after the per-GPU ones, in layout order. job_fields: the
/// declared job fields a scenario observes (job_fields.hpp), the current job's then each queue
/// slot's (fields "<name>", then "<k>.<name>").
enum class obs_part : std::uint8_t { job, queue, global, job_type, job_fields };

/// Where each segment of the observation is, for `num_gpus` GPUs, the names of the hierarchy's
/// domain levels (levels 1 .. L-1: {"node", "rack"} for a tree), a queue window of `queue_window`
/// jobs, co-location on or off and a heterogeneous cluster or not: the one place offsets are
/// computed. observation_writer writes at these offsets; segments() names them; code finds a
/// segment by its handle (gpu_feature with a level for domain_free, obs_part), never by its name.
class obs_layout {
public:
    static constexpr std::size_t absent = ~std::size_t{0};
    static constexpr std::size_t num_parts = 5;  ///< every obs_part

    obs_layout() { part_.fill(absent), part_size_.fill(0); }
    obs_layout(std::size_t num_gpus, std::vector<std::string> level_names, std::size_t queue_window, bool colocation,
               bool heterogeneous, bool hidden = false, bool preemption = false, std::vector<std::string> observed_fields = {})
        : G_(num_gpus), K_(queue_window), levels_(std::move(level_names)), fields_(std::move(observed_fields)), coloc_(colocation),
          het_(heterogeneous), hidden_(hidden), preempt_(preemption) {
        part_.fill(absent), part_size_.fill(0);
        std::size_t off = num_gpu_rows() * G_;
        const auto part = [&](obs_part p, std::size_t n) {
            part_[std::size_t(p)] = off;
            part_size_[std::size_t(p)] = n;
            off += n;
        };
        part(obs_part::job, job_fields());
        part(obs_part::queue, K_ * queue_fields());
        part(obs_part::global, std::size(global_feature_names));
        if (heterogeneous) part(obs_part::job_type, std::size(job_type_feature_names));
        if (!fields_.empty()) part(obs_part::job_fields, (K_ + 1) * fields_.size());
        size_ = off;
    }
    /// The layout of a tree of nodes and racks (levels "node" and "rack").
    obs_layout(std::size_t num_gpus, std::size_t queue_window, bool colocation, bool heterogeneous)
        : obs_layout(num_gpus, {"node", "rack"}, queue_window, colocation, heterogeneous) {}

    /// The row (0, 1, ...) of a per-GPU feature, for `levels` domain levels: the features in enum
    /// order, domain_free once per level (`level` 1 .. levels), the co-location ones only with
    /// co-location. Its G values start at row x G: the writer's hot loops compute offsets so.
    [[nodiscard]] static constexpr std::size_t gpu_row(gpu_feature f, std::size_t levels, bool colocation,
                                                       std::size_t level = 1) noexcept {
        const auto i = std::size_t(f);
        if (i < std::size_t(gpu_feature::domain_free)) return i;
        if (f == gpu_feature::domain_free) return base_gpu_features + level - 1;
        const std::size_t after = i - std::size_t(gpu_feature::domain_free) - 1;  // 0 = occupancy
        return base_gpu_features + levels + (colocation || after < colocation_gpu_features ? after : after - colocation_gpu_features);
    }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return G_; }
    [[nodiscard]] std::size_t queue_window() const noexcept { return K_; }
    /// Fields of the job segment and of each queue slot (one more with preemption: preemptions).
    [[nodiscard]] std::size_t job_fields() const noexcept { return std::size(job_feature_names) + (preempt_ ? 1 : 0); }
    [[nodiscard]] std::size_t queue_fields() const noexcept { return std::size(queue_feature_names) + (preempt_ ? 1 : 0); }
    [[nodiscard]] bool hidden() const noexcept { return hidden_; }
    [[nodiscard]] bool preemption() const noexcept { return preempt_; }
    /// The observed job fields' names (the job_fields segment: the current job's, then each slot's).
    [[nodiscard]] const std::vector<std::string>& observed_fields() const noexcept { return fields_; }
    /// The domain levels' names (levels 1 .. L-1 of the hierarchy).
    [[nodiscard]] const std::vector<std::string>& level_names() const noexcept { return levels_; }
    [[nodiscard]] std::size_t num_levels() const noexcept { return levels_.size(); }
    /// The observation's length.
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool has(gpu_feature f) const noexcept {
        const auto i = std::size_t(f);
        if (i >= std::size_t(gpu_feature::type_speed)) return het_;
        if (i >= std::size_t(gpu_feature::occupancy)) return coloc_;
        return f != gpu_feature::domain_free || !levels_.empty();
    }
    [[nodiscard]] bool has(obs_part p) const noexcept { return offset(p) != absent; }
    /// Where a per-GPU feature's G values start (absent when the layout has none); domain_free of
    /// domain level `level` (1 .. num_levels()).
    [[nodiscard]] std::size_t offset(gpu_feature f, std::size_t level = 1) const noexcept {
        if (!has(f) || (f == gpu_feature::domain_free && (level < 1 || level > levels_.size()))) return absent;
        return gpu_row(f, levels_.size(), coloc_, level) * G_;
    }
    /// Where a segment after the per-GPU ones starts (absent when the layout has none).
    [[nodiscard]] std::size_t offset(obs_part p) const noexcept { return part_[std::size_t(p)]; }
    /// A segment's length (0 when absent).
    [[nodiscard]] std::size_t size(obs_part p) const noexcept { return part_size_[std::size_t(p)]; }
    /// How many per-GPU segments there are (they come first).
    [[nodiscard]] std::size_t num_gpu_segments() const noexcept { return num_gpu_rows(); }
    /// Where the context (everything after the per-GPU segments) starts.
    [[nodiscard]] std::size_t context_offset() const noexcept { return offset(obs_part::job); }

    /// A per-GPU feature's name ("busy", ..., "type"; domain_free's: "<level>_free").
    [[nodiscard]] std::string name(gpu_feature f, std::size_t level = 1) const {
        const auto i = std::size_t(f);
        if (f == gpu_feature::domain_free) return levels_.at(level - 1) + "_free";
        if (f == gpu_feature::remaining && hidden_) return "elapsed";
        if (i < base_gpu_features) return std::string(base_gpu_feature_names[i]);
        const std::size_t after = i - std::size_t(gpu_feature::domain_free) - 1;
        if (after < colocation_gpu_features) return std::string(colocation_feature_names[after]);
        return std::string(type_feature_names[after - colocation_gpu_features]);
    }
    /// A context segment's name ("job", "queue", "global", "job_type", "job_fields").
    [[nodiscard]] static std::string_view name(obs_part p) noexcept {
        constexpr std::string_view names[num_parts] = {"job", "queue", "global", "job_type", "job_fields"};
        return names[std::size_t(p)];
    }

    /// The named segments, in order; the last one ends at size().
    [[nodiscard]] std::vector<obs_segment> segments() const {
        std::vector<obs_segment> out;
        for (std::size_t i = 0; i <= std::size_t(gpu_feature::type); ++i) {
            const auto f = gpu_feature(i);
            if (!has(f)) continue;
            const std::size_t n = f == gpu_feature::domain_free ? levels_.size() : 1;
            for (std::size_t l = 1; l <= n; ++l) out.push_back({"gpu_" + name(f, l), offset(f, l), G_, {}, "gpu"});
        }
        const auto add = [&](obs_part p, std::span<const std::string_view> names, std::size_t repeat) {
            if (!has(p)) return;
            obs_segment s{std::string(name(p)), offset(p), size(p), {}, {}};
            const bool slots = p == obs_part::job || p == obs_part::queue;
            for (std::size_t r = 0; r < repeat; ++r) {
                const std::string pre = repeat > 1 ? std::to_string(r) + "." : "";
                for (auto n : names) s.fields.push_back(pre + std::string(hidden_ && n == "ideal_duration" ? "attained" : n));
                if (slots && preempt_) s.fields.push_back(pre + "preemptions");
            }
            out.push_back(std::move(s));
        };
        add(obs_part::job, job_feature_names, 1);
        add(obs_part::queue, queue_feature_names, K_);
        add(obs_part::global, global_feature_names, 1);
        add(obs_part::job_type, job_type_feature_names, 1);
        if (has(obs_part::job_fields)) {
            obs_segment f{std::string(name(obs_part::job_fields)), offset(obs_part::job_fields), size(obs_part::job_fields), {}, {}};
            for (const auto& n : fields_) f.fields.push_back(n);
            for (std::size_t k = 0; k < K_; ++k)
                for (const auto& n : fields_) f.fields.push_back(std::to_string(k) + "." + n);
            out.push_back(std::move(f));
        }
        return out;
    }

private:
    [[nodiscard]] std::size_t num_gpu_rows() const noexcept {
        return base_gpu_features + levels_.size() + (coloc_ ? colocation_gpu_features : 0) + (het_ ? type_gpu_features : 0);
    }

    std::size_t G_ = 0, K_ = 0, size_ = 0;
    std::vector<std::string> levels_, fields_;
    bool coloc_ = false, het_ = false, hidden_ = false, preempt_ = false;
    std::array<std::size_t, num_parts> part_{}, part_size_{};
};

/// The segments of the observation for `num_gpus` GPUs of a tree (nodes and racks) and a queue
/// window of `queue_window` jobs, in order; the last one ends at the observation's size
/// (obs_layout(...).segments()).
[[nodiscard]] inline std::vector<obs_segment> observation_layout(std::size_t num_gpus, std::size_t queue_window,
                                                                 bool colocation, bool heterogeneous = false) {
    return obs_layout(num_gpus, queue_window, colocation, heterogeneous).segments();
}

}  // namespace gpuplace
