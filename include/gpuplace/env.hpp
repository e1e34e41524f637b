#pragma once
/// \file env.hpp
/// The environment: a multi-GPU job's GPUs are picked one at a time under an action mask.
///
/// Action space Discrete(G + 1): a GPU index, or DEFER (index G, when enabled). Picking GPU g adds
/// it to the current job's picks P; when |P| reaches the request the job starts and the env moves
/// to the next waiting job that fits, advancing time through arrivals and completions while none
/// does. The default reward is -(jobs in system x elapsed time) / time_scale, so an episode's
/// rewards sum to -(sum of JCTs) / time_scale. The observation is described in observation.hpp.
///
/// That is the GPU action mode (env.action_mode "gpu", the default). In the "placement" and "job"
/// modes an action chooses a whole placement of the current job, or which waiting job starts next
/// (placed by a heuristic), among K slots, then DEFER / wait (index K); the chosen GPUs are then
/// picked as in the GPU mode, so the simulator, metrics and reward are the same
/// (detail/action_layer.hpp describes the choices and their observation).
///
/// On a cluster with GPU types (gpu_types.hpp) a job runs at its slowest GPU's type's speed, and on
/// a heterogeneous one the observation describes the types and env.confine_type may keep a job on
/// one type.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "colocation.hpp"
#include "comm.hpp"
#include "config.hpp"
#include "detail/action_layer.hpp"
#include "detail/invalid_action.hpp"
#include "detail/pick_set.hpp"
#include "detail/room_index.hpp"
#include "detail/wait_queue.hpp"
#include "error.hpp"
#include "gpu_types.hpp"
#include "job.hpp"
#include "metrics.hpp"
#include "model_zoo.hpp"
#include "observation.hpp"
#include "simulator.hpp"
#include "topology.hpp"
#include "workload.hpp"

namespace gpuplace {

/// What step() returns.
struct step_result {
    double reward = 0;
    bool terminated = false;  ///< every job of the workload has finished
    bool truncated = false;   ///< a step or time limit was reached first
    double elapsed = 0;       ///< simulated seconds the step advanced (0 for a pick that starts no job)
};

/// Summary of the episode so far.
struct env_info {
    double time = 0;
    std::size_t steps = 0, jobs_done = 0, jobs_total = 0, queued = 0, running = 0;
    double episode_return = 0;
};

/// The environment for topology T, job type J (constructible from TrainingJob, which workloads
/// produce) and communication model C.
template <Topology T = TreeTopology, Job J = TrainingJob, CommModel<T> C = RingAllReduce>
    requires std::constructible_from<J, TrainingJob>
class basic_env {
public:
    using topology_type = T;
    using job_type = J;
    using comm_type = C;
    static constexpr std::uint32_t none = cluster_state::no_job;

    /// Builds the env from a scenario. Throws ConfigError when the scenario's comm model is not C,
    /// or on any bad value.
    explicit basic_env(const scenario& s = default_scenario())
        : basic_env(T::from_config(s.topology, "/topology"), make_comm(s.comm), s.zoo.make(), s) {}

