#pragma once
/// \file config.hpp
/// One JSON document holds every option of a scenario: topology, communication model, model zoo,
/// workload, environment (queue policy, DEFER, observation window, limits) and reward weights.
/// Unknown keys and bad values are ConfigErrors naming the JSON path and the value.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "data.hpp"
#include "detail/json_util.hpp"
#include "colocation.hpp"
#include "workload.hpp"

namespace gpuplace {

/// Order in which waiting jobs are considered.
enum class queue_order : std::uint8_t {
    fifo,         ///< submit time
    sjf,          ///< shortest ideal duration first
    fewest_gpus,  ///< smallest GPU request first
};

[[nodiscard]] inline std::string_view to_string(queue_order q) noexcept {
    switch (q) {
        case queue_order::fifo: return "fifo";
        case queue_order::sjf: return "sjf";
        case queue_order::fewest_gpus: return "fewest_gpus";
    }
    return "?";
}

/// Options of the decision process.
struct env_options {
    queue_order order = queue_order::fifo;
    bool backfill = true;            ///< false: strict head-of-line (only the first waiting job may start)
    bool allow_defer = false;        ///< add the DEFER action (index = number of GPUs)
    std::size_t queue_window = 8;    ///< waiting jobs described in the observation
    std::size_t max_steps = 0;       ///< truncate after this many steps (0 = no limit)
    double max_time = 0.0;           ///< truncate once simulated time reaches this (s, 0 = no limit)
};

/// Reward weights. r = -jct * (jobs in system x elapsed) / time_scale - makespan * elapsed / time_scale
///                     - comm * cost of a placement + placement * Proximity-DRL placement score.
struct reward_config {
    double jct = 1.0;
    double makespan = 0.0;
    double comm = 0.0;
    double placement = 0.0;
    double time_scale = 3600.0;  ///< seconds per unit of reward
};

/// A whole scenario.
struct scenario {
    std::string name = "custom";
    detail::json topology = {{"preset", "dgx_a100"}, {"racks", 2}, {"nodes_per_rack", 4}};
    detail::json comm = {{"model", "ring_allreduce"}};
    detail::json zoo;  ///< null: the built-in zoo; a string: a zoo JSON file; an object: an inline zoo
    workload_config workload;
    env_options env;
    reward_config reward;
    colocation_config colocation;  ///< off by default

    /// Reads a scenario; every key is optional (defaults above), unknown keys are errors.
    [[nodiscard]] static scenario from_json(const detail::json& j) {
        using namespace detail;
        check_keys(j, "", {"name", "topology", "comm", "zoo", "workload", "env", "reward", "colocation"});
        scenario s;
        read_string(j, "", "name", s.name);
        if (auto it = j.find("topology"); it != j.end()) {
            if (!it->is_object()) config_fail("/topology", "expected an object, got " + short_dump(*it));
            s.topology = *it;
        }
        if (auto it = j.find("comm"); it != j.end()) {
            if (!it->is_object()) config_fail("/comm", "expected an object, got " + short_dump(*it));
            s.comm = *it;
            if (!s.comm.contains("model")) s.comm["model"] = "ring_allreduce";
            else if (!s.comm["model"].is_string())  // never a silent default for a non-string model
                config_fail("/comm/model", "expected a string, got " + short_dump(s.comm["model"]));
        }
        if (auto it = j.find("zoo"); it != j.end()) {
            if (!it->is_null() && !it->is_string() && !it->is_object())
                config_fail("/zoo", "expected a file name or an object, got " + short_dump(*it));
            s.zoo = *it;
        }
        if (auto it = j.find("colocation"); it != j.end()) s.colocation = colocation_config::from_json(*it, "/colocation");
        if (auto it = j.find("workload"); it != j.end()) s.workload = workload_config::from_json(*it, "/workload");
        if (auto it = j.find("env"); it != j.end()) {
            const std::string p = "/env";
            check_keys(*it, p, {"queue_policy", "backfill", "allow_defer", "queue_window", "max_steps", "max_time"});
            std::string q = std::string(to_string(s.env.order));
            read_string(*it, p, "queue_policy", q);
            if (q == "fifo") s.env.order = queue_order::fifo;
            else if (q == "sjf") s.env.order = queue_order::sjf;
            else if (q == "fewest_gpus") s.env.order = queue_order::fewest_gpus;
            else config_fail(p + "/queue_policy", "unknown queue policy \"" + q + "\" (allowed: fifo, sjf, fewest_gpus)");
            read_bool(*it, p, "backfill", s.env.backfill);
            read_bool(*it, p, "allow_defer", s.env.allow_defer);
            read_int(*it, p, "queue_window", s.env.queue_window, 0, 1024);
            read_int(*it, p, "max_steps", s.env.max_steps, 0, (1LL << 62));
            read_number(*it, p, "max_time", s.env.max_time, 0.0);
        }
        if (auto it = j.find("reward"); it != j.end()) {
            const std::string p = "/reward";
            check_keys(*it, p, {"jct", "makespan", "comm", "placement", "time_scale"});
            read_number(*it, p, "jct", s.reward.jct);
            read_number(*it, p, "makespan", s.reward.makespan);
            read_number(*it, p, "comm", s.reward.comm);
            read_number(*it, p, "placement", s.reward.placement);
            read_number(*it, p, "time_scale", s.reward.time_scale, 1e-12);
        }
        return s;
    }

    /// Parses JSON text (source names it in errors).
    [[nodiscard]] static scenario parse(std::string_view text, std::string_view source = "<string>") {
        return from_json(detail::parse_json(text, source));
    }

