#pragma once
/// \file observation.hpp
/// The observation: one float32 vector of named segments, every feature in [0, 1], and the action
/// mask beside it. observation_layout() says where each feature is; observation_writer fills the
/// vector and the mask from the env's state, all of it (reset()) or only what an action changed
/// (step()), with the same values either way.
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
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cluster.hpp"
#include "detail/bounded_vector.hpp"
#include "detail/pick_set.hpp"
#include "detail/room_index.hpp"
#include "detail/wait_queue.hpp"
#include "error.hpp"
#include "simulator.hpp"
#include "topology.hpp"

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

namespace detail {
/// Observation and mask storage: owned (one allocation, the mask's bytes after the observation's
/// floats), or spans bound to external memory. A copy always owns its buffers (with the same
/// contents); a move keeps the source's binding. 40 bytes.
struct obs_buffers {
    std::span<float> obs;
    std::span<std::uint8_t> mask;

    obs_buffers() = default;
    obs_buffers(const obs_buffers& o) { copy_from(o); }
    obs_buffers& operator=(const obs_buffers& o) {
        if (this != &o) copy_from(o);
        return *this;
    }
    obs_buffers(obs_buffers&&) noexcept = default;  // the owned block moves with its spans: they stay valid
    obs_buffers& operator=(obs_buffers&&) noexcept = default;
    ~obs_buffers() = default;

    void allocate(std::size_t n_obs, std::size_t n_mask) {
        own_ = std::make_unique<float[]>(n_obs + (n_mask + sizeof(float) - 1) / sizeof(float));  // zeroed
        obs = {own_.get(), n_obs};
        mask = {reinterpret_cast<std::uint8_t*>(own_.get() + n_obs), n_mask};
    }
    void bind(std::span<float> o, std::span<std::uint8_t> m) {
        std::copy(obs.begin(), obs.end(), o.begin());
        std::copy(mask.begin(), mask.end(), m.begin());
        obs = o;
        mask = m;
        own_.reset();
    }

private:
    void copy_from(const obs_buffers& o) {
        allocate(o.obs.size(), o.mask.size());
        std::copy(o.obs.begin(), o.obs.end(), obs.begin());
        std::copy(o.mask.begin(), o.mask.end(), mask.begin());
    }
    std::unique_ptr<float[]> own_;
};
}  // namespace detail

/// Writes the observation and the mask (G + 1 entries: the GPUs, then DEFER) of an env from its
/// state: the simulator, the current job's picks, the wait queue and the current job. The mask
/// of GPU g is 1 iff g has room for the current job and is not picked.
class observation_writer {
public:
    static constexpr std::uint32_t no_job = cluster_state::no_job;

    observation_writer() = default;
    /// For the GPUs of `topo`, a queue window of `queue_window` jobs, co-location on or off, and
    /// times squashed as t / (t + time_scale). Owns zeroed buffers (bind() to write elsewhere).
    template <Topology T>
    observation_writer(const T& topo, std::size_t queue_window, bool colocation, double time_scale, bool heterogeneous = false)
        : G_(topo.num_gpus()), K_(queue_window), time_scale_(time_scale), time_scale_f_(static_cast<float>(time_scale)) {
        L_ = obs_layout(G_, K_, colocation, heterogeneous);
        using f = gpu_feature;
        picked_ = L_.offset(f::picked), remaining_ = L_.offset(f::remaining), proximity_ = L_.offset(f::proximity);
        node_free_ = L_.offset(f::node_free), rack_free_ = L_.offset(f::rack_free), job_off_ = L_.offset(obs_part::job);
        size_ = L_.size();
        buf_.allocate(size_, G_ + 1);
        rack_dirty_.assign(topo.num_racks(), 0);
        dirty_racks_.reserve(topo.num_racks());
        request_.resize(G_ + 1);
        for (std::size_t k = 0; k <= G_; ++k)
            request_[k] = static_cast<float>(std::log2(double(k) + 1.0) / std::log2(double(G_) + 1.0));
    }

