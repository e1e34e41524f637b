#pragma once
/// \file env.hpp
/// The environment: a multi-GPU job's GPUs are picked one at a time under an action mask.
///
/// Action space Discrete(G + 1): a GPU index, or DEFER (index G, when enabled). Picking GPU g adds
/// it to the current job's picks P; when |P| reaches the request the job starts and the env moves
/// to the next waiting job that fits, advancing time through arrivals and completions while none
/// does. The default reward is -(jobs in system x elapsed time) / time_scale, so an episode's
/// rewards sum to -(sum of JCTs) / time_scale.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "colocation.hpp"
#include "comm.hpp"
#include "config.hpp"
#include "detail/bounded_vector.hpp"
#include "detail/rng.hpp"
#include "error.hpp"
#include "job.hpp"
#include "metrics.hpp"
#include "model_zoo.hpp"
#include "simulator.hpp"
#include "topology.hpp"
#include "workload.hpp"

namespace gpuplace {

namespace detail {
/// Observation and mask storage: owned (one allocation, the mask's bytes after the observation's
/// floats), or spans bound to external memory. A copy always owns its buffers (with the same
/// contents); a move keeps the source's binding. 40 bytes: it heads the env's hot members.
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

/// A named, contiguous part of the observation vector.
struct obs_segment {
    std::string name;                 ///< e.g. "gpu_busy"
    std::size_t offset = 0, size = 0; ///< position in the observation vector
    std::vector<std::string> fields;  ///< per-element names when the segment is not per GPU
};

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

    /// Builds the env from a scenario (topology and comm model read from its JSON). Throws
    /// ConfigError when the scenario's comm model is not C, or on any bad value.
    explicit basic_env(const scenario& s = default_scenario())
        : basic_env(T::from_json(s.topology, "/topology"), make_comm(s.comm), make_zoo(s.zoo), s) {}

    /// Builds the env from explicit objects; the scenario gives workload, env and reward options.
    basic_env(T topo, C comm, ModelZoo zoo, scenario s)
        : topo_(std::move(topo)), comm_(std::move(comm)), zoo_(std::move(zoo)), cfg_(std::move(s)) {
        G_ = topo_.num_gpus();
        K_ = cfg_.env.queue_window;
        opt_ = {cfg_.env.max_steps ? cfg_.env.max_steps : ~std::size_t{0},
                cfg_.env.max_time > 0 ? cfg_.env.max_time : std::numeric_limits<double>::infinity(),
                cfg_.env.allow_defer, cfg_.env.backfill, cfg_.reward.time_scale,
                cfg_.reward.jct,     cfg_.reward.makespan, cfg_.reward.comm,  cfg_.reward.placement,
                static_cast<float>(cfg_.reward.time_scale)};
        workload_ = workload_source(cfg_.workload, zoo_, G_);  // reads a trace once
        if (cfg_.colocation.enabled) {
            auto table = std::make_shared<interference_table>(make_interference(cfg_, zoo_));
            sim_.set_colocation(std::move(table), cfg_.colocation.max_jobs_per_gpu);
        }
        sim_.resize(topo_);
        picked_.reserve(G_);
        is_picked_.assign(G_, 0);
        node_picked_.assign(topo_.num_nodes(), 0);
        rack_picked_.assign(topo_.num_racks(), 0);
        build_layout();
        job_off_ = (gpu_features + (sim_.colocation() ? colocation_gpu_features : 0)) * G_;
        buf_.allocate(obs_size_, G_ + 1);
        rack_dirty_.assign(topo_.num_racks(), 0);
        dirty_racks_.reserve(topo_.num_racks());
        request_feat_.resize(G_ + 1);
        for (std::size_t k = 0; k <= G_; ++k) request_feat_[k] = request_feature(static_cast<std::uint32_t>(k));
        workload_.validate(zoo_, G_);
        if (cfg_.colocation.enabled) reserve_room_classes();
    }

    // ---- episode ------------------------------------------------------------------------------

    /// Starts an episode: draws the workload for this seed and advances to the first decision.
    void reset(std::uint64_t seed = 0) {
        seed_ = seed;
        workload_.generate(zoo_, G_, seed, gen_);
        jobs_.clear();  // element-wise construction: J need only be constructible from TrainingJob
        for (const auto& g : gen_) jobs_.emplace_back(g);
        prepare_jobs();
        sim_.reserve_placements(max_episode_gpus());  // once: later resets (autoresets) allocate nothing
        sim_.reset(jobs_, ideal_, memory_);
        queue_.clear();
        queue_.reserve(jobs_.size());
        wait_gpus_.clear();
        wait_gpus_.reserve(jobs_.size());
        epoch_ = 1;
        clear_picks();
        current_ = none;
        steps_ = 0;
        episode_return_ = 0;
        terminated_ = truncated_ = false;
        started_ = true;
        pending_reward_ = advance();
        terminated_ = current_ == none;  // no job to place: every job has finished (a workload of none)
        write_observation();
    }