    /// Builds the env from explicit objects; the scenario gives workload, env and reward options.
    basic_env(T topo, C comm, ModelZoo zoo, scenario s)
        : topo_(std::move(topo)), comm_(std::move(comm)), zoo_(std::move(zoo)), cfg_(std::move(s)) {
        const auto& e = cfg_.env;
        const auto& w = cfg_.reward;
        const std::size_t G = topo_.num_gpus();
        opt_ = {e.max_steps ? e.max_steps : ~std::size_t{0}, e.max_time > 0 ? e.max_time : std::numeric_limits<double>::infinity(),
                e.allow_defer, e.backfill, w.time_scale, w.jct, w.makespan, w.comm, w.placement};
        workload_ = workload_source(cfg_.workload, zoo_, G);  // reads a trace once
        types_ = gpu_type_map(topo_, zoo_);
        if (e.confine_type && (e.mode != action_mode::gpu || cfg_.colocation.enabled))
            throw ConfigError("config /env/confine_type: supported in the gpu action mode without co-location only");
        if (cfg_.colocation.enabled)
            sim_.set_colocation(std::make_shared<interference_table>(interference_table::of(cfg_.colocation, zoo_)),
                                cfg_.colocation.max_jobs_per_gpu);
        sim_.resize(topo_);
        picks_.resize(topo_);
        obs_ = observation_writer(topo_, e.queue_window, cfg_.colocation.enabled, w.time_scale, types_.heterogeneous());
        layout_ = obs_.layout().segments();
        if (types_.heterogeneous()) {
            type_free_.assign(types_.num_types(), 0);
            type_speed_.assign(types_.num_types(), 0.0);
        }
        mode_ = e.mode;
        if (mode_ != action_mode::gpu) {
            if (e.slots < 1) throw ConfigError("config /env/slots: 0 (the " + std::string(to_string(mode_)) + " action mode needs at least 1)");
            if (mode_ == action_mode::job) opt_.backfill = true;  // the policy chooses among every waiting job that fits
            layer_.init(*this);
        }
        workload_.validate(zoo_, G);
        if (cfg_.colocation.enabled) rooms_.reserve(workload_.max_job_kinds(zoo_.size()), G);
    }

    // ---- episode ------------------------------------------------------------------------------

    /// Starts an episode: draws the workload for this seed and advances to the first decision.
    void reset(std::uint64_t seed = 0) {
        seed_ = seed;
        workload_.generate(zoo_, num_gpus(), seed, gen_);
        for (std::size_t i = 0; i < gen_.size(); ++i) gen_[i].id = static_cast<job_id>(i);
        validate_jobs(cfg_, gen_, num_gpus(), zoo_);  // before anything changes
        sim_.reserve_placements(workload_.max_episode_gpus(num_gpus()));  // once: later resets (autoresets) allocate nothing
        sim_.reset(std::span<const TrainingJob>(gen_),
                   [this](const J& j) { return double(j.work) * comm_.ideal_step_time(topo_, zoo_, j.model, j.num_gpus); },
                   [this](const J& j) { return zoo_[j.model].memory_gb; });
        prepare_jobs();
        picks_.clear(topo_);
        current_ = none;
        steps_ = 0;
        episode_return_ = 0;
        terminated_ = truncated_ = false;
        started_ = true;
        pending_reward_ = advance().reward;
        terminated_ = current_ == none;  // no job to place: every job has finished (a workload of none)
        write_observation();
        if (mode_ != action_mode::gpu) layer_.write(*this);
    }

    /// Applies an action. Throws InvalidAction (state unchanged) when the mask forbids it, and
    /// StateError when the episode is over or reset() was never called.
    step_result step(std::int64_t action) {
        if (!started_) throw StateError("step() called before reset()");
        if (terminated_ || truncated_) throw StateError("step() called on a finished episode; call reset()");
        if (mode_ != action_mode::gpu) return mode_step(action);
        check_action(action);
        const double t_start = sim_.now();
        double reward = pending_reward_;
        pending_reward_ = 0;
        if (action != std::int64_t(num_gpus())) {  // not DEFER
            const auto g = static_cast<gpu_id>(action);
            const auto node = topo_.node_of(g), rack = topo_.rack_of(g);
            picks_.add(g, node, rack);
            if (picks_.size() < cur_gpus_) {  // a pick alone changes neither the cluster nor time
                if (types_.heterogeneous()) {  // the mask may depend on the picks' type: all of it
                    write_observation();
                    return end_step(reward, false, t_start);
                }
                obs_.after_pick(topo_, picks_, g, node, rack, cur_gpus_);
                obs_.defer(false);  // DEFER is allowed only before the first pick
                return end_step(reward, false, t_start);
            }
            reward += start_current();
        } else {
            queue_.defer(current_);
            current_ = none;
        }
        const auto p = advance();
        reward += p.reward;
        // With co-location room and interference depend on the current job, and once no job is
        // current every mask entry changes: the whole observation. Otherwise the GPUs whose jobs
        // changed were rewritten as they changed (start_current(), advance()); what is left are
        // their racks, every remaining time when time moved, and the tail.
        if (sim_.colocation() || current_ == none || types_.heterogeneous()) {
            write_observation();
        } else {
            obs_.flush(topo_, cluster(), picks_, sim_.now(), p.time_moved);
            obs_.defer(defer_allowed());
            obs_.tail(sim_, queue_, current_, cur_gpus_, picks_.size());
        }
        return end_step(reward, true, t_start);
    }