    [[nodiscard]] std::span<float> obs() const noexcept { return buf_.obs; }
    [[nodiscard]] std::span<std::uint8_t> mask() const noexcept { return buf_.mask; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return G_; }
    /// Where each segment is (the offsets this writer writes at).
    [[nodiscard]] const obs_layout& layout() const noexcept { return L_; }
    /// Writes into external buffers from now on (their sizes must be size() and G + 1); the
    /// current contents are copied over.
    void bind(std::span<float> obs, std::span<std::uint8_t> mask) {
        if (obs.size() != size_ || mask.size() != G_ + 1)
            throw Error("bind(): buffer sizes " + std::to_string(obs.size()) + "/" + std::to_string(mask.size()) +
                        " do not match observation_size " + std::to_string(size_) + " / num_actions " +
                        std::to_string(G_ + 1));
        buf_.bind(obs, mask);
    }

    // ---- features ---------------------------------------------------------------------------------

    /// A duration as a feature: t / (t + time_scale), 0 for t <= 0.
    [[nodiscard]] float squash(double seconds) const noexcept {
        const double x = std::max(0.0, seconds);
        return static_cast<float>(x / (x + time_scale_));
    }
    /// A GPU's remaining-time feature, squash() in float arithmetic (the difference of times in
    /// double): the G of them are rewritten whenever time moves, and a float division is half the
    /// cost of a double one. Relative error against squash(): at most 4 x 2^-24.
    [[nodiscard]] float remaining(double seconds) const noexcept {
        auto x = static_cast<float>(seconds);
        x = x > 0.0f ? x : 0.0f;
        return x / (x + time_scale_f_);
    }
    /// A request of k GPUs as a feature: log2(k + 1) / log2(G + 1).
    [[nodiscard]] float request(std::uint32_t k) const noexcept { return request_[k]; }

    // ---- whole rows -------------------------------------------------------------------------------

    /// Per-GPU rows without co-location: flat loops for what depends on the GPU, then node by node
    /// (GPUs are numbered node by node, nodes rack by rack) for what depends on its node and rack.
    /// `active`: whether a job is being placed.
    template <Topology T, class J>
    void gpu_rows(const T& topo, const basic_simulator<J>& sim, const detail::pick_set& picks, bool active) noexcept {
        const auto& cl = sim.cluster();
        float* busy = buf_.obs.data() + L_.offset(gpu_feature::busy);
        float* pick = buf_.obs.data() + picked_;
        std::uint8_t* mask = buf_.mask.data();
        discard_marks();  // every GPU is rewritten
        for (std::size_t g = 0; g < G_; ++g) {
            const bool free = cl.is_free(static_cast<gpu_id>(g));
            busy[g] = free ? 0.0f : 1.0f;
            pick[g] = picks.picked[g] ? 1.0f : 0.0f;
            mask[g] = static_cast<std::uint8_t>(active && free && !picks.picked[g]);
        }
        remaining_all(cl, sim.now());
        for (std::size_t r = 0; r < topo.num_racks(); ++r) rack_rows(topo, cl, picks, r);
    }

    /// Per-GPU rows with co-location: which GPUs have room comes from `room` (per GPU, for the
    /// current job; null when no job is current), the interference from the jobs on each GPU.
    /// Proximity and free counts as without co-location, rack by rack.
    template <Topology T, class J>
    void gpu_rows_colocation(const T& topo, const basic_simulator<J>& sim, const detail::pick_set& picks,
                             const std::uint8_t* room, std::uint32_t current, double gpu_memory_gb) noexcept {
        const auto& cl = sim.cluster();
        const double now = sim.now();
        using f = gpu_feature;
        const auto at = [&](gpu_feature x) { return buf_.obs.data() + obs_layout::gpu_offset(x, G_, true); };
        float *busy = at(f::busy), *pick = at(f::picked), *rem = at(f::remaining);
        float *occ = at(f::occupancy), *head = at(f::memory_headroom), *itf = at(f::interference);
        std::uint8_t* mask = buf_.mask.data();
        const double M = double(cl.max_jobs_per_gpu()), cap = gpu_memory_gb;
        discard_marks();  // every GPU is rewritten
        for (std::size_t g = 0; g < G_; ++g) {
            const auto gg = static_cast<gpu_id>(g);
            const auto jobs = cl.jobs_on_count(gg);
            const bool free = jobs == 0;
            busy[g] = free ? 0.0f : 1.0f;
            pick[g] = picks.picked[g] ? 1.0f : 0.0f;
            rem[g] = free ? 0.0f : remaining(sim.projected_end(cl.holder(gg)) - now);
            const bool ok = room && room[g];
            mask[g] = static_cast<std::uint8_t>(ok && !picks.picked[g]);
            occ[g] = static_cast<float>(double(jobs) / M);
            head[g] = free ? 1.0f : static_cast<float>(std::clamp((cap - cl.memory_used(gg)) / cap, 0.0, 1.0));
            // a free GPU: no one to interfere with, factor 1
            itf[g] = !ok ? 0.0f
                         : free ? 1.0f
                                : static_cast<float>(std::clamp(detail::interference_on(sim, gg, current), 0.0, 1.0));
        }
        for (std::size_t r = 0; r < topo.num_racks(); ++r) rack_rows(topo, cl, picks, r);
    }