    /// Applies an action. Throws InvalidAction (state unchanged) when the mask forbids it, and
    /// StateError when the episode is over or reset() was never called.
    step_result step(std::int64_t action) {
        if (!started_) throw StateError("step() called before reset()");
        if (terminated_ || truncated_) throw StateError("step() called on a finished episode; call reset()");
        check_action(action);
        const double t_start = sim_.now();
        double reward = pending_reward_;
        pending_reward_ = 0;
        const auto moves = time_moves_;
        std::size_t finished_before = 0;  // read only on a decision: a pick alone leaves the simulator untouched
        std::span<const gpu_id> started;  // GPUs of the job this step started
        bool decided = true;              // the current job changed (placed or deferred)
        gpu_id g = 0;                     // a pick: the GPU, its node and its rack
        std::size_t node = 0, rack = 0;
        if (action == static_cast<std::int64_t>(G_)) {
            finished_before = sim_.finished().size();
            job_info_[current_].deferred = epoch_;
            current_ = none;
            reward += advance();
        } else {
            g = static_cast<gpu_id>(action);
            node = topo_.node_of(g);
            rack = topo_.rack_of(g);
            picked_.push_back(g);
            is_picked_[g] = 1;
            ++node_picked_[node];
            ++rack_picked_[rack];
            if (picked_.size() == cur_gpus_) {
                finished_before = sim_.finished().size();
                const std::size_t k = picked_.size();
                reward += start_current();
                started = sim_.placements().last(k);  // start() appended the job's GPUs
                reward += advance();
            } else {
                decided = false;
            }
        }
        ++steps_;
        if (decided && sim_.all_done()) terminated_ = true;  // (a pick alone finishes nothing)
        else if (steps_ >= opt_.step_limit || sim_.now() >= opt_.time_limit)
            truncated_ = true;
        episode_return_ += reward;
        // Only what the action changed is rewritten: after a pick that does not complete the job,
        // the picked GPU and its rack; after a decision, the GPUs whose jobs changed (all of them
        // with co-location, where room and interference depend on the current job; and once no
        // job is current).
        if (!decided && current_ != none) update_after_pick(g, node, rack);
        else if (sim_.colocation() || current_ == none) write_observation();
        else update_after_decision(started, finished_before, time_moves_ != moves);
        return {reward, terminated_, truncated_, sim_.now() - t_start};
    }

    // ---- buffers ------------------------------------------------------------------------------

    [[nodiscard]] std::span<const float> observation() const noexcept { return buf_.obs; }
    [[nodiscard]] std::span<const std::uint8_t> action_mask() const noexcept { return buf_.mask; }
    [[nodiscard]] std::size_t observation_size() const noexcept { return obs_size_; }
    [[nodiscard]] std::size_t num_actions() const noexcept { return G_ + 1; }
    /// The DEFER action's index (= number of GPUs).
    [[nodiscard]] std::int64_t defer_action() const noexcept { return static_cast<std::int64_t>(G_); }
    [[nodiscard]] const std::vector<obs_segment>& observation_layout() const noexcept { return layout_; }

    /// Rewrites the whole observation and mask from the state (what reset() does). step() rewrites
    /// only what the action changed, which gives the same values: the buffers belong to the env
    /// between steps and must not be written by anyone else.
    void refresh_observation() noexcept {
        if (started_) write_observation();
    }

    /// Makes the env write its observation and mask into external buffers (e.g. a slice of a
    /// vector env's contiguous arrays). The current contents are copied over.
    void bind(std::span<float> obs, std::span<std::uint8_t> mask) {
        if (obs.size() != obs_size_ || mask.size() != G_ + 1)
            throw Error("bind(): buffer sizes " + std::to_string(obs.size()) + "/" + std::to_string(mask.size()) +
                        " do not match observation_size " + std::to_string(obs_size_) + " / num_actions " +
                        std::to_string(G_ + 1));
        buf_.bind(obs, mask);
    }

    // ---- state --------------------------------------------------------------------------------

    [[nodiscard]] const T& topology() const noexcept { return topo_; }
    [[nodiscard]] const C& comm() const noexcept { return comm_; }
    [[nodiscard]] const ModelZoo& zoo() const noexcept { return zoo_; }
    [[nodiscard]] const scenario& config() const noexcept { return cfg_; }
    [[nodiscard]] const basic_simulator<J>& simulator() const noexcept { return sim_; }
    [[nodiscard]] const cluster_state& cluster() const noexcept { return sim_.cluster(); }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return G_; }
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
    [[nodiscard]] std::span<const gpu_id> picked() const noexcept { return picked_; }
    [[nodiscard]] bool is_picked(gpu_id g) const noexcept { return is_picked_[g] != 0; }
    /// Waiting jobs (indices into simulator().jobs()) in queue order, the current one included.
    [[nodiscard]] std::span<const std::uint32_t> queue() const noexcept { return queue_; }
    [[nodiscard]] std::span<const job_record> finished() const noexcept { return sim_.finished(); }

    /// Metrics of the jobs finished so far.
    [[nodiscard]] metrics episode_metrics() const {
        auto m = sim_.compute(scratch_);
        if (sim_.colocation() && m.makespan > 0) {
            m.memory_utilization = sim_.memory_time() / (double(G_) * cfg_.colocation.gpu_memory_gb * m.makespan);
            // jobs sharing a GPU must not count it twice: busy GPU-time as the simulator measured it
            m.utilization = sim_.busy_gpu_time() / (double(G_) * m.makespan);
        }
        return m;
    }
    [[nodiscard]] env_info info() const noexcept {
        return {sim_.now(), steps_, sim_.finished().size(), sim_.jobs().size(),
                queue_.size(), sim_.running(), episode_return_};
    }

    /// Whether GPU g can take job j (index into simulator().jobs()) now: free, or, with co-location,
    /// a free slot, enough memory, GPU shares that fit, and only compatible jobs there.
    [[nodiscard]] bool has_room(gpu_id g, std::uint32_t j) const noexcept {
        const auto& cl = cluster();
        if (cl.is_free(g)) return true;
        if (!sim_.colocation()) return false;
        if (cl.jobs_on_count(g) >= cl.max_jobs_per_gpu()) return false;
        if (cl.memory_used(g) + memory_[j] > cfg_.colocation.gpu_memory_gb + 1e-9) return false;
        const auto& job = sim_.job(j);
        const double share = sim_.share_of(job);
        bool fractional = share < 1.0;
        const auto* t = sim_.interference();
        for (auto o : cl.jobs_on(g)) {
            const auto& oj = sim_.job(o);
            const double so = sim_.share_of(oj);
            fractional = fractional || so < 1.0;
            if (!t->compatible(job.model, share, oj.model, so)) return false;
        }
        return !fractional || cl.share_used(g) + share <= 1.0 + 1e-9;
    }

