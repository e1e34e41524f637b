#pragma once
/// \file env.hpp
/// The environment: a scheduling core (env/core.hpp: the simulator, the wait queue, the job being
/// placed), one action front end that turns actions into the core's calls, and the observation
/// writer they share (observation.hpp).
///
/// The GPU action mode (env.action_mode "gpu", the default; env/gpu_mode.hpp) is Proximity-DRL's:
/// Discrete(G + 1), a GPU index or DEFER (index G, when enabled). Picking GPU g adds it to the
/// current job's picks; when they reach the request the job starts and the env moves to the next
/// waiting job that fits, advancing time through arrivals and completions while none does. In the
/// "placement" and "job" modes (env/placement_mode.hpp, env/job_mode.hpp) an action chooses a whole
/// placement of the current job, or which waiting job starts next (placed by a heuristic), among K
/// slots, then DEFER / wait (index K). In the "round" mode (env/round_mode.hpp; docs/rounds.md) time
/// moves in rounds and an action chooses which active job runs in the next round, among K slots,
/// then stop (index K: the round runs). The default reward is -(jobs in system x elapsed time) /
/// time_scale, so an episode's rewards sum to -(sum of JCTs) / time_scale, in every mode.
///
/// On a cluster with GPU types (gpu_types.hpp) a job runs at its slowest GPU's type's speed, and on
/// a heterogeneous one the observation describes the types and env.confine_type may keep a job on
/// one type. docs/architecture.md shows the layers and the path of a step.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "comm.hpp"
#include "config.hpp"
#include "detail/inline.hpp"
#include "env/core.hpp"
#include "env/gpu_mode.hpp"
#include "env/job_mode.hpp"
#include "env/obs_selection.hpp"
#include "env/placement_mode.hpp"
#include "env/round_mode.hpp"
#include "error.hpp"
#include "job.hpp"
#include "metrics.hpp"
#include "observation.hpp"
#include "placement_view.hpp"
#include "round_allocation.hpp"
#include "topology.hpp"

namespace gpuplace {

/// What step() returns.
struct step_result {
    double reward = 0;
    bool terminated = false;  ///< every job of the workload has finished
    bool truncated = false;   ///< a step or time limit was reached first
    double elapsed = 0;       ///< simulated seconds the step advanced (0 for a pick that starts no job)
};

namespace env_detail {
struct round_env_access;  // round_slot_teacher.hpp
}  // namespace env_detail

/// Summary of the episode so far.
struct env_info {
    double time = 0;
    std::size_t steps = 0, jobs_done = 0, jobs_total = 0, queued = 0, running = 0;
    double episode_return = 0;
    /// The episode's jobs whose model the scenario assigned (trace rows that gave none: the
    /// workload's "model" or "model_mix", docs/workloads.md).
    std::size_t models_assigned = 0;
};

/// The environment for topology T, job type J (constructible from TrainingJob, which workloads
/// produce) and communication model C (comm_model: the scenario's, chosen at run time).
template <Topology T = TreeTopology, Job J = TrainingJob, CommModel<T> C = comm_model>
    requires std::constructible_from<J, TrainingJob>
class basic_env {
    using core_type = env_detail::scheduling_core<T, J, C>;

public:
    using topology_type = T;
    using job_type = J;
    using comm_type = C;
    /// What a placer reads (placement_view.hpp).
    using view_type = basic_placement_view<T, J, C>;
    static constexpr std::uint32_t none = cluster_state::no_job;

    /// Builds the env from a scenario. ConfigError on any bad value.
    explicit basic_env(const scenario& s = default_scenario())
        : basic_env(T::from_config(s.topology, "/topology"), comm_of_config<C>(s.comm), s.zoo.make(), s) {}

    /// Builds the env from explicit objects; the scenario gives workload, env and reward options.
    basic_env(T topo, C comm, ModelZoo zoo, scenario s);

    // ---- episode ------------------------------------------------------------------------------