    /// The remaining time of every GPU: remaining() computed for every GPU, free or not, with
    /// everything in locals, so that the loop vectorises. A free GPU's end time is minus infinity
    /// (cluster_state::free_end), so its value is remaining(0) = +0.0f without a test of its holder.
    void remaining_all(const cluster_state& cl, double now) noexcept {
        const float scale = time_scale_f_;
        const double* end = cl.end_times().data();
        float* rem = buf_.obs.data() + remaining_;
        const std::size_t G = G_;
        for (std::size_t g = 0; g < G; ++g) {
            auto x = static_cast<float>(end[g] - now);
            x = x > 0.0f ? x : 0.0f;  // as in remaining()
            rem[g] = x / (x + scale);
        }
    }

    /// The job, queue window and global features: the current job (or no_job) with its request
    /// of `cur_gpus` GPUs and `picked` picks so far, the waiting jobs other than it.
    template <class J>
    void tail(const basic_simulator<J>& sim, const detail::wait_queue& q, std::uint32_t current, std::uint32_t cur_gpus,
              std::size_t picked) noexcept {
        const double now = sim.now();
        float* o = buf_.obs.data() + job_off_;
        if (current != no_job) {
            const auto& c = q.info(current);
            *o++ = c.request_feat;
            *o++ = float(cur_gpus - picked) / float(cur_gpus);
            *o++ = c.ideal_feat;
            *o++ = c.comm_feat;
            *o++ = squash(now - c.submit);
        } else {
            o = std::fill_n(o, std::size(job_feature_names), 0.0f);
        }
        std::size_t written = 0;
        for (auto j : q.jobs()) {
            if (written == K_) break;
            if (j == current) continue;
            const auto& w = q.info(j);
            *o++ = 1.0f;
            *o++ = w.request_feat;
            *o++ = w.ideal_feat;
            *o++ = squash(now - w.submit);
            ++written;
        }
        for (; written < K_; ++written) o = std::fill_n(o, std::size(queue_feature_names), 0.0f);
        const double qn = double(q.size());
        *o++ = float(sim.cluster().busy_gpus()) / float(G_);
        *o++ = static_cast<float>(qn / (qn + double(K_ ? K_ : 1)));
        *o++ = squash(now);
        *o++ = sim.jobs().empty() ? 1.0f : float(sim.finished().size()) / float(sim.jobs().size());
    }

    /// Heterogeneous clusters: the gpu_type_speed and gpu_type values of every GPU and the
    /// job_type/best_type_speedup value (the layout's header describes them) for a current job
    /// whose speed on each type is `speeds` (types.num_types() values; empty when no job is current).
    template <class Types>
    void type_rows(const Types& types, std::span<const double> speeds) noexcept {
        float* speed = buf_.obs.data() + L_.offset(gpu_feature::type_speed);
        float* type = buf_.obs.data() + L_.offset(gpu_feature::type);
        float& best = buf_.obs[L_.offset(obs_part::job_type)];
        const std::size_t NT = types.num_types();
        for (std::size_t g = 0; g < G_; ++g) type[g] = float(types.type_of(gpu_id(g))) / float(NT - 1);
        if (speeds.empty()) {
            std::fill(speed, speed + G_, 0.0f);
            best = 0.0f;
            return;
        }
        double fast = 0, slow = 1e300;
        for (const double v : speeds) {
            fast = std::max(fast, v);
            slow = std::min(slow, v);
        }
        for (std::size_t g = 0; g < G_; ++g) speed[g] = static_cast<float>(speeds[types.type_of(gpu_id(g))] / fast);
        best = static_cast<float>(1.0 - slow / fast);
    }