    /// Expected rate factor of job j on GPU g next to the jobs already there (1 on a free GPU,
    /// 0 where it cannot go).
    [[nodiscard]] double expected_interference(gpu_id g, std::uint32_t j) const noexcept {
        if (!has_room(g, j)) return 0.0;
        return interference_with(g, j);
    }

    /// Communication cost and slowdown the current job would get on `gpus` (sorted ascending).
    [[nodiscard]] comm_result evaluate(std::span<const gpu_id> gpus) const {
        return comm_.evaluate(topo_, zoo_, current_job().model, gpus);
    }

    /// Why an action is invalid, or an empty string when it is valid.
    [[nodiscard]] std::string why_invalid(std::int64_t action) const {
        const auto A = static_cast<std::int64_t>(G_);
        if (!started_) return "reset() has not been called";
        if (done()) return "the episode is over";
        if (action < 0 || action > A)
            return "out of range [0, " + std::to_string(A) + "] (" + std::to_string(G_) + " GPUs, DEFER = " +
                   std::to_string(A) + ")";
        if (buf_.mask[static_cast<std::size_t>(action)]) return {};
        if (current_ == none) return "no job is being placed";
        const auto& job = sim_.job(current_);
        const std::string cur = "job " + std::to_string(job.id) + " needs " + std::to_string(job.num_gpus) +
                                " GPUs, " + std::to_string(picked_.size()) + " picked";
        if (action == A) {
            if (!cfg_.env.allow_defer) return "DEFER is disabled (env.allow_defer = false)";
            if (!picked_.empty()) return "DEFER is only allowed before the first GPU of a job is picked (" + cur + ")";
            return "DEFER would stall the episode: no other waiting job fits and no event is pending";
        }
        const auto g = static_cast<gpu_id>(action);
        if (is_picked_[g]) return "GPU " + std::to_string(g) + " is already picked (" + cur + ")";
        if (sim_.colocation()) {
            char buf[128];
            std::snprintf(buf, sizeof buf, " (%u/%zu jobs, %.1f/%.1f GB used; ", unsigned(cluster().jobs_on_count(g)),
                          cluster().max_jobs_per_gpu(), cluster().memory_used(g), cfg_.colocation.gpu_memory_gb);
            return "GPU " + std::to_string(g) + " has no room for job " + std::to_string(job.id) + buf + cur + ")";
        }
        return "GPU " + std::to_string(g) + " is busy with job " + std::to_string(sim_.job(cluster().holder(g)).id) +
               " (" + cur + ")";
    }

private:
    static C make_comm(const detail::json& j) {
        std::string m = "ring_allreduce";
        if (j.is_object() && j.contains("model") && j["model"].is_string()) m = j["model"].template get<std::string>();
        if (m != C::name)
            throw ConfigError("config /comm/model: \"" + m + "\" does not match this environment's comm model \"" +
                              std::string(C::name) + "\"");
        if constexpr (requires { C::from_json(j, std::string_view{}); }) return C::from_json(j, "/comm");
        else return C{};
    }
    static ModelZoo make_zoo(const detail::json& z) {
        if (z.is_null()) return ModelZoo::builtin();
        if (z.is_string()) return ModelZoo::load(z.template get<std::string>());
        return ModelZoo::from_json(z, "/zoo");
    }

    /// An upper bound on the GPUs all jobs of one episode request (0 for a fixed job list, whose
    /// first episode sizes the buffers for all).
    [[nodiscard]] std::size_t max_episode_gpus() const noexcept { return workload_.max_episode_gpus(G_); }

    void prepare_jobs() {
        ideal_.resize(jobs_.size());
        for (std::size_t i = 0; i < jobs_.size(); ++i) {
            auto& j = jobs_[i];
            j.id = static_cast<job_id>(i);
            if (j.num_gpus < 1 || j.num_gpus > G_)
                throw ConfigError("workload job " + std::to_string(i) + ": requests " + std::to_string(j.num_gpus) +
                                  " GPUs, which can never fit in a cluster of " + std::to_string(G_) + " GPUs");
            if (j.model >= zoo_.size())
                throw ConfigError("workload job " + std::to_string(i) + ": model id " + std::to_string(j.model) +
                                  " is not in the zoo (" + std::to_string(zoo_.size()) + " models)");
            ideal_[i] = double(j.work) * comm_.ideal_step_time(topo_, zoo_, j.model, j.num_gpus);
        }
        // per-job observation features that never change
        job_info_.resize(jobs_.size());
        for (std::size_t i = 0; i < jobs_.size(); ++i) {
            const auto& j = jobs_[i];
            const auto p = zoo_[j.model].at(j.num_gpus);
            job_info_[i] = {request_feat_[j.num_gpus], squash(ideal_[i]),
                            static_cast<float>(std::clamp(1.0 - p.spread / p.consolidated, 0.0, 1.0)),
                            double(j.submit_time), 0};
        }
        if (sim_.colocation()) {
            memory_.resize(jobs_.size());
            for (std::size_t i = 0; i < jobs_.size(); ++i) {
                memory_[i] = zoo_[jobs_[i].model].memory_gb;
                if (memory_[i] > cfg_.colocation.gpu_memory_gb)
                    throw ConfigError("workload job " + std::to_string(i) + ": model \"" + zoo_[jobs_[i].model].name +
                                      "\" needs " + std::to_string(memory_[i]) + " GB per GPU, more than " +
                                      "/colocation/gpu_memory_gb = " + std::to_string(cfg_.colocation.gpu_memory_gb));
            }
            build_room_classes();
        }
    }