    // ---- buffers ------------------------------------------------------------------------------

    [[nodiscard]] std::span<const float> observation() const noexcept {
        return mode_ == action_mode::gpu ? obs_.obs() : std::span<const float>(layer_.obs());
    }
    [[nodiscard]] std::span<const std::uint8_t> action_mask() const noexcept {
        return mode_ == action_mode::gpu ? obs_.mask() : std::span<const std::uint8_t>(layer_.mask());
    }
    [[nodiscard]] std::size_t observation_size() const noexcept {
        return mode_ == action_mode::gpu ? obs_.size() : layer_.obs().size();
    }
    /// G + 1 in the GPU mode, K + 1 (env.slots + 1) in the placement and job modes.
    [[nodiscard]] std::size_t num_actions() const noexcept { return mode_ == action_mode::gpu ? num_gpus() + 1 : layer_.slots() + 1; }
    /// The DEFER action's index: the last one (= number of GPUs in the GPU mode; wait in the job mode).
    [[nodiscard]] std::int64_t defer_action() const noexcept { return static_cast<std::int64_t>(num_actions() - 1); }
    [[nodiscard]] const std::vector<obs_segment>& observation_layout() const noexcept {
        return mode_ == action_mode::gpu ? layout_ : layer_.layout();
    }
    /// What an action chooses (env.action_mode).
    [[nodiscard]] action_mode mode() const noexcept { return mode_; }
    /// Placement mode: the GPUs (sorted) of candidate slot s of the current decision; empty for a
    /// masked slot or in another mode.
    [[nodiscard]] std::span<const gpu_id> candidate(std::size_t s) const noexcept {
        if (mode_ != action_mode::placement || s >= layer_.slots()) return {};
        return layer_.candidate(s);
    }
    /// Job mode: the job (index into simulator().jobs()) of slot s of the current decision, or
    /// `none` for a masked slot or in another mode.
    [[nodiscard]] std::uint32_t slot_job(std::size_t s) const noexcept {
        if (mode_ != action_mode::job || s >= layer_.slots() || !layer_.mask()[s]) return none;
        return layer_.slot_job(s);
    }
    /// The action heuristic p (heuristics.hpp, which decides GPU by GPU) takes now, in this env's
    /// action mode: its pick in the GPU mode; in the placement mode the candidate equal to its
    /// whole placement (DEFER when it defers; the first candidate when its placement is none of
    /// them); in the job mode the first slot whose job it would not defer (wait when it defers
    /// them all). random takes a uniformly random valid action in every mode.
    template <class P>
    [[nodiscard]] std::int64_t heuristic_action(P& p) const {
        if (mode_ == action_mode::gpu) return p.act(*this);
        return layer_.heuristic_action(*this, p);
    }

    /// Rewrites the whole observation and mask from the state (what reset() does). step() rewrites
    /// only what the action changed, which gives the same values: the buffers belong to the env
    /// between steps and must not be written by anyone else.
    void refresh_observation() noexcept {
        if (!started_) return;
        write_observation();
        if (mode_ != action_mode::gpu) layer_.write(*this);
    }

