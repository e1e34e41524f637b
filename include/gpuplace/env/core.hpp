#pragma once
/// \file env/core.hpp
/// The scheduling core of the env: the simulator, the wait queue, the job being placed, arrivals
/// and completions, and start(placement) with its reward terms. It knows no action index and no
/// mask: the action front ends (gpu_mode.hpp, placement_mode.hpp, job_mode.hpp) turn actions into
/// its calls, and the observation writer reads its state.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../colocation.hpp"
#include "../comm.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "../gpu_types.hpp"
#include "../job.hpp"
#include "../metrics.hpp"
#include "../model_zoo.hpp"
#include "../reward_registry.hpp"
#include "../simulator.hpp"
#include "../topology.hpp"
#include "../workload_source.hpp"
#include "../detail/feature_math.hpp"
#include "../detail/inline.hpp"
#include "../detail/rng.hpp"
#include "../information.hpp"
#include "discipline.hpp"
#include "duration_knowledge.hpp"
#include "room_index.hpp"
#include "tenancy.hpp"
#include "wait_queue.hpp"

namespace gpuplace::env_detail {

/// What advance() did: the reward of the elapsed time, and whether time moved.
struct progress {
    double reward = 0;
    bool time_moved = false;
};

/// What step() reads of the scenario, copied out of it (its other fields are cold).
struct step_options {
    std::size_t step_limit = ~std::size_t{0};                     ///< max_steps, or none
    double time_limit = std::numeric_limits<double>::infinity();  ///< max_time, or none
    bool allow_defer = true, backfill = true;
    double time_scale = 1, jct = 1, makespan = 0, comm = 0, placement = 0;
};

template <Topology T, Job J, class C>
class scheduling_core {
public:
    static constexpr std::uint32_t none = cluster_state::no_job;

    scheduling_core(T topo, C comm, ModelZoo zoo, scenario s)
        : topo_(std::move(topo)), comm_(std::move(comm)), zoo_(std::move(zoo)), cfg_(std::move(s)) {
        const auto& e = cfg_.env;
        const auto& w = cfg_.reward;
        const std::size_t G = num_gpus();
        if constexpr (requires { comm_.check(topo_); }) comm_.check(topo_);
        opt_ = {e.max_steps ? e.max_steps : ~std::size_t{0}, e.max_time > 0 ? e.max_time : std::numeric_limits<double>::infinity(),
                e.allow_defer, e.backfill, w.time_scale, w.jct, w.makespan, w.comm, w.placement};
        workload_ = workload_source(cfg_.workload, zoo_, G, cfg_.job_fields);  // reads a trace once
        types_ = gpu_type_map(topo_, zoo_);
        if (cfg_.colocation.enabled)
            sim_.set_colocation(std::make_shared<interference_table>(interference_table::of(cfg_.colocation, zoo_)),
                                cfg_.colocation.max_jobs_per_gpu);
        sim_.resize(topo_);
        if (types_.heterogeneous()) type_free_.assign(types_.num_types(), 0);
        workload_.validate(zoo_, G);
        if (cfg_.colocation.enabled) rooms_.reserve(workload_.max_job_kinds(zoo_.size()), G);
        ten_.init(cfg_, workload_.dictionary(), G);
        if (w.deadline_miss != 0 && !ten_.deadlines())
            throw ConfigError("config /reward/deadline_miss: " + std::to_string(w.deadline_miss) +
                              " needs deadlines (/deadlines/enabled): no job of this scenario has a deadline");
        for (const auto& [name, weight] : w.terms) {  // reward terms of one's own, found once
            auto t = find_reward_term(name);
            if (!t) {
                std::string known;
                for (const auto& r : registered_reward_terms()) known += (known.empty() ? "" : ", ") + r->name;
                throw ConfigError("config /reward/" + name + ": no reward term is registered as \"" + name + "\" (registered: " +
                                  (known.empty() ? "none" : known) + ")");
            }
            own_terms_.emplace_back(weight, std::move(t));
        }
        init_information();
        init_failures();
    }

    // ---- episode ------------------------------------------------------------------------------

    /// Draws the workload of `seed` and advances to the first decision; returns the reward of the
    /// time that passed until then. Request features come from `request(k)`.
    template <class Features>
    double reset(std::uint64_t seed, const Features& features) {
        begin_episode(seed, features);
        return advance([](std::span<const gpu_id>) {}).reward;
    }

