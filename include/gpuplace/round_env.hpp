#pragma once
/// \file round_env.hpp
/// Round-based scheduling (docs/rounds.md): basic_round_env is the scheduling core behind the
/// round front end (env/round_front.hpp). At every round boundary a round policy (Gavel's,
/// round_policy_registry.hpp, or an agent) reads view() and returns a round_allocation; step()
/// applies it (keeping, moving, suspending, starting and resuming jobs, the new placements made by
/// a placer on GPUs of each grant's type) and runs the round. The reward is the default env's:
/// -(jobs in system x elapsed time) / time_scale, so an episode's rewards sum to -(sum of JCTs) /
/// time_scale. The scenario's rounds (round_config.hpp) say the round length and the restore
/// times; its env.placer places the jobs when step() is given no placer.

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "comm.hpp"
#include "config.hpp"
#include "detail/rng.hpp"
#include "env/core.hpp"
#include "env/round_front.hpp"
#include "error.hpp"
#include "heuristics.hpp"
#include "job.hpp"
#include "metrics.hpp"
#include "placement_view.hpp"
#include "round_allocation.hpp"
#include "round_policy.hpp"
#include "topology.hpp"

namespace gpuplace {

namespace env_detail {
struct round_env_access;  // round_slot_teacher.hpp
}  // namespace env_detail

template <Topology T = TreeTopology, Job J = TrainingJob, CommModel<T> C = comm_model>
    requires std::constructible_from<J, TrainingJob>
class basic_round_env {
    using core_type = env_detail::scheduling_core<T, J, C>;

public:
    using topology_type = T;
    using job_type = J;
    using comm_type = C;
    /// What a placer reads when the front end places a job (placement_view.hpp).
    using view_type = basic_placement_view<T, J, C>;
    /// A placer behind a function (its plan(view, out)): step() and run() compile the front end's
    /// apply() once for all the placers passed this way (round_runner() runs every named placer so).
    struct any_placer {
        std::function<bool(const view_type&, std::vector<gpu_id>&)> plan_fn;
        bool plan(const view_type& v, std::vector<gpu_id>& out) { return plan_fn(v, out); }
    };

    /// Builds the env from a scenario (its rounds settings; rounds.enabled need not be set).
    /// ConfigError for what rounds do not support: co-location, preemption (rounds replace it).
    /// For a topology a scenario can describe (T::from_config).
    explicit basic_round_env(const scenario& s = default_scenario())
        requires requires { T::from_config(s.topology, "/topology"); }
        : basic_round_env(T::from_config(s.topology, "/topology"), comm_of_config<C>(s.comm), s.zoo.make(), s) {}

    basic_round_env(T topo, C comm, ModelZoo zoo, scenario s) : core_(std::move(topo), std::move(comm), std::move(zoo), checked(std::move(s))) {
        core_.enable_reallocation();
        front_.init(core_, core_.config().rounds);
        set_placer(core_.config().env.placer);
    }

    // ---- episode ------------------------------------------------------------------------------

    /// Starts an episode: draws the workload of `seed` and moves to the first round boundary (the
    /// first arrival).
    void reset(std::uint64_t seed = 0) {
        core_.begin_episode(seed, features{});
        std::visit([&](auto& p) {
            p.reset(seed);
            p.reserve(core_.hierarchy());
        }, placer_);
        episode_return_ = front_.begin(core_, seed);
        rounds_ = 0;
        started_ = true;
    }

    /// A future of this episode, the round mode's counterpart of basic_env::fork() (docs/planning.md,
    /// "Futures"): the present kept bit for bit (time, the active jobs, what each holds and has
    /// done, the rounds' records), the jobs to come redrawn from the scenario's distribution with
    /// `seed` (for a trace, another window of the same files at the same load), and with durations
    /// hidden the active jobs' durations redrawn given the service each attained. What a scheduler
    /// cannot know is all it changes, so a planner on forks is causal. StateError before reset(),
    /// and for a scenario that may make elastic jobs (their bounds are drawn per job).
    [[nodiscard]] basic_round_env fork(std::uint64_t seed) const {
        if (!started_) throw StateError("round_env::fork() called before reset()");
        if (front_.may_be_elastic(core_))
            throw StateError("round_env::fork(): a scenario with elastic jobs (rounds.elastic.share, job fields min_gpus / max_gpus) has no "
                             "forked futures (their GPU bounds are drawn per job); copy the env instead (NOT causal: the true future)");
        basic_round_env f(*this);
        f.core_.redraw_future(seed, features{});
        f.front_.redraw(f.core_, seed);
        return f;
    }
    /// fork(seed) with, where durations are hidden, each active job's duration drawn by
    /// `draw(job, step, u)` instead of from every job's sizes: `job` is the job as a round policy
    /// sees it (round_view::jobs(); what it has done, its class), `step` its ideal step time on
    /// the reference type (seconds), `u` uniform in [0, 1) from the fork's seed. `draw` returns
    /// the job's ideal duration in seconds on the reference type, or NaN to keep the fork's draw
    /// (e.g. gittins_round_policy::draw_duration: the job's class's sizes above what it has done,
    /// the planner's futures, rounds/rollout.hpp). Causal as long as `draw` reads only its
    /// arguments. With durations known it is fork(seed).
    template <class Draw>
        requires std::is_invocable_r_v<double, Draw&, const round_job&, double, double>
    [[nodiscard]] basic_round_env fork(std::uint64_t seed, Draw&& draw) const {
        basic_round_env f = fork(seed);
        if (core_.config().durations.mode != duration_info::hidden) return f;
        const round_view v = f.front_.view(f.core_);
        const auto jobs = v.jobs();
        detail::rng r(detail::mix_seed(seed, 0x636c617373ULL));  // "class"
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const double u = r.uniform(), d = draw(jobs[i], 1.0 / v.reference_throughput(i), u);
            if (std::isfinite(d) && d > 0) f.core_.simulator_for_rounds().set_ideal_duration(jobs[i].job, d);
        }
        return f;
    }

