#pragma once
/// \file observation.hpp
/// The observation: one float32 vector of named segments, every feature in [0, 1], and the action
/// mask beside it. observation_layout.hpp says where each feature is; observation_writer fills the
/// vector and the mask from the env's state, all of it (reset()) or only what an action changed
/// (step()), with the same values either way.

#include <algorithm>
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
#include "observation_layout.hpp"
#include "simulator.hpp"
#include "topology.hpp"

namespace gpuplace {

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
