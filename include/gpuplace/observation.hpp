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
#include "detail/obs_buffers.hpp"
#include "env/pick_set.hpp"
#include "env/room_index.hpp"
#include "env/wait_queue.hpp"
#include "error.hpp"
#include "hierarchy.hpp"
#include "observation_layout.hpp"
#include "simulator.hpp"

namespace gpuplace {


/// Writes the observation and the mask (G + 1 entries: the GPUs, then DEFER) of an env from its
/// state: the simulator, the current job's picks, the wait queue and the current job. The mask
/// of GPU g is 1 iff g has room for the current job and is not picked. The context segments (job,
/// queue, global, job_type) can be written into another buffer too (the placement and job action
/// modes' observations hold them).
class observation_writer {
public:
    static constexpr std::uint32_t no_job = cluster_state::no_job;

    observation_writer() = default;
    /// For the GPUs of hierarchy `h`, a queue window of `queue_window` jobs, co-location on or off,
    /// and times squashed as t / (t + time_scale). Owns zeroed buffers (bind() to write elsewhere).
    /// `hidden` (durations hidden) and `preemption` as in obs_layout.
    observation_writer(const level_hierarchy& h, std::size_t queue_window, bool colocation, double time_scale,
                       bool heterogeneous = false, bool hidden = false, bool preemption = false)
        : G_(h.num_gpus()), K_(queue_window), time_scale_(time_scale), time_scale_f_(static_cast<float>(time_scale)), h_(h) {
        std::vector<std::string> names;
        for (std::size_t l = 1; l < h.num_levels(); ++l) names.push_back(h.level(l).name);
        L_ = obs_layout(G_, std::move(names), K_, colocation, heterogeneous, hidden, preemption);
        top_ = h.num_levels() - 1;
        using f = gpu_feature;
        picked_ = L_.offset(f::picked), remaining_ = L_.offset(f::remaining), proximity_ = L_.offset(f::proximity);
        free_ = L_.offset(f::domain_free, 1), job_off_ = L_.offset(obs_part::job);
        size_ = L_.size();
        buf_.allocate(size_, G_ + 1);
        top_dirty_.assign(h.num_domains(top_), 0);
        dirty_tops_.reserve(h.num_domains(top_));
        top_map_ = h.map(top_);
        maps_.assign(top_ + 1, {});
        prox_.assign(top_ + 2, 0.0f);
        for (std::size_t l = 1; l <= top_; ++l) {
            maps_[l] = h.map(l);
            prox_[l] = float(top_ + 1 - l) / float(top_);
        }
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

    /// Per-GPU rows without co-location: flat loops for what depends on the GPU, then domain by
    /// domain for what depends on its domains. `active`: whether a job is being placed.
    template <class J>
    void gpu_rows(const basic_simulator<J>& sim, const env_detail::pick_set& picks, bool active) noexcept {
        const auto& cl = sim.cluster();
        float* busy = buf_.obs.data() + L_.offset(gpu_feature::busy);
        float* pick = buf_.obs.data() + picked_;
        const std::uint8_t* picked = picks.picked_flags();
        std::uint8_t* mask = buf_.mask.data();
        discard_marks();  // every GPU is rewritten
        for (std::size_t g = 0; g < G_; ++g) {
            const bool free = cl.is_free(static_cast<gpu_id>(g));
            busy[g] = free ? 0.0f : 1.0f;
            pick[g] = picked[g] ? 1.0f : 0.0f;
            mask[g] = static_cast<std::uint8_t>(active && free && !picked[g]);
        }
        remaining_all(cl, sim.now());
        for (std::size_t t = 0; t < h_.num_domains(top_); ++t) domain_rows(cl, picks, top_, t, 0.0f);
    }

    /// Per-GPU rows with co-location: which GPUs have room comes from `room` (per GPU, for the
    /// current job; null when no job is current), the interference from the jobs on each GPU.
    /// Proximity and free counts as without co-location.
    template <class J>
    void gpu_rows_colocation(const basic_simulator<J>& sim, const env_detail::pick_set& picks, const std::uint8_t* room,
                             std::uint32_t current, double gpu_memory_gb) noexcept {
        const auto& cl = sim.cluster();
        const double now = sim.now();
        using f = gpu_feature;
        const auto at = [&](gpu_feature x) { return buf_.obs.data() + L_.offset(x); };
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
            pick[g] = picks.picked(gg) ? 1.0f : 0.0f;
            rem[g] = free ? 0.0f : remaining(sim.projected_end(cl.holder(gg)) - now);
            const bool ok = room && room[g];
            mask[g] = static_cast<std::uint8_t>(ok && !picks.picked(gg));
            occ[g] = static_cast<float>(double(jobs) / M);
            head[g] = free ? 1.0f : static_cast<float>(std::clamp((cap - cl.memory_used(gg)) / cap, 0.0, 1.0));
            // a free GPU: no one to interfere with, factor 1
            itf[g] = !ok ? 0.0f
                         : free ? 1.0f
                                : static_cast<float>(std::clamp(env_detail::interference_on(sim, gg, current), 0.0, 1.0));
        }
        for (std::size_t t = 0; t < h_.num_domains(top_); ++t) domain_rows(cl, picks, top_, t, 0.0f);
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

    // ---- context ----------------------------------------------------------------------------------

    /// The "job" segment at `o`: the current job (or no_job) with its request of `cur_gpus` GPUs
    /// and `picked` picks so far.
    template <class J>
    void job_segment(float* o, const basic_simulator<J>& sim, const env_detail::wait_queue& q, std::uint32_t current,
                     std::uint32_t cur_gpus, std::size_t picked) const noexcept {
        if (current == no_job) {
            std::fill_n(o, L_.job_fields(), 0.0f);
            return;
        }
        const auto& c = q.info(current);
        o[0] = c.request_feat;
        o[1] = float(cur_gpus - picked) / float(cur_gpus);
        o[2] = c.ideal_feat;
        o[3] = c.comm_feat;
        o[4] = squash(sim.now() - c.submit);
        if (L_.preemption()) o[5] = preemption_feature(sim.preemptions(current));
    }
    /// The "queue" segment at `o`: the first K waiting jobs other than the current one.
    template <class J>
    void queue_segment(float* o, const basic_simulator<J>& sim, const env_detail::wait_queue& q, std::uint32_t current) const noexcept {
        const double now = sim.now();
        std::size_t written = 0;
        for (auto j : q.jobs()) {
            if (written == K_) break;
            if (j == current) continue;
            const auto& w = q.info(j);
            *o++ = 1.0f;
            *o++ = w.request_feat;
            *o++ = w.ideal_feat;
            *o++ = squash(now - w.submit);
            if (L_.preemption()) *o++ = preemption_feature(sim.preemptions(j));
            ++written;
        }
        std::fill_n(o, (K_ - written) * L_.queue_fields(), 0.0f);  // the empty slots, in one fill
    }
    /// n preemptions as a feature: n / (n + 1).
    [[nodiscard]] static float preemption_feature(std::uint32_t n) noexcept { return float(n) / float(n + 1); }

    /// The per-GPU time row when the scheduler does not see true remaining times (durations
    /// hidden or predicted), rewritten whole: hidden, the run time of the GPU's job so far; predicted,
    /// its estimated remaining time (the estimate of its duration less the work it has done, at its
    /// slowdown). `shown` is each job's shown duration.
    template <class J>
    void time_row(const basic_simulator<J>& sim, std::span<const double> shown, bool hidden) noexcept {
        const auto& cl = sim.cluster();
        const double now = sim.now();
        float* rem = buf_.obs.data() + remaining_;
        for (std::size_t g = 0; g < G_; ++g) {
            const auto j = cl.holder(gpu_id(g));
            if (j == no_job) {
                rem[g] = 0.0f;
                continue;
            }
            const double x = hidden ? now - sim.run_start(j)
                                    : std::max(0.0, shown[j] - (sim.ideal_duration(j) - sim.work_left(j))) * sim.slowdown(j);
            rem[g] = remaining(x);
        }
    }

    /// The "global" segment at `o`.
    template <class J>
    void global_segment(float* o, const basic_simulator<J>& sim, const env_detail::wait_queue& q) const noexcept {
        const double qn = double(q.size());
        o[0] = float(sim.cluster().busy_gpus()) / float(G_);
        o[1] = static_cast<float>(qn / (qn + double(K_ ? K_ : 1)));
        o[2] = squash(sim.now());
        o[3] = sim.jobs().empty() ? 1.0f : float(sim.finished().size()) / float(sim.jobs().size());
    }
    /// The job, queue window and global segments of this writer's observation.
    template <class J>
    void tail(const basic_simulator<J>& sim, const env_detail::wait_queue& q, std::uint32_t current, std::uint32_t cur_gpus,
              std::size_t picked) noexcept {
        float* o = buf_.obs.data();
        job_segment(o + job_off_, sim, q, current, cur_gpus, picked);
        queue_segment(o + L_.offset(obs_part::queue), sim, q, current);
        global_segment(o + L_.offset(obs_part::global), sim, q);
    }

    /// Heterogeneous clusters: the job_type/best_type_speedup value for a current job whose speed on
    /// each type is `speeds` (empty when no job is current): 1 - slowest / fastest.
    [[nodiscard]] static float best_type_speedup(std::span<const double> speeds) noexcept {
        if (speeds.empty()) return 0.0f;
        double fast = 0, slow = 1e300;
        for (const double v : speeds) fast = std::max(fast, v), slow = std::min(slow, v);
        return static_cast<float>(1.0 - slow / fast);
    }
    /// Heterogeneous clusters: the gpu_type_speed and gpu_type values of every GPU and the
    /// job_type value (the layout's header describes them) for a current job whose speed on each
    /// type is `speeds` (types.num_types() values; empty when no job is current).
    template <class Types>
    void type_rows(const Types& types, std::span<const double> speeds) noexcept {
        float* speed = buf_.obs.data() + L_.offset(gpu_feature::type_speed);
        float* type = buf_.obs.data() + L_.offset(gpu_feature::type);
        const std::size_t NT = types.num_types();
        for (std::size_t g = 0; g < G_; ++g) type[g] = float(types.type_of(gpu_id(g))) / float(NT - 1);
        buf_.obs[L_.offset(obs_part::job_type)] = best_type_speedup(speeds);
        if (speeds.empty()) {
            std::fill(speed, speed + G_, 0.0f);
            return;
        }
        double fast = 0;
        for (const double v : speeds) fast = std::max(fast, v);
        for (std::size_t g = 0; g < G_; ++g) speed[g] = static_cast<float>(speeds[types.type_of(gpu_id(g))] / fast);
    }

    /// The DEFER entry of the mask.
    void defer(bool allowed) noexcept { buf_.mask[G_] = static_cast<std::uint8_t>(allowed); }

    // ---- what one action changed ------------------------------------------------------------------

    /// After a pick (GPU g, already added to `picks`) that does not complete the job: g, the
    /// proximity of the largest domain in which it is the first pick, and the job's remaining
    /// picks. Nothing else changes, with co-location too: neither the cluster nor the current job
    /// (hence free counts, room and interference) did.
    void after_pick(const env_detail::pick_set& picks, gpu_id g, std::uint32_t cur_gpus) noexcept {
        buf_.obs[picked_ + g] = 1.0f;
        buf_.mask[g] = 0;
        std::size_t m = 0;  // the highest level whose domain of g holds only this pick
        while (m < top_ && picks.in(m + 1, maps_[m + 1](g)) == 1) ++m;
        if (m == 1) {  // the first pick in its level-1 domain only: that domain's GPUs
            const auto n = maps_[1](g);
            const float in_node = level_proximity(1);
            with_size(h_.uniform_size(1), [&, in_node](auto N) {
                const std::size_t size = N() > 0 ? N() : h_.size(1, n);
                float* prox = buf_.obs.data() + proximity_ + h_.first(1, n);
                for (std::size_t i = 0; i < size; ++i) prox[i] = in_node;
            });
        } else if (m > 1) {
            const float above = m < top_ ? level_proximity(m + 1) : 0.0f;  // (a domain above holds another pick)
            proximity_rows(picks, m, maps_[m](g), above);
        }
        buf_.obs[job_off_ + 1] = float(cur_gpus - picks.size()) / float(cur_gpus);
    }

    /// Rewrites the busy, picked, remaining and mask values of `gpus`, whose jobs changed (a job
    /// started or finished on them), and marks their top-level domains for flush(). Without
    /// co-location (whose rows depend on the current job and are written whole), for a step that
    /// ends with a job being placed (a mask entry is then 1 iff its GPU is free) and no GPU picked.
    void update_gpus(const cluster_state& cl, std::span<const gpu_id> gpus, double now) noexcept {
        for (auto g : gpus) gpu(cl, g, now);
    }

    /// Ends a decision's update: every remaining time when time moved since the GPUs were
    /// updated, and the proximity and free counts of the domains update_gpus() marked.
    void flush(const cluster_state& cl, const env_detail::pick_set& picks, double now, bool time_moved) noexcept {
        if (time_moved) remaining_all(cl, now);
        if (top_ == 2) {  // a tree of two domain levels (nodes in racks): the rows of each rack in one loop
            for (auto t : dirty_tops_) {
                const float p = !picks.empty() && picks.in(2, t) ? level_proximity(2) : 0.0f;
                leaf_rows(cl, picks, t, p, float(cl.free_in(2, t)) * (1.0f / float(h_.size(2, t))));
                top_dirty_[t] = 0;
            }
        } else {
            for (auto t : dirty_tops_) {
                domain_rows(cl, picks, top_, t, 0.0f);
                top_dirty_[t] = 0;
            }
        }
        dirty_tops_.clear();
    }

private:
    /// The proximity of a GPU whose lowest domain with a pick is on level l (1 .. L-1): (L - l) /
    /// (L - 1), so 1 in a domain of level 1 with a pick, falling by level, 0 with no pick below the
    /// root (a tree: 1 in a node with a pick, 0.5 elsewhere in a rack with one).
    [[nodiscard]] float level_proximity(std::size_t l) const noexcept { return prox_[l]; }

    /// The busy, picked, remaining and mask values of GPU g (see update_gpus()); marks its top domain.
    void gpu(const cluster_state& cl, gpu_id g, double now) noexcept {
        const bool free = cl.is_free(g);
        float* busy = buf_.obs.data() + L_.offset(gpu_feature::busy);
        busy[g] = free ? 0.0f : 1.0f;
        buf_.obs[picked_ + g] = 0.0f;
        buf_.obs[remaining_ + g] = free ? 0.0f : remaining(cl.end_time(g) - now);
        buf_.mask[g] = static_cast<std::uint8_t>(free);
        const auto t = top_map_(g);
        if (!top_dirty_[t]) {
            top_dirty_[t] = 1;
            dirty_tops_.push_back(t);  // capacity: the number of top domains
        }
    }

    /// Forgets the domains marked for flush() (their rows are being rewritten anyway).
    void discard_marks() noexcept {
        for (auto t : dirty_tops_) top_dirty_[t] = 0;
        dirty_tops_.clear();
    }

    /// Calls f(std::integral_constant<std::size_t, N>) with N the common size of level-1 domains
    /// for the common sizes (4, 8, 16 GPUs), 0 otherwise: loops over a node's GPUs then compile to
    /// a few vector stores instead of a loop with a prologue and a tail.
    template <class F>
    static void with_size(std::size_t size, F&& f) {
        switch (size) {
            case 8: return f(std::integral_constant<std::size_t, 8>{});
            case 4: return f(std::integral_constant<std::size_t, 4>{});
            case 16: return f(std::integral_constant<std::size_t, 16>{});
            default: return f(std::integral_constant<std::size_t, 0>{});
        }
    }

    /// Proximity and free-count features of the GPUs of domain d of level l, whose GPUs have
    /// proximity `above` unless a domain inside holds a pick. The free fraction of a domain is
    /// free x (1 / size) in float. Down to level 2; the level-1 domains of a level-2 domain in one
    /// loop (leaf_rows()).
    void domain_rows(const cluster_state& cl, const env_detail::pick_set& picks, std::size_t l, std::size_t d, float above) noexcept {
        const float p = !picks.empty() && picks.in(l, d) ? level_proximity(l) : above;
        const float f = float(cl.free_in(l, d)) * (1.0f / float(h_.size(l, d)));
        if (l == 1) {  // a hierarchy of one domain level: its domains are the leaves
            const gpu_id first = h_.first(1, d), n = h_.size(1, d);
            std::fill_n(buf_.obs.data() + proximity_ + first, n, p);
            std::fill_n(buf_.obs.data() + free_ + first, n, f);
            return;
        }
        if (l == 2) return leaf_rows(cl, picks, d, p, f);
        std::fill_n(buf_.obs.data() + free_ + (l - 1) * G_ + h_.first(l, d), h_.size(l, d), f);
        for (auto c = h_.first_child(l, d); c < h_.end_child(l, d); ++c) domain_rows(cl, picks, l - 1, c, p);
    }

    /// The rows of the GPUs of level-2 domain d (proximity `above` outside a level-1 domain with a
    /// pick, free fraction `f`), level-1 domain by level-1 domain: proximity, level-1 free and
    /// level-2 free in one pass.
    void leaf_rows(const cluster_state& cl, const env_detail::pick_set& picks, std::size_t d, float above, float f) noexcept {
        // the level-1 domains' arrays, read once: the loop stores floats, which the compiler must
        // otherwise assume may change what it reloads
        const std::uint32_t* bounds = h_.bounds(1).data();
        const std::uint32_t* node_free = cl.free_on(1).data();
        const std::uint32_t* node_picks = picks.counts(1);
        const std::size_t c0 = h_.first_child(2, d), c1 = h_.end_child(2, d);
        with_size(h_.uniform_size(1), [&](auto N) {
            float* prox = buf_.obs.data() + proximity_;
            float* nfree = buf_.obs.data() + free_;
            float* rfree = nfree + G_;
            // locals, not the captured references: a float store could change a float reference
            const float in_node = level_proximity(1), off_node = above, rf = f;
            for (std::size_t n = c0; n < c1; ++n) {
                // (uniform: the offset as a multiple of N, which the compiler sees through)
                const std::size_t o = N() > 0 ? n * N() : bounds[n], size = N() > 0 ? N() : bounds[n + 1] - o;
                const float nf = float(node_free[n]) * (1.0f / float(size));
                const float pv = node_picks[n] ? in_node : off_node;
                for (std::size_t i = 0; i < size; ++i) {
                    prox[o + i] = pv;
                    nfree[o + i] = nf;
                    rfree[o + i] = rf;
                }
            }
        });
    }

    /// The proximity features of domain d of level l alone (see domain_rows()).
    void proximity_rows(const env_detail::pick_set& picks, std::size_t l, std::size_t d, float above) noexcept {
        const float p = picks.in(l, d) ? level_proximity(l) : above;
        if (l == 1) {
            std::fill_n(buf_.obs.data() + proximity_ + h_.first(l, d), h_.size(l, d), p);
            return;
        }
        if (l == 2) {
            const std::uint32_t* bounds = h_.bounds(1).data();
            const std::uint32_t* node_picks = picks.counts(1);
            const std::size_t c0 = h_.first_child(2, d), c1 = h_.end_child(2, d);
            with_size(h_.uniform_size(1), [&](auto N) {
                float* prox = buf_.obs.data() + proximity_;
                const float in_node = level_proximity(1), off_node = p;  // locals (see leaf_rows())
                for (std::size_t n = c0; n < c1; ++n) {
                    const std::size_t o = N() > 0 ? n * N() : bounds[n], size = N() > 0 ? N() : bounds[n + 1] - o;
                    const float pv = node_picks[n] ? in_node : off_node;
                    for (std::size_t i = 0; i < size; ++i) prox[o + i] = pv;
                }
            });
            return;
        }
        for (auto c = h_.first_child(l, d); c < h_.end_child(l, d); ++c) proximity_rows(picks, l - 1, c, p);
    }

    // what a pick reads and writes first (see basic_env's members)
    detail::obs_buffers buf_;
    std::size_t G_ = 0, K_ = 0;
    // L_'s offsets of what a step writes most
    std::size_t picked_ = 0, remaining_ = 0, proximity_ = 0, free_ = 0, job_off_ = 0;
    double time_scale_ = 1;
    float time_scale_f_ = 1;  ///< time_scale as the float remaining() divides by
    std::size_t size_ = 0;
    std::size_t top_ = 1;                                ///< the top domain level, L - 1
    domain_map top_map_;                                 ///< GPU -> its top domain
    std::vector<domain_map> maps_;                       ///< per level 1 .. L-1: GPU -> domain
    std::vector<float> prox_;                            ///< per level: level_proximity()
    std::vector<std::uint8_t> top_dirty_;                ///< top domains whose rows flush() rewrites
    detail::bounded_vector<std::uint32_t> dirty_tops_;   ///< capacity: the number of top domains
    std::vector<float> request_;                         ///< request(k) for k = 0..G
    obs_layout L_;                                       ///< where everything is written
    level_hierarchy h_;
};

}  // namespace gpuplace
