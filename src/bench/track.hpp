#pragma once
/// \file bench/track.hpp
/// The benchmark's tracks (docs/bench.md): each a fixed scenario (a preset, optionally changed by a
/// JSON merge patch), fixed held-out seeds, the heuristic variant that is its yardstick and, for the
/// steady-state load sweep, the window of jobs its metrics cover. A track is versioned: within a
/// version its definition never changes (a version may gain tracks); a change makes a new version.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gpuplace/config.hpp>
#include <gpuplace/error.hpp>
#include <gpuplace/json/parse.hpp>
#include <gpuplace/json/presets.hpp>
#include <gpuplace/json/scenario.hpp>

namespace gpuplace::bench {

/// The version of the track definitions tracks() returns by default.
inline constexpr std::string_view current_version = "v1";

/// One track: what a result is scored on.
struct track {
    std::string name;      ///< e.g. "default", "load-1.5", "philly-0e4a51"
    std::string version;   ///< e.g. "v1"
    std::string about;     ///< what it tests (one sentence)
    std::string preset;    ///< the preset scenario it starts from (data/presets.hpp)
    std::string patch;     ///< JSON merge patch applied to the preset's JSON ("" = none)
    std::uint64_t first_seed = 1'000'000;  ///< held-out seeds first_seed .. first_seed + episodes - 1
    std::size_t episodes = 0;
    /// The yardstick: the heuristic variant ("<heuristic>+<queue>") with the lowest mean JCT on
    /// this track among heuristic_variants(scenario), found when the version was defined
    /// (gpuplace-bench yardstick) and frozen with it.
    std::string best_heuristic;
    /// A steady-state measurement window, as Gavel measures its load sweeps: the metrics cover only
    /// the jobs with ids window_first .. window_end - 1 (ids count arrivals from 0), the jobs before
    /// being the warm-up and those after the cool-down, which keeps the cluster loaded while the
    /// window's jobs finish. window_end 0: every job of the episode (no window).
    std::size_t window_first = 0, window_end = 0;

    [[nodiscard]] bool windowed() const noexcept { return window_end > 0; }