    /// The DEFER entry of the mask.
    void defer(bool allowed) noexcept { buf_.mask[G_] = static_cast<std::uint8_t>(allowed); }

    // ---- what one action changed ------------------------------------------------------------------

    /// After a pick that does not complete the job: GPU g (of node n and rack r), the proximity
    /// of its rack (when the pick is the first in its rack) or node (the first in its node;
    /// 0.5 -> 1), and the job's remaining picks. Nothing else changes, with co-location too:
    /// neither the cluster nor the current job (hence free counts, room and interference) did.
    template <Topology T>
    void after_pick(const T& topo, const detail::pick_set& picks, gpu_id g, std::size_t n, std::size_t r,
                    std::uint32_t cur_gpus) noexcept {
        buf_.obs[picked_ + g] = 1.0f;
        buf_.mask[g] = 0;
        if (picks.node[n] == 1) first_pick_in_node(topo, picks, n, r);
        buf_.obs[job_off_ + 1] = float(cur_gpus - picks.size()) / float(cur_gpus);
    }

    /// Rewrites the busy, picked, remaining and mask values of `gpus`, whose jobs changed (a job
    /// started or finished on them), and marks their racks for flush(). Without co-location (whose
    /// rows depend on the current job and are written whole), for a step that ends with a job
    /// being placed (a mask entry is then 1 iff its GPU is free) and no GPU picked.
    template <Topology T>
    void update_gpus(const T& topo, const cluster_state& cl, std::span<const gpu_id> gpus, double now) noexcept {
        for (auto g : gpus) gpu(topo, cl, g, now);
    }

    /// Ends a decision's update: every remaining time when time moved since the GPUs were
    /// updated, and the proximity and free counts of the racks update_gpus() marked.
    template <Topology T>
    void flush(const T& topo, const cluster_state& cl, const detail::pick_set& picks, double now, bool time_moved) noexcept {
        if (time_moved) remaining_all(cl, now);
        for (auto r : dirty_racks_) {
            rack_rows(topo, cl, picks, r);
            rack_dirty_[r] = 0;
        }
        dirty_racks_.clear();
    }

private:
    /// Calls f(std::integral_constant<std::size_t, N>) with N the node size for the common sizes
    /// (4, 8, 16 GPUs), 0 otherwise: loops over a node's GPUs then compile to a few vector stores
    /// instead of a loop with a prologue and a tail.
    template <Topology T, class F>
    static void with_node_size(const T& topo, F&& f) {
        switch (topo.gpus_per_node()) {
            case 8: return f(std::integral_constant<std::size_t, 8>{});
            case 4: return f(std::integral_constant<std::size_t, 4>{});
            case 16: return f(std::integral_constant<std::size_t, 16>{});
            default: return f(std::integral_constant<std::size_t, 0>{});
        }
    }

    /// The busy, picked, remaining and mask values of GPU g (see update_gpus()); marks its rack.
    template <Topology T>
    void gpu(const T& topo, const cluster_state& cl, gpu_id g, double now) noexcept {
        const bool free = cl.is_free(g);
        float* busy = buf_.obs.data() + L_.offset(gpu_feature::busy);
        busy[g] = free ? 0.0f : 1.0f;
        buf_.obs[picked_ + g] = 0.0f;
        buf_.obs[remaining_ + g] = free ? 0.0f : remaining(cl.end_time(g) - now);
        buf_.mask[g] = static_cast<std::uint8_t>(free);
        const auto r = topo.rack_of(g);
        if (!rack_dirty_[r]) {
            rack_dirty_[r] = 1;
            dirty_racks_.push_back(static_cast<std::uint32_t>(r));  // capacity: number of racks
        }
    }