    /// reset() without advancing to the first decision: the workload of `seed` drawn, time at its
    /// first arrival's, nothing arrived yet. (The round front end, env/round_front.hpp, moves time
    /// itself.)
    template <class Features>
    void begin_episode(std::uint64_t seed, const Features& features);

    /// A forked future (basic_env::fork()): the jobs not arrived yet are those of a new draw of
    /// the workload (with `seed`) past its first arrived-so-far many, arriving from now with the
    /// draw's gaps; with durations hidden, the durations of the
    /// present unfinished jobs are redrawn too, from the sampled sizes above what each attained.
    template <class Features>
    void redraw_future(std::uint64_t seed, const Features& features);

    // ---- the decision -------------------------------------------------------------------------

    [[nodiscard]] bool has_current() const noexcept { return current_ != none; }
    /// The job being placed (index into simulator().jobs()), or `none`.
    [[nodiscard]] std::uint32_t current() const noexcept { return current_; }
    [[nodiscard]] std::uint32_t current_gpus() const noexcept { return cur_gpus_; }
    [[nodiscard]] const J& job(std::uint32_t j) const noexcept { return sim_.job(j); }
    /// The episode's declared job fields (per job, in job order) and models assigned (workload.hpp).
    [[nodiscard]] const episode_extras& extras() const noexcept { return extras_; }
    [[nodiscard]] const workload_source& workload() const noexcept { return workload_; }

    /// Starts the current job on `gpus` (sorted ascending, each with room for it); returns the
    /// placement's reward terms (comm cost and placement score, by their weights).
    double start(std::span<const gpu_id> gpus) {
        const auto j = current_;
        const auto& job = sim_.job(j);
        const comm_result res = types_.typed() ? typed_comm(job, gpus) : comm_.evaluate(topo_, zoo_, job.model, gpus);
        rethrow_comm_error();  // before anything changes
        sim_.start(j, gpus, fail_ ? checkpointing(j, gpus, res.slowdown) : res.slowdown, res.cost);
        queue_.erase(cur_pos_);
        current_ = none;
        if (preempt_) disc_.started(j);
        if (ten_.tenants()) ten_.job_started(j, job.num_gpus);
        double r = -opt_.comm * res.cost;
        if (opt_.placement != 0) {
            const auto b = comm_.bounds(topo_, zoo_, job.model, job.num_gpus);
            const double score = b.worst > b.best ? 1.0 - (res.cost - b.best) / (b.worst - b.best) : 1.0;
            r += opt_.placement * score;
        }
        return r;
    }
    /// Holds the current job back until the next event (DEFER).
    void defer_current() noexcept {
        queue_.defer(current_);
        current_ = none;
    }
    /// Holds every waiting job back until the next event (the job mode's wait).
    void defer_all() noexcept {
        for (auto j : queue_.jobs()) queue_.defer(j);
        current_ = none;
    }
    /// Makes the waiting job at queue position i the current one (the job mode's choice).
    void choose(std::size_t i) noexcept { set_current(i); }
    /// Any waiting job that fits may become current, whatever env.backfill says (the job mode
    /// chooses among every waiting job that fits).
    void always_backfill() noexcept { opt_.backfill = true; }

    /// Advances to the next decision point through the simulator's events: arrivals join the
    /// queue; `finished(gpus)` is called with the GPUs of each job that finishes (without
    /// co-location). Returns the reward of the elapsed time.
    template <class OnFinish>
    progress advance(OnFinish&& finished) {
        double area = 0, elapsed = 0, penalty = 0;
        bool moved = false;
        for (;;) {
            if (preempt_ && disc_.stale()) decide();
            std::size_t i = find_waiting();
            if (i != wait_queue::npos) {
                set_current(i);
                break;
            }
            if (!sim_.has_events() && !(fail_ && fails_.any_down() && !queue_.empty())) {
                // Nothing fits and nothing will happen: only deferred jobs can be waiting.
                if (!queue_.empty()) {
                    queue_.next_epoch();
                    i = find_waiting_rare();
                }
                set_current(i);
                break;  // found one, or the episode is over (all finished)
            }
            if (ten_.tenants()) ten_.account(sim_.now());
            const double until = preempt_ ? next_decision() : basic_simulator<J>::never;
            const auto ev = sim_.advance(fail_ ? std::min(until, fails_.next_time()) : until);
            for (auto j = ev.first_arrival; j < ev.first_arrival + ev.arrivals; ++j)
                queue_.insert(j, sim_.job(j).num_gpus, [this](std::uint32_t a, std::uint32_t b) { return queue_less(a, b); });
            if (!sim_.colocation())
                for (const auto& r : ev.finished) finished(sim_.gpus_of(r));
            if (ten_.tenants()) count_tenants(ev);
            if (preempt_) tell_discipline(ev);
            if (cfg_.reward.realities()) penalty += reality_terms(ev.finished);
            if (fail_ && fails_.next_time() <= sim_.now()) hardware_events(finished);
            area += ev.area;
            if (ev.in_makespan) elapsed += ev.elapsed;
            moved = true;
            queue_.next_epoch();
        }
        return {-(opt_.jct * area + opt_.makespan * elapsed) / opt_.time_scale - penalty, moved};
    }

