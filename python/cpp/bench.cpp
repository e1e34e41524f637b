// gpuplace._core: the benchmark (docs/bench.md), the same C++ code as gpuplace-bench
// (src/bench/), so that a result's JSON is the same text bit for bit from either:
// bench_tracks, bench_track_scenario, bench_run (a heuristic variant or a rollout planner, or with
// the C++ PPO built a shipped model or checkpoint), bench_score_actions (a Python policy's actions, replayed and
// scored), bench_validate. Compiled per CPU variant (python/CMakeLists.txt): it loads the PPO's
// networks when GPUPLACE_PY_HAVE_RL.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/result.hpp"
#include "bench/run.hpp"
#include "bench/track.hpp"
#if defined(GPUPLACE_PY_HAVE_RL)
#include "bench/policy.hpp"
#endif

#include "bindings.hpp"
#include "conversions.hpp"

namespace gpuplace_py {

namespace {

namespace gb = gpuplace::bench;

/// A policy by name: a heuristic variant or a rollout planner, or (with the PPO built) a model.
gb::named_policy bench_policy(const std::string& name) {
#if defined(GPUPLACE_PY_HAVE_RL)
    return gb::policy_named(name);
#else
    return gb::heuristic_or_planner(name);
#endif
}

gb::policy_resolver bench_resolver(bool rerun_planners) {
#if defined(GPUPLACE_PY_HAVE_RL)
    gb::policy_resolver r = gb::model_resolver();
#else
    gb::policy_resolver r;
#endif
    return rerun_planners ? gb::rerunning_planners(std::move(r)) : r;
}

py::dict result_dict(const gb::run_result& r) {
    py::dict d;
    d["json"] = gb::result_text(r);
    d["row"] = gb::result_row(r);
    return d;
}

/// run() options from the bindings' arguments (`what` names the function in errors).
gb::run_options options(const char* what, py::object threads, const std::string& commit, bool keep_actions) {
    gb::run_options o;
    o.threads = to_count(threads, std::string(what) + ": threads", 0, 4096);
    o.commit = commit;
    o.keep_actions = keep_actions;
    return o;
}

py::dict bench_run(const std::string& track, const std::string& policy, const std::string& version, py::object threads,
                   const std::string& commit, bool keep_actions) {
    const auto& t = gb::find_track(track, version);
    auto np = bench_policy(policy);
    const auto o = options("bench_run", threads, commit, keep_actions);
    gb::run_result r;
    {
        py::gil_scoped_release nogil;
        r = gb::run(t, np.policy, np.ref, o);
    }
    return result_dict(r);
}

/// gpuplace-bench run --scenario: a named policy on a track of one's own (bench::scenario_track()).
py::dict bench_run_scenario(const gp::scenario& s, const std::string& policy, py::object episodes, const std::string& best,
                            py::object threads, const std::string& commit, bool keep_actions) {
    const auto t = gb::scenario_track(s, to_count(episodes, "bench_run_scenario: episodes", 1, 100000), best);
    (void)gp::heuristic<gp::env>(t.best_heuristic);  // a known name, before any episode
    auto np = bench_policy(policy);
    const auto o = options("bench_run_scenario", threads, commit, keep_actions);
    if (s.workload.kind == "trace" || s.workload.kind == "mixture")  // a trace that cannot fill the episodes asked
        if (const auto why = gp::env(s).short_episodes(); !why.empty())
            py::module_::import("warnings").attr("warn")("scenario " + s.name + ": " + why,
                                                         py::module_::import("builtins").attr("UserWarning"));
    gb::run_result r;
    {
        py::gil_scoped_release nogil;
        r = gb::run(t, np.policy, np.ref, o);
    }
    return result_dict(r);
}

py::dict bench_score_actions(const std::string& track, const std::string& name, py::object actions, double seconds,
                             const std::string& version, const std::string& kind, py::object threads, const std::string& commit,
                             bool keep_actions, const std::string& queue) {
    const auto& t = gb::find_track(track, version);
    std::vector<std::vector<std::int64_t>> acts;
    for (auto ep : actions) {
        std::vector<std::int64_t> v;
        for (auto a : ep) v.push_back(to_action(a));
        acts.push_back(std::move(v));
    }
    const auto o = options("bench_score_actions", threads, commit, keep_actions);
    gb::run_result r;
    {
        py::gil_scoped_release nogil;
        r = gb::score_actions(t, {name, kind, queue, {}}, acts, seconds, o);
    }
    return result_dict(r);
}

py::tuple bench_validate(const std::string& text, const std::string& source, py::object threads, bool rerun_planners) {
    const auto n = to_count(threads, "bench_validate: threads", 0, 4096);
    gb::validation v;
    {
        py::gil_scoped_release nogil;
        v = gb::validate_text(text, source, bench_resolver(rerun_planners), n);
    }
    return py::make_tuple(v.valid, v.how, v.message);
}

py::list bench_tracks(const std::string& version) {
    py::list out;
    for (const auto& t : gb::tracks(version)) {
        py::dict d;
        d["name"] = t.name;
        d["version"] = t.version;
        d["about"] = t.about;
        d["preset"] = t.preset;
        d["patch"] = t.patch;
        d["seeds"] = t.seeds();
        d["episodes"] = t.episodes;
        d["best_heuristic"] = t.best_heuristic;
        d["window"] = t.windowed() ? py::object(py::make_tuple(t.window_first, t.window_end)) : py::object(py::none());
        out.append(d);
    }
    return out;
}

/// gpuplace-bench yardstick: every heuristic variant of a track with its mean JCT (seconds), lowest
/// first; `progress(done, total)` (episodes over all variants) is called with the GIL held.
py::list bench_yardstick(const std::string& track, const std::string& version, py::object threads, py::object progress) {
    const auto& t = gb::find_track(track, version);
    const auto n = to_count(threads, "bench_yardstick: threads", 0, 4096);
    gpuplace::eval_progress each;
    if (!progress.is_none())
        each = [&progress](std::size_t done, std::size_t total) {
            py::gil_scoped_acquire gil;
            progress(done, total);
        };
    std::vector<std::pair<double, std::string>> by_jct;
    {
        py::gil_scoped_release nogil;
        by_jct = gb::yardstick(t, n, each);
    }
    py::list out;
    for (const auto& [jct, name] : by_jct) out.append(py::make_tuple(name, jct));
    return out;
}

}  // namespace

void bind_bench(py::module_& m) {
    m.def("bench_tracks", &bench_tracks, py::arg("version") = std::string(gb::current_version),
          "The benchmark's tracks of a version: name, version, about, preset, patch, seeds, episodes, best_heuristic, "
          "window ((first job, end job) of a steady-state window, or None).");
    m.def(
        "bench_track_scenario",
        [](const std::string& track, const std::string& version, const std::string& queue) {
            auto s = gb::track_scenario(gb::find_track(track, version));
            gp::apply_queue(s, queue);
            return s;
        },
        py::arg("track"), py::arg("version") = std::string(gb::current_version), py::arg("queue") = std::string(),
        "The scenario a track runs (under queue policy `queue` when given, as a policy that acts under it sees it).");
    m.def("bench_run", &bench_run, py::arg("track"), py::arg("policy"), py::arg("version") = std::string(gb::current_version),
          py::arg("threads") = 0, py::arg("commit") = std::string(), py::arg("keep_actions") = true,
          "Scores a policy by name (a heuristic variant; with the C++ PPO built also a shipped model or a checkpoint "
          "file) on a track, in C++ like gpuplace-bench: {'json': the result file's text, 'row': a markdown row}.");
    m.def("bench_score_actions", &bench_score_actions, py::arg("track"), py::arg("name"), py::arg("actions"),
          py::arg("seconds") = 0.0, py::arg("version") = std::string(gb::current_version), py::arg("kind") = "python",
          py::arg("threads") = 0, py::arg("commit") = std::string(), py::arg("keep_actions") = true,
          py::arg("queue") = std::string(),
          "Scores one action sequence per episode of a track (a Python policy's, in the track's seed order, acting under "
          "queue policy `queue`, '' = the track's): replayed in C++ (an error when one is not valid, runs out or is left "
          "over); `seconds` the policy's wall time.");
    m.def("bench_validate", &bench_validate, py::arg("text"), py::arg("source") = "<text>", py::arg("threads") = 0,
          py::arg("rerun_planners") = false,
          "Checks a result (its JSON text) bit for bit: (valid, how: 're-run' | 'replayed' | '', message); a planner's "
          "recorded actions are replayed unless rerun_planners.");
    m.def("bench_run_scenario", &bench_run_scenario, py::arg("scenario"), py::arg("policy"), py::arg("episodes") = 10,
          py::arg("best") = "pack", py::arg("threads") = 0, py::arg("commit") = std::string(), py::arg("keep_actions") = true,
          "gpuplace-bench run --scenario: a policy by name on a track of one's own (the scenario, `episodes` held-out "
          "seeds from 1000000, paired differences against heuristic variant `best`); its result holds the whole "
          "scenario and validates against it.");
    m.def("bench_yardstick", &bench_yardstick, py::arg("track"), py::arg("version") = std::string(gb::current_version),
          py::arg("threads") = 0, py::arg("progress") = py::none(),
          "gpuplace-bench yardstick: every heuristic variant of the track's scenario with its mean JCT in seconds over the "
          "track's episodes (its window's jobs when it has one), lowest first: [(name, jct)]; the first is what the "
          "track's best_heuristic records. progress(done, total) counts episodes over every variant.");
    m.def("bench_result_file_name", &gb::result_file_name, py::arg("track"), py::arg("policy"),
          "A result file's name for a track and a policy, as gpuplace-bench run --out-dir names it.");
    m.def("bench_row_header", &gb::result_row_header, "The header of the markdown rows bench_run returns.");
}

}  // namespace gpuplace_py
