#pragma once
/// \file config.hpp
/// A scenario holds every option of an environment: topology, communication model, model zoo,
/// workload, environment (queue policy, DEFER, observation window, limits), reward weights and
/// co-location. Scenarios are read from and written to JSON by <gpuplace/json.hpp> (errors name
/// the JSON path and the value); this header does not parse JSON.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "colocation.hpp"
#include "detail/enum_names.hpp"
#include "comm.hpp"
#include "data.hpp"
#include "failures.hpp"
#include "information.hpp"
#include "job_fields.hpp"
#include "model_zoo.hpp"
#include "round_config.hpp"
#include "tenancy.hpp"
#include "topology.hpp"
#include "workload.hpp"

namespace gpuplace {
/// Order in which waiting jobs are considered. From las on they are preemptive disciplines: they
/// need preemption on and decide which jobs run (env/discipline.hpp, docs/information.md); the
/// last five need tenants or deadlines (tenancy.hpp, env/tenancy.hpp).
enum class queue_order : std::uint8_t {
    fifo,         ///< submit time
    sjf,          ///< shortest ideal duration first (the estimate with durations "predicted")
    fewest_gpus,  ///< smallest GPU request first
    las,          ///< least attained GPU-service first
    two_d_las,    ///< Tiresias' discretised 2D-LAS ("2d_las")
    gittins,      ///< highest Gittins index of attained GPU-service first
    srtf,         ///< shortest remaining time first (oracle)
    capacity,     ///< tenants' jobs within their quota first (submit order), the rest borrow idle GPUs
    drf,          ///< progressive filling: the tenant with the fewest GPUs held per weight next
    themis,       ///< the worst estimated finish-time fairness rho first
    edf,          ///< earliest deadline first
    edf_ac,       ///< earliest deadline first, jobs that cannot meet theirs at arrival behind all others
    registered,   ///< a discipline registered by name (discipline_registry.hpp; env_options::discipline), not in the name table
};

template <>
struct detail::enum_names<queue_order> {
    static constexpr std::array<std::pair<queue_order, std::string_view>, 12> values{
        {{queue_order::fifo, "fifo"},
         {queue_order::sjf, "sjf"},
         {queue_order::fewest_gpus, "fewest_gpus"},
         {queue_order::las, "las"},
         {queue_order::two_d_las, "2d_las"},
         {queue_order::gittins, "gittins"},
         {queue_order::srtf, "srtf"},
         {queue_order::capacity, "capacity"},
         {queue_order::drf, "drf"},
         {queue_order::themis, "themis"},
         {queue_order::edf, "edf"},
         {queue_order::edf_ac, "edf_ac"}}};
};
/// Whether an order is a preemptive discipline (las and every one after it).
[[nodiscard]] constexpr bool is_preemptive(queue_order q) noexcept { return q >= queue_order::las; }
[[nodiscard]] inline std::string_view to_string(queue_order q) noexcept { return detail::enum_name(q); }

/// What one action of the env chooses (env.action_mode; see env.hpp and docs/mdp.md).
enum class action_mode : std::uint8_t {
    gpu,        ///< one GPU of the current job's (Proximity-DRL's sequential selection)
    placement,  ///< a whole placement of the current job, among `slots` candidates
    job,        ///< which waiting job starts next, among the first `slots` that fit; `placer` places it
    round,      ///< which active job runs in the next round (or stop), building the round's allocation; `placer` places it
};

template <>
struct detail::enum_names<action_mode> {
    static constexpr std::array<std::pair<action_mode, std::string_view>, 4> values{
        {{action_mode::gpu, "gpu"}, {action_mode::placement, "placement"}, {action_mode::job, "job"}, {action_mode::round, "round"}}};
};
[[nodiscard]] inline std::string_view to_string(action_mode m) noexcept { return detail::enum_name(m); }

/// The action mode of a name ("gpu", "placement", "job", "round"); ConfigError naming `path` otherwise.
[[nodiscard]] inline action_mode parse_action_mode(std::string_view name, std::string_view path = "/env/action_mode") {
    if (const auto m = detail::enum_from_name<action_mode>(name)) return *m;
    throw ConfigError("config " + std::string(path) + ": unknown action mode \"" + std::string(name) + "\" (allowed: " +
                      detail::enum_name_list<action_mode>() + ")");
}

/// The heuristics that can place a whole job for the job action mode (env.placer).
enum class placer_kind : std::uint8_t { pack, first_fit, load_balance, topology_greedy };

template <>
struct detail::enum_names<placer_kind> {
    static constexpr std::array<std::pair<placer_kind, std::string_view>, 4> values{
        {{placer_kind::pack, "pack"}, {placer_kind::first_fit, "first_fit"}, {placer_kind::load_balance, "load_balance"},
         {placer_kind::topology_greedy, "topology_greedy"}}};
};
[[nodiscard]] inline std::string_view to_string(placer_kind p) noexcept { return detail::enum_name(p); }

/// Options of the decision process.
struct env_options {
    queue_order order = queue_order::fifo;
    std::string discipline;          ///< order registered: the registered discipline's name (discipline_registry.hpp)
    bool backfill = true;            ///< false: strict head-of-line (only the first waiting job may start)
    bool allow_defer = false;        ///< add the DEFER action (index = number of GPUs)
    std::size_t queue_window = 8;    ///< waiting jobs described in the observation
    std::size_t max_steps = 0;       ///< truncate after this many steps (0 = no limit)
    double max_time = 0.0;           ///< truncate once simulated time reaches this (s, 0 = no limit)
    action_mode mode = action_mode::gpu;     ///< what an action chooses
    std::size_t slots = 8;                   ///< placement / job modes: candidates or queue jobs offered (K)
    placer_kind placer = placer_kind::pack;  ///< job mode: the heuristic that places the chosen job
    /// Heterogeneous clusters: a job's GPUs are all of one type (the mask allows, before the first
    /// pick, the GPUs of types with room for the whole job, then those of the first pick's type).
    /// GPU action mode without co-location.
    bool confine_type = false;
    /// Round action mode: the agent may stop a round's allocation while a job that fits is left out
    /// (its GPUs idle while it waits). Off by default: the round is filled, stop valid only with
    /// nothing left to choose, so a policy chooses who runs, never whether the GPUs work.
    bool round_idle = false;
    /// Round action mode: a round policy whose allocation each round the agent observes per slot
    /// (slot features advised and advice_rank) and the heuristic action follows (the teacher's fill).
    /// "" (none) or "class_gittins" (rounds/gittins.hpp, for hidden durations).
    std::string round_advisor;
};

/// The queue policy's name: the registered discipline's for queue_order::registered.
[[nodiscard]] inline std::string queue_policy_name(const env_options& e) {
    return e.order == queue_order::registered ? e.discipline : std::string(to_string(e.order));
}

/// Reward weights. r = -jct * (jobs in system x elapsed) / time_scale - makespan * elapsed / time_scale
///                     - comm * cost of a placement + placement * Proximity-DRL placement score.
struct reward_config {
    double jct = 1.0;
    double makespan = 0.0;
    double comm = 0.0;
    double placement = 0.0;
    double time_scale = 3600.0;  ///< seconds per unit of reward
    // cluster realities (docs/realities.md), each charged when a job finishes; 0 (off) by default
    double deadline_miss = 0.0;  ///< - weight per job that finishes after its deadline (needs "deadlines")
    double wasted = 0.0;         ///< - weight x the finishing job's wasted GPU-time / time_scale (restarts, lost progress, checkpoint writes)
    double unfairness = 0.0;     ///< - weight x max(0, rho - 1), the finishing job's finish-time fairness beyond 1 (Themis' rho)
    /// Reward terms of one's own (reward_registry.hpp) and their weights, by name: + weight x
    /// term(job) when a job finishes. None by default.
    std::vector<std::pair<std::string, double>> terms;
    /// Whether any term charged when a job finishes is on (the realities' or one's own).
    [[nodiscard]] bool realities() const noexcept { return deadline_miss != 0 || wasted != 0 || unfairness != 0 || !terms.empty(); }
};

/// Which segments of the observation an env shows (key "observation"; docs/mdp.md): every one by
/// default; with `features`, only those; with `exclude`, every one but those. Names are the
/// segments' (observation_layout(): "gpu_busy", "gpu_node_free", "queue", "global", ...,
/// "candidate_cost" in the placement mode); the kept segments keep the layout's order. The env
/// checks the names against its layout (ConfigError naming the unknown one and the known ones).
struct observation_config {
    std::vector<std::string> features;  ///< the segments to show (empty: see exclude)
    std::vector<std::string> exclude;   ///< the segments to leave out
    [[nodiscard]] bool selects() const noexcept { return !features.empty() || !exclude.empty(); }
    bool operator==(const observation_config&) const = default;
};

/// A scenario's model zoo (key "zoo"): the built-in one (ModelZoo::builtin(): Gavel's V100
/// measurements) unless a zoo file or a zoo given inline is set.
struct zoo_config {
    std::string file;             ///< a zoo JSON file ("$GPUPLACE_DATA/..." allowed)
    std::optional<ModelZoo> zoo;  ///< a zoo given inline
    /// What reads `file` when an env is built: set by the layer that read the scenario
    /// (gpuplace/json/scenario.hpp sets load_zoo), so that the core never parses JSON; by hand,
    /// set it to gpuplace::load_zoo (gpuplace/json/zoo.hpp) or set `zoo` instead of `file`.
    ModelZoo (*read_file)(const std::string& file) = nullptr;