    /// Starts an episode: draws the workload for this seed and advances to the first decision.
    void reset(std::uint64_t seed = 0);

    /// Applies an action. Throws InvalidAction (state unchanged) when the mask forbids it, and
    /// StateError when the episode is over or reset() was never called.
    step_result step(std::int64_t action);

    /// A forked future: a copy that keeps the present (time, the running jobs, the queue, the
    /// current job and its picks) and redraws what the scheduler cannot know from the scenario's
    /// distribution with `seed`: the arrivals to come (as many as in the truth: a new draw of the
    /// workload past its first arrived-so-far many jobs, arriving from now with the draw's gaps; for
    /// a trace, another window of the same files at the same load) and,
    /// with durations hidden, the durations of the jobs present (given the service each attained).
    /// A plain copy of the env keeps the true future instead (hindsight: not causal).
    [[nodiscard]] basic_env fork(std::uint64_t seed) const;

    // ---- buffers ------------------------------------------------------------------------------

    /// The observation: the front end's buffer, or with scenario key "observation" the segments it
    /// chose (env/obs_selection.hpp), copied after every reset and step (on a lazy fork, when read).
    [[nodiscard]] std::span<const float> observation() const noexcept {
        complete_lazy();
        if (sel_.on()) [[unlikely]] return sel_.obs();
        return visit([&](const auto& f) { return f.observation(obs_); });
    }
    [[nodiscard]] std::span<const std::uint8_t> action_mask() const noexcept {
        complete_lazy();
        if (sel_.on()) [[unlikely]] return sel_.mask();
        return visit([&](const auto& f) { return f.action_mask(obs_); });
    }
    /// Lazy observation (placement action mode; no effect in the others): the candidates of a
    /// decision are made only as far as heuristic_action() or step() needs them, the observation
    /// and the mask when read. The same candidates, actions and trajectory, for a rollout whose
    /// policy reads one candidate of each decision (the rollout planners' forks; planner.hpp).
    void set_lazy(bool on) {
        if (!on) complete_lazy();
        if (auto* p = std::get_if<1>(&front_)) p->set_lazy(on, core_, obs_, view_state());
    }
    [[nodiscard]] std::size_t observation_size() const noexcept { return observation().size(); }
    /// G + 1 in the GPU mode, K + 1 (env.slots + 1) in the placement and job modes.
    [[nodiscard]] std::size_t num_actions() const noexcept {
        return visit([&](const auto& f) { return f.num_actions(obs_); });
    }
    /// The DEFER action's index: the last one (= number of GPUs in the GPU mode; wait in the job mode).
    [[nodiscard]] std::int64_t defer_action() const noexcept { return static_cast<std::int64_t>(num_actions() - 1); }
    /// The observation's named segments, in order (the chosen ones with scenario key "observation").
    [[nodiscard]] const std::vector<obs_segment>& observation_layout() const noexcept {
        if (sel_.on()) [[unlikely]] return sel_.layout();
        return visit([](const auto& f) -> const std::vector<obs_segment>& { return f.layout(); });
    }
    /// What an action chooses (env.action_mode).
    [[nodiscard]] action_mode mode() const noexcept { return static_cast<action_mode>(front_.index()); }
    /// Placement mode: the GPUs (sorted) of candidate slot s of the current decision; empty for a
    /// masked slot or in another mode.
    [[nodiscard]] std::span<const gpu_id> candidate(std::size_t s) const noexcept {
        const auto* p = std::get_if<1>(&front_);
        if (!p || s + 1 >= num_actions()) return {};
        complete_lazy();
        return p->candidate(s);
    }
    /// Job and round modes: the job (index into simulator().jobs()) of slot s of the current
    /// decision, or `none` for a masked slot, in the round mode's GPU-count step or in another mode.
    [[nodiscard]] std::uint32_t slot_job(std::size_t s) const noexcept {
        if (s + 1 >= num_actions() || !action_mask()[s]) return none;
        if (const auto* r = std::get_if<3>(&front_)) return r->choosing() == none ? r->slot_job(s) : none;
        const auto* p = std::get_if<2>(&front_);
        return p ? p->slot_job(s) : none;
    }
    /// Round mode: the grants of the allocation being built this round (the locked jobs' first),
    /// and the elastic job whose GPU count the next action chooses (`none` when it chooses a job).
    [[nodiscard]] std::span<const round_grant> round_grants() const noexcept {
        const auto* r = std::get_if<3>(&front_);
        return r ? r->allocation().grants() : std::span<const round_grant>{};
    }
    [[nodiscard]] std::uint32_t round_choosing() const noexcept {
        const auto* r = std::get_if<3>(&front_);
        return r ? r->choosing() : none;
    }
    /// The action placer p (heuristics.hpp) takes now, in this env's action mode: its next GPU in
    /// the GPU mode; in the placement mode the candidate equal to its whole placement (DEFER when
    /// it holds the job back; the first candidate when its placement is none of them); in the job
    /// mode the first slot whose job it would not hold back (wait when it holds them all back).
    template <class P>
    [[nodiscard]] std::int64_t heuristic_action(P& p) const {
        return visit([&](const auto& f) { return f.heuristic_action(core_, obs_, p, view_state()); });
    }
    /// The current job as a placer sees it in the GPU mode: its mask, its picks, whether DEFER is
    /// allowed. Valid until the env is stepped; empty-masked when no job is current.
    [[nodiscard]] view_type placement_view() const {
        const auto mask = obs_.mask();
        const auto picks = mode() == action_mode::gpu ? std::get<0>(front_).picks().gpus() : std::span<const gpu_id>{};
        return view_type(view_state(), core_.has_current() ? core_.current() : 0, mask.first(num_gpus()), picks,
                         mask[num_gpus()] != 0);
    }