    /// Makes the env write its observation and mask into external buffers (e.g. a slice of a
    /// vector env's contiguous arrays). The current contents are copied over.
    void bind(std::span<float> obs, std::span<std::uint8_t> mask) {
        if (mode_ == action_mode::gpu) obs_.bind(obs, mask);
        else layer_.bind(obs, mask);
    }

    // ---- state --------------------------------------------------------------------------------

    [[nodiscard]] const T& topology() const noexcept { return topo_; }
    [[nodiscard]] const C& comm() const noexcept { return comm_; }
    [[nodiscard]] const ModelZoo& zoo() const noexcept { return zoo_; }
    /// The GPU types of the cluster (untyped: every GPU of the zoo's reference type).
    [[nodiscard]] const gpu_type_map& gpu_types() const noexcept { return types_; }
    [[nodiscard]] const scenario& config() const noexcept { return cfg_; }
    [[nodiscard]] const basic_simulator<J>& simulator() const noexcept { return sim_; }
    [[nodiscard]] const cluster_state& cluster() const noexcept { return sim_.cluster(); }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return obs_.num_gpus(); }
    [[nodiscard]] double now() const noexcept { return sim_.now(); }
    [[nodiscard]] std::size_t steps() const noexcept { return steps_; }
    [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }
    [[nodiscard]] bool terminated() const noexcept { return terminated_; }
    [[nodiscard]] bool truncated() const noexcept { return truncated_; }
    [[nodiscard]] bool done() const noexcept { return terminated_ || truncated_; }
    [[nodiscard]] double episode_return() const noexcept { return episode_return_; }
    /// Whether a job is being placed (false only once the episode is over).
    [[nodiscard]] bool has_current() const noexcept { return current_ != none; }
    /// Index (into simulator().jobs()) of the job being placed, or `none`.
    [[nodiscard]] std::uint32_t current_index() const noexcept { return current_; }
    /// The job being placed; StateError when there is none (before reset(), or once the episode is over).
    [[nodiscard]] const J& current_job() const {
        if (current_ == none) throw StateError(started_ ? "current_job(): the episode is over" : "current_job(): reset() has not been called");
        return sim_.job(current_);
    }
    /// GPUs picked so far for the current job, in pick order.
    [[nodiscard]] std::span<const gpu_id> picked() const noexcept { return picks_.gpus; }
    [[nodiscard]] bool is_picked(gpu_id g) const noexcept { return picks_.picked[g] != 0; }
    /// Waiting jobs (indices into simulator().jobs()) in queue order, the current one included.
    [[nodiscard]] std::span<const std::uint32_t> queue() const noexcept { return queue_.jobs(); }
    [[nodiscard]] std::span<const job_record> finished() const noexcept { return sim_.finished(); }

    /// Metrics of the jobs finished so far.
    [[nodiscard]] metrics episode_metrics() const {
        auto m = sim_.compute(scratch_);
        m.type_utilization = types_.utilization(sim_.finished(), sim_.placements(), m.makespan);
        if (sim_.colocation() && m.makespan > 0) {
            m.memory_utilization = sim_.memory_time() / (double(num_gpus()) * cfg_.colocation.gpu_memory_gb * m.makespan);
            // jobs sharing a GPU must not count it twice: busy GPU-time as the simulator measured it
            m.utilization = sim_.busy_gpu_time() / (double(num_gpus()) * m.makespan);
        }
        return m;
    }
    [[nodiscard]] env_info info() const noexcept {
        return {sim_.now(), steps_, sim_.finished().size(), sim_.jobs().size(), queue_.size(), sim_.running(), episode_return_};
    }