    /// The zoo: the inline one, the file's, or the built-in one.
    [[nodiscard]] ModelZoo make() const {
        if (zoo) return *zoo;
        if (!file.empty()) {
            if (!read_file)
                throw ConfigError("model zoo \"" + file + "\": no reader for zoo files (zoo_config::read_file); read the scenario "
                                  "with gpuplace/json/scenario.hpp, or set read_file = gpuplace::load_zoo (gpuplace/json/zoo.hpp)");
            return read_file(file);
        }
        return ModelZoo::builtin();
    }
};

/// A whole scenario.
struct scenario {
    std::string name = "custom";
    topology_config topology = topology_config::of("dgx_a100", 2, 4);
    comm_config comm;    ///< ring_allreduce by default
    zoo_config zoo;      ///< the built-in zoo by default
    workload_config workload;
    env_options env;
    reward_config reward;
    observation_config observation;  ///< every segment by default
    colocation_config colocation;  ///< off by default
    durations_config durations;    ///< what the scheduler knows of durations: oracle by default
    preemption_config preemption;  ///< off by default
    rounds_config rounds;          ///< off by default: round policies (round_env.hpp)
    failures_config failures;      ///< off by default: hardware failures and checkpoints (failures.hpp)
    std::vector<job_field> job_fields;  ///< declared job fields (job_fields.hpp): none by default
    tenants_config tenants;      ///< off by default: tenants with quotas (tenancy.hpp)
    spot_config spot;            ///< off by default: a spot class
    deadlines_config deadlines;  ///< off by default: deadlines