    void build_layout() {
        layout_.clear();
        std::size_t off = 0;
        for (auto n : gpu_feature_names) {
            layout_.push_back({"gpu_" + std::string(n), off, G_, {}});
            off += G_;
        }
        if (cfg_.colocation.enabled)
            for (auto n : colocation_feature_names) {
                layout_.push_back({"gpu_" + std::string(n), off, G_, {}});
                off += G_;
            }
        auto add = [&](std::string name, std::span<const std::string_view> names, std::size_t repeat) {
            obs_segment s{std::move(name), off, names.size() * repeat, {}};
            for (std::size_t r = 0; r < repeat; ++r)
                for (auto n : names) s.fields.push_back(repeat > 1 ? std::to_string(r) + "." + std::string(n) : std::string(n));
            off += s.size;
            layout_.push_back(std::move(s));
        };
        add("job", job_feature_names, 1);
        add("queue", queue_feature_names, K_);
        add("global", global_feature_names, 1);
        obs_size_ = off;
    }

    void clear_picks() noexcept {
        for (auto g : picked_) {
            is_picked_[g] = 0;
            node_picked_[topo_.node_of(g)] = 0;
            rack_picked_[topo_.rack_of(g)] = 0;
        }
        picked_.clear();
    }

    [[nodiscard]] bool queue_less(std::uint32_t a, std::uint32_t b) const noexcept {
        switch (cfg_.env.order) {
            case queue_order::fifo: return a < b;
            case queue_order::sjf: return ideal_[a] < ideal_[b] || (ideal_[a] == ideal_[b] && a < b);
            case queue_order::fewest_gpus: {
                const auto ka = sim_.job(a).num_gpus, kb = sim_.job(b).num_gpus;
                return ka < kb || (ka == kb && a < b);
            }
        }
        return a < b;
    }

    [[nodiscard]] bool fits(std::uint32_t j) noexcept {
        const auto k = sim_.job(j).num_gpus;
        if (!sim_.colocation()) return k <= cluster().free_gpus();
        if (k <= cluster().free_gpus()) return true;
        return room_hosts(class_of_[j]) >= k;
    }

    // ---- co-location: which GPUs have room for a job -------------------------------------------
    // has_room(g, j) depends on j only through its model, GPU share and memory, so the jobs of an
    // episode fall into a few room classes. For each class the env keeps which GPUs have room and
    // how many, brought up to date on demand by replaying the cluster's change log (only the GPUs
    // whose jobs changed since the class was last used are re-checked; everything when the log was
    // cleared or is longer than G). The answers are has_room()'s, so results are unchanged.

    /// Sizes the class storage for the largest number of classes an episode can have (the zoo's
    /// models for generated workloads; the distinct (model, share) pairs of a trace), so that
    /// reset() does not allocate for it again.
    void reserve_room_classes() {
        const std::size_t n = workload_.max_room_classes(zoo_.size());
        class_rep_.reserve(n);
        class_hosts_.reserve(n);
        class_gen_.reserve(n);
        class_pos_.reserve(n);
        class_room_.reserve(n * G_);
    }