    /// Rewrites the whole observation and mask from the state (what reset() does). step() rewrites
    /// only what the action changed, which gives the same values: the buffers belong to the env
    /// between steps and must not be written by anyone else.
    void refresh_observation();

    /// Makes the env write its observation and mask into external buffers (e.g. a slice of a
    /// vector env's contiguous arrays). The current contents are copied over.
    void bind(std::span<float> obs, std::span<std::uint8_t> mask) {
        complete_lazy();
        if (sel_.on()) sel_.bind(obs, mask);  // the front end keeps its own whole buffers
        else visit([&](auto& f) { f.bind(obs_, obs, mask); });
    }

    // ---- state --------------------------------------------------------------------------------

    [[nodiscard]] const T& topology() const noexcept { return core_.topology(); }
    [[nodiscard]] const level_hierarchy& hierarchy() const noexcept { return core_.hierarchy(); }
    [[nodiscard]] const C& comm() const noexcept { return core_.comm(); }
    [[nodiscard]] const ModelZoo& zoo() const noexcept { return core_.zoo(); }
    /// The GPU types of the cluster (untyped: every GPU of the zoo's reference type).
    [[nodiscard]] const gpu_type_map& gpu_types() const noexcept { return core_.gpu_types(); }
    [[nodiscard]] const scenario& config() const noexcept { return core_.config(); }
    [[nodiscard]] const basic_simulator<J>& simulator() const noexcept { return core_.simulator(); }
    [[nodiscard]] const cluster_state& cluster() const noexcept { return core_.cluster(); }
    /// The hardware failure process (scenario "failures"; failures.hpp): which units are down and
    /// when each last failed. Unsized when failures are off.
    [[nodiscard]] const failure_process& failure_state() const noexcept { return core_.failure_state(); }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return core_.num_gpus(); }
    [[nodiscard]] double now() const noexcept { return core_.simulator().now(); }
    [[nodiscard]] std::size_t steps() const noexcept { return steps_; }
    [[nodiscard]] std::uint64_t seed() const noexcept { return core_.seed(); }
    [[nodiscard]] bool terminated() const noexcept { return terminated_; }
    [[nodiscard]] bool truncated() const noexcept { return truncated_; }
    [[nodiscard]] bool done() const noexcept { return terminated_ || truncated_; }
    [[nodiscard]] double episode_return() const noexcept { return episode_return_; }
    /// Whether a job is being placed (false only once the episode is over).
    /// In the round mode: whether the episode is running (an allocation is being built).
    [[nodiscard]] bool has_current() const noexcept {
        return front_.index() == 3 ? started_ && !done() : core_.has_current();
    }
    /// Index (into simulator().jobs()) of the job being placed, or `none`.
    [[nodiscard]] std::uint32_t current_index() const noexcept { return core_.current(); }
    /// The job being placed; StateError when there is none (before reset(), or once the episode is over).
    [[nodiscard]] const J& current_job() const {
        if (!core_.has_current())
            throw StateError(started_ ? "current_job(): the episode is over" : "current_job(): reset() has not been called");
        return core_.job(core_.current());
    }
    /// GPUs picked so far for the current job, in pick order (GPU mode; empty in the others).
    [[nodiscard]] std::span<const gpu_id> picked() const noexcept {
        const auto* p = std::get_if<0>(&front_);
        return p ? p->picks().gpus() : std::span<const gpu_id>{};
    }
    [[nodiscard]] bool is_picked(gpu_id g) const noexcept {
        const auto* p = std::get_if<0>(&front_);
        return p && p->picks().picked(g);
    }
    /// Waiting jobs (indices into simulator().jobs()) in queue order, the current one included.
    [[nodiscard]] std::span<const std::uint32_t> queue() const noexcept { return core_.queue().jobs(); }
    [[nodiscard]] std::span<const job_record> finished() const noexcept { return core_.simulator().finished(); }