    /// Whether GPU g can take job j (index into simulator().jobs()) now: free, or, with co-location,
    /// a free slot, enough memory, GPU shares that fit, and only compatible jobs there.
    [[nodiscard]] bool has_room(gpu_id g, std::uint32_t j) const noexcept {
        return detail::has_room(sim_, g, j, cfg_.colocation.gpu_memory_gb);
    }
    /// Expected rate factor of job j on GPU g next to the jobs already there (1 on a free GPU,
    /// 0 where it cannot go).
    [[nodiscard]] double expected_interference(gpu_id g, std::uint32_t j) const noexcept {
        return has_room(g, j) ? detail::interference_on(sim_, g, j) : 0.0;
    }
    /// Communication cost and slowdown the current job would get on `gpus` (sorted ascending).
    [[nodiscard]] comm_result evaluate(std::span<const gpu_id> gpus) const {
        return comm_.evaluate(topo_, zoo_, current_job().model, gpus);
    }

    /// Why an action is invalid, or an empty string when it is valid.
    [[nodiscard]] std::string why_invalid(std::int64_t action) const {
        if (mode_ == action_mode::gpu || !started_ || done()) return detail::why_invalid(*this, started_, action);
        return layer_.why_invalid(action);
    }

private:
    template <class>
    friend class detail::action_layer;

    static C make_comm(const comm_config& c) {
        if (c.model != C::name)
            throw ConfigError("config /comm/model: \"" + c.model + "\" does not match this environment's comm model \"" +
                              std::string(C::name) + "\"");
        if constexpr (requires { C::from_config(c, std::string_view{}); }) return C::from_config(c, "/comm");
        else return C{};
    }

    /// What never changes about the episode's jobs: their observation features and room classes.
    void prepare_jobs() {
        const std::size_t n = sim_.jobs().size();
        queue_.reset(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            const auto& j = sim_.job(i);
            const auto p = zoo_[j.model].at(j.num_gpus);
            queue_.info(i) = {obs_.request(j.num_gpus), obs_.squash(sim_.ideal_duration(i)),
                              static_cast<float>(std::clamp(1.0 - p.spread / p.consolidated, 0.0, 1.0)), double(j.submit_time), 0};
        }
        if (sim_.colocation()) rooms_.build(sim_);
    }

    [[nodiscard]] bool queue_less(std::uint32_t a, std::uint32_t b) const noexcept {
        switch (cfg_.env.order) {
            case queue_order::fifo: return a < b;
            case queue_order::sjf: {
                const double ia = sim_.ideal_duration(a), ib = sim_.ideal_duration(b);
                return ia < ib || (ia == ib && a < b);
            }
            case queue_order::fewest_gpus: {
                const auto ka = sim_.job(a).num_gpus, kb = sim_.job(b).num_gpus;
                return ka < kb || (ka == kb && a < b);
            }
        }
        return a < b;
    }

    /// Brings job class c's room up to date; returns how many GPUs have room for it (co-location).
    std::uint32_t room_hosts(std::uint32_t c) noexcept {
        return rooms_.sync(c, sim_, cfg_.colocation.gpu_memory_gb);
    }

    /// The queue position of the next job to place (other than `skip`), or npos: strict
    /// head-of-line looks at the first non-deferred waiting job only; backfill at the first that fits.
    [[nodiscard]] std::size_t find_waiting(std::uint32_t skip = none) noexcept {
        // Every job requests >= 1 GPU: when no GPU has a free slot (without co-location: no GPU is
        // free) nothing fits, and the (possibly long) queue need not be scanned.
        const auto& cl = cluster();
        if (cl.gpus_with_free_slot() == 0) return detail::wait_queue::npos;
        std::size_t free = cl.free_gpus();
        if (cfg_.env.confine_type && types_.heterogeneous()) free = std::min(free, most_free_of_a_type());
        return queue_.find(skip, free, opt_.backfill, !sim_.colocation(), [&](std::uint32_t j) {
            const auto k = sim_.job(j).num_gpus;
            return k <= free || room_hosts(rooms_.class_of(j)) >= k;
        });
    }

