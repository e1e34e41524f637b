#pragma once
/// \file src/training_run/training_run.hpp
/// A training run as gpuplace-train and `python -m gpuplace train` make it: PPO restarts (training
/// seeds seed, seed+1, ...) with greedy validation every few iterations, the network with the best
/// validation JCT kept, and everything written to a run folder:
///
///   run.json                  the config and scenario (a resumed run must match them)
///   validation_heuristics.csv every heuristic's mean JCT on the validation seeds (the yardstick)
///   [seed_K/]learning.csv     one row per iteration (seed_K/ per restart when there are several)
///   seed_K/ppo.json           each restart's best validated network (restarts > 1)
///   [seed_K/]state.bin        the restart's whole state (rl/state_file.hpp), every checkpoint_every
///                             iterations, when stopped, and at its end (with its results)
///   restarts.csv              per restart: best validation JCT, env steps, seconds, time to quality
///   ppo.json                  the kept network (rl/checkpoint.hpp)
///
/// A run stopped at any point (a signal, a crash, a killed machine) continues with `resume`: from
/// each restart's last state, the final ppo.json byte for byte the one an uninterrupted run writes
/// and the logs the same but for their wall-time columns (seconds, steps_per_sec). Every file a
/// user keeps is written atomically (gpuplace/atomic_file.hpp).
///
/// This is an application's layer, not part of the header library: it is compiled once
/// (src/training_run/*.cpp, the CMake target gpuplace_training_run) for gpuplace-train and for the
/// Python package's gpuplace._core.train_run: training_run.cpp reads the recipes and the config,
/// compare.cpp compares with the heuristics, restart_state.cpp and restart.cpp keep and train one
/// restart, run.cpp runs the whole (training_run_internal.hpp: what they share).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gpuplace/atomic_file.hpp>
#include <gpuplace/config.hpp>
#include <gpuplace/evaluate.hpp>
#include <gpuplace/json/parse.hpp>
#include <gpuplace/rl/actor_critic.hpp>
#include <gpuplace/rl/ppo.hpp>

namespace gpuplace::rl {

/// The version of run.json and state.bin files; a run of another version is not resumed.
inline constexpr int run_state_version = 1;

/// The embedded default training config (gpuplace-train's), the "default" recipe; see
/// training_run.cpp for why each value.
[[nodiscard]] json default_run_config();

/// Names of the training recipes (gpuplace-train --config <name>, experiments/train_models.sh).
[[nodiscard]] std::vector<std::string> run_recipe_names();

/// A recipe's config: for "default" the embedded default; for the others their keys merged over
/// it. ConfigError listing the recipes for an unknown name.
[[nodiscard]] json run_recipe(std::string_view name);

/// Seeds of the validation episodes: 2000000 + i (disjoint from held_out_seeds()).
[[nodiscard]] std::vector<std::uint64_t> validation_seeds(std::size_t n);

/// What a training run does (the JSON of gpuplace-train --config; see default_run_config()).
struct run_config {
    json scenario = "default";  ///< a preset name, a scenario file or an inline scenario
    json train_reward;          ///< null, or reward weights merged over the scenario's for training
    std::size_t validation_seeds = 8;   ///< greedy validation episodes (>= 1: the best validated network is kept)
    std::size_t validate_every = 10;    ///< iterations between validations
    std::size_t restarts = 1;           ///< training seeds ppo.seed .. ppo.seed + restarts - 1
    std::size_t checkpoint_every = 10;  ///< iterations between saved states
    std::string queue;  ///< the network's queue policy (queue_names(); "" = the scenario's): it is trained
                        ///< and evaluated under it, as a heuristic "<name>+<queue>" is
    /// Scenarios --compare evaluates on (preset names, files or objects); empty = the run's scenario.
    /// E.g. a policy trained on "philly" is compared on the held-out files "philly:0e4a51", ...
    std::vector<json> compare_on;
    /// Scenarios the training envs cycle through (env i trains on train_on[i % size], each under
    /// the run's queue policy, action mode and train_reward), e.g. clusters of several sizes for one
    /// network that serves them all; empty = the run's scenario. Validation and --compare stay on
    /// the run's scenario. Their observations must have one size: in the placement and job action
    /// modes they do not depend on the number of GPUs.
    std::vector<json> train_on;
    /// The action mode of every scenario of the run ("gpu", "placement", "job"; "" = each scenario's).
    std::string action_mode;
    ppo_config ppo;
    std::string base_dir;  ///< where relative file names in the config are (the config file's folder); not saved

    /// Reads a config; unknown keys and bad values are ConfigErrors naming the JSON path.
    [[nodiscard]] static run_config from_json(const json& j, std::string base_dir = {});

    /// One document merged over a base config (the default, or a resumed run's own config), and
    /// what names it in errors: a config file, or a command-line flag.
    struct layer {
        json doc;
        std::string source;
        /// Whether the document holds a value at the JSON path `path`.
        [[nodiscard]] bool sets(const std::string& path) const;
    };

    /// Checks a layer before it is merged (a merge patch would turn any other document, or a null,
    /// into "use the defaults"): an object, whose "ppo" and "ppo/network" are objects, without null
    /// values of keys but for "train_reward" (arrays replace the default whole: a null in one stays).
    /// The message names the source and the JSON path.
    static void check_layer(const layer& l);

    /// Merges `layers` (each checked by check_layer) over `base` in order and reads the result. A
    /// ConfigError at a JSON path one of the layers sets is prefixed with that layer's source.
    [[nodiscard]] static run_config from_layers(json base, const std::vector<layer>& layers, std::string base_dir = {});

    /// The embedded default (default_run_config()).
    [[nodiscard]] static run_config defaults();

    [[nodiscard]] json to_json() const;