    /// Metrics of the jobs finished so far.
    [[nodiscard]] metrics episode_metrics() const { return core_.episode_metrics(); }
    [[nodiscard]] env_info info() const noexcept {
        const auto& sim = core_.simulator();
        return {sim.now(), steps_, sim.finished().size(), sim.jobs().size(), core_.queue().size(), sim.running(), episode_return_,
                core_.extras().models_assigned};
    }

    // ---- declared job fields (job_fields.hpp; a side array: job records do not grow) ------------

    /// Why this env's episodes are shorter than its scenario asks (a trace with fewer jobs than
    /// episode_jobs, workload_source::short_episodes()), or "": the programs print it as a warning.
    [[nodiscard]] std::string short_episodes() const { return core_.workload().short_episodes(); }
    /// The trace a "trace" workload replays when it replays one: its one file, or its files merged
    /// (merge_as); else null.
    [[nodiscard]] const trace* loaded_trace() const noexcept { return core_.workload().loaded(); }

    /// The scenario's declared job fields, in table order.
    [[nodiscard]] const std::vector<job_field>& job_fields() const noexcept { return core_.workload().fields(); }
    /// The value of declared field f of job j (index into simulator().jobs()): a number, a
    /// category's index into field_categories(f), NaN where the job has none.
    [[nodiscard]] double field_value(std::uint32_t j, std::size_t f) const noexcept {
        const auto& x = core_.extras();
        return x.fields[std::size_t(j) * x.width + f];
    }
    /// The categories of declared field f in index order (empty for a number field).
    [[nodiscard]] const std::vector<std::string>& field_categories(std::size_t f) const {
        return core_.workload().dictionary().categories(f);
    }

