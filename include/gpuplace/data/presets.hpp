#pragma once
/// \file data/presets.hpp
/// The preset catalogue: the JSON texts of the preset scenarios (default, proximity_drl,
/// colocation, heterogeneous, philly, nvl72, heterogeneous_gavel, elastic) and the Philly trace files a policy trains on and is held
/// out on. Data only: gpuplace/json/presets.hpp reads them (preset_scenario()).

#include <string>
#include <string_view>
#include <vector>

namespace gpuplace {

/// The default scenario as JSON (default_scenario() builds the same scenario without reading it):
/// 64 GPUs in DGX-A100 nodes (2 racks x 4 nodes x 8 GPUs) under a 2:1 oversubscribed spine, 160
/// jobs of the built-in zoo (40% 1 GPU, 20% each 2/4/8 GPUs) at offered load 1.0, DEFER allowed.
inline constexpr std::string_view default_scenario_json = R"json({
  "name": "default",
  "topology": {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "synthetic", "num_jobs": 160, "load": 1.0,
               "gpu_counts": {"1": 0.4, "2": 0.2, "4": 0.2, "8": 0.2},
               "duration_min": 600, "duration_max": 14400},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// The Proximity-DRL cluster (2 racks x 4 nodes x 4 GPUs) with its route cost and workload.
inline constexpr std::string_view proximity_drl_scenario_json = R"json({
  "name": "proximity_drl",
  "topology": {"preset": "proximity_drl"},
  "comm": {"model": "tree_route"},
  "workload": {"kind": "proximity_drl", "num_jobs": 30, "max_length": 20, "max_request": 8, "time_step": 60},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": false, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Co-location: 16 GPUs (2 DGX-A100 nodes), a burst of 200 single-GPU jobs of four models that
/// share a GPU well (Gavel's measured pairs), up to 2 jobs per 32 GB GPU, DEFER enabled.
inline constexpr std::string_view colocation_scenario_json = R"json({
  "name": "colocation",
  "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "synthetic", "num_jobs": 200, "load": 50.0, "gpu_counts": {"1": 1.0},
               "duration_min": 1800, "duration_max": 3600,
               "models": {"ResNet-18 (batch size 64)": 1, "LM (batch size 20)": 1,
                          "Transformer (batch size 64)": 1, "A3C": 1}},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "colocation": {"enabled": true, "max_jobs_per_gpu": 2, "gpu_memory_gb": 32},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// A heterogeneous cluster: 72 GPUs, one rack of 3 servers x 8 GPUs per GPU type (V100, P100,
/// K80; NVLink inside a server at 100 GB/s, 12.5 GB/s between servers, 6.25 GB/s between racks),
/// 160 jobs of the built-in zoo's 26 job types (40% 1 GPU, 20% each 2/4/8 GPUs) at offered load
/// 0.6 in V100 time (the P100 and K80 racks are slower for most models), DEFER allowed
/// (docs/heterogeneous.md).
inline constexpr std::string_view heterogeneous_scenario_json = R"json({
  "name": "heterogeneous",
  "topology": {"preset": "custom", "racks": 3, "nodes_per_rack": 3, "gpus_per_node": 8,
               "node_bandwidth": 100, "rack_bandwidth": 12.5, "spine_bandwidth": 6.25,
               "gpu_types": ["v100", "p100", "k80"]},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "synthetic", "num_jobs": 160, "load": 0.6,
               "gpu_counts": {"1": 0.4, "2": 0.2, "4": 0.2, "8": 0.2},
               "duration_min": 600, "duration_max": 14400},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Gavel's heterogeneous cluster and a Philly-derived trace (docs/rounds.md, docs/fidelity.md): 96
/// GPUs, 32 each of V100, P100 and K80 in 8-GPU servers (one rack of 4 per type) of the zoo's
/// measurement hardware (NVLink 100 GB/s inside a server, 25 Gb/s Ethernet = 3.125 GB/s between
/// servers and racks), replaying the first 227 jobs of data/philly/ee9e8c.trace whose model is
/// measured at their GPU count (the trace's others: unmeasured "drop"), arrivals as recorded. The
/// run the round policies are compared on with Gavel's own simulator.
inline constexpr std::string_view heterogeneous_gavel_scenario_json = R"json({
  "name": "heterogeneous_gavel",
  "topology": {"preset": "custom", "racks": 3, "nodes_per_rack": 4, "gpus_per_node": 8,
               "node_bandwidth": 100, "rack_bandwidth": 3.125, "spine_bandwidth": 3.125,
               "node_latency": 2e-6, "rack_latency": 20e-6, "spine_latency": 20e-6,
               "gpu_types": ["v100", "p100", "k80"]},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "trace", "format": "philly", "path": "$GPUPLACE_DATA/philly/ee9e8c.trace", "max_jobs": 227,
               "unmeasured": "drop"},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": false, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// An NVL72-class cluster with LLM-scale gangs: 576 GPUs in 8 racks of 72, each rack one NVLink
