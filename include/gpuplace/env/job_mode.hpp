#pragma once
/// \file env/job_mode.hpp
/// The job action mode (env.action_mode "job"): Discrete(K + 1), the first K waiting jobs in queue
/// order that fit now, then wait (until the next arrival or completion; allowed with
/// env.allow_defer when an event is pending). The chosen job is placed by env.placer. Per slot
/// ("slot_<name>", K values each): valid, request, ideal_duration, comm_intensity, wait,
/// fits_node (a level-1 domain has room for it), fits_rack (a top-level domain has); then
/// "cluster" (free GPUs, empty level-1 domains, most free in one, most free in a top-level
/// domain; as fractions) and the GPU mode's "global" segment.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../heuristics.hpp"
#include "../observation.hpp"
#include "gpu_mode.hpp"
#include "slots.hpp"

namespace gpuplace {

inline constexpr std::string_view slot_feature_names[] = {"valid",  "request",   "ideal_duration", "comm_intensity",
                                                          "wait",   "fits_node", "fits_rack"};
inline constexpr std::string_view cluster_feature_names[] = {"free_gpus", "empty_nodes", "node_free_max", "rack_free_max"};

namespace env_detail {

template <class Core, class View>
class job_mode : public slot_front_end {
public:
    void init(Core& core, const observation_writer& obs) {
        const auto& h = core.hierarchy();
        G_ = h.num_gpus();
        const std::size_t K = core.config().env.slots;
        placer_ = core.config().env.placer;
        core.always_backfill();
        obs_segment cluster{"cluster", 0, std::size(cluster_feature_names), {}, {}};
        for (auto n : cluster_feature_names) cluster.fields.emplace_back(n);
        constexpr obs_part parts[] = {obs_part::global};
        slots_.init(K, "slot_", slot_feature_names, obs.layout(), parts, &cluster);
        cluster_off_ = K * std::size(slot_feature_names);
        vmask_.assign(G_, 0);
        out_.reserve(G_);
        job_.assign(K, 0);
        pos_.assign(K, 0);
        reserve_placers(h);
    }

    void reset(const Core&) noexcept {}
    /// The job (index into simulator().jobs()) of slot s.
    [[nodiscard]] std::uint32_t slot_job(std::size_t s) const noexcept { return job_[s]; }

    /// The slots of the current decision, their observation and the mask.
    void write(Core& core, const observation_writer& obs, const typename View::state&) {
        slots_.clear();
        n_ = 0;
        if (!core.has_current()) return;
        const auto& h = core.hierarchy();
        const auto& cl = core.cluster();
        const auto& q = core.queue();
        const std::size_t N = h.num_domains(1), top = h.num_levels() - 1;
        std::size_t node_max = 0, top_max = 0, empty = 0;
        for (std::size_t n = 0; n < N; ++n) {
            node_max = std::max<std::size_t>(node_max, cl.free_in(1, n));
            empty += cl.free_in(1, n) == h.size(1, n);
        }
        for (std::size_t r = 0; r < h.num_domains(top); ++r) top_max = std::max<std::size_t>(top_max, cl.free_in(top, r));
        const double now = core.simulator().now();
        const auto jobs = q.jobs();
        for (std::size_t i = 0; i < jobs.size() && n_ < slots_.slots(); ++i) {
            const auto j = jobs[i];
            if (q.deferred(j) || !core.fits_now(j)) continue;
            job_[n_] = j;
            pos_[n_] = i;
            const auto& w = q.info(j);
            const std::size_t k = q.gpus_at(i);
            const float v[] = {1.0f, w.request_feat, w.ideal_feat, w.comm_feat, obs.squash(now - w.submit),
                               node_max >= k ? 1.0f : 0.0f, top_max >= k ? 1.0f : 0.0f};
            slots_.put(n_, v);
            ++n_;
        }
        float* c = slots_.obs().data() + cluster_off_;
        c[0] = float(cl.free_gpus()) / float(G_);
        c[1] = float(empty) / float(N);
        c[2] = float(node_max) / float(h.max_size(1));
        c[3] = float(top_max) / float(h.max_size(top));
        obs.global_segment(slots_.context(obs_part::global), core.simulator(), q);
        slots_.mask()[slots_.slots()] = core.may_wait();
    }

    /// Starts the chosen job where env.placer places it, or waits (every waiting job is held back
    /// until the next event).
    template <class State>
    front_step step(Core& core, observation_writer& obs, std::int64_t action, double reward, State&& state) {
        const typename View::state st = state();
        const auto s = static_cast<std::size_t>(action);
        if (s == slots_.slots()) {
            core.defer_all();
        } else {
            core.choose(pos_[s]);
            place(core, s, st);
            std::sort(out_.begin(), out_.end());
            reward += core.start(out_);
        }
        reward += core.advance([](std::span<const gpu_id>) {}).reward;
        write(core, obs, st);
        return {reward, true};
    }

    template <class E>
    [[nodiscard]] std::string why_invalid(const E&, std::int64_t action) const {
        return slots_.why_invalid(action, "queue slots", "wait", "job (" + std::to_string(n_) + " waiting jobs fit now)",
                                  "(env.allow_defer is off, or it would stall the episode: no event is pending)");
    }

    /// Placer p's action: the first slot whose job it would not hold back, where the GPU mode would
    /// let it hold the job back (DEFER allowed while an event is pending or another job fits);
    /// wait when it holds them all back.
    template <class P>
    [[nodiscard]] std::int64_t heuristic_action(const Core& core, const observation_writer&, P& p,
                                                const typename View::state& st) const {
        const auto K = slots_.slots();
        const bool defer = core.config().env.allow_defer;
        for (std::size_t s = 0; s < n_; ++s) {
            room(core, job_[s]);
            if (p.next(View(st, job_[s], vmask_, {}, defer && (core.simulator().has_events() || s + 1 < n_))) >= 0)
                return std::int64_t(s);
        }
        return slots_.mask()[K] ? std::int64_t(K) : slots_.first_valid();
    }

private:
    void room(const Core& core, std::uint32_t j) const {
        for (std::size_t g = 0; g < G_; ++g) vmask_[g] = static_cast<std::uint8_t>(core.has_room(gpu_id(g), j));
    }

    /// out_ = env.placer's placement of slot s's job (it fits, so the placer places it whole).
    void place(const Core& core, std::size_t s, const typename View::state& st) {
        room(core, job_[s]);
        const View v(st, job_[s], vmask_, {}, false);
        switch (placer_) {
            case placer_kind::pack: pack_.plan(v, out_); break;
            case placer_kind::first_fit: ff_.plan(v, out_); break;
            case placer_kind::load_balance: lb_.plan(v, out_); break;
            case placer_kind::topology_greedy: tg_.plan(v, out_); break;
        }
    }

    std::size_t G_ = 0, n_ = 0, cluster_off_ = 0;
    placer_kind placer_ = placer_kind::pack;
    mutable std::vector<std::uint8_t> vmask_;  ///< the GPUs with room for a slot's job
    std::vector<gpu_id> out_;
    std::vector<std::uint32_t> job_;  ///< per slot: its job
    std::vector<std::size_t> pos_;    ///< per slot: its job's queue position
};

}  // namespace env_detail
}  // namespace gpuplace