    /// Whether GPU g can take job j (index into simulator().jobs()) now: free, or, with co-location,
    /// a free slot, enough memory, GPU shares that fit, and only compatible jobs there.
    [[nodiscard]] bool has_room(gpu_id g, std::uint32_t j) const noexcept { return core_.has_room(g, j); }
    /// Expected rate factor of job j on GPU g next to the jobs already there (1 on a free GPU,
    /// 0 where it cannot go).
    [[nodiscard]] double expected_interference(gpu_id g, std::uint32_t j) const noexcept {
        return has_room(g, j) ? env_detail::interference_on(core_.simulator(), g, j) : 0.0;
    }
    /// Communication cost and slowdown the current job would get on `gpus` (sorted ascending).
    [[nodiscard]] comm_result evaluate(std::span<const gpu_id> gpus) const {
        return core_.comm().evaluate(core_.topology(), core_.zoo(), current_job().model, gpus);
    }

    /// Why an action is invalid, or an empty string when it is valid.
    [[nodiscard]] std::string why_invalid(std::int64_t action) const;

private:
    /// Throws what step(action) throws when no episode is running or the mask forbids the
    /// action. (Out of line: building the message inside step() costs every step registers.)
    [[noreturn]] GPUPLACE_NOINLINE void refuse(std::int64_t action) const;

    /// Makes what a lazy placement decision left out (set_lazy): its candidates are a cache of
    /// the state, so this const member may complete them. With scenario key "observation" the
    /// chosen segments are copied then, not at the step (step()): a rollout's base policy reads one
    /// candidate or two, and the copy would make every candidate.
    void complete_lazy() const noexcept {
        if (lazy_pending()) {
            auto& self = const_cast<basic_env&>(*this);
            std::get<1>(self.front_).complete(self.core_, self.obs_, view_state());
            if (sel_.on()) self.gather_selection();
        }
    }
    [[nodiscard]] bool lazy_pending() const noexcept {
        const auto* p = std::get_if<1>(&front_);
        return p && p->pending();
    }

    /// Copies the chosen segments and the mask from the front end's buffers (scenario key "observation").
    GPUPLACE_NOINLINE void gather_selection() noexcept {
        complete_lazy();
        visit([&](const auto& f) { sel_.gather(f.observation(obs_), f.action_mask(obs_)); });
    }

    [[nodiscard]] typename view_type::state view_state() const noexcept {
        return {&core_.topology(), &core_.comm(), &core_.zoo(), &core_.gpu_types(), &core_.simulator(), core_.queue().jobs(),
                core_.config().colocation.gpu_memory_gb, core_.failures() ? &core_.failure_state() : nullptr};
    }

    /// Calls f with the action front end (std::visit's work as a switch: the GPU mode, the hot
    /// one, falls through a compare or two instead of a table of calls; the variant is never
    /// valueless, which said, std::get's own index check folds into the switch's).
    template <class F>
    GPUPLACE_ALWAYS_INLINE decltype(auto) visit(F&& f) {  // one call per step otherwise: the GPU mode's step is the hot path
        switch (front_.index()) {
            case 1: return f(std::get<1>(front_));
            case 2: return f(std::get<2>(front_));
            case 3: return f(std::get<3>(front_));
            default: GPUPLACE_ASSUME(front_.index() == 0); return f(std::get<0>(front_));
        }
    }
    template <class F>
    GPUPLACE_ALWAYS_INLINE decltype(auto) visit(F&& f) const {
        switch (front_.index()) {
            case 1: return f(std::get<1>(front_));
            case 2: return f(std::get<2>(front_));
            case 3: return f(std::get<3>(front_));
            default: GPUPLACE_ASSUME(front_.index() == 0); return f(std::get<0>(front_));
        }
    }

    // What every step reads first, together: a vector env steps many envs in turn, each out of
    // cache, so each cache line a step touches costs a miss.
    std::size_t steps_ = 0;
    double episode_return_ = 0, pending_reward_ = 0;
    bool terminated_ = false, truncated_ = false, started_ = false;
    observation_writer obs_;  ///< the observation and mask (owned, or bound to external memory)
    std::variant<env_detail::gpu_mode<core_type, view_type>, env_detail::placement_mode<core_type, view_type>,
                 env_detail::job_mode<core_type, view_type>, env_detail::round_mode<core_type, view_type>>
        front_;
    core_type core_;
    env_detail::obs_selection sel_;  ///< the segments shown when the scenario chooses them (else off)