    /// confine_type: the most free GPUs of one type.
    [[nodiscard]] std::size_t most_free_of_a_type() noexcept {
        std::fill(type_free_.begin(), type_free_.end(), 0);
        const auto& cl = cluster();
        for (std::size_t n = 0; n < topo_.num_nodes(); ++n)
            type_free_[types_.type_of(gpu_id(n * topo_.gpus_per_node()))] += cl.node_free(n);
        return *std::max_element(type_free_.begin(), type_free_.end());
    }

    /// Makes the waiting job at queue position i (or none) the current one. The queue does not
    /// change until it starts or is deferred (jobs arrive only in advance()), so i stays its position.
    void set_current(std::size_t i) noexcept {
        if (i == detail::wait_queue::npos) {
            current_ = none;
            cur_gpus_ = 0;
            return;
        }
        cur_pos_ = i;
        current_ = queue_.job_at(i);
        cur_gpus_ = queue_.gpus_at(i);
    }

    /// What advance() did: the reward of the elapsed time, and whether time moved.
    struct progress {
        double reward = 0;
        bool time_moved = false;
    };

    /// Advances to the next decision point, through the simulator's events: arrivals join the
    /// queue, the rows of the GPUs of finished jobs are rewritten (see step()).
    progress advance() {
        double area = 0, elapsed = 0;
        bool moved = false;
        for (;;) {
            std::size_t i = find_waiting();
            if (i != detail::wait_queue::npos) {
                set_current(i);
                break;
            }
            if (!sim_.has_events()) {
                // Nothing fits and nothing will happen: only deferred jobs can be waiting.
                if (!queue_.empty()) {
                    queue_.next_epoch();
                    i = find_waiting();
                }
                set_current(i);
                break;  // found one, or the episode is over (all finished)
            }
            const auto ev = sim_.advance();
            for (auto j = ev.first_arrival; j < ev.first_arrival + ev.arrivals; ++j)
                queue_.insert(j, sim_.job(j).num_gpus, [this](std::uint32_t a, std::uint32_t b) { return queue_less(a, b); });
            if (!sim_.colocation())
                for (const auto& r : ev.finished) obs_.update_gpus(topo_, cluster(), sim_.gpus_of(r), sim_.now());
            area += ev.area;
            if (ev.in_makespan) elapsed += ev.elapsed;
            moved = true;
            queue_.next_epoch();
        }
        return {-(opt_.jct * area + opt_.makespan * elapsed) / opt_.time_scale, moved};
    }

    /// Counts the step, sets terminated / truncated and returns the step's result.
    step_result end_step(double reward, bool decided, double t_start) noexcept {
        ++steps_;
        if (decided && sim_.all_done()) terminated_ = true;  // (a pick alone finishes nothing)
        else if (steps_ >= opt_.step_limit || sim_.now() >= opt_.time_limit)
            truncated_ = true;
        episode_return_ += reward;
        return {reward, terminated_, truncated_, sim_.now() - t_start};
    }

    /// Starts the current job on the picked GPUs; returns the placement reward terms.
    double start_current() {
        const auto j = current_;
        std::sort(picks_.gpus.begin(), picks_.gpus.end());
        const auto& job = sim_.job(j);
        comm_result res;
        double slowdown;
        if (types_.typed()) {
            // the slowest GPU's type: the comm model on that type's zoo, and that type's ideal step
            // time over the reference type's (the job's ideal duration is on the reference type)
            const auto t = types_.slowest(zoo_, job.model, picks_.gpus);
            const auto& tz = types_.zoo_of(t);
            res = comm_.evaluate(topo_, tz, job.model, picks_.gpus);
            slowdown = res.slowdown * (comm_.ideal_step_time(topo_, tz, job.model, job.num_gpus) /
                                       comm_.ideal_step_time(topo_, zoo_, job.model, job.num_gpus));
        } else {
            res = comm_.evaluate(topo_, zoo_, job.model, picks_.gpus);
            slowdown = res.slowdown;
        }
        sim_.start(j, picks_.gpus, slowdown, res.cost);
        if (!sim_.colocation()) obs_.update_gpus(topo_, cluster(), picks_.gpus, sim_.now());
        queue_.erase(cur_pos_);
        picks_.clear(topo_);
        current_ = none;
        double r = -opt_.comm * res.cost;
        if (opt_.placement != 0) {
            const auto b = comm_.bounds(topo_, zoo_, job.model, job.num_gpus);
            const double score = b.worst > b.best ? 1.0 - (res.cost - b.best) / (b.worst - b.best) : 1.0;
            r += opt_.placement * score;
        }
        return r;
    }