    /// What a round policy reads at this boundary. StateError before reset().
    [[nodiscard]] round_view view() {
        if (!started_) throw StateError("round_env::view() called before reset()");
        return front_.view(core_);
    }

    /// Applies allocation `a` (InvalidAction, nothing changed, when it names a job that is not
    /// active, one twice, another GPU count than the job's or a type the cluster does not have),
    /// placing new placements with `placer` (a heuristic: its plan(view, out)), and runs the round.
    /// Returns the round's reward. StateError when the episode is over or was not started.
    template <class Placer>
    double step(const round_allocation& a, Placer& placer) {
        check_running("step()");
        front_.template apply<view_type>(core_, a, placer, view_state());
        return run_round();
    }
    /// step() with the scenario's placer (env.placer).
    double step(const round_allocation& a) {
        check_running("step()");
        std::visit([&](auto& p) { front_.template apply<view_type>(core_, a, p, view_state()); }, placer_);
        return run_round();
    }
    /// Why allocation `a` cannot be applied now, or "".
    [[nodiscard]] std::string why_invalid(const round_allocation& a) {
        if (!started_) return "reset() has not been called";
        if (done()) return "the episode is over";
        return front_.why_invalid(core_, a);
    }

    /// Runs the episode to its end: `allocate(view, out)` (a round policy's allocate, e.g.
    /// any_round_policy::make(seed)) at every boundary, `placer` placing. Returns the episode's
    /// return. Truncated by env.max_steps (rounds) and env.max_time like the env.
    template <class Allocate, class Placer>
    double run(Allocate&& allocate, Placer& placer) {
        round_allocation a;
        a.reserve(core_.simulator().jobs().size());
        while (!done()) {
            a.clear();
            allocate(front_.view(core_), a);
            step(a, placer);
        }
        return episode_return_;
    }

    /// Whether every job has finished (terminated) or a step / time limit was reached (truncated).
    [[nodiscard]] bool done() const noexcept { return terminated() || truncated(); }
    [[nodiscard]] bool terminated() const noexcept { return started_ && front_.done(core_); }
    [[nodiscard]] bool truncated() const noexcept {
        return started_ && !front_.done(core_) &&
               (rounds_ >= core_.options().step_limit || core_.simulator().now() >= core_.options().time_limit);
    }

    // ---- state --------------------------------------------------------------------------------