    /// Whether the current job may be held back: DEFER is enabled and an event is pending or
    /// another waiting job fits (else DEFER would stall the episode).
    [[nodiscard]] bool may_defer() noexcept {
        if (!opt_.allow_defer || current_ == none) return false;
        if (sim_.has_events()) return true;
        return find_waiting_rare(current_) != wait_queue::npos;
    }
    /// Whether the job mode's wait is allowed: DEFER is enabled and an event is pending.
    [[nodiscard]] bool may_wait() const noexcept { return opt_.allow_defer && sim_.has_events(); }
    /// Whether waiting job j could start now.
    [[nodiscard]] bool fits_now(std::uint32_t j) noexcept {
        const auto k = sim_.job(j).num_gpus;
        if (k <= cluster().free_gpus()) return true;
        return sim_.colocation() && room_hosts(rooms_.class_of(j)) >= k;
    }
    /// Whether GPU g can take job j now (free, or with co-location room for it).
    [[nodiscard]] bool has_room(gpu_id g, std::uint32_t j) const noexcept {
        return env_detail::has_room(sim_, g, j, cfg_.colocation.gpu_memory_gb);
    }
    /// Co-location: which GPUs have room for job j (G entries), brought up to date.
    [[nodiscard]] const std::uint8_t* room_of(std::uint32_t j) noexcept {
        const auto c = rooms_.class_of(j);
        (void)room_hosts(c);
        return rooms_.room(c);
    }

    // ---- state --------------------------------------------------------------------------------

    [[nodiscard]] const T& topology() const noexcept { return topo_; }
    [[nodiscard]] const level_hierarchy& hierarchy() const noexcept { return topo_.hierarchy(); }
    [[nodiscard]] const C& comm() const noexcept { return comm_; }
    /// Throws the first error the comm model's calls met since the last check (a model of one's
    /// own written in Python: its calls answer neutral values meanwhile); nothing for the others.
    void rethrow_comm_error() const {
        if constexpr (requires { comm_.rethrow_error(); }) comm_.rethrow_error();
    }
    [[nodiscard]] const ModelZoo& zoo() const noexcept { return zoo_; }
    [[nodiscard]] const gpu_type_map& gpu_types() const noexcept { return types_; }
    [[nodiscard]] const scenario& config() const noexcept { return cfg_; }
    [[nodiscard]] const step_options& options() const noexcept { return opt_; }
    [[nodiscard]] const basic_simulator<J>& simulator() const noexcept { return sim_; }
    [[nodiscard]] const cluster_state& cluster() const noexcept { return sim_.cluster(); }
    [[nodiscard]] const wait_queue& queue() const noexcept { return queue_; }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return topo_.hierarchy().num_gpus(); }
    [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }
    /// The duration of job j the scheduler is shown (durations.mode; 0 when hidden).
    [[nodiscard]] double shown(std::uint32_t j) const noexcept { return shown_[j]; }
    [[nodiscard]] std::span<const double> shown() const noexcept { return shown_; }
    /// What the scheduler knows of durations, and whether it preempts.
    [[nodiscard]] duration_info information() const noexcept { return cfg_.durations.mode; }
    [[nodiscard]] bool preemptive() const noexcept { return preempt_; }
    /// The jobs' tenants, classes and deadlines (env/tenancy.hpp; on() false when none is on).
    [[nodiscard]] const tenancy& tenancy_state() const noexcept { return ten_; }
    /// Whether hardware fails (scenario "failures"), and the failure process (failures.hpp).
    [[nodiscard]] bool failures() const noexcept { return fail_; }
    [[nodiscard]] const failure_process& failure_state() const noexcept { return fails_; }