    /// Groups the episode's jobs into room classes (same model, GPU share and memory per GPU).
    void build_room_classes() {
        const std::size_t n = jobs_.size();
        class_order_.resize(n);
        for (std::size_t i = 0; i < n; ++i) class_order_[i] = static_cast<std::uint32_t>(i);
        const auto key_less = [this](std::uint32_t a, std::uint32_t b) {
            const auto &ja = jobs_[a], &jb = jobs_[b];
            if (ja.model != jb.model) return ja.model < jb.model;
            const double sa = basic_simulator<J>::share_of(ja), sb = basic_simulator<J>::share_of(jb);
            if (sa != sb) return sa < sb;
            return memory_[a] < memory_[b];
        };
        std::sort(class_order_.begin(), class_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
            return key_less(a, b) || (!key_less(b, a) && a < b);
        });
        class_of_.resize(n);
        class_rep_.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const auto j = class_order_[i];
            if (i == 0 || key_less(class_rep_.back(), j)) class_rep_.push_back(j);
            class_of_[j] = static_cast<std::uint32_t>(class_rep_.size() - 1);
        }
        const std::size_t classes = class_rep_.size();
        class_hosts_.assign(classes, 0);
        class_gen_.assign(classes, never_synced);
        class_pos_.assign(classes, 0);
        class_room_.resize(classes * G_);  // written at each class's first use
    }

    /// Brings room class c up to date with the cluster; returns how many GPUs have room for it.
    std::uint32_t room_hosts(std::uint32_t c) noexcept {
        const auto& cl = cluster();
        const auto log = cl.changes();
        const auto rep = class_rep_[c];
        std::uint8_t* room = class_room_.data() + std::size_t(c) * G_;
        std::uint32_t n = class_hosts_[c];
        if (class_gen_[c] != cl.change_generation() || log.size() - class_pos_[c] >= G_) {
            n = 0;
            for (std::size_t g = 0; g < G_; ++g) {
                const bool r = has_room(static_cast<gpu_id>(g), rep);
                room[g] = static_cast<std::uint8_t>(r);
                n += r;
            }
        } else {
            for (std::size_t i = class_pos_[c]; i < log.size(); ++i) {
                const auto g = log[i];
                const bool r = has_room(g, rep);
                n = n - room[g] + static_cast<std::uint32_t>(r);
                room[g] = static_cast<std::uint8_t>(r);
            }
        }
        class_hosts_[c] = n;
        class_gen_[c] = cl.change_generation();
        class_pos_[c] = log.size();
        return n;
    }

    /// Job j's rate factor next to the jobs on GPU g (1 without co-location); room not checked.
    [[nodiscard]] double interference_with(gpu_id g, std::uint32_t j) const noexcept {
        const auto* t = sim_.interference();
        if (!t) return 1.0;
        const auto& job = sim_.job(j);
        double f = 1.0;
        for (auto o : cluster().jobs_on(g))
            f *= t->factor(job.model, sim_.share_of(job), sim_.job(o).model, sim_.share_of(sim_.job(o)));
        return f;
    }

    static interference_table make_interference(const scenario& s, const ModelZoo& zoo) {
        auto t = interference_table::from_zoo(zoo);
        if (!s.colocation.profile.empty()) t = interference_table::load_profile(s.colocation.profile, zoo, std::move(t));
        return t;
    }

    static constexpr std::size_t no_position = ~std::size_t{0};

    /// The next job to place (skipping `skip`), or none: strict head-of-line looks at the first
    /// non-deferred waiting job only; backfill at the first one that fits.
    [[nodiscard]] std::uint32_t find_candidate(std::uint32_t skip = none) noexcept {
        const auto i = find_waiting(skip);
        return i == no_position ? none : queue_[i];
    }

    /// find_candidate()'s job as a position in the queue, or no_position.
    [[nodiscard]] std::size_t find_waiting(std::uint32_t skip = none) noexcept {
        // Every job requests >= 1 GPU: when no GPU has a free slot (without co-location: no GPU is
        // free) nothing fits, and the (possibly long) queue need not be scanned.
        const auto& cl = cluster();
        if (cl.gpus_with_free_slot() == 0) return no_position;
        const bool backfill = opt_.backfill, exclusive = !sim_.colocation();
        const std::size_t free = cl.free_gpus();
        const std::uint32_t* gpus = wait_gpus_.data();
        for (std::size_t i = 0, n = wait_gpus_.size(); i < n; ++i) {
            // without co-location a job fits iff it requests at most the free GPUs: the scan reads
            // only the dense array of requests until one fits
            if (exclusive && gpus[i] > free) {
                if (!backfill && queue_[i] != skip && job_info_[queue_[i]].deferred != epoch_) return no_position;
                continue;
            }
            const auto j = queue_[i];
            if (j == skip || job_info_[j].deferred == epoch_) continue;
            if (exclusive || fits(j)) return i;
            if (!backfill) return no_position;
        }
        return no_position;
    }

    /// Makes the waiting job at queue position i (or none) the current one. The queue does not
    /// change until it starts or is deferred (jobs arrive only in advance()), so i stays its position.
    void set_current(std::size_t i) noexcept {
        if (i == no_position) {
            current_ = none;
            cur_gpus_ = 0;
            return;
        }
        cur_pos_ = i;
        current_ = queue_[i];
        cur_ = job_info_[current_];
        cur_gpus_ = wait_gpus_[i];
    }

    /// Advances to the next decision point; returns the reward of the elapsed time.
    double advance() {
        double area = 0, elapsed = 0;
        for (;;) {
            std::size_t i = find_waiting();
            if (i != no_position) {
                set_current(i);
                break;
            }
            if (!sim_.has_events()) {
                // Nothing fits and nothing will happen: only deferred jobs can be waiting.
                if (!queue_.empty()) {
                    ++epoch_;
                    i = find_waiting();
                }
                set_current(i);
                break;  // found one, or the episode is over (all finished)
            }
            const double t0 = sim_.now();
            const bool counting = sim_.arrived() > 0;  // the makespan runs from the first submit
            area += sim_.advance([this](std::uint32_t j) { enqueue(j); });
            ++time_moves_;
            if (counting) elapsed += sim_.now() - t0;
            ++epoch_;
        }
        return -(opt_.jct * area + opt_.makespan * elapsed) / opt_.time_scale;
    }

    void enqueue(std::uint32_t j) {
        auto pos = std::upper_bound(queue_.begin(), queue_.end(), j,
                                    [this](std::uint32_t a, std::uint32_t b) { return queue_less(a, b); });
        const auto& job = sim_.job(j);
        wait_gpus_.insert(wait_gpus_.begin() + (pos - queue_.begin()), job.num_gpus);
        queue_.insert(pos, j);
    }

    /// Starts the current job on the picked GPUs; returns the placement reward terms.
    double start_current() {
        const auto j = current_;
        std::sort(picked_.begin(), picked_.end());
        const auto& job = sim_.job(j);
        const auto res = comm_.evaluate(topo_, zoo_, job.model, picked_);
        sim_.start(j, picked_, res.slowdown, res.cost);
        queue_.erase(queue_.begin() + std::ptrdiff_t(cur_pos_));
        wait_gpus_.erase(wait_gpus_.begin() + std::ptrdiff_t(cur_pos_));
        clear_picks();
        current_ = none;
        double r = -opt_.comm * res.cost;
        if (opt_.placement != 0) {
            const auto b = comm_.bounds(topo_, zoo_, job.model, job.num_gpus);
            const double score = b.worst > b.best ? 1.0 - (res.cost - b.best) / (b.worst - b.best) : 1.0;
            r += opt_.placement * score;
        }
        return r;
    }

    void check_action(std::int64_t action) const {
        if (action >= 0 && action <= static_cast<std::int64_t>(G_) && buf_.mask[static_cast<std::size_t>(action)]) return;
        std::string what = "invalid action " + std::to_string(action);
        if (action == static_cast<std::int64_t>(G_)) what += " (DEFER)";
        throw InvalidAction(what + ": " + why_invalid(action));
    }

    [[nodiscard]] bool defer_allowed() noexcept {
        if (!opt_.allow_defer || current_ == none || !picked_.empty()) return false;
        if (sim_.has_events()) return true;
        return find_candidate(current_) != none;
    }

    [[nodiscard]] float squash(double seconds) const noexcept {
        const double x = std::max(0.0, seconds);
        return static_cast<float>(x / (x + opt_.time_scale));
    }
    /// A GPU's remaining-time feature, squash() in float arithmetic (the difference of times in
    /// double): the G of them are rewritten whenever time moves, and a float division is half the
    /// cost of a double one. Relative error against squash(): at most 4 x 2^-24.
    [[nodiscard]] float remaining_feature(double seconds) const noexcept {
        auto x = static_cast<float>(seconds);
        x = x > 0.0f ? x : 0.0f;
        return x / (x + opt_.time_scale_f);
    }
    [[nodiscard]] float request_feature(std::uint32_t k) const noexcept {
        return static_cast<float>(std::log2(double(k) + 1.0) / std::log2(double(G_) + 1.0));
    }

    /// The whole observation and mask.
    void write_observation() noexcept {
        if (sim_.colocation()) write_gpu_rows_colocation();
        else write_gpu_rows();
        buf_.mask[G_] = static_cast<std::uint8_t>(defer_allowed());
        write_tail();
    }

    /// Per-GPU rows without co-location: flat loops for what depends on the GPU, then node by node
    /// (GPUs are numbered node by node, nodes rack by rack) for what depends on its node and rack.
    void write_gpu_rows() noexcept {
        const auto& cl = cluster();
        const bool active = current_ != none;
        float* busy = buf_.obs.data();
        float* pick = busy + G_;
        std::uint8_t* mask = buf_.mask.data();
        for (std::size_t g = 0; g < G_; ++g) {
            const bool free = cl.is_free(static_cast<gpu_id>(g));
            busy[g] = free ? 0.0f : 1.0f;
            pick[g] = is_picked_[g] ? 1.0f : 0.0f;
            mask[g] = static_cast<std::uint8_t>(active && free && !is_picked_[g]);
        }
        write_remaining();
        for (std::size_t r = 0; r < topo_.num_racks(); ++r) write_rack_rows(r);
    }

    /// Calls f(std::integral_constant<std::size_t, N>) with N the node size for the common sizes
    /// (4, 8, 16 GPUs), 0 otherwise: loops over a node's GPUs then compile to a few vector stores
    /// instead of a loop with a prologue and a tail.
    template <class F>
    void with_node_size(F&& f) const {
        switch (topo_.gpus_per_node()) {
            case 8: return f(std::integral_constant<std::size_t, 8>{});
            case 4: return f(std::integral_constant<std::size_t, 4>{});
            case 16: return f(std::integral_constant<std::size_t, 16>{});
            default: return f(std::integral_constant<std::size_t, 0>{});
        }
    }

    /// Proximity, node-free and rack-free features of the GPUs of rack r, node by node.
    void write_rack_rows(std::size_t r) noexcept {
        with_node_size([&](auto N) { write_rack_rows_n<N()>(r); });
    }

    /// write_rack_rows() for nodes of N GPUs (0: any size).
    template <std::size_t N>
    void write_rack_rows_n(std::size_t r) noexcept {
        const auto& cl = cluster();
        const std::size_t gpn = N > 0 ? N : topo_.gpus_per_node(), npr = topo_.nodes_per_rack();
        const float inv_node = 1.0f / float(gpn);
        const float rf = float(cl.rack_free(r)) * (1.0f / float(cl.gpus_per_rack()));
        const float off_node = proximity_off_node(r);
        float* prox = buf_.obs.data() + 3 * G_;
        float* nfree = prox + G_;
        float* rfree = nfree + G_;
        for (std::size_t n = r * npr; n < (r + 1) * npr; ++n) {
            const float nf = float(cl.node_free(n)) * inv_node;
            const float pv = node_picked_[n] ? 1.0f : off_node;
            const std::size_t o = n * gpn;
            for (std::size_t i = 0; i < gpn; ++i) {
                prox[o + i] = pv;
                nfree[o + i] = nf;
                rfree[o + i] = rf;
            }
        }
    }

    /// The proximity of a GPU of rack r in a node without a pick: 0.5 when the rack has a pick, else 0.
    [[nodiscard]] float proximity_off_node(std::size_t r) const noexcept {
        return picked_.empty() || rack_picked_[r] == 0 ? 0.0f : 0.5f;
    }

    /// Proximity of the GPUs of rack r to the current picks: 1 in a node with a pick, 0.5 elsewhere
    /// in a rack with a pick, else 0.
    void write_rack_proximity(std::size_t r) noexcept {
        with_node_size([&](auto N) {
            const std::size_t gpn = N() > 0 ? N() : topo_.gpus_per_node(), npr = topo_.nodes_per_rack();
            float* prox = buf_.obs.data() + 3 * G_;
            const float off_node = proximity_off_node(r);
            for (std::size_t n = r * npr; n < (r + 1) * npr; ++n) {
                const float pv = node_picked_[n] ? 1.0f : off_node;
                for (std::size_t i = 0; i < gpn; ++i) prox[n * gpn + i] = pv;
            }
        });
    }

    /// After a pick that does not complete the job: its GPU, the proximity of its rack (when the
    /// pick is the first in its rack) or node (the first in its node; 0.5 -> 1), and the job's
    /// remaining picks. Nothing else changes, with co-location too: neither the cluster nor the
    /// current job (hence free counts, room and interference) did.
    /// n and r are g's node and rack.
    void update_after_pick(gpu_id g, std::size_t n, std::size_t r) noexcept {
        buf_.obs[G_ + g] = 1.0f;
        buf_.mask[g] = 0;
        if (node_picked_[n] == 1) {
            if (rack_picked_[r] == 1) write_rack_proximity(r);
            else
                with_node_size([&](auto N) {
                    const std::size_t gpn = N() > 0 ? N() : topo_.gpus_per_node();
                    for (std::size_t i = 0; i < gpn; ++i) buf_.obs[3 * G_ + n * gpn + i] = 1.0f;
                });
        }
        buf_.mask[G_] = static_cast<std::uint8_t>(defer_allowed());
        buf_.obs[job_offset() + 1] = float(cur_gpus_ - picked_.size()) / float(cur_gpus_);
    }

    /// After a job started (on `started`) or was deferred: the GPUs whose occupancy may have
    /// changed (the started job's and those of jobs that finished since `finished_before`), the
    /// racks they are in (free counts; proximity back to 0 as no GPU is picked), every remaining
    /// time when time moved, and the job, queue and global features. The mask of every other GPU
    /// is unchanged: it is 1 for a free GPU while a job is current.
    void update_after_decision(std::span<const gpu_id> started, std::size_t finished_before, bool time_moved) noexcept {
        if (time_moved) write_remaining();
        for (auto g : started) write_gpu(g);
        const auto fin = sim_.finished();
        for (std::size_t i = finished_before; i < fin.size(); ++i)
            for (auto g : sim_.gpus_of(fin[i])) write_gpu(g);
        for (auto r : dirty_racks_) {
            write_rack_rows(r);
            rack_dirty_[r] = 0;
        }
        dirty_racks_.clear();
        buf_.mask[G_] = static_cast<std::uint8_t>(defer_allowed());
        write_tail();
    }

    /// The busy, picked, remaining and mask values of GPU g after a decision (no GPU is picked);
    /// marks its rack for write_rack_rows().
    void write_gpu(gpu_id g) noexcept {
        const auto& cl = cluster();
        const bool free = cl.is_free(g);
        float* busy = buf_.obs.data();
        busy[g] = free ? 0.0f : 1.0f;
        busy[G_ + g] = 0.0f;
        busy[2 * G_ + g] = free ? 0.0f : remaining_feature(cl.end_time(g) - sim_.now());
        buf_.mask[g] = static_cast<std::uint8_t>(current_ != none && free);
        const auto r = topo_.rack_of(g);
        if (!rack_dirty_[r]) {
            rack_dirty_[r] = 1;
            dirty_racks_.push_back(static_cast<std::uint32_t>(r));  // capacity: number of racks
        }
    }

    /// The remaining time of every GPU: remaining_feature() computed for every GPU, free or not,
    /// with everything in locals, so that the loop vectorises. A free GPU's end time is minus
    /// infinity (cluster_state::free_end), so its value is remaining_feature(0) = +0.0f without a
    /// test of its holder.
    void write_remaining() noexcept {
        const double now = sim_.now();
        const float scale = opt_.time_scale_f;
        const double* end = cluster().end_times().data();
        float* rem = buf_.obs.data() + 2 * G_;
        const std::size_t G = G_;
        for (std::size_t g = 0; g < G; ++g) {
            auto x = static_cast<float>(end[g] - now);
            x = x > 0.0f ? x : 0.0f;  // as in remaining_feature()
            rem[g] = x / (x + scale);
        }
    }

    [[nodiscard]] std::size_t job_offset() const noexcept {
        return job_off_;
    }

    /// Per-GPU rows with co-location (room and interference depend on the current job; which GPUs
    /// have room comes from the current job's room class). Proximity and free counts as without
    /// co-location, rack by rack.
    void write_gpu_rows_colocation() noexcept {
        const bool active = current_ != none;
        const std::uint8_t* room = nullptr;
        if (active) {
            const auto c = class_of_[current_];
            (void)room_hosts(c);
            room = class_room_.data() + std::size_t(c) * G_;
        }
        const auto& cl = cluster();
        const double now = sim_.now();
        float* busy = buf_.obs.data();
        float* pick = busy + G_;
        float* rem = pick + G_;
        float* occ = busy + gpu_features * G_;
        float* head = occ + G_;
        float* itf = occ + 2 * G_;
        std::uint8_t* mask = buf_.mask.data();
        const double M = double(cl.max_jobs_per_gpu()), cap = cfg_.colocation.gpu_memory_gb;
        for (std::size_t g = 0; g < G_; ++g) {
            const auto gg = static_cast<gpu_id>(g);
            const auto jobs = cl.jobs_on_count(gg);
            const bool free = jobs == 0;
            busy[g] = free ? 0.0f : 1.0f;
            pick[g] = is_picked_[g] ? 1.0f : 0.0f;
            rem[g] = free ? 0.0f : remaining_feature(sim_.projected_end(cl.holder(gg)) - now);
            const bool ok = active && room[g];
            mask[g] = static_cast<std::uint8_t>(ok && !is_picked_[g]);
            occ[g] = static_cast<float>(double(jobs) / M);
            head[g] = free ? 1.0f : static_cast<float>(std::clamp((cap - cl.memory_used(gg)) / cap, 0.0, 1.0));
            // a free GPU: no one to interfere with, factor 1
            itf[g] = !ok ? 0.0f : free ? 1.0f : static_cast<float>(std::clamp(interference_with(gg, current_), 0.0, 1.0));
        }
        for (std::size_t r = 0; r < topo_.num_racks(); ++r) write_rack_rows(r);
    }

    /// The job, queue window and global features.
    void write_tail() noexcept {
        const auto& cl = cluster();
        const double now = sim_.now();
        float* o = buf_.obs.data() + job_offset();
        if (current_ != none) {
            *o++ = cur_.request_feat;
            *o++ = float(cur_gpus_ - picked_.size()) / float(cur_gpus_);
            *o++ = cur_.ideal_feat;
            *o++ = cur_.comm_feat;
            *o++ = squash(now - cur_.submit);
        } else {
            for (int i = 0; i < 5; ++i) *o++ = 0.0f;
        }
        std::size_t written = 0;
        for (auto j : queue_) {
            if (written == K_) break;
            if (j == current_) continue;
            const auto& w = job_info_[j];
            *o++ = 1.0f;
            *o++ = w.request_feat;
            *o++ = w.ideal_feat;
            *o++ = squash(now - w.submit);
            ++written;
        }
        for (; written < K_; ++written)
            for (int i = 0; i < 4; ++i) *o++ = 0.0f;
        const double q = double(queue_.size());
        *o++ = float(cl.busy_gpus()) / float(G_);
        *o++ = static_cast<float>(q / (q + double(K_ ? K_ : 1)));
        *o++ = squash(now);
        *o++ = jobs_.empty() ? 1.0f : float(sim_.finished().size()) / float(jobs_.size());
    }

    // Hot state first and together: every step reads it, and a vector env steps many envs in
    // turn, each out of cache, so each cache line the step touches costs a miss. A pick that does
    // not complete its job reads and writes only the first four lines of the object.
    detail::obs_buffers buf_;  ///< observation and mask (owned, or bound to external memory)
    std::size_t G_ = 0;
    std::uint32_t current_ = none;
    std::uint32_t cur_gpus_ = 0;    ///< GPUs the current job requests
    std::size_t steps_ = 0;
    std::uint64_t time_moves_ = 0;  ///< calls of the simulator's advance(): when it changes, time moved
    double episode_return_ = 0, pending_reward_ = 0;
    /// The options step() reads, copied out of cfg_ (whose other fields are cold).
    struct step_options {
        std::size_t step_limit = ~std::size_t{0};                  ///< max_steps, or none
        double time_limit = std::numeric_limits<double>::infinity();  ///< max_time, or none
        bool allow_defer = true, backfill = true;
        double time_scale = 1, jct = 1, makespan = 0, comm = 0, placement = 0;
        float time_scale_f = 1;  ///< time_scale as the float remaining_feature() divides by
    } opt_;
    bool terminated_ = false, truncated_ = false, started_ = false;
    std::size_t job_off_ = 0;  ///< offset of the job features in the observation
    detail::bounded_vector<gpu_id> picked_;  ///< capacity G
    std::vector<std::uint8_t> is_picked_;
    std::vector<std::uint32_t> node_picked_, rack_picked_;
    std::size_t K_ = 0;
    std::uint64_t epoch_ = 1;
    /// What the queue features and scans read of a job, in one place (32 bytes).
    struct job_entry {
        float request_feat, ideal_feat, comm_feat;  ///< its observation features
        double submit;
        std::uint64_t deferred;  ///< the epoch in which it was deferred (skipped until epoch_ moves)
    };
    std::vector<std::uint32_t> queue_;
    /// The waiting jobs' requests, parallel to queue_: the scan for a job that fits reads only this
    /// dense array (and a start erases 8 bytes per entry after it, not more: queues can be long).
    std::vector<std::uint32_t> wait_gpus_;
    std::vector<job_entry> job_info_;  ///< per job
    job_entry cur_{};                  ///< the current job's entry
    std::size_t cur_pos_ = 0;          ///< and its position in queue_
    std::vector<float> request_feat_;  ///< request_feature(k) for k = 0..G
    std::vector<std::uint8_t> rack_dirty_;       ///< racks whose rows update_after_decision() rewrites
    detail::bounded_vector<std::uint32_t> dirty_racks_;  ///< capacity: the number of racks
    basic_simulator<J> sim_;
    T topo_;
    C comm_;
    ModelZoo zoo_;
    // cold
    scenario cfg_;
    std::size_t obs_size_ = 0;
    workload_source workload_;
    std::vector<TrainingJob> gen_;
    std::vector<J> jobs_;
    std::vector<double> ideal_, memory_;
    std::uint64_t seed_ = 0;
    std::vector<obs_segment> layout_;
    mutable std::vector<double> scratch_;
    // co-location room classes (see room_hosts())
    static constexpr std::uint64_t never_synced = ~std::uint64_t{0};
    std::vector<std::uint32_t> class_of_;     ///< per job: its room class
    std::vector<std::uint32_t> class_rep_;    ///< per class: one of its jobs
    std::vector<std::uint32_t> class_hosts_;  ///< per class: GPUs with room (as of its last sync)
    std::vector<std::uint64_t> class_gen_;    ///< per class: cluster change generation at its last sync
    std::vector<std::size_t> class_pos_;      ///< per class: change-log position at its last sync
    std::vector<std::uint8_t> class_room_;    ///< class x GPU: 1 if the GPU has room for the class
    std::vector<std::uint32_t> class_order_;  ///< scratch for build_room_classes()
};