    /// A scenario of the config (a preset name, a file relative to base_dir, or an object), in the
    /// run's action mode.
    [[nodiscard]] gpuplace::scenario load(const json& sc) const;
    /// The scenario the network is validated and evaluated on.
    [[nodiscard]] gpuplace::scenario eval_scenario() const { return load(scenario); }
    /// The scenarios --compare evaluates on: compare_on, else the run's scenario.
    [[nodiscard]] std::vector<gpuplace::scenario> compare_scenarios() const;
    /// The scenario the network acts in: eval_scenario() under the run's queue policy.
    [[nodiscard]] gpuplace::scenario policy_scenario() const;
    /// The scenario the network is trained on: policy_scenario() with train_reward's weights.
    [[nodiscard]] gpuplace::scenario train_scenario() const;
    /// `s` under the run's queue policy, with train_reward's weights (train_scenario() of the run's).
    [[nodiscard]] gpuplace::scenario train_scenario(gpuplace::scenario s) const;
    /// The scenarios the training envs cycle through: train_on's, else train_scenario().
    [[nodiscard]] std::vector<gpuplace::scenario> train_scenarios() const;
};

/// How a run is carried out (not part of what it computes). The callbacks are the run's seams:
/// a program prints and stops through them, a test injects faults through them.
struct run_options {
    std::string out = "out/train";  ///< the run folder
    bool resume = false;            ///< continue the run in `out` from its saved states
    std::size_t parallel = 1;       ///< restarts trained at a time (one thread each)
    std::function<void(const std::string&)> print;  ///< progress lines (none when empty)
    std::function<bool()> stop_requested;           ///< checked after each iteration: save and stop
    /// Events of the run: ("iteration", n) after iteration n's log row, ("restart", k) after restart
    /// k ended. Called from the restart's thread.
    std::function<void(std::string_view event, std::size_t n)> on_event;
    /// Runs halfway through each file the run writes (write_file_atomic()), with its name.
    write_observer on_write;
};

/// One restart's results.
struct restart_result {
    std::uint64_t seed = 0;
    bool finished = false;
    double best_val = 1e300;  ///< best greedy validation JCT (s)
    std::size_t env_steps = 0;
    double seconds = 0;       ///< wall time of its training (resumed runs: summed)
    std::shared_ptr<const actor_critic> network;  ///< the network with the best validation JCT
    /// Time to quality: the first validation below the best heuristic's validation JCT (0: never).
    std::size_t beat_iteration = 0, beat_env_steps = 0;
    double beat_seconds = 0;
};

/// What train_run() returns.
struct run_result {
    bool complete = false;  ///< false: stopped (stop_requested) with every state saved
    std::vector<restart_result> restarts;
    std::size_t kept = 0;   ///< index of the kept restart
    std::shared_ptr<const actor_critic> network;  ///< the kept network (complete runs)
    ppo_config ppo;         ///< its PPO config (its training seed)
    double seconds = 0;     ///< wall time of this call
    std::size_t env_steps = 0;  ///< over all restarts
    std::string best_heuristic;     ///< on the validation seeds (every heuristic under every queue policy)
    double best_heuristic_val = 0;  ///< its validation JCT (s)
};

/// The name the network goes by in reports: "ppo", or "ppo+<queue>" under a queue policy of its own.
[[nodiscard]] inline std::string policy_name(const run_config& rc) { return rc.queue.empty() ? "ppo" : "ppo+" + rc.queue; }

/// gpuplace-train --compare: the network (under the run's queue policy) and every heuristic under
/// every queue policy, on `seeds` of scenario `s` (on gpuplace::env, whatever its comm model).
/// `restarts` (optional) adds each restart's own network as "<name>[seed K]", for the spread over
/// training seeds.
[[nodiscard]] eval_report compare_with_heuristics(const gpuplace::scenario& s, const run_config& rc,
                                                  std::shared_ptr<const actor_critic> net, const std::vector<std::uint64_t>& seeds,
                                                  std::size_t threads = 0, const std::vector<restart_result>& restarts = {});

/// Over the training seeds in a compare_with_heuristics() report: each seed's held-out mean of
/// `metric`, the median seed, and the median seed against the best heuristic, paired.
struct seed_spread {
    std::vector<std::pair<std::string, double>> seeds;  ///< "<name>[seed K]" and its mean, sorted by it
    std::string median;                                 ///< the median seed's name (the lower middle one)
    std::string best_heuristic;
    paired_stat median_vs_best;                         ///< median seed minus the best heuristic
    [[nodiscard]] std::string text(const std::string& metric = "avg_jct") const;
};

/// The spread over training seeds of policy `name` in `rep`; Error when it has no "<name>[seed K]".
[[nodiscard]] seed_spread spread_over_seeds(const eval_report& rep, const std::string& name, const std::string& metric = "avg_jct");

/// The run file (run.json) of the run in the folder `out`, checked to be one this build resumes;
/// CheckpointError otherwise.
[[nodiscard]] json read_run_file(const std::string& out);

/// The config of a resumed run: the run's own (its run.json), with `layers` (what the user gave:
/// a config file, flags) merged over it. A resumed run keeps its config, so a layer that changes a
/// value is a CheckpointError naming each changed key, its stored and its new value and the layer.
[[nodiscard]] run_config resumed_config(const std::string& out, const std::vector<run_config::layer>& layers);

/// Runs (or with o.resume continues) the training run of `rc` in o.out, on the env type
/// gpuplace::env runs for its scenario. Throws ConfigError / CheckpointError on bad input, naming
/// files and what differs; a stopped run (o.stop_requested) returns complete = false with every
/// state saved.
[[nodiscard]] run_result train_run(const run_config& rc, const run_options& o);

}  // namespace gpuplace::rl