    /// Metrics of the jobs finished so far.
    [[nodiscard]] metrics episode_metrics() const;

    // ---- reallocation (the round front end, env/round_front.hpp; no action mode calls these) ----

    /// Lets the simulator suspend, resume and move jobs (preemption's machinery, without a
    /// discipline: the caller decides). Before reset().
    void enable_reallocation() { sim_.set_preemption({0, 0}); }
    /// The simulator, for a front end that moves time and jobs itself.
    [[nodiscard]] basic_simulator<J>& simulator_for_rounds() noexcept { return sim_; }
    /// What job j would get on `gpus` (sorted ascending): the comm model's cost and slowdown, on
    /// typed GPUs with its slowest GPU type's speed (as start() prices the current job).
    [[nodiscard]] comm_result price(std::uint32_t j, std::span<const gpu_id> gpus) const noexcept {
        const auto& job = sim_.job(j);
        return types_.typed() ? typed_comm(job, gpus) : comm_.evaluate(topo_, zoo_, job.model, gpus);
    }
    /// Job j's ideal step time on cluster GPU type t (its GPU count, the most compact placement).
    [[nodiscard]] double ideal_step_time_on(std::uint32_t j, std::size_t t) const noexcept {
        const auto& job = sim_.job(j);
        return comm_.ideal_step_time(topo_, types_.typed() ? types_.zoo_of(t) : zoo_, job.model, job.num_gpus);
    }
    /// Job j's ideal step time on type t at k GPUs (an elastic job's other counts).
    [[nodiscard]] double ideal_step_time_on(std::uint32_t j, std::size_t t, std::uint32_t k) const noexcept {
        return comm_.ideal_step_time(topo_, types_.typed() ? types_.zoo_of(t) : zoo_, sim_.job(j).model, k);
    }
    /// price() of job j on `gpus` of another count than its request (an elastic job): the slowdown
    /// is the step time there over its ideal step time at its request on the reference type (the
    /// unit its work is counted in), so the simulator runs it at its rate on those GPUs.
    [[nodiscard]] comm_result price_resized(std::uint32_t j, std::span<const gpu_id> gpus) const noexcept {
        const auto& job = sim_.job(j);
        const auto k = static_cast<std::uint32_t>(gpus.size());
        const auto& z = types_.typed() ? types_.zoo_of(types_.slowest(zoo_, job.model, gpus)) : zoo_;
        auto res = comm_.evaluate(topo_, z, job.model, gpus);
        res.slowdown *= comm_.ideal_step_time(topo_, z, job.model, k) / comm_.ideal_step_time(topo_, zoo_, job.model, job.num_gpus);
        return res;
    }
    /// Job j's ideal step time on the zoo's reference type (its ideal duration over its steps).
    [[nodiscard]] double ideal_step_time_ref(std::uint32_t j) const noexcept {
        const auto& job = sim_.job(j);
        return comm_.ideal_step_time(topo_, zoo_, job.model, job.num_gpus);
    }

private:
    [[nodiscard]] bool queue_less(std::uint32_t a, std::uint32_t b) const noexcept {
        switch (cfg_.env.order) {
            case queue_order::fifo: return a < b;
            case queue_order::sjf: {
                const double ia = shown_[a], ib = shown_[b];
                return ia < ib || (ia == ib && a < b);
            }
            case queue_order::fewest_gpus: {
                const auto ka = sim_.job(a).num_gpus, kb = sim_.job(b).num_gpus;
                return ka < kb || (ka == kb && a < b);
            }
            default: return a < b;  // a preemptive discipline reorders the queue at every decision (decide())
        }
    }

    /// Preemption: when the discipline decides next. (This and the next out of line: advance()
    /// is on every decision's path, they only with preemption.)
    GPUPLACE_NOINLINE double next_decision() const noexcept { return disc_.next_decision(sim_, queue_.jobs(), sim_.now()); }
    /// Tenants: the arrivals and completions of `ev` into each tenant's demand and holding (out of
    /// line: off by default).
    GPUPLACE_NOINLINE void count_tenants(const advance_result& ev) noexcept {
        for (auto j = ev.first_arrival; j < ev.first_arrival + ev.arrivals; ++j) ten_.job_arrived(j, sim_.job(j).num_gpus);
        for (const auto& r : ev.finished) ten_.job_finished(std::uint32_t(r.id), sim_.job(std::uint32_t(r.id)).num_gpus);
    }
    /// Tenants, classes, deadlines: each job's from its fields, from job `from` on.
    void describe_tenancy(std::uint32_t from, std::uint64_t seed);
    /// Preemption: tells the discipline the arrivals and completions of an event.
    GPUPLACE_NOINLINE void tell_discipline(const advance_result& ev);