/// The common case: a tree topology, training jobs and ring all-reduce.
using env = basic_env<>;
/// Proximity-DRL's setting: tree topology with the route cost model.
using tree_route_env = basic_env<TreeTopology, TrainingJob, TreeRouteCost>;

/// The name of a scenario's comm model: "ring_allreduce" (the default) or "tree_route".
/// ConfigError naming /comm/model for anything else.
[[nodiscard]] inline std::string comm_model_name(const scenario& s) {
    std::string m(RingAllReduce::name);
    if (s.comm.is_object() && s.comm.contains("model")) {
        const auto& v = s.comm["model"];
        if (!v.is_string()) throw ConfigError("config /comm/model: expected a string, got " + detail::short_dump(v));
        m = v.template get<std::string>();
    }
    if (m != RingAllReduce::name && m != TreeRouteCost::name)
        throw ConfigError("config /comm/model: unknown model \"" + m + "\" (allowed: " + std::string(RingAllReduce::name) + ", " +
                          std::string(TreeRouteCost::name) + ")");
    return m;
}

/// Calls f(std::type_identity<E>{}) with E the env type a scenario needs (env for ring_allreduce,
/// tree_route_env for tree_route) and returns its result: the one place that maps a scenario to an
/// env type.
template <class F>
decltype(auto) visit_env(const scenario& s, F&& f) {
    if (comm_model_name(s) == TreeRouteCost::name) return std::forward<F>(f)(std::type_identity<tree_route_env>{});
    return std::forward<F>(f)(std::type_identity<env>{});
}

}  // namespace gpuplace