    /// Makes the relative file paths of the scenario (the trace, a zoo file, a co-location profile)
    /// relative to base_dir (see relative_to()). "$GPUPLACE_DATA/..." paths stay as they are.
    void resolve_paths(std::string_view base_dir) {
        if (base_dir.empty()) return;
        workload.resolve_paths(base_dir);
        if (!zoo.file.empty()) zoo.file = relative_to(zoo.file, base_dir);
        if (!colocation.profile.empty()) colocation.profile = relative_to(colocation.profile, base_dir);
        for (auto& f : durations.sample_files) f = relative_to(f, base_dir);
    }
};

/// The default scenario (the preset "default" of <gpuplace/json.hpp>, built without reading
/// JSON): 64 GPUs in DGX-A100 nodes (2 racks x 4 nodes x 8 GPUs) under a 2:1 oversubscribed spine,
/// 160 jobs of the built-in zoo (40% 1 GPU, 20% each 2/4/8 GPUs) at offered load 1.0, so that
/// queues form and a spread multi-GPU job runs up to several times slower. DEFER is allowed: a
/// scheduler may hold a job back (e.g. until a whole node is free) rather than spread it; the
/// heuristics never defer.
[[nodiscard]] inline scenario default_scenario() {
    scenario s;
    s.name = "default";
    s.env.allow_defer = true;
    return s;
}

/// The name of a scenario's comm model: "ring_allreduce" or "tree_route". ConfigError naming
/// /comm/model for anything else.
[[nodiscard]] inline const std::string& comm_model_name(const scenario& s) {
    if (s.comm.model != RingAllReduce::name && s.comm.model != TreeRouteCost::name)
        throw ConfigError("config /comm/model: unknown model \"" + s.comm.model + "\" (allowed: " + std::string(RingAllReduce::name) +
                          ", " + std::string(TreeRouteCost::name) + ")");
    return s.comm.model;
}

/// The workload a scenario's duration distribution is sampled from (the Gittins indices, model_mean
/// estimates, forked futures): durations.sample_files replayed as a trace workload, or, when it
/// names none, the scenario's own workload.
[[nodiscard]] inline workload_config duration_sample_workload(const scenario& s) {
    auto w = s.workload;
    if (!s.durations.sample_files.empty()) {
        w.kind = "trace";
        w.path = s.durations.sample_files.front();
        w.more_paths.assign(s.durations.sample_files.begin() + 1, s.durations.sample_files.end());
    }
    return w;
}

/// Checks the jobs of an episode against a cluster of `num_gpus` GPUs, the zoo and, with
/// co-location on, the GPUs' memory: "workload job <i>: ..." ConfigErrors.
inline void validate_jobs(const scenario& s, std::span<const TrainingJob> jobs, std::size_t num_gpus, const ModelZoo& zoo) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const auto& j = jobs[i];
        if (j.num_gpus < 1 || j.num_gpus > num_gpus)
            throw ConfigError("workload job " + std::to_string(i) + ": requests " + std::to_string(j.num_gpus) +
                              " GPUs, which can never fit in a cluster of " + std::to_string(num_gpus) + " GPUs");
        if (j.model >= zoo.size())
            throw ConfigError("workload job " + std::to_string(i) + ": model id " + std::to_string(j.model) +
                              " is not in the zoo (" + std::to_string(zoo.size()) + " models)");
    }
    if (!s.colocation.enabled) return;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const auto& m = zoo[jobs[i].model];
        if (m.memory_gb > s.colocation.gpu_memory_gb)
            throw ConfigError("workload job " + std::to_string(i) + ": model \"" + m.name + "\" needs " + std::to_string(m.memory_gb) +
                              " GB per GPU, more than /colocation/gpu_memory_gb = " + std::to_string(s.colocation.gpu_memory_gb));
    }
}

}  // namespace gpuplace