    /// On typed GPUs, the comm model's result for `job` on `gpus` with the slowdown of the slowest
    /// GPU's type: the comm model on that type's zoo, and that type's ideal step time over the
    /// reference type's (the job's ideal duration is on the reference type). Out of line: start()
    /// is on every step's path, this branch only on typed clusters.
    GPUPLACE_NOINLINE comm_result typed_comm(const J& job, std::span<const gpu_id> gpus) const noexcept;

    /// Brings job class c's room up to date; returns how many GPUs have room for it (co-location).
    std::uint32_t room_hosts(std::uint32_t c) noexcept { return rooms_.sync(c, sim_, cfg_.colocation.gpu_memory_gb); }

    /// The queue position of the next job to place (other than `skip`), or npos: strict
    /// head-of-line looks at the first non-deferred waiting job only; backfill at the first that fits.
    /// (Inlined: a call per decision otherwise, about 20 instructions of the step's ~1,000.)
    [[nodiscard]] GPUPLACE_ALWAYS_INLINE std::size_t find_waiting(std::uint32_t skip = none) noexcept {
        // Every job requests >= 1 GPU: when no GPU has a free slot (without co-location: no GPU is
        // free) nothing fits, and the (possibly long) queue need not be scanned.
        const auto& cl = cluster();
        if (cl.gpus_with_free_slot() == 0) return wait_queue::npos;
        std::size_t free = cl.free_gpus();
        if (cfg_.env.confine_type && types_.heterogeneous()) free = std::min(free, most_free_of_a_type());
        if (preempt_) return find_in_run_set(skip, free);
        return queue_.find(skip, free, opt_.backfill, !sim_.colocation(), [&](std::uint32_t j) {
            const auto k = sim_.job(j).num_gpus;
            return k <= free || room_hosts(rooms_.class_of(j)) >= k;
        });
    }

    /// find_waiting() where it is rarely reached (no event pending), out of line: the scan is
    /// then inlined once, into advance()'s loop.
    GPUPLACE_NOINLINE std::size_t find_waiting_rare(std::uint32_t skip = none) noexcept { return find_waiting(skip); }

    /// find_waiting() with preemption: only the jobs the discipline chose. (Out of line, so that
    /// the scan of the common path is inlined into find_waiting().)
    GPUPLACE_NOINLINE std::size_t find_in_run_set(std::uint32_t skip, std::size_t free) noexcept;

    /// confine_type: the most free GPUs of one type.
    [[nodiscard]] std::size_t most_free_of_a_type() noexcept;

    /// Whether job j has finished.
    [[nodiscard]] bool is_finished(std::uint32_t j) const noexcept;

    /// The discipline's decision: which jobs run; the running jobs left out are suspended and wait
    /// again, the waiting ones in priority order.
    void decide();

    /// The observation's duration feature (detail/feature_math.hpp, as observation_writer::squash()).
    [[nodiscard]] float squash(double seconds) const noexcept { return detail::squash_duration(seconds, cfg_.reward.time_scale); }

    /// The shown durations and queue features of jobs `from` onwards.
    template <class Features>
    void describe(std::uint32_t from, const Features& features);

    /// The duration the scheduler is shown of job j (durations.mode).
    [[nodiscard]] double shown_duration(std::uint32_t j) const {
        return known_.shown(cfg_.durations, j, sim_.job(j), sim_.ideal_duration(j), seed_);
    }
    /// Each job's ideal duration on its GPUs, consolidated.
    template <class Jb>
    [[nodiscard]] double ideal_of(const Jb& j) const {
        return double(j.work) * comm_.ideal_step_time(topo_, zoo_, j.model, j.num_gpus);
    }