/// domain (900 GB/s) under a 50 GB/s spine (the topology preset "nvl72"), 100 Transformer jobs
/// (the zoo's batch sizes 128 and 256) asking for 8 to 288 GPUs (half of them 32 or more, a tenth
/// four whole racks) at offered load 0.8, DEFER allowed. A gang larger than a rack spans racks, and
/// its ring all-reduce then pays the spine's bandwidth and 2(k - 1) of its latencies a step: where
/// it lands, and whether it waits for racks to drain, is the question.
inline constexpr std::string_view nvl72_scenario_json = R"json({
  "name": "nvl72",
  "topology": {"preset": "nvl72", "racks": 8},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "synthetic", "num_jobs": 100, "load": 0.8,
               "gpu_counts": {"8": 0.3, "16": 0.2, "32": 0.2, "72": 0.1, "144": 0.1, "288": 0.1},
               "duration_min": 1800, "duration_max": 28800,
               "models": {"Transformer (batch size 128)": 1, "Transformer (batch size 256)": 1}},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Elastic jobs (docs/rounds.md, "Elastic jobs"): 32 V100 GPUs in 4 servers of 8 on the zoo's
/// measurement hardware (NVLink 100 GB/s inside a server, 25 Gb/s Ethernet = 3.125 GB/s between),
/// 120 synthetic jobs of the built-in zoo (40% 1 GPU, 20% each 2/4/8 GPUs) at offered load 0.8,
/// half of them elastic from half to twice their request (capped at their model's largest
/// measured count). The elastic bounds are read by the round policies (a --queue round policy:
/// afs_l, greedy_gain, Gavel's); the other queue policies run every job at its request.
inline constexpr std::string_view elastic_scenario_json = R"json({
  "name": "elastic",
  "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 4, "gpus_per_node": 8,
               "node_bandwidth": 100, "rack_bandwidth": 3.125, "spine_bandwidth": 3.125,
               "node_latency": 2e-6, "rack_latency": 20e-6, "spine_latency": 20e-6},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "synthetic", "num_jobs": 120, "load": 0.8,
               "gpu_counts": {"1": 0.4, "2": 0.2, "4": 0.2, "8": 0.2},
               "duration_min": 600, "duration_max": 14400},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "rounds": {"elastic": {"share": 0.5, "min_scale": 0.5, "max_scale": 2.0}},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Tenants with quotas (tenancy.hpp, docs/realities.md): the default scenario's 64 GPUs and
/// 160 synthetic jobs at offered load 1.0, each job drawn to one of three tenants (prod 30%,
/// research 50%, dev 20%) whose guaranteed quotas are 32, 16 and 16 GPUs: research asks for more
/// than its quota and borrows what prod leaves idle. Preemption with a 30 s restart; the
/// capacity discipline (--queue backfill, drf, themis for the others).
inline constexpr std::string_view tenants_scenario_json = R"json({
  "name": "tenants",
  "topology": {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4},
  "comm": {"model": "ring_allreduce"},
  "job_fields": [{"name": "tenant", "categories": ["prod", "research", "dev"], "draw": {"prod": 0.3, "research": 0.5, "dev": 0.2},
                  "observe": true}],
  "workload": {"kind": "synthetic", "num_jobs": 160, "load": 1.0},
  "env": {"queue_policy": "capacity", "backfill": true, "allow_defer": true, "queue_window": 8},
  "preemption": {"enabled": true, "restart_overhead": 30},
  "tenants": {"quotas": {"prod": 32, "research": 16, "dev": 16}},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Tenants from a real trace (tenancy.hpp, docs/realities.md): Microsoft Philly's virtual clusters