    /// A step of the placement or job mode: the chosen GPUs are picked as in the GPU mode.
    step_result mode_step(std::int64_t action) {
        if (auto why = layer_.why_invalid(action); !why.empty())
            throw InvalidAction("invalid action " + std::to_string(action) + ": " + why);
        const double t_start = sim_.now();
        double reward = pending_reward_;
        pending_reward_ = 0;
        const auto s = static_cast<std::size_t>(action);
        if (s == layer_.slots()) {  // DEFER the current job; wait: defer every job until an event
            if (mode_ == action_mode::placement) queue_.defer(current_);
            else
                for (auto j : queue_.jobs()) queue_.defer(j);
            current_ = none;
        } else {
            if (mode_ == action_mode::job) set_current(layer_.slot_position(s));
            for (auto g : mode_ == action_mode::job ? layer_.place_slot(*this, s) : layer_.candidate(s))
                picks_.add(g, topo_.node_of(g), topo_.rack_of(g));
            reward += start_current();
        }
        reward += advance().reward;
        write_observation();
        layer_.write(*this);
        return end_step(reward, true, t_start);
    }

    /// Whether waiting job j could start now (job mode).
    [[nodiscard]] bool fits_now(std::uint32_t j) noexcept {
        const auto k = sim_.job(j).num_gpus;
        if (k <= cluster().free_gpus()) return true;
        return sim_.colocation() && room_hosts(rooms_.class_of(j)) >= k;
    }
    /// Whether the job mode's wait is allowed: DEFER is enabled and an event is pending.
    [[nodiscard]] bool wait_allowed() const noexcept { return opt_.allow_defer && sim_.has_events(); }

    void check_action(std::int64_t action) const {
        const auto defer = std::int64_t(num_gpus());
        if (action >= 0 && action <= defer && obs_.mask()[static_cast<std::size_t>(action)]) return;
        std::string what = "invalid action " + std::to_string(action);
        if (action == defer) what += " (DEFER)";
        throw InvalidAction(what + ": " + why_invalid(action));
    }

    [[nodiscard]] bool defer_allowed() noexcept {
        if (!opt_.allow_defer || current_ == none || !picks_.empty()) return false;
        if (sim_.has_events()) return true;
        return find_waiting(current_) != detail::wait_queue::npos;
    }

    /// The whole observation and mask.
    void write_observation() noexcept {
        if (sim_.colocation()) {
            const std::uint8_t* room = nullptr;
            if (current_ != none) {
                const auto c = rooms_.class_of(current_);
                (void)room_hosts(c);
                room = rooms_.room(c);
            }
            obs_.gpu_rows_colocation(topo_, sim_, picks_, room, current_, cfg_.colocation.gpu_memory_gb);
        } else {
            obs_.gpu_rows(topo_, sim_, picks_, current_ != none);
        }
        obs_.defer(defer_allowed());
        obs_.tail(sim_, queue_, current_, cur_gpus_, picks_.size());
        if (types_.heterogeneous()) write_types();
    }

