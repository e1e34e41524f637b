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
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cluster.hpp"
#include "detail/bounded_vector.hpp"
#include "detail/constant.hpp"
#include "detail/feature_math.hpp"
#include "detail/fill.hpp"
#include "detail/inline.hpp"
#include "detail/obs_buffers.hpp"
#include "env/pick_set.hpp"
#include "env/room_index.hpp"
#include "env/wait_queue.hpp"
#include "error.hpp"
#include "hierarchy.hpp"
#include "job_fields.hpp"
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
    static constexpr float max_float = std::numeric_limits<float>::max();

    observation_writer() = default;
    /// For the GPUs of hierarchy `h`, a queue window of `queue_window` jobs, co-location on or off,
    /// and times squashed as t / (t + time_scale). Owns zeroed buffers (bind() to write elsewhere).
    /// `hidden` (durations hidden) and `preemption` as in obs_layout.
    observation_writer(const level_hierarchy& h, std::size_t queue_window, bool colocation, double time_scale,
                       bool heterogeneous = false, bool hidden = false, bool preemption = false);

    /// A declared job field the observation shows (segment "job_fields"): its column in the
    /// episode's field table, its declaration and, for a category, how many categories it has.
    struct observed_field {
        std::size_t column = 0;
        job_field field;
        std::size_t categories = 0;
    };
    /// Shows `fields` in a "job_fields" segment after the others (call before the first write).
    void observe_fields(std::vector<observed_field> fields);

    [[nodiscard]] std::span<float> obs() const noexcept { return buf_.obs; }
    [[nodiscard]] std::span<std::uint8_t> mask() const noexcept { return buf_.mask; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return G_; }
    /// Where each segment is (the offsets this writer writes at).
    [[nodiscard]] const obs_layout& layout() const noexcept { return L_; }
    /// Writes into external buffers from now on (their sizes must be size() and G + 1); the
    /// current contents are copied over.
    void bind(std::span<float> obs, std::span<std::uint8_t> mask);

    // ---- features ---------------------------------------------------------------------------------

    /// A duration as a feature: t / (t + time_scale), 0 for t <= 0.
    [[nodiscard]] float squash(double seconds) const noexcept { return detail::squash_duration(seconds, time_scale_); }
    /// A GPU's remaining-time feature, squash() in float arithmetic (the difference of times in
    /// double): the G of them are rewritten whenever time moves, and a float division is half the
    /// cost of a double one. Relative error against squash(): at most 4 x 2^-24. A time beyond
    /// the float range (a finite double, e.g. a co-located job slowed down by an absurd link
    /// latency) is the largest float, so the value is 1, not inf / inf. (remaining_all() needs no
    /// such test: the cluster keeps end times below cluster_state::max_end.)
    [[nodiscard]] float remaining(double seconds) const noexcept {
        auto x = static_cast<float>(seconds);
        x = x > 0.0f ? x : 0.0f;
        x = x < max_float ? x : max_float;
        return x / (x + time_scale_f_);
    }
    /// A request of k GPUs as a feature: log2(k + 1) / log2(G + 1).
    [[nodiscard]] float request(std::uint32_t k) const noexcept { return request_[k]; }

    // ---- whole rows -------------------------------------------------------------------------------

    /// Per-GPU rows without co-location: flat loops for what depends on the GPU, then domain by
    /// domain for what depends on its domains. `active`: whether a job is being placed.
    template <class J>
    void gpu_rows(const basic_simulator<J>& sim, const env_detail::pick_set& picks, bool active) noexcept;

    /// Per-GPU rows with co-location: which GPUs have room comes from `room` (per GPU, for the
    /// current job; null when no job is current), the interference from the jobs on each GPU.
    /// Proximity and free counts as without co-location.
    template <class J>
    void gpu_rows_colocation(const basic_simulator<J>& sim, const env_detail::pick_set& picks, const std::uint8_t* room,
                             std::uint32_t current, double gpu_memory_gb) noexcept;

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
            x = x > 0.0f ? x : 0.0f;  // as in remaining() (end times fit: cluster_state::max_end)
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
    [[nodiscard]] static float preemption_feature(std::uint32_t n) noexcept { return detail::preemption_feature(n); }

    /// The per-GPU time row when the scheduler does not see true remaining times (durations
    /// hidden or predicted), rewritten whole: hidden, the run time of the GPU's job so far; predicted,
    /// its estimated remaining time (the estimate of its duration less the work it has done, at its
    /// slowdown). `shown` is each job's shown duration.
    template <class J>
    void time_row(const basic_simulator<J>& sim, std::span<const double> shown, bool hidden) noexcept;

    /// The "global" segment at `o`.
    template <class J>
    void global_segment(float* o, const basic_simulator<J>& sim, const env_detail::wait_queue& q) const noexcept {
        const double qn = double(q.size());
        o[0] = float(sim.cluster().busy_gpus()) / float(G_);
        o[1] = static_cast<float>(qn / (qn + double(K_ ? K_ : 1)));
        o[2] = squash(sim.now());
        o[3] = sim.jobs().empty() ? 1.0f : float(sim.finished().size()) / float(sim.jobs().size());
    }
    /// The job, queue window and global segments of this writer's observation (and the observed
    /// job fields, from the episode's table `x`).
    template <class J>
    void tail(const basic_simulator<J>& sim, const env_detail::wait_queue& q, std::uint32_t current, std::uint32_t cur_gpus,
              std::size_t picked, const episode_extras* x = nullptr) noexcept {
        float* o = buf_.obs.data();
        job_segment(o + job_off_, sim, q, current, cur_gpus, picked);
        queue_segment(o + L_.offset(obs_part::queue), sim, q, current);
        global_segment(o + L_.offset(obs_part::global), sim, q);
        if (!observed_.empty() && x) [[unlikely]]  // only with observed job fields: out of line, so tail() stays small
            fields_segment(o + L_.offset(obs_part::job_fields), q, current, *x);
    }
    /// The "job_fields" segment at `o`: the observed fields of the current job (zeros when none),
    /// then of the first K waiting jobs other than it, as queue_segment() takes them.
    GPUPLACE_NOINLINE void fields_segment(float* o, const env_detail::wait_queue& q, std::uint32_t current,
                                          const episode_extras& x) const noexcept {
        const std::size_t F = observed_.size();
        auto row = [&](float* r, std::uint32_t j) {
            for (std::size_t f = 0; f < F; ++f) {
                const auto& of = observed_[f];
                r[f] = field_feature(of.field, x.fields[std::size_t(j) * x.width + of.column], of.categories);
            }
        };
        if (current == no_job) std::fill_n(o, F, 0.0f);
        else row(o, current);
        o += F;
        std::size_t written = 0;
        for (auto j : q.jobs()) {
            if (written == K_) break;
            if (j == current) continue;
            row(o, j);
            o += F;
            ++written;
        }
        std::fill_n(o, (K_ - written) * F, 0.0f);
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
    void type_rows(const Types& types, std::span<const double> speeds) noexcept;

    /// The DEFER entry of the mask.
    void defer(bool allowed) noexcept { buf_.mask[G_] = static_cast<std::uint8_t>(allowed); }

    // ---- what one action changed ------------------------------------------------------------------

    /// After a pick (GPU g, already added to `picks`) that does not complete the job: g, the
    /// proximity of the largest domain in which it is the first pick, and the job's remaining
    /// picks. Nothing else changes, with co-location too: neither the cluster nor the current job
    /// (hence free counts, room and interference) did.
    void after_pick(const env_detail::pick_set& picks, gpu_id g, std::uint32_t cur_gpus) noexcept {
        // read before the mask's byte store, which the compiler must assume may change it
        const std::size_t m = picks.fresh_levels();  // the highest level whose domain of g holds only this pick
        buf_.obs[picked_ + g] = 1.0f;
        buf_.mask[g] = 0;
        if (m == 1) {  // the first pick in its level-1 domain only: that domain's GPUs
            const auto n = map1_(g);
            const float in_node = level_proximity(1);
            with_size(node_size_, [&, in_node](auto N) {
                const std::size_t size = N() > 0 ? N() : bounds1_[n + 1] - bounds1_[n];
                float* prox = buf_.obs.data() + proximity_ + bounds1_[n];
                if constexpr (N() > 0) detail::fill_const<N()>(prox, in_node);
                else std::fill_n(prox, size, in_node);
            });
        } else if (m == 2) {  // the first in its level-2 domain (a tree: rack) too: that domain's GPUs
            leaf_proximity(picks, map2_(g), level_proximity(2));
        } else if (m > 2) {
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
                leaf_rows(cl, picks, t, p, float(cl.free_in(2, t)) * (1.0f / float(bounds2_[t + 1] - bounds2_[t])));
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
    /// for the common sizes (8, 4, 16 GPUs), 0 otherwise: loops over a node's GPUs then compile to
    /// a few vector stores instead of a loop with a prologue and a tail.
    template <class F>
    static void with_size(std::size_t size, F&& f) {
        detail::with_constant<8, 4, 16>(size, f);
    }

    /// Proximity and free-count features of the GPUs of domain d of level l, whose GPUs have
    /// proximity `above` unless a domain inside holds a pick. The free fraction of a domain is
    /// free x (1 / size) in float. Down to level 2; the level-1 domains of a level-2 domain in one
    /// loop (leaf_rows()).
    void domain_rows(const cluster_state& cl, const env_detail::pick_set& picks, std::size_t l, std::size_t d, float above) noexcept;

    /// The rows of the GPUs of level-2 domain d (proximity `above` outside a level-1 domain with a
    /// pick, free fraction `f`), level-1 domain by level-1 domain: proximity, level-1 free and
    /// level-2 free in one pass.
    void leaf_rows(const cluster_state& cl, const env_detail::pick_set& picks, std::size_t d, float above, float f) noexcept {
        // the level-1 domains' arrays, read once: the loop stores floats, which the compiler must
        // otherwise assume may change what it reloads
        const std::uint32_t* bounds = bounds1_;
        const std::uint32_t* node_free = cl.free_on(1).data();
        const std::uint32_t* node_picks = picks.counts(1);
        const std::size_t c0 = children2_[d], c1 = children2_[d + 1];
        with_size(node_size_, [&](auto N) {
            float* prox = buf_.obs.data() + proximity_;
            float* nfree = buf_.obs.data() + free_;
            float* rfree = nfree + G_;
            // locals, not the captured references: a float store could change a float reference
            const float rf = f;
            // the proximity outside and inside a level-1 domain with a pick, picked by a load: GCC 12
            // compiles `picks ? in : off` as a branch around the stores, which the picks make
            // unpredictable (callgrind, 64 GPUs: 1.0 more mispredicted branches per step)
            const float pvs[2] = {above, level_proximity(1)};
            for (std::size_t n = c0; n < c1; ++n) {
                // (uniform: the offset as a multiple of N, which the compiler sees through)
                const std::size_t o = N() > 0 ? n * N() : bounds[n], size = N() > 0 ? N() : bounds[n + 1] - o;
                const float nf = float(node_free[n]) * (1.0f / float(size));
                const float pv = pvs[node_picks[n] != 0];
                if constexpr (N() > 0) {  // (detail/fill.hpp says why)
                    detail::fill_const<N()>(prox + o, pv);
                    detail::fill_const<N()>(nfree + o, nf);
                    detail::fill_const<N()>(rfree + o, rf);
                } else {
                    for (std::size_t i = 0; i < size; ++i) {
                        prox[o + i] = pv;
                        nfree[o + i] = nf;
                        rfree[o + i] = rf;
                    }
                }
            }
        });
    }

    /// The proximity features of the GPUs of level-2 domain d (`off` outside a level-1 domain
    /// with a pick): leaf_rows() without the free fractions, with the arrays kept here. Inlined
    /// into after_pick(), where a pick first in its level-2 domain runs it: through the generic
    /// proximity_rows() and the hierarchy's arrays, the GPU mode's step is about 5% slower
    /// (perf_env, 64 GPUs, GCC; docs/performance.md).
    GPUPLACE_ALWAYS_INLINE void leaf_proximity(const env_detail::pick_set& picks, std::size_t d, float off) noexcept {
        const std::uint32_t* bounds = bounds1_;
        const std::uint32_t* node_picks = picks.counts(1);
        const std::size_t c0 = children2_[d], c1 = children2_[d + 1];
        with_size(node_size_, [&](auto N) {
            float* prox = buf_.obs.data() + proximity_;
            const float pvs[2] = {off, level_proximity(1)};  // a local, selected by a load (see leaf_rows())
            for (std::size_t n = c0; n < c1; ++n) {
                const std::size_t o = N() > 0 ? n * N() : bounds[n], size = N() > 0 ? N() : bounds[n + 1] - o;
                const float pv = pvs[node_picks[n] != 0];
                if constexpr (N() > 0) detail::fill_const<N()>(prox + o, pv);
                else std::fill_n(prox + o, size, pv);
            }
        });
    }

    /// The proximity features of domain d of level l alone (see domain_rows()).
    void proximity_rows(const env_detail::pick_set& picks, std::size_t l, std::size_t d, float above) noexcept;

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
    domain_map map1_, map2_;                             ///< maps_[1], maps_[2] (when there is a level 2): what a pick reads
    std::vector<float> prox_;                            ///< per level: level_proximity()
    std::vector<std::uint8_t> top_dirty_;                ///< top domains whose rows flush() rewrites
    detail::bounded_vector<std::uint32_t> dirty_tops_;   ///< capacity: the number of top domains
    std::vector<float> request_;                         ///< request(k) for k = 0..G
    obs_layout L_;                                       ///< where everything is written
    std::vector<observed_field> observed_;               ///< the job fields shown (observe_fields())
    level_hierarchy h_;
    // h_'s arrays the step reads, kept here: one load each instead of three (the hierarchy's
    // shared data, then the level's array)
    const std::uint32_t* bounds1_ = nullptr;    ///< level 1's domain boundaries
    const std::uint32_t* bounds2_ = nullptr;    ///< level 2's (a tree: racks), when the hierarchy has it
    const std::uint32_t* children2_ = nullptr;  ///< level 2's domains' first children
    std::size_t node_size_ = 0;                 ///< h_.uniform_size(1)
};

}  // namespace gpuplace

#include "impl/observation_inl.hpp"  // the members that rewrite whole rows
