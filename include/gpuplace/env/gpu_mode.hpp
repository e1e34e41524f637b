#pragma once
/// \file env/gpu_mode.hpp
/// The GPU action mode (env.action_mode "gpu"): Discrete(G + 1), a GPU of the current job, or
/// DEFER (index G, before the first pick). Picking GPU g adds it to the job's picks; when the picks
/// reach the request the job starts. The observation is the observation writer's (observation.hpp),
/// rewritten after a pick, a start or an event only where it changed.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../detail/inline.hpp"
#include "../error.hpp"
#include "../observation.hpp"
#include "../placement_view.hpp"
#include "invalid_action.hpp"
#include "pick_set.hpp"

namespace gpuplace::env_detail {

/// What a front end's step did: the step's reward (the reward it was given, then its own terms),
/// and whether it decided (started or held back a job, so that time may have moved) rather than
/// only picked.
struct front_step {
    double reward = 0;
    bool decided = true;
};

template <class Core, class View>
class gpu_mode {
public:
    void init(const Core& core, const observation_writer& obs) {
        const auto& h = core.hierarchy();
        picks_.resize(h);
        layout_ = obs.layout().segments();
        if (core.gpu_types().heterogeneous()) {
            type_free_.assign(core.gpu_types().num_types(), 0);
            type_speed_.assign(core.gpu_types().num_types(), 0.0);
        }
        confine_ = core.config().env.confine_type && core.gpu_types().heterogeneous();
        typed_rows_ = core.gpu_types().heterogeneous();
        // what makes every decision rewrite the whole observation (see step()), fixed for the env
        whole_ = core.simulator().colocation() || typed_rows_ || core.preemptive() || core.information() != duration_info::oracle;
    }

    [[nodiscard]] std::span<const float> observation(const observation_writer& obs) const noexcept { return obs.obs(); }
    [[nodiscard]] std::span<const std::uint8_t> action_mask(const observation_writer& obs) const noexcept { return obs.mask(); }
    [[nodiscard]] std::size_t num_actions(const observation_writer& obs) const noexcept { return obs.num_gpus() + 1; }
    [[nodiscard]] const std::vector<obs_segment>& layout() const noexcept { return layout_; }
    void bind(observation_writer& obs, std::span<float> o, std::span<std::uint8_t> m) { obs.bind(o, m); }
    [[nodiscard]] const pick_set& picks() const noexcept { return picks_; }

    /// Clears the picks of a finished or new episode.
    void reset(const Core&) noexcept { picks_.clear(); }

    /// The whole observation and mask.
    void write(Core& core, observation_writer& obs, const typename View::state&) noexcept {
        const auto cur = core.current();
        if (core.simulator().colocation()) {
            const std::uint8_t* room = cur != Core::none ? core.room_of(cur) : nullptr;
            obs.gpu_rows_colocation(core.simulator(), picks_, room, cur, core.config().colocation.gpu_memory_gb);
        } else {
            obs.gpu_rows(core.simulator(), picks_, cur != Core::none);
        }
        if (core.information() != duration_info::oracle) obs.time_row(core.simulator(), core.shown(), core.information() == duration_info::hidden);
        obs.defer(defer_allowed(core));
        obs.tail(core.simulator(), core.queue(), cur, core.current_gpus(), picks_.size(), &core.extras());
        if (core.gpu_types().heterogeneous()) write_types(core, obs);
    }

    /// Applies a valid action (the env checked the mask).
    template <class State>
    front_step step(Core& core, observation_writer& obs, std::int64_t action, double reward, State&&) {
        if (action != std::int64_t(obs.num_gpus())) {  // not DEFER
            const auto g = static_cast<gpu_id>(action);
            picks_.add(g);
            if (picks_.size() < core.current_gpus()) {  // a pick alone changes neither the cluster nor time
                if (typed_rows_) write(core, obs, {});  // the mask may depend on the picks' type: all of it
                else {
                    obs.after_pick(picks_, g, core.current_gpus());
                    obs.defer(false);  // DEFER is allowed only before the first pick
                }
                return {reward, false};
            }
            return {decide(core, obs, reward, true), true};
        }
        return {decide(core, obs, reward, false), true};
    }

