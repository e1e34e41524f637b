#pragma once
/// \file round_config.hpp
/// A scenario's rounds (key "rounds", docs/rounds.md): off by default. On, a round policy decides
/// at every round boundary which jobs run in the next round, on which GPU type and on how many
/// GPUs, over the waiting and the running jobs alike; a running job may keep its GPUs, move to
/// others or be suspended. A move, a resize or a resume pays a checkpoint-restore time. The round
/// policies are Gavel's (round_policy_names()); round_env.hpp runs them.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuplace {

/// What a move, a resize or a resume costs (key "rounds.restore"): the seconds a job holds its new
/// GPUs before it makes progress again. A job's restore time is its model's entry of `models` when
/// there is one, else `seconds` + `per_gb` x its model state in GB (the zoo's memory_gb: the
/// GPU memory the model needs on each GPU).
struct restore_config {
    /// Seconds per restore. The default is the re-allocation delay of the Pollux simulator (Qiao et
    /// al., OSDI 2021: 30 s at every re-allocation), as for preemption (preemption.restart_overhead).
    double seconds = 30.0;
    double per_gb = 0.0;  ///< seconds per GB of model state, added to `seconds`
    std::vector<std::pair<std::string, double>> models;  ///< per model name: its restore seconds (replaces the rest)
    friend bool operator==(const restore_config&, const restore_config&) = default;
};

/// Elastic jobs (key "rounds.elastic", docs/rounds.md): a job the round policy may run on any GPU
/// count from min_gpus to max_gpus. A job is elastic when it carries the declared job fields
/// min_gpus / max_gpus (job_fields.hpp; either bound left out, or 0, is its request), or when the share
/// draws it: each other job is elastic with probability `share` (a stream of the episode's seed of
/// its own), with bounds max(1, floor(request x min_scale)) and ceil(request x max_scale). Either
/// way the upper bound is capped at the largest GPU count its model is measured at on every type of
/// the cluster (throughputs are interpolated between measured counts, never extrapolated past
/// them) and at the cluster's size; round_env::elastic_summary() counts the jobs capped.
struct elastic_config {
    double share = 0;  ///< the fraction of jobs without bounds of their own made elastic
    double min_scale = 0.5, max_scale = 2.0;
    friend bool operator==(const elastic_config&, const elastic_config&) = default;
};

/// A scenario's rounds (key "rounds").
struct rounds_config {
    bool enabled = false;
    /// The round policy (round_policy_names(): Gavel's max_min_fairness_perf, fifo_perf, ...).
    std::string policy = "max_min_fairness_perf";
    /// Seconds per round: Gavel's lease, 6 minutes. A round ends earlier when no job runs any more.
    double length = 360.0;
    restore_config restore;
    /// Gavel's mechanism: the allocation is computed again after jobs arrived or finished, but at
    /// most once per this many seconds (Gavel's simulator: 1920 s); 0: at every such round.
    double min_reset_interval = 1920.0;
    elastic_config elastic;
    friend bool operator==(const rounds_config&, const rounds_config&) = default;
};

/// The round policies (docs/rounds.md): Gavel's, by Gavel's names, heterogeneity-aware (_perf) and
/// the heterogeneity-agnostic counterparts (Gavel's agnostic "fifo" is gpuplace's queue policy
/// "fifo"); the elastic baselines afs_l and greedy_gain (rounds/elastic.hpp); and class_gittins,
/// the Gittins index of each job's class for hidden durations (rounds/gittins.hpp).
[[nodiscard]] inline std::vector<std::string> round_policy_names() {
    return {"max_min_fairness_perf", "max_min_fairness",     "fifo_perf",          "finish_time_fairness_perf",
            "finish_time_fairness",  "min_total_duration_perf", "min_total_duration", "max_sum_throughput_perf",
            "afs_l",                 "greedy_gain",        "class_gittins"};
}
/// Whether `name` is a round policy.
[[nodiscard]] inline bool is_round_policy(std::string_view name) {
    for (const auto& n : round_policy_names())
        if (n == name) return true;
    return false;
}
/// Whether round policy `name` solves an LP (Gavel's but fifo_perf): it needs the optional component
/// gpuplace::lp (round_policy_registry.hpp).
[[nodiscard]] inline bool round_policy_needs_lp(std::string_view name) {
    return is_round_policy(name) && name != "fifo_perf" && name != "afs_l" && name != "greedy_gain" && name != "class_gittins";
}

}  // namespace gpuplace