    /// Heterogeneous clusters: the type features (observation_writer::type_rows()) and, with
    /// confine_type, the mask's GPUs of the types the current job may use.
    void write_types() noexcept {
        const std::size_t G = num_gpus(), NT = types_.num_types();
        if (current_ == none) return obs_.type_rows(types_, {});
        const auto& job = sim_.job(current_);
        for (std::size_t t = 0; t < NT; ++t) type_speed_[t] = types_.speed(zoo_, job.model, t, job.num_gpus);
        obs_.type_rows(types_, type_speed_);
        if (!cfg_.env.confine_type) return;
        const auto mask = obs_.mask();
        if (!picks_.empty()) {
            const auto t0 = types_.type_of(picks_.gpus[0]);
            for (std::size_t g = 0; g < G; ++g)
                if (types_.type_of(gpu_id(g)) != t0) mask[g] = 0;
            return;
        }
        std::fill(type_free_.begin(), type_free_.end(), 0);
        for (std::size_t g = 0; g < G; ++g) type_free_[types_.type_of(gpu_id(g))] += mask[g];
        for (std::size_t g = 0; g < G; ++g)
            if (type_free_[types_.type_of(gpu_id(g))] < cur_gpus_) mask[g] = 0;
    }

    // Hot state first and together: every step reads it, and a vector env steps many envs in
    // turn, each out of cache, so each cache line the step touches costs a miss. A pick that does
    // not complete its job reads and writes only the first few lines of the object.
    std::uint32_t current_ = none;
    std::uint32_t cur_gpus_ = 0;  ///< GPUs the current job requests
    std::size_t steps_ = 0;
    double episode_return_ = 0, pending_reward_ = 0;
    /// The options step() reads, copied out of cfg_ (whose other fields are cold).
    struct step_options {
        std::size_t step_limit = ~std::size_t{0};                     ///< max_steps, or none
        double time_limit = std::numeric_limits<double>::infinity();  ///< max_time, or none
        bool allow_defer = true, backfill = true;
        double time_scale = 1, jct = 1, makespan = 0, comm = 0, placement = 0;
    } opt_;
    bool terminated_ = false, truncated_ = false, started_ = false;
    action_mode mode_ = action_mode::gpu;
    std::size_t cur_pos_ = 0;    ///< the current job's position in the queue
    observation_writer obs_;     ///< the observation and mask (owned, or bound to external memory)
    detail::pick_set picks_;     ///< the current job's GPUs so far
    detail::wait_queue queue_;   ///< waiting jobs, the current one included
    basic_simulator<J> sim_;
    T topo_;
    C comm_;
    ModelZoo zoo_;
    // cold
    scenario cfg_;
    workload_source workload_;
    std::vector<TrainingJob> gen_;  ///< the workload's jobs of the episode (the simulator makes its own J from them)
    detail::room_index rooms_;  ///< co-location: which GPUs have room for each class of jobs
    std::uint64_t seed_ = 0;
    std::vector<obs_segment> layout_;  ///< the GPU mode's
    gpu_type_map types_;               ///< the GPUs' types (untyped: the zoo's reference type)
    std::vector<std::size_t> type_free_;  ///< heterogeneous: scratch per type
    std::vector<double> type_speed_;      ///< heterogeneous: the current job's speed per type
    mutable std::vector<double> scratch_;
    mutable detail::action_layer<basic_env> layer_;  ///< the placement and job modes (planning scratch: mutable)
};

/// The common case: a tree topology, training jobs and ring all-reduce.
using env = basic_env<>;
/// Proximity-DRL's setting: tree topology with the route cost model.
using tree_route_env = basic_env<TreeTopology, TrainingJob, TreeRouteCost>;

/// Calls f(std::type_identity<E>{}) with E the env type a scenario needs (env for ring_allreduce,
/// tree_route_env for tree_route) and returns its result: the one place that maps a scenario to an
/// env type.
template <class F>
decltype(auto) visit_env(const scenario& s, F&& f) {
    if (comm_model_name(s) == TreeRouteCost::name) return std::forward<F>(f)(std::type_identity<tree_route_env>{});
    return std::forward<F>(f)(std::type_identity<env>{});
}

}  // namespace gpuplace