    friend struct env_detail::round_env_access;  // round_env_at() (round_slot_teacher.hpp)
};

// The members that do the work, defined outside the class: not inline, so that a program built
// against gpuplace::compiled (impl/extern_templates.hpp) calls the library's instances instead of
// compiling them again.

template <Topology T, Job J, CommModel<T> C>
    requires std::constructible_from<J, TrainingJob>
basic_env<T, J, C>::basic_env(T topo, C comm, ModelZoo zoo, scenario s)
    : core_(std::move(topo), std::move(comm), std::move(zoo), std::move(s)) {
    const auto& cfg = core_.config();
    const auto& e = cfg.env;
    if (e.confine_type && (e.mode != action_mode::gpu || cfg.colocation.enabled))
        throw ConfigError("config /env/confine_type: supported in the gpu action mode without co-location only");
    if (e.round_idle && e.mode != action_mode::round)
        throw ConfigError("config /env/round_idle: supported in the round action mode only (env.action_mode \"" +
                          std::string(to_string(e.mode)) + "\")");
    if (!e.round_advisor.empty() && e.mode != action_mode::round)
        throw ConfigError("config /env/round_advisor: supported in the round action mode only (env.action_mode \"" +
                          std::string(to_string(e.mode)) + "\")");
    if (!e.round_advisor.empty() && e.round_advisor != "class_gittins")
        throw ConfigError("config /env/round_advisor: unknown round advisor \"" + e.round_advisor + "\" (known: class_gittins)");
    if (cfg.rounds.enabled)
        throw ConfigError("config /rounds/enabled: the round policies (\"" + cfg.rounds.policy + "\") run in gpuplace::round_env "
                          "(round_env.hpp), and in the harness by name (named_policy(\"pack+" + cfg.rounds.policy +
                          "\"), gpuplace-eval --queue); this env's action modes decide at events, not in rounds");
    if (e.mode != action_mode::gpu && e.slots < 1)
        throw ConfigError("config /env/slots: 0 (the " + std::string(to_string(e.mode)) + " action mode needs at least 1)");
    obs_ = observation_writer(core_.hierarchy(), e.queue_window, cfg.colocation.enabled, cfg.reward.time_scale,
                              core_.gpu_types().heterogeneous(), cfg.durations.mode == duration_info::hidden, cfg.preemption.enabled);
    if (std::any_of(cfg.job_fields.begin(), cfg.job_fields.end(), [](const job_field& f) { return f.observe; })) {
        if (e.mode == action_mode::job || e.mode == action_mode::round)
            throw ConfigError("config /job_fields: \"observe\" is supported in the gpu and placement action modes (not " +
                              std::string(to_string(e.mode)) + ")");
        std::vector<observation_writer::observed_field> shown;
        for (std::size_t f = 0; f < cfg.job_fields.size(); ++f)
            if (cfg.job_fields[f].observe) shown.push_back({f, cfg.job_fields[f], core_.workload().dictionary().categories(f).size()});
        obs_.observe_fields(std::move(shown));
    }
    if (e.mode == action_mode::placement) front_.template emplace<1>();
    else if (e.mode == action_mode::job) front_.template emplace<2>();
    else if (e.mode == action_mode::round) front_.template emplace<3>();
    visit([&](auto& f) { f.init(core_, obs_); });
    visit([&](auto& f) { sel_.init(f.layout(), cfg.observation, f.num_actions(obs_)); });
}

template <Topology T, Job J, CommModel<T> C>
    requires std::constructible_from<J, TrainingJob>