    /// The proximity after the first pick in node n (of rack r): the node's GPUs 0.5 -> 1, or the
    /// whole rack's when it is the first pick in the rack too.
    template <Topology T>
    void first_pick_in_node(const T& topo, const detail::pick_set& picks, std::size_t n, std::size_t r) noexcept {
        if (picks.rack[r] == 1) return rack_proximity(topo, picks, r);
        with_node_size(topo, [&](auto N) {
            const std::size_t gpn = N() > 0 ? N() : topo.gpus_per_node();
            for (std::size_t i = 0; i < gpn; ++i) buf_.obs[proximity_ + n * gpn + i] = 1.0f;
        });
    }

    /// Forgets the racks marked for flush() (their rows are being rewritten anyway).
    void discard_marks() noexcept {
        for (auto r : dirty_racks_) rack_dirty_[r] = 0;
        dirty_racks_.clear();
    }

    /// The proximity of a GPU of rack r in a node without a pick: 0.5 when the rack has a pick, else 0.
    [[nodiscard]] static float proximity_off_node(const detail::pick_set& picks, std::size_t r) noexcept {
        return picks.empty() || picks.rack[r] == 0 ? 0.0f : 0.5f;
    }

    /// Proximity, node-free and rack-free features of the GPUs of rack r, node by node.
    template <Topology T>
    void rack_rows(const T& topo, const cluster_state& cl, const detail::pick_set& picks, std::size_t r) noexcept {
        with_node_size(topo, [&](auto N) {
            const std::size_t gpn = N() > 0 ? N() : topo.gpus_per_node(), npr = topo.nodes_per_rack();
            const float inv_node = 1.0f / float(gpn);
            const float rf = float(cl.rack_free(r)) * (1.0f / float(cl.gpus_per_rack()));
            const float off_node = proximity_off_node(picks, r);
            float* prox = buf_.obs.data() + proximity_;
            float* nfree = buf_.obs.data() + node_free_;
            float* rfree = buf_.obs.data() + rack_free_;
            for (std::size_t n = r * npr; n < (r + 1) * npr; ++n) {
                const float nf = float(cl.node_free(n)) * inv_node;
                const float pv = picks.node[n] ? 1.0f : off_node;
                const std::size_t o = n * gpn;
                for (std::size_t i = 0; i < gpn; ++i) {
                    prox[o + i] = pv;
                    nfree[o + i] = nf;
                    rfree[o + i] = rf;
                }
            }
        });
    }

    /// Proximity of the GPUs of rack r to the current picks: 1 in a node with a pick, 0.5
    /// elsewhere in a rack with a pick, else 0.
    template <Topology T>
    void rack_proximity(const T& topo, const detail::pick_set& picks, std::size_t r) noexcept {
        with_node_size(topo, [&](auto N) {
            const std::size_t gpn = N() > 0 ? N() : topo.gpus_per_node(), npr = topo.nodes_per_rack();
            float* prox = buf_.obs.data() + proximity_;
            const float off_node = proximity_off_node(picks, r);
            for (std::size_t n = r * npr; n < (r + 1) * npr; ++n) {
                const float pv = picks.node[n] ? 1.0f : off_node;
                for (std::size_t i = 0; i < gpn; ++i) prox[n * gpn + i] = pv;
            }
        });
    }

    // what a pick reads and writes first (see basic_env's members)
    detail::obs_buffers buf_;
    std::size_t G_ = 0, K_ = 0;
    // L_'s offsets of what a step writes most
    std::size_t picked_ = 0, remaining_ = 0, proximity_ = 0, node_free_ = 0, rack_free_ = 0, job_off_ = 0;
    double time_scale_ = 1;
    float time_scale_f_ = 1;  ///< time_scale as the float remaining() divides by
    std::size_t size_ = 0;
    std::vector<std::uint8_t> rack_dirty_;               ///< racks whose rows flush() rewrites
    detail::bounded_vector<std::uint32_t> dirty_racks_;  ///< capacity: the number of racks
    std::vector<float> request_;                         ///< request(k) for k = 0..G
    obs_layout L_;                                       ///< where everything is written
};

}  // namespace gpuplace