    /// Why `action` is invalid (the env checked that an episode is running), or "".
    template <class E>
    [[nodiscard]] std::string why_invalid(const E& e, std::int64_t action) const {
        return invalid_gpu_action(e, action);
    }

    /// Placer p's action: its next GPU of the current job, DEFER when it holds the job back.
    template <class P>
    [[nodiscard]] std::int64_t heuristic_action(const Core& core, const observation_writer& obs, P& p,
                                                const typename View::state& s) const {
        const auto G = obs.num_gpus();
        if (!core.has_current()) return std::int64_t(G);
        const auto mask = obs.mask();
        const View v(s, core.current(), mask.first(G), picks_.gpus(), mask[G] != 0);
        const auto a = p.next(v);
        return a < 0 ? std::int64_t(G) : a;
    }

private:
    /// The rest of a step that decides: starts the job on the picks (`start`) or holds it back,
    /// then moves time. Out of line, so that the step inlined into its callers is mostly the pick
    /// (most steps): 8 KB of GCC's code instead of 11 KB (perf_env times both alike).
    GPUPLACE_NOINLINE double decide(Core& core, observation_writer& obs, double reward, bool start) {
        if (start) {
            picks_.sort();
            reward += core.start(picks_.gpus());
            if (!core.simulator().colocation()) obs.update_gpus(core.cluster(), picks_.gpus(), core.simulator().now());
            picks_.clear();
        } else {
            core.defer_current();
        }
        const auto& cl = core.cluster();
        const auto p = core.advance([&](std::span<const gpu_id> gpus) { obs.update_gpus(cl, gpus, core.simulator().now()); });
        reward += p.reward;
        // With co-location room and interference depend on the current job, on a heterogeneous
        // cluster the type features do, once no job is current every mask entry changes, with
        // preemption jobs may have stopped anywhere, and without true durations the time row
        // follows the shown ones: the whole observation. Otherwise the GPUs whose jobs
        // changed were rewritten as they changed (start, advance); what is left are their
        // domains, every remaining time when time moved, and the tail.
        if (whole_ || !core.has_current()) {
            write(core, obs, {});
        } else {
            obs.flush(cl, picks_, core.simulator().now(), p.time_moved);
            obs.defer(defer_allowed(core));
            obs.tail(core.simulator(), core.queue(), core.current(), core.current_gpus(), picks_.size(), &core.extras());
        }
        return reward;
    }

    [[nodiscard]] bool defer_allowed(Core& core) noexcept { return picks_.empty() && core.may_defer(); }

    /// Heterogeneous clusters: the type features and, with confine_type, the mask's GPUs of the
    /// types the current job may use (the type of its first pick, or a type with room for it all).
    void write_types(Core& core, observation_writer& obs) noexcept {
        const auto& types = core.gpu_types();
        const std::size_t G = obs.num_gpus(), NT = types.num_types();
        if (!core.has_current()) return obs.type_rows(types, {});
        const auto& job = core.job(core.current());
        for (std::size_t t = 0; t < NT; ++t) type_speed_[t] = types.speed(core.zoo(), job.model, t, job.num_gpus);
        obs.type_rows(types, type_speed_);
        if (!confine_) return;
        const auto mask = obs.mask();
        if (!picks_.empty()) {
            const auto t0 = types.type_of(picks_.gpus()[0]);
            for (std::size_t g = 0; g < G; ++g)
                if (types.type_of(gpu_id(g)) != t0) mask[g] = 0;
            return;
        }
        std::fill(type_free_.begin(), type_free_.end(), 0);
        for (std::size_t g = 0; g < G; ++g) type_free_[types.type_of(gpu_id(g))] += mask[g];
        for (std::size_t g = 0; g < G; ++g)
            if (type_free_[types.type_of(gpu_id(g))] < core.current_gpus()) mask[g] = 0;
    }

    pick_set picks_;  ///< the current job's GPUs so far
    bool confine_ = false;
    bool typed_rows_ = false;  ///< a heterogeneous cluster: the observation has type rows
    bool whole_ = false;       ///< every decision rewrites the whole observation
    std::vector<obs_segment> layout_;
    std::vector<std::size_t> type_free_;  ///< heterogeneous: scratch per type
    std::vector<double> type_speed_;      ///< heterogeneous: the current job's speed per type
};

}  // namespace gpuplace::env_detail