/// as tenants. Three of Gavel's Philly-derived files (one virtual cluster each; training files of
/// similar spans, 2,470 jobs in all) merged into one trace by submit time, each job's tenant its
/// file; windows of 200 consecutive jobs compressed to an offered load drawn from [0.8, 1.2] on
/// the default 64 GPUs. Each virtual cluster is guaranteed a third of the GPUs (the trace does not
/// give Philly's quotas); preemption with a 30 s restart, the capacity discipline.
inline constexpr std::string_view philly_tenants_scenario_json = R"json({
  "name": "philly_tenants",
  "topology": {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4},
  "comm": {"model": "ring_allreduce"},
  "job_fields": [{"name": "tenant", "categories": ["103959", "2869ce", "ed69ec"], "observe": true}],
  "workload": {"kind": "trace", "format": "philly", "merge_as": "tenant", "target_load": [0.8, 1.2], "episode_jobs": 200,
               "path": ["$GPUPLACE_DATA/philly/103959.trace", "$GPUPLACE_DATA/philly/2869ce.trace", "$GPUPLACE_DATA/philly/ed69ec.trace"]},
  "env": {"queue_policy": "capacity", "backfill": true, "allow_defer": true, "queue_window": 8},
  "preemption": {"enabled": true, "restart_overhead": 30},
  "tenants": {"share": true, "quotas": {"103959": 0.3333333333333333, "2869ce": 0.3333333333333333, "ed69ec": 0.3333333333333333}},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// A spot class (tenancy.hpp): the default scenario's 64 GPUs and 160 synthetic jobs at offered
/// load 1.0, 30% of them spot jobs that run on leftover GPUs and are evicted (30 s restart) when a
/// guaranteed job needs them; under LAS with the class first.
inline constexpr std::string_view spot_scenario_json = R"json({
  "name": "spot",
  "topology": {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4},
  "comm": {"model": "ring_allreduce"},
  "job_fields": [{"name": "class", "type": "category", "categories": ["guaranteed", "spot"], "draw": {"guaranteed": 0.7, "spot": 0.3},
                  "observe": true}],
  "workload": {"kind": "synthetic", "num_jobs": 160, "load": 1.0},
  "env": {"queue_policy": "las", "backfill": true, "allow_defer": true, "queue_window": 8},
  "preemption": {"enabled": true, "restart_overhead": 30},
  "spot": {},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Deadlines (tenancy.hpp): the default scenario's 64 GPUs and 160 synthetic jobs at offered load
/// 1.0, each with a deadline of submit + f x its ideal duration, f uniform in [0.5, 1.5]
/// (ElasticFlow's evaluation); preemption with a 30 s restart, under EDF.
inline constexpr std::string_view deadlines_scenario_json = R"json({
  "name": "deadlines",
  "topology": {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4},
  "comm": {"model": "ring_allreduce"},
  "job_fields": [{"name": "deadline", "observe": true}],
  "workload": {"kind": "synthetic", "num_jobs": 160, "load": 1.0},
  "env": {"queue_policy": "edf", "backfill": true, "allow_defer": true, "queue_window": 8},
  "preemption": {"enabled": true, "restart_overhead": 30},
  "deadlines": {"factor": [0.5, 1.5]},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// The Philly-derived trace files (data/philly/, data/README.md) a policy is trained on, and those
/// held out from training (results on Philly traces are reported on these, file by file).
[[nodiscard]] inline std::vector<std::string> philly_training_files() {
    return {"103959", "11cb48", "2869ce", "6214e9", "b436b2", "ed69ec", "ee9e8c"};
}
[[nodiscard]] inline std::vector<std::string> philly_heldout_files() { return {"0e4a51", "6c71a0", "7f04ca", "e13805"}; }

/// Philly: the default scenario's 64 GPUs replaying windows of 200 consecutive jobs of Gavel's
/// Philly-derived traces (models and steps from the trace, throughputs from the zoo). Each episode
/// picks one of the training files and a window of it, with the file's arrivals compressed to an
/// offered load drawn from [0.8, 1.2] on the 64 GPUs. "philly:<file>" is one file (e.g. a held-out
/// one, "philly:0e4a51") at offered load 1.0.
inline constexpr std::string_view philly_scenario_json = R"json({
  "name": "philly",
  "topology": {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "trace", "format": "philly", "path": [], "target_load": [0.8, 1.2], "episode_jobs": 200},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Philly, the realistic information setting (docs/information.md): the philly preset with hidden