    /// Failures (env/core_failures_inl.hpp): checks the scenario and turns them on; the failures
    /// and repairs due now (each failure stops the jobs on its GPUs, which wait again); the
    /// checkpoint interval of job j's run on `gpus`, set in the simulator, and its slowdown with
    /// the checkpoint writes.
    void init_failures();
    /// Trace outcomes (declared job fields "outcome" and "run_time"): per job of the episode, the
    /// run time after which it ends unfinished (failed or killed in its trace), NaN otherwise.
    void read_outcomes();
    template <class OnFinish>
    GPUPLACE_NOINLINE void hardware_events(OnFinish& finished);
    GPUPLACE_NOINLINE double checkpointing(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown) noexcept;

    /// The reward terms of cluster realities (reward_config's deadline_miss, wasted, unfairness) of
    /// the jobs that just finished, as a penalty (positive). Off the default path: called only when
    /// a weight is set.
    /// Reward terms of one's own (reward_registry.hpp) count too, each + weight x term(job).
    GPUPLACE_NOINLINE double reality_terms(std::span<const job_record> done) const {
        const auto& w = cfg_.reward;
        double p = 0;
        for (const auto& r : done) {
            if (w.deadline_miss != 0 && r.end > ten_.deadline(r.id)) p += w.deadline_miss;
            if (w.wasted != 0) p += w.wasted * (r.lost_gpu_time + r.checkpoint_gpu_time) / w.time_scale;
            if (w.unfairness != 0) p += w.unfairness * std::max(0.0, r.finish_time_fairness(num_gpus()) - 1.0);
            for (const auto& [weight, term] : own_terms_) p -= weight * term->value(r, {num_gpus(), w.time_scale, r.end});
        }
        return p;
    }

    /// Checks the durations and preemption options and prepares the discipline.
    void init_information();
    void sample_durations();

    /// Makes the waiting job at queue position i (or none) the current one. The queue does not
    /// change until it starts or is deferred (jobs arrive only in advance()), so i stays its position.
    void set_current(std::size_t i) noexcept {
        if (i == wait_queue::npos) {
            current_ = none;
            cur_gpus_ = 0;
            return;
        }
        cur_pos_ = i;
        current_ = queue_.job_at(i);
        cur_gpus_ = queue_.gpus_at(i);
    }

    // Hot state first and together (see basic_env's members).
    std::uint32_t current_ = none;
    std::uint32_t cur_gpus_ = 0;  ///< GPUs the current job requests
    std::size_t cur_pos_ = 0;     ///< the current job's position in the queue
    step_options opt_;
    wait_queue queue_;  ///< waiting jobs, the current one included
    basic_simulator<J> sim_;
    T topo_;
    C comm_;
    ModelZoo zoo_;
    // cold
    scenario cfg_;
    workload_source workload_;
    std::vector<TrainingJob> gen_;  ///< the workload's jobs of the episode (the simulator makes its own J from them)
    episode_extras extras_;         ///< what they carry besides: declared fields, models assigned (a side array)
    room_index rooms_;              ///< co-location: which GPUs have room for each class of jobs
    std::uint64_t seed_ = 0;
    gpu_type_map types_;                  ///< the GPUs' types (untyped: the zoo's reference type)
    std::vector<std::size_t> type_free_;  ///< heterogeneous: scratch per type
    mutable std::vector<double> scratch_;
    // what the scheduler knows and may do (information.hpp)
    std::vector<double> shown_;  ///< per job: the duration the scheduler is shown
    bool preempt_ = false;
    discipline disc_;  ///< preemption: the run set
    tenancy ten_;      ///< tenants, classes and deadlines (off by default)
    duration_knowledge known_;  ///< the shown durations and the sampled size distribution
    bool fail_ = false;
    failure_process fails_;  ///< failures: when each unit fails and is repaired
    std::size_t outcome_field_ = ~std::size_t{0}, run_time_field_ = ~std::size_t{0};  ///< trace outcomes' fields, or npos
    std::size_t interval_field_ = ~std::size_t{0}, cost_field_ = ~std::size_t{0};     ///< per-job checkpoint fields, or npos
    std::vector<double> cut_;  ///< trace outcomes: per job, read_outcomes()'s run time
    /// Reward terms of one's own the scenario weighs (reward_registry.hpp), with their weights.
    std::vector<std::pair<double, std::shared_ptr<const registered_reward_term>>> own_terms_;
};

}  // namespace gpuplace::env_detail

#include "core_inl.hpp"  // the members no decision runs, and the off-by-default branches
#include "core_failures_inl.hpp"  // failures' members