    /// The held-out seeds of its episodes.
    [[nodiscard]] std::vector<std::uint64_t> seeds() const {
        std::vector<std::uint64_t> v;
        for (std::size_t i = 0; i < episodes; ++i) v.push_back(first_seed + i);
        return v;
    }
};

/// The definition as JSON (what a result records and validate() compares).
[[nodiscard]] inline json to_json(const track& t) {
    json j = {{"name", t.name},
              {"version", t.version},
              {"preset", t.preset},
              {"patch", t.patch.empty() ? json::object() : parse_json(t.patch, "track " + t.name + " patch")},
              {"first_seed", t.first_seed},
              {"episodes", t.episodes},
              {"best_heuristic", t.best_heuristic}};
    if (t.windowed()) j["window"] = {{"first_job", t.window_first}, {"end_job", t.window_end}};
    return j;
}

/// The tracks of a version (only "v1" so far), in suite order. ConfigError for another version.
[[nodiscard]] inline const std::vector<track>& tracks(std::string_view version = current_version) {
    // clang-format off
    static const std::vector<track> v1 = [] {
        const std::string v = "v1";
        std::vector<track> t = {
            {"default", v, "the default scenario: 64 DGX-A100 GPUs under a 2:1 spine, 160 synthetic jobs at offered load 1.0",
             "default", "", 1'000'000, 50, "pack_wait+sjf"},
            {"proximity_drl", v, "Proximity-DRL's cluster (32 GPUs), route cost and workload (30 jobs)",
             "proximity_drl", "", 1'000'000, 50, "pack+sjf"},
            {"heterogeneous", v, "72 GPUs of three types (V100, P100, K80): which type a job gets, and where",
             "heterogeneous", "", 1'000'000, 30, "fastest_type:pack_wait+sjf"},
            {"colocation", v, "16 GPUs shared by up to 2 jobs each (Gavel's measured interference): a burst of 200 1-GPU jobs",
             "colocation", "", 1'000'000, 30, "random+sjf"},
            {"cluster-16", v, "the default workload on 16 GPUs (1 rack x 2 nodes), 40 jobs at offered load 1.0",
             "default", R"({"topology": {"racks": 1, "nodes_per_rack": 2}, "workload": {"num_jobs": 40}})", 1'000'000, 50,
             "pack+sjf"},
            {"cluster-256", v, "the default workload on 256 GPUs (4 racks x 8 nodes), 640 jobs at offered load 1.0",
             "default", R"({"topology": {"racks": 4, "nodes_per_rack": 8}, "workload": {"num_jobs": 640}})", 1'000'000, 10,
             "pack_wait+sjf"},
            {"cluster-1024", v, "the default workload on 1,024 GPUs (8 racks x 16 nodes), 1,280 jobs at offered load 1.0",
             "default", R"({"topology": {"racks": 8, "nodes_per_rack": 16}, "workload": {"num_jobs": 1280}})", 1'000'000, 5,
             "pack_wait+sjf"},
        };
        // a Gavel-style load sweep: the default scenario with its arrival rate scaled, light to overload
        for (const char* load : {"0.5", "0.8", "1.2", "1.5", "2.0"})
            t.push_back({std::string("load-") + load, v,
                         std::string("the default scenario at offered load ") + load + " (arrival rate scaled)",
                         "default", std::string(R"({"workload": {"load": )") + load + "}}", 1'000'000, 30, "pack_wait+sjf"});
        // the Philly-derived held-out trace files (philly_heldout_files(), never trained on; listed here so that
        // v1 stays as it is whatever that list becomes), one window of 200 jobs per seed at load 1.0
        const std::pair<const char*, const char*> philly_best[] = {
            {"0e4a51", "topology_greedy+sjf"}, {"6c71a0", "pack+sjf"}, {"7f04ca", "topology_greedy+sjf"}, {"e13805", "pack_wait+sjf"}};
        for (const auto& [f, best] : philly_best)
            t.push_back({std::string("philly-") + f, v,
                         std::string("a held-out Philly-derived trace file (") + f + "): 200-job windows at offered load 1.0",
                         std::string("philly:") + f, "", 1'000'000, 20, best});
        // the realistic information setting: durations hidden, preemption (LAS, 2D-LAS, Gittins possible)
        for (const auto& [f, best] : {std::pair{"0e4a51", "pack+las"}, {"6c71a0", "pack+2d_las"}, {"7f04ca", "pack_wait+las"},
                                      {"e13805", "pack_wait+las"}})
            t.push_back({std::string("philly_hidden-") + f, v,
                         std::string("held-out Philly file ") + f + " with durations hidden and preemption (30 s restarts)",
                         std::string("philly_hidden:") + f, "", 1'000'000, 20, best});
        // the load sweep again, measured as Gavel does: 480 jobs an episode, the metrics over jobs 160..319 only
        // (160 jobs of warm-up; 160 more arriving after them keep the cluster loaded until they finish)
        for (const char* load : {"0.5", "0.8", "1.0", "1.2", "1.5", "2.0"}) {
            t.push_back({std::string("steady-") + load, v,
                         std::string("the default cluster at offered load ") + load +
                             " in steady state: jobs 160..319 of 480 (warm-up and cool-down left out)",
                         "default", std::string(R"({"workload": {"load": )") + load + R"(, "num_jobs": 480}})", 1'000'000, 30,
                         "pack_wait+sjf"});
            t.back().window_first = 160;
            t.back().window_end = 320;
        }
        // the placement action mode (env.action_mode): each decision picks one of 8 candidate placements, where
        // the rollout planners act (docs/planning.md); the heuristics place as in the GPU mode
        t.push_back({"placement-default", v, "the default scenario in the placement action mode (8 candidate placements a decision)",
                     "default", R"({"env": {"action_mode": "placement"}})", 1'000'000, 50, "pack_wait+sjf"});
        t.push_back({"placement-proximity_drl", v, "Proximity-DRL's cluster and workload in the placement action mode",
                     "proximity_drl", R"({"env": {"action_mode": "placement"}})", 1'000'000, 50, "pack+sjf"});
        for (const auto& [f, best] : philly_best)  // a heuristic places as in the GPU mode: the same best
            t.push_back({std::string("placement-philly-") + f, v,
                         std::string("held-out Philly file ") + f + " (200-job windows, load 1.0) in the placement action mode",
                         std::string("philly:") + f, R"({"env": {"action_mode": "placement"}})", 1'000'000, 20, best});
        t.push_back({"placement-heterogeneous", v, "72 GPUs of three types (V100, P100, K80) in the placement action mode: a candidate "
                     "per type among the 8", "heterogeneous", R"({"env": {"action_mode": "placement"}})", 1'000'000, 30,
                     "fastest_type:pack_wait+sjf"});
        t.push_back({"placement-colocation", v, "16 GPUs shared by up to 2 jobs each (a burst of 200 1-GPU jobs) in the placement action "
                     "mode: the co-location packer's choice among the candidates", "colocation",
                     R"({"env": {"action_mode": "placement"}})", 1'000'000, 30, "coloc_packer+sjf"});
        // an NVL72-class cluster (preset nvl72): gangs of 8 to 288 GPUs, some larger than a rack
        t.push_back({"nvl72", v, "576 GPUs in 8 NVL72-style racks (72 GPUs in one NVLink domain each) under a 50 GB/s spine: "
                     "LLM-scale gangs of 8 to 288 GPUs", "nvl72", "", 1'000'000, 30, "topology_greedy+sjf"});
        // cluster realities (docs/realities.md): hardware that fails, jobs that lose their work since their last checkpoint
        t.push_back({"failures", v, "the philly preset with nodes failing (MTBF 24 h, Weibull 0.7, 2 h repairs, hourly checkpoints): "
                     "goodput and JCT under failures", "failures", "", 1'000'000, 20, "load_balance+sjf"});
        t.push_back({"tenants", v, "three tenants with guaranteed quotas (32/16/16 of 64 GPUs) sharing the default workload, preemption "
                     "with 30 s restarts: quotas, borrowing and fairness", "tenants", "", 1'000'000, 20, "pack_wait+sjf"});
        return t;
    }();
    // clang-format on
    if (version == "v1") return v1;
    throw ConfigError("benchmark version \"" + std::string(version) + "\": unknown (known: v1)");
}

/// The names of a version's tracks, comma-separated (for messages).
[[nodiscard]] inline std::string track_names(std::string_view version = current_version) {
    std::string s;
    for (const auto& t : tracks(version)) s += (s.empty() ? "" : ", ") + t.name;
    return s;
}

/// A track by name; ConfigError listing the known ones.
[[nodiscard]] inline const track& find_track(std::string_view name, std::string_view version = current_version) {
    for (const auto& t : tracks(version))
        if (t.name == name) return t;
    throw ConfigError("unknown benchmark track \"" + std::string(name) + "\" (" + std::string(version) +
                      " tracks: " + track_names(version) + ")");
}

/// The version of a track made from a scenario of one's own (scenario_track()): not one of the
/// suite's, its definition (the whole scenario) travels in its results.
inline constexpr std::string_view scenario_version = "scenario";

/// The version of a track of an env type of one's own (bench/env_track.hpp): its env is the
/// program's code, so only that program reproduces its results.
inline constexpr std::string_view env_version = "env";

/// A track of one's own: scenario `s` (its JSON, every option filled in, is the track's "patch";
/// its preset is none), `episodes` held-out seeds from 1000000, and `best` the heuristic variant
/// its paired differences are against. Its results validate against the definition they hold.
[[nodiscard]] inline track scenario_track(const scenario& s, std::size_t episodes, std::string best = "pack") {
    if (episodes == 0) throw ConfigError("scenario track " + s.name + ": at least one episode");
    track t{s.name, std::string(scenario_version), "the scenario " + s.name, "", to_json(s).dump(), 1'000'000, episodes, std::move(best)};
    return t;
}

/// The track a result's "track" member defines, for a scenario track (scenario_track()).
[[nodiscard]] inline track scenario_track_of_json(const json& j) {
    track t{j.at("name").get<std::string>(), j.at("version").get<std::string>(), "", "", j.at("patch").dump(),
            j.at("first_seed").get<std::uint64_t>(), j.at("episodes").get<std::size_t>(), j.at("best_heuristic").get<std::string>()};
    t.about = "the scenario " + t.name;
    if (const auto w = j.find("window"); w != j.end()) {
        t.window_first = w->at("first_job").get<std::size_t>();
        t.window_end = w->at("end_job").get<std::size_t>();
    }
    return t;
}

/// The scenario a track runs: its preset with its patch applied, named after the track (a scenario
/// track's patch is the whole scenario).
[[nodiscard]] inline scenario track_scenario(const track& t) {
    if (t.preset.empty()) {
        auto j = parse_json(t.patch, "track " + t.name + " scenario");
        j["name"] = t.name;
        return scenario_from_json(j);
    }
    auto j = to_json(preset_scenario(t.preset));
    if (!t.patch.empty()) j.merge_patch(parse_json(t.patch, "track " + t.name + " patch"));
    j["name"] = t.name;
    return scenario_from_json(j);
}

}  // namespace gpuplace::bench