void basic_env<T, J, C>::reset(std::uint64_t seed) {
    visit([&](auto& f) { f.reset(core_); });
    if (auto* r = std::get_if<3>(&front_)) pending_reward_ = r->begin(core_, seed, obs_, [this] { return view_state(); });
    else pending_reward_ = core_.reset(seed, obs_);
    steps_ = 0;
    episode_return_ = 0;
    truncated_ = false;
    started_ = true;
    // no job to place: every job has finished (a workload of none)
    terminated_ = mode() == action_mode::round ? core_.simulator().all_done() : !core_.has_current();
    refresh_observation();
}

template <Topology T, Job J, CommModel<T> C>
    requires std::constructible_from<J, TrainingJob>
step_result basic_env<T, J, C>::step(std::int64_t action) {
    const double t_start = core_.simulator().now();
    // one visit for the check and the step (the front end's mask, then its step)
    const auto r = visit([&](auto& f) {
        if constexpr (requires { f.ensure(core_, std::size_t{0}, view_state()); })  // lazy: the chosen candidate
            if (f.pending() && action >= 0) f.ensure(core_, std::size_t(action), view_state());
        const auto mask = f.action_mask(obs_);
        if (!started_ || terminated_ || truncated_ || action < 0 || std::size_t(action) >= mask.size() || !mask[std::size_t(action)])
            refuse(action);
        // the rewards add up in the order they arose: the time before this decision's, then the step's
        return f.step(core_, obs_, action, pending_reward_, [this] { return view_state(); });
    });
    pending_reward_ = 0;
    ++steps_;
    if (r.decided && core_.simulator().all_done()) terminated_ = true;  // (a pick alone finishes nothing)
    else if (steps_ >= core_.options().step_limit || core_.simulator().now() >= core_.options().time_limit)
        truncated_ = true;
    episode_return_ += r.reward;
    if (sel_.on() && !lazy_pending()) [[unlikely]] gather_selection();  // a lazy decision: when read (complete_lazy)
    return {r.reward, terminated_, truncated_, core_.simulator().now() - t_start};
}

template <Topology T, Job J, CommModel<T> C>
    requires std::constructible_from<J, TrainingJob>
void basic_env<T, J, C>::refuse(std::int64_t action) const {
    if (!started_) throw StateError("step() called before reset()");
    if (terminated_ || truncated_) throw StateError("step() called on a finished episode; call reset()");
    std::string what = "invalid action " + std::to_string(action);
    if (mode() == action_mode::gpu && action == defer_action()) what += " (DEFER)";
    throw InvalidAction(what + ": " + why_invalid(action));
}

template <Topology T, Job J, CommModel<T> C>
    requires std::constructible_from<J, TrainingJob>
basic_env<T, J, C> basic_env<T, J, C>::fork(std::uint64_t seed) const {
    if (!started_) throw StateError("fork() called before reset()");
    if (mode() == action_mode::round) throw StateError("fork(): the round action mode has no forked futures (copy the env instead)");
    basic_env f(*this);
    f.core_.redraw_future(seed, f.obs_);
    f.refresh_observation();
    return f;
}

template <Topology T, Job J, CommModel<T> C>
    requires std::constructible_from<J, TrainingJob>
void basic_env<T, J, C>::refresh_observation() {
    if (!started_) return;
    visit([&](auto& f) { f.write(core_, obs_, view_state()); });
    if (sel_.on()) gather_selection();
}

template <Topology T, Job J, CommModel<T> C>
    requires std::constructible_from<J, TrainingJob>
std::string basic_env<T, J, C>::why_invalid(std::int64_t action) const {
    if (!started_) return "reset() has not been called";
    if (done()) return "the episode is over";
    complete_lazy();
    return visit([&](const auto& f) { return f.why_invalid(*this, action); });
}

/// The common case: a tree topology, training jobs and the scenario's comm model.
using env = basic_env<>;
/// The same type as env: the comm model is a run-time value (kept for code written when the tree
/// route cost needed an env type of its own).
using tree_route_env = env;

}  // namespace gpuplace