    [[nodiscard]] double episode_return() const noexcept { return episode_return_; }
    /// Rounds run so far this episode.
    [[nodiscard]] std::size_t rounds() const noexcept { return rounds_; }
    [[nodiscard]] double now() const noexcept { return core_.simulator().now(); }
    [[nodiscard]] const T& topology() const noexcept { return core_.topology(); }
    [[nodiscard]] const level_hierarchy& hierarchy() const noexcept { return core_.hierarchy(); }
    [[nodiscard]] const ModelZoo& zoo() const noexcept { return core_.zoo(); }
    [[nodiscard]] const gpu_type_map& gpu_types() const noexcept { return core_.gpu_types(); }
    [[nodiscard]] const scenario& config() const noexcept { return core_.config(); }
    [[nodiscard]] const basic_simulator<J>& simulator() const noexcept { return core_.simulator(); }
    [[nodiscard]] const cluster_state& cluster() const noexcept { return core_.cluster(); }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return core_.num_gpus(); }
    /// The active jobs (arrived, not finished), in arrival order.
    [[nodiscard]] std::span<const std::uint32_t> active() const noexcept { return front_.active(); }
    /// The GPU type running job j is on (gpu_type_map's index), or round_job::none.
    [[nodiscard]] std::uint32_t run_type(std::uint32_t j) const noexcept { return front_.run_type(j); }
    /// Per job (index into simulator().jobs()): what rounds did to it.
    [[nodiscard]] std::span<const round_record> round_records() const noexcept { return front_.records(); }
    /// The GPUs job j holds now (0: none; an elastic job's vary).
    [[nodiscard]] std::uint32_t held_gpus(std::uint32_t j) const noexcept { return front_.held(j); }
    /// The GPU counts job j may be granted this episode: [min, max] (its request twice unless elastic).
    [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> gpu_bounds(std::uint32_t j) const noexcept {
        return {front_.elastic().lo(j), front_.elastic().hi(j)};
    }
    /// This episode's elastic jobs, and how many of them had their upper bound capped at their
    /// model's largest measured GPU count (docs/rounds.md).
    struct elastic_summary_t {
        std::size_t elastic = 0, capped = 0;
    };
    [[nodiscard]] elastic_summary_t elastic_summary() const noexcept { return {front_.elastic().elastic(), front_.elastic().capped()}; }
    /// Job j's restore seconds (a move, resize or resume).
    [[nodiscard]] double restore_time(std::uint32_t j) const noexcept { return front_.restore_of(core_.simulator().job(j).model); }

    /// Metrics of the jobs finished so far, with the rounds' (moves, resizes and suspended time
    /// per finished job; restores are in lost_gpu_hours) and the GPU-time efficiency: the finished
    /// jobs' useful GPU-time (each one's request x its ideal duration: the GPU-seconds it needs at
    /// its request, consolidated on the zoo's reference type) over the GPU-seconds they held
    /// (restores, slower types, spread placements and an elastic job's sublinear scaling count
    /// against it). With elastic jobs, utilization counts each run's GPUs.
    [[nodiscard]] metrics episode_metrics() const {
        auto m = core_.episode_metrics();
        m.rounds = true;
        const auto& sim = core_.simulator();
        const auto done = sim.finished();
        if (done.empty()) return m;
        double moves = 0, resizes = 0, suspended = 0, useful = 0, held = 0;
        const auto recs = front_.records();
        for (const auto& r : done) {
            const auto& rr = recs[r.id];
            moves += rr.moves;
            resizes += rr.resizes;
            suspended += rr.suspended_time;
            const auto j = static_cast<std::uint32_t>(r.id);
            useful += double(sim.job(j).num_gpus) * r.ideal_duration * r.share;
            held += sim.attained(j);
        }
        const double n = double(done.size());
        m.avg_moves = moves / n;
        m.avg_resizes = resizes / n;
        m.avg_suspended_time = suspended / n;
        m.gpu_time_efficiency = held > 0 ? useful / held : 0.0;
        if (front_.elastic().elastic() > 0 && m.makespan > 0) {  // a record's num_gpus is its last run's
            m.utilization = held / (double(num_gpus()) * m.makespan);
            m.sm_utilization = useful / (double(num_gpus()) * m.makespan);
        }
        return m;
    }

private:
    friend struct env_detail::round_env_access;  // round_env_at() (round_slot_teacher.hpp)
    /// A started env at the boundary a round front end stands at (the round action mode's, with
    /// its core): the same episode, time, jobs and records, `rounds` rounds counted.
    basic_round_env(const core_type& core, const env_detail::round_front<core_type>& front, std::size_t rounds)
        : core_(core), front_(front), rounds_(rounds), started_(true) {
        set_placer(core_.config().env.placer);
    }

    /// The queue features the core's episode start asks for (rounds observe nothing).
    struct features {
        [[nodiscard]] float request(std::uint32_t) const noexcept { return 0.0f; }
        [[nodiscard]] float squash(double) const noexcept { return 0.0f; }
    };
    using any_env_placer = std::variant<pack_policy, first_fit_policy, load_balance_policy, topology_greedy_policy>;

    static scenario checked(scenario s) {
        if (s.colocation.enabled) throw ConfigError("config /colocation/enabled: rounds run on exclusive GPUs (no co-location)");
        if (s.preemption.enabled)
            throw ConfigError("config /preemption/enabled: rounds decide who runs themselves (a preemptive queue policy cannot run under them)");
        if (!(s.rounds.length > 0)) throw ConfigError("config /rounds/length: " + std::to_string(s.rounds.length) + " (expected > 0 seconds)");
        return s;
    }
    void set_placer(placer_kind k) {
        switch (k) {
            case placer_kind::first_fit: placer_.template emplace<first_fit_policy>(); break;
            case placer_kind::load_balance: placer_.template emplace<load_balance_policy>(); break;
            case placer_kind::topology_greedy: placer_.template emplace<topology_greedy_policy>(); break;
            default: placer_.template emplace<pack_policy>(); break;
        }
    }
    void check_running(const char* what) const {
        if (!started_) throw StateError(std::string("round_env::") + what + " called before reset()");
        if (done()) throw StateError(std::string("round_env::") + what + " called on a finished episode; call reset()");
    }
    double run_round() {
        const double r = front_.run(core_);
        ++rounds_;
        episode_return_ += r;
        return r;
    }
    [[nodiscard]] typename view_type::state view_state() const noexcept {
        return {&core_.topology(), &core_.comm(), &core_.zoo(), &core_.gpu_types(), &core_.simulator(), front_.active(),
                core_.config().colocation.gpu_memory_gb, nullptr};
    }

    core_type core_;
    env_detail::round_front<core_type> front_;
    any_env_placer placer_;
    double episode_return_ = 0;
    std::size_t rounds_ = 0;
    bool started_ = false;
};

/// The common case: a tree topology, training jobs and the scenario's comm model.
using round_env = basic_round_env<>;

}  // namespace gpuplace