/// durations, preemption on under LAS (30 s restart overhead), the 2D-LAS thresholds at the
/// median and the 90th percentile of the training files' job sizes (12,800 and 251,000
/// GPU-seconds) and the Gittins quantum at their 75th percentile (79,000), the duration
/// distribution from the training files. "philly_hidden:<file>" is one file at offered load 1.0.
inline constexpr std::string_view philly_hidden_overrides_json = R"json({
  "env": {"queue_policy": "las"},
  "durations": {"mode": "hidden"},
  "preemption": {"enabled": true, "restart_overhead": 30, "thresholds": [12800, 251000], "gittins_quantum": 79000}
})json";

/// Failures (docs/realities.md): the philly preset with nodes that fail, a stress test: a node
/// fails every 24 h on average (260 times Llama 3's rate, so that an episode sees dozens of
/// failures), with the decreasing hazard of a Weibull of shape 0.7 (node failures of HPC systems,
/// Schroeder and Gibson, DSN 2006), out of service 2 h on average; jobs checkpoint every hour at
/// 60 s a checkpoint and restart in 30 s.
inline constexpr std::string_view failures_overrides_json = R"json({
  "failures": {"enabled": true, "scope": "node", "mtbf_hours": 24, "distribution": "weibull", "shape": 0.7, "repair_hours": 2,
               "restart_overhead": 30, "checkpoint_interval": 3600, "checkpoint_cost": 60}
})json";

/// What preset scenario `name` is, and whether its hardware is the zoo's measurement hardware (V100,
/// P100 and K80 servers of 8 GPUs, NVLink 100 GB/s inside, 25 Gb/s Ethernet between; docs/rounds.md):
/// on other links a trace's multi-GPU jobs run faster than measured.
[[nodiscard]] inline std::string preset_about(std::string_view name) {
    const std::string dgx = "; DGX-A100 links (NVSwitch 300 GB/s), not the zoo's measurement hardware: multi-GPU jobs run faster than measured";
    if (name == "default") return "64 DGX-A100 GPUs, 160 synthetic jobs at offered load 1.0" + dgx;
    if (name == "proximity_drl") return "Proximity-DRL's 32 GPUs, route cost and workload (30 jobs)";
    if (name == "colocation") return "16 GPUs shared by up to 2 jobs each, a burst of 200 1-GPU jobs" + dgx;
    if (name == "philly" || name == "philly_hidden")
        return std::string(name == "philly" ? "windows of 200 Philly-derived jobs" : "philly with durations hidden and preemption (LAS)") +
               " on 64 DGX-A100 GPUs" + dgx;
    if (name == "heterogeneous")
        return "72 GPUs of V100, P100, K80, 160 synthetic jobs; 12.5 / 6.25 GB/s between servers / racks, faster than the zoo's "
               "measurement hardware (3.125 GB/s): jobs spread over servers run faster than measured";
    if (name == "nvl72") return "576 GPUs in NVL72 racks, Transformer gangs of 8 to 288; NVLink 900 GB/s, faster than measured";
    if (name == "elastic")
        return "32 V100 GPUs on the zoo's measurement hardware, 120 synthetic jobs, half of them elastic (0.5x to 2x their request) "
               "under a round policy";
    if (name == "failures")
        return "philly with nodes failing every 24 h on average (Weibull, shape 0.7), 2 h repairs, hourly checkpoints" + dgx;
    if (name == "heterogeneous_gavel")
        return "Gavel's 96 GPUs (32 V100, P100, K80) on the zoo's measurement hardware (measured rates), 227 Philly jobs";
    if (name == "tenants") return "default with three tenants (quotas 32/16/16 GPUs), preemption, the capacity discipline" + dgx;
    if (name == "philly_tenants")
        return "three Philly virtual clusters' files merged, each a tenant guaranteed a third of the GPUs, preemption, the capacity discipline" + dgx;
    if (name == "spot") return "default with 30% spot jobs evicted for guaranteed ones, preemption, LAS" + dgx;
    if (name == "deadlines") return "default with deadlines of submit + U[0.5, 1.5] x ideal duration, preemption, EDF" + dgx;
    return "a preset scenario (data/presets.hpp)";
}

/// Names of the preset scenarios ("philly:<file>" and "philly_hidden:<file>" too: one file of data/philly/).
[[nodiscard]] inline std::vector<std::string> preset_names() {
    return {"default", "proximity_drl", "colocation", "philly", "heterogeneous", "philly_hidden", "nvl72", "heterogeneous_gavel",
            "elastic", "failures", "tenants", "philly_tenants", "spot", "deadlines"};
}

}  // namespace gpuplace