    /// Reads a scenario file. Relative file paths in it (trace, zoo file, co-location profile) are
    /// relative to the file's folder: they are made absolute (resolve_paths()).
    [[nodiscard]] static scenario load(const std::string& file) {
        std::ifstream in(file);
        if (!in) throw ConfigError("cannot open scenario file \"" + display_path(file) + "\"");
        std::stringstream ss;
        ss << in.rdbuf();
        auto s = parse(ss.str(), file);
        s.resolve_paths(std::filesystem::path(display_path(file)).parent_path().string());
        return s;
    }

    /// Makes the relative file paths of the scenario (the trace, a zoo file, a co-location profile)
    /// relative to base_dir (see relative_to()). "$GPUPLACE_DATA/..." paths stay as they are.
    void resolve_paths(std::string_view base_dir) {
        if (base_dir.empty()) return;
        workload.resolve_paths(base_dir);
        if (zoo.is_string()) zoo = relative_to(zoo.get<std::string>(), base_dir);
        if (!colocation.profile.empty()) colocation.profile = relative_to(colocation.profile, base_dir);
    }

    [[nodiscard]] detail::json to_json() const {
        detail::json j;
        j["name"] = name;
        j["topology"] = topology;
        j["comm"] = comm;
        if (!zoo.is_null()) j["zoo"] = zoo;
        j["workload"] = workload.to_json();
        j["env"] = {{"queue_policy", to_string(env.order)}, {"backfill", env.backfill}, {"allow_defer", env.allow_defer},
                    {"queue_window", env.queue_window},     {"max_steps", env.max_steps}, {"max_time", env.max_time}};
        if (colocation.enabled) j["colocation"] = colocation.to_json();
        j["reward"] = {{"jct", reward.jct},           {"makespan", reward.makespan},
                       {"comm", reward.comm},         {"placement", reward.placement},
                       {"time_scale", reward.time_scale}};
        return j;
    }
};

/// Checks job i of an episode (requesting `num_gpus` GPUs of `model`) against the cluster and the zoo.
inline void validate_job(std::size_t i, std::uint32_t num_gpus, model_id model, std::size_t cluster_gpus, const ModelZoo& zoo) {
    if (num_gpus < 1 || num_gpus > cluster_gpus)
        throw ConfigError("workload job " + std::to_string(i) + ": requests " + std::to_string(num_gpus) +
                          " GPUs, which can never fit in a cluster of " + std::to_string(cluster_gpus) + " GPUs");
    if (model >= zoo.size())
        throw ConfigError("workload job " + std::to_string(i) + ": model id " + std::to_string(model) +
                          " is not in the zoo (" + std::to_string(zoo.size()) + " models)");
}

/// Checks that job i of an episode (of `model`) fits in a GPU's memory with co-location on.
inline void validate_job_memory(const scenario& s, std::size_t i, model_id model, const ModelZoo& zoo) {
    const double memory = zoo[model].memory_gb;
    if (memory > s.colocation.gpu_memory_gb)
        throw ConfigError("workload job " + std::to_string(i) + ": model \"" + zoo[model].name + "\" needs " +
                          std::to_string(memory) + " GB per GPU, more than " +
                          "/colocation/gpu_memory_gb = " + std::to_string(s.colocation.gpu_memory_gb));
}

/// The embedded default scenario: 64 GPUs in DGX-A100 nodes (2 racks x 4 nodes x 8 GPUs) under a
/// 2:1 oversubscribed spine, 160 jobs of the built-in zoo (40% 1 GPU, 20% each 2/4/8 GPUs) at
/// offered load 1.0, so that queues form and a spread multi-GPU job runs up to several times slower.
/// DEFER is allowed: a scheduler may hold a job back (e.g. until a whole node is free) rather than
/// spread it; the heuristics never defer.
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

/// Names of the preset scenarios ("philly:<file>" too: one file of data/philly/).
[[nodiscard]] inline std::vector<std::string> preset_names() { return {"default", "proximity_drl", "colocation", "philly"}; }

/// A named preset scenario: "default", "proximity_drl", "colocation", "philly" or "philly:<file>".
[[nodiscard]] inline scenario preset_scenario(std::string_view name) {
    if (name == "default") return scenario::parse(default_scenario_json, "default scenario");
    if (name == "proximity_drl") return scenario::parse(proximity_drl_scenario_json, "proximity_drl scenario");
    if (name == "colocation") return scenario::parse(colocation_scenario_json, "colocation scenario");
    if (name == "philly" || name.starts_with("philly:")) {
        auto j = detail::parse_json(philly_scenario_json, "philly scenario");
        auto& w = j["workload"];
        if (name == "philly") {
            for (const auto& f : philly_training_files()) w["path"].push_back("$GPUPLACE_DATA/philly/" + f + ".trace");
        } else {
            const auto file = std::string(name.substr(7));
            if (file.empty() || file.find_first_of("/\\.") != std::string::npos)
                throw ConfigError("scenario preset \"" + std::string(name) + "\": expected philly:<file>, a file of data/philly/ "
                                  "without its extension (e.g. philly:0e4a51)");
            w["path"] = "$GPUPLACE_DATA/philly/" + file + ".trace";
            w["target_load"] = 1.0;
            j["name"] = std::string(name);
        }
        return scenario::from_json(j);
    }
    std::string known;
    for (const auto& p : preset_names()) known += (known.empty() ? "" : ", ") + p;
    throw ConfigError("unknown scenario preset \"" + std::string(name) + "\" (allowed: " + known + ", philly:<file>)");
}

/// Whether a name is a preset (preset_names(), or "philly:<file>").
[[nodiscard]] inline bool is_preset_name(std::string_view name) {
    for (const auto& p : preset_names())
        if (name == p) return true;
    return name.starts_with("philly:");
}

[[nodiscard]] inline scenario default_scenario() { return preset_scenario("default"); }

}  // namespace gpuplace
