#pragma once
/// \file bench/run.hpp
/// Scoring a policy on a track (run(), score_actions()) through the evaluation harness
/// (evaluate.hpp), and checking a result (validate()): its episodes re-run, or their recorded
/// actions replayed, and the whole result compared bit for bit with the file's, "timing" aside.
/// A track with a steady-state window (track::windowed()) is scored on the window's jobs only
/// (window_metrics()); yardstick() ranks a track's heuristic variants as its results do.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <gpuplace/any_policy.hpp>
#include <gpuplace/env.hpp>
#include <gpuplace/error.hpp>
#include <gpuplace/evaluate.hpp>
#include <gpuplace/heuristic_registry.hpp>
#include <gpuplace/json/parse.hpp>
#include <gpuplace/metrics.hpp>
#include <gpuplace/policy_registry.hpp>
#include "result.hpp"
#include "track.hpp"

namespace gpuplace::bench {

/// How run() goes.
struct run_options {
    std::size_t threads = 0;  ///< worker threads over the episodes (0 = all cores); results do not depend on it
    bool keep_actions = true; ///< list each episode's actions in the result (their hash is always there)
    std::string commit;       ///< the source's commit, recorded as is ("" = unknown)
    eval_progress progress;   ///< called after each episode (the policy's, then the best heuristic's)
};

/// `p` with each episode's actions recorded into `out` (indexed like `seeds`). An episode writes
/// only its own slot, so the episodes can run in parallel. E: any env type (env_track.hpp).
template <class E>
[[nodiscard]] any_policy<E> recording(const any_policy<E>& p, const std::vector<std::uint64_t>& seeds,
                                      std::vector<std::vector<std::int64_t>>& out) {
    auto index = std::make_shared<std::map<std::uint64_t, std::size_t>>();
    for (std::size_t i = 0; i < seeds.size(); ++i) index->emplace(seeds[i], i);
    out.assign(seeds.size(), {});
    auto inner = p.make;
    return {p.name,
            [inner, index, &out](std::uint64_t seed) {
                auto& rec = out.at(index->at(seed));
                rec.clear();
                auto act = inner(seed);
                return std::function<std::int64_t(const E&)>([act, &rec](const E& e) {
                    const auto a = act(e);
                    rec.push_back(a);
                    return a;
                });
            },
            p.queue,
            {},
            p.check};  // a planner too large for the track's cluster is refused before any episode
}

/// A policy that replays `actions[i]` on `seeds[i]`; an action the mask refuses, or running out of
/// actions, is an Error naming the seed and the step.
[[nodiscard]] inline any_policy<env> replaying(std::string name, std::string queue, const std::vector<std::uint64_t>& seeds,
                                               const std::vector<std::vector<std::int64_t>>& actions) {
    auto index = std::make_shared<std::map<std::uint64_t, std::size_t>>();
    for (std::size_t i = 0; i < seeds.size(); ++i) index->emplace(seeds[i], i);
    return {std::move(name),
            [index, &actions](std::uint64_t seed) {
                const auto* acts = &actions.at(index->at(seed));
                return std::function<std::int64_t(const env&)>([acts, seed, t = std::size_t{0}](const env& e) mutable {
                    if (t >= acts->size())
                        throw Error("replaying the recorded actions: seed " + std::to_string(seed) + ": the " +
                                    std::to_string(acts->size()) + " actions ran out before the episode ended");
                    const auto a = (*acts)[t];
                    const auto mask = e.action_mask();
                    if (a < 0 || std::size_t(a) >= mask.size() || !mask[std::size_t(a)])
                        throw Error("replaying the recorded actions: seed " + std::to_string(seed) + ", step " +
                                    std::to_string(t) + ": action " + std::to_string(a) + " is not valid there");
                    ++t;
                    return a;
                });
            },
            std::move(queue),
            {}};
}

/// The metrics of a steady-state window: those of the finished jobs with ids first .. end - 1
/// (compute_metrics(); jobs_total is the window's size), except that the makespan is the window's
/// span, from the first submission of one of its jobs to the last end of one, and the utilisation
/// is the whole cluster's over that span: the GPU-time every job (of the window or not) held
/// within it, each job's GPUs over its [start, end] interval (times run time / (end - start) for a
/// preempted one), over GPUs x span. No job of the window finished: all zero but jobs_total.
[[nodiscard]] inline metrics window_metrics(std::span<const job_record> done, std::size_t num_gpus, std::size_t first,
                                            std::size_t end) {
    std::vector<job_record> in;
    double t0 = std::numeric_limits<double>::infinity();
    for (const auto& r : done)
        if (r.id >= first && r.id < end) {
            in.push_back(r);
            t0 = std::min(t0, r.submit);
        }
    std::vector<double> scratch;
    auto m = compute_metrics(in, end - first, num_gpus, in.empty() ? 0.0 : t0, scratch);
    if (in.empty() || m.makespan <= 0) return m;
    const double t1 = t0 + m.makespan;
    double busy = 0;
    for (const auto& r : done) {
        const double overlap = std::min(r.end, t1) - std::max(r.start, t0);
        if (overlap > 0 && r.end > r.start)
            busy += double(r.num_gpus) * overlap * (r.preemptions || r.interruptions ? r.run_time / (r.end - r.start) : 1.0);
    }
    m.utilization = busy / (double(num_gpus) * m.makespan);
    return m;
}

namespace detail_bench {

/// Each episode's metrics over the track's window: its actions replayed (under queue policy
/// `queue`) and window_metrics() of the jobs it finished.
inline void apply_window(const scenario& s, const track& t, const std::string& queue, std::vector<episode_result>& eps) {
    scenario q = s;
    apply_queue(q, queue);
    env e(q);
    for (auto& ep : eps) {
        e.reset(ep.seed);
        for (const auto a : ep.actions) e.step(a);
        ep.m = window_metrics(e.finished(), e.num_gpus(), t.window_first, t.window_end);
    }
}

/// Runs `p` on the track's seeds: the episodes with their actions, and the wall time.
inline std::vector<episode_result> episodes_of(const scenario& s, const track& t, const any_policy<env>& p,
                                               std::size_t threads, const eval_progress& progress, double* seconds) {
    const auto seeds = t.seeds();
    std::vector<std::vector<std::int64_t>> actions(seeds.size());
    // under a round policy (docs/rounds.md) whole episodes run in rounds: no env actions to record,
    // validate() re-runs them by name
    if (p.rounds && t.windowed())
        throw ConfigError("track " + t.name + ": a round policy (" + p.queue + ") is scored on whole episodes, and this track scores "
                          "a window of its jobs");
    const auto rec = p.rounds ? p : recording(p, seeds, actions);
    const auto t0 = std::chrono::steady_clock::now();
    const auto rep = evaluate<env>(s, {rec}, seeds, threads, progress);
    if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<episode_result> out(seeds.size());
    for (std::size_t i = 0; i < seeds.size(); ++i)
        out[i] = {seeds[i], rep.policies[0].per_seed[i], rep.policies[0].returns[i], std::move(actions[i])};
    if (t.windowed()) apply_window(s, t, p.queue, out);
    return out;
}

/// A run's result before its episodes: policy `ref` under queue `queue`, and the options' commit,
/// kept actions and threads.
inline run_result start_result(policy_ref ref, const std::string& queue, const run_options& o) {
    run_result r;
    r.policy = std::move(ref);
    r.policy.queue = queue;
    r.commit = o.commit;
    r.keep_actions = o.keep_actions;
    r.threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
    return r;
}

/// The progress of a run's two halves as one count: the policy's n episodes, then the best
/// policy's n (none when `same`: the policy is the best one).
inline std::pair<eval_progress, eval_progress> halves(const run_options& o, std::size_t n, bool same) {
    if (!o.progress) return {};
    const std::size_t total = same ? n : 2 * n;
    return {[&o, total](std::size_t done, std::size_t) { o.progress(done, total); },
            [&o, n, total](std::size_t done, std::size_t) { o.progress(n + done, total); }};
}

}  // namespace detail_bench

/// Scores policy `p` (described by `ref`) on track `t`: its episodes, then the track's best
/// heuristic on the same seeds (for the paired difference; not run again when `p` is it).
[[nodiscard]] inline run_result run(const track& t, const any_policy<env>& p, policy_ref ref, const run_options& o = {}) {
    const auto s = track_scenario(t);
    auto r = detail_bench::start_result(std::move(ref), p.queue, o);
    r.t = t;
    const bool same = r.policy.kind == "heuristic" && r.policy.name == t.best_heuristic;
    const auto [first, second] = detail_bench::halves(o, t.episodes, same);
    r.episodes = detail_bench::episodes_of(s, t, p, o.threads, first, &r.seconds);
    r.best = same ? r.episodes : detail_bench::episodes_of(s, t, heuristic<env>(t.best_heuristic), o.threads, second, nullptr);
    return r;
}

/// A policy to score and how a result names it.
struct named_policy {
    any_policy<env> policy;
    policy_ref ref;
};

/// A heuristic variant ("pack+sjf", kind "heuristic") or a rollout planner over one
/// ("rollout16:pack_wait+sjf", "hindsight:pack_wait+sjf", kind "planner"; policy_registry.hpp) by
/// name, its planner playing its futures on one thread; ConfigError naming what is wrong.
[[nodiscard]] inline named_policy heuristic_or_planner(const std::string& name) {
    rollout_options o;
    std::string base;
    const bool planner = parse_planner_name(name, o, base);
    return {gpuplace::named_policy<env>(name, 1), {name, planner ? "planner" : "heuristic", {}, {}}};
}

/// A heuristic or a planner by name (heuristic_or_planner()) on a track.
[[nodiscard]] inline run_result run(const track& t, const std::string& name, const run_options& o = {}) {
    auto np = heuristic_or_planner(name);
    return run(t, np.policy, std::move(np.ref), o);
}

/// A result from an action sequence per episode (e.g. a Python callable's, run outside C++):
/// the actions are replayed on the track's seeds (an Error when one is not valid or they run out
/// or are left over) and scored as run() scores a policy. `seconds` is the wall time the policy
/// took, for the timing.
[[nodiscard]] inline run_result score_actions(const track& t, policy_ref ref, const std::vector<std::vector<std::int64_t>>& actions,
                                              double seconds, const run_options& o = {}) {
    if (actions.size() != t.episodes)
        throw ConfigError("score_actions: track " + t.name + " has " + std::to_string(t.episodes) + " episodes, given " +
                          std::to_string(actions.size()) + " action sequences");
    const auto p = replaying(ref.name, ref.queue, t.seeds(), actions);
    auto r = run(t, p, std::move(ref), o);
    for (std::size_t i = 0; i < actions.size(); ++i)
        if (r.episodes[i].actions.size() != actions[i].size())
            throw Error("score_actions: seed " + std::to_string(r.episodes[i].seed) + ": the episode ended after " +
                        std::to_string(r.episodes[i].actions.size()) + " actions; given " + std::to_string(actions[i].size()));
    r.seconds = seconds;
    return r;
}

/// Every heuristic variant of the track's scenario (heuristic_variants()) with its mean JCT over the
/// track's episodes (over its window's jobs when it has one), lowest first (ties by name): the first
/// is what the track's best_heuristic records. `progress` counts episodes over all the variants.
[[nodiscard]] inline std::vector<std::pair<double, std::string>> yardstick(const track& t, std::size_t threads = 0,
                                                                          const eval_progress& progress = {}) {
    const auto s = track_scenario(t);
    const auto variants = heuristic_variants(s);
    const std::size_t total = variants.size() * t.episodes;
    std::vector<std::pair<double, std::string>> out;
    for (const auto& h : variants) {
        eval_progress each;
        if (progress) each = [&, base = out.size() * t.episodes](std::size_t done, std::size_t) { progress(base + done, total); };
        const auto eps = detail_bench::episodes_of(s, t, heuristic<env>(h), threads, each, nullptr);
        out.emplace_back(summarize(run_result::values(eps, &metrics::avg_jct)).mean, h);
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// Makes the policy a result names when this program can (e.g. a model it can load), else nullopt.
using policy_resolver = std::function<std::optional<any_policy<env>>(const policy_ref&)>;

/// `next` (when set), and besides it the planners of results by name: validate() then plays a
/// planner's futures again instead of replaying its recorded actions (slow: every decision of a
/// rollout planner plays each candidate on its futures).
[[nodiscard]] inline policy_resolver rerunning_planners(policy_resolver next = {}) {
    return [next = std::move(next)](const policy_ref& r) -> std::optional<any_policy<env>> {
        if (r.kind == "planner") return heuristic_or_planner(r.name).policy;
        return next ? next(r) : std::nullopt;
    };
}

/// validate()'s verdict on a result.
struct validation {
    bool valid = false;
    std::string how;      ///< "re-run" or "replayed" (how the episodes were reproduced), "" when neither
    std::string message;  ///< what was checked, or where the result differs from its reproduction
};

/// The value at a JSON pointer as short text ("(absent)" when there is none).
[[nodiscard]] inline std::string value_at(const json& j, const std::string& pointer) {
    const json::json_pointer p(pointer);
    if (!j.contains(p)) return "(absent)";
    auto s = j.at(p).dump();
    return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

/// Where two results differ first, as text ("" when they are equal): the JSON pointer, both
/// values, and for action lists the first action that differs.
[[nodiscard]] inline std::string first_difference(const json& result, const json& reproduced) {
    const auto d = json::diff(result, reproduced);
    if (d.empty()) return {};
    const auto at = d[0].at("path").get<std::string>();
    std::string where;
    const json::json_pointer p(at);
    if (!result.contains(p))  // e.g. an episode dropped from the result
        return at + ": missing from the result (reproduced " + value_at(reproduced, at) + ")" +
               (d.size() > 1 ? " (" + std::to_string(d.size()) + " differences in all)" : std::string());
    if (!reproduced.contains(p))
        return at + ": result " + value_at(result, at) + ", which its reproduction does not have" +
               (d.size() > 1 ? " (" + std::to_string(d.size()) + " differences in all)" : std::string());
    if (at.ends_with("/actions") && result.contains(p) && reproduced.contains(p) && result.at(p).is_string() &&
        reproduced.at(p).is_string()) {
        const auto a = parse_actions(result.at(p).get<std::string>(), at), b = parse_actions(reproduced.at(p).get<std::string>(), at);
        std::size_t i = 0;
        while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
        const auto act = [](const std::vector<std::int64_t>& v, std::size_t k) { return k < v.size() ? std::to_string(v[k]) : "(none)"; };
        where = " from action " + std::to_string(i) + " on: result " + act(a, i) + ", reproduced " + act(b, i);
    } else {
        where = ": result " + value_at(result, at) + ", reproduced " + value_at(reproduced, at);
    }
    return at + where + (d.size() > 1 ? " (" + std::to_string(d.size()) + " differences in all)" : std::string());
}

/// The policy of a result's "policy" member.
[[nodiscard]] inline policy_ref policy_of_json(const json& p) {
    policy_ref r{p.at("name").get<std::string>(), p.at("kind").get<std::string>(), p.value("queue", std::string()), {}};
    if (p.contains("checkpoint_fnv1a64")) r.checksum = p.at("checkpoint_fnv1a64").get<std::string>();
    return r;
}

namespace detail_bench {

/// What a result lacks that validate() reads, as "<JSON pointer>: <what is wrong>", or "": the
/// members gpuplace-bench run writes, with their types, and one episode at least.
inline std::string shape_problem(const json& result) {
    const auto kind = [](const json& v) -> std::string {
        return v.is_object() ? "an object" : v.is_array() ? "a list" : v.is_string() ? "a string" : v.is_boolean() ? "true or false"
               : v.is_number() ? "a number" : "null";
    };
    const auto need = [&](const json& obj, const std::string& at, const char* key, const char* type, const std::string& what) -> std::string {
        const auto it = obj.find(key);
        if (it == obj.end()) return at + "/" + key + ": missing (" + what + ", as gpuplace-bench run writes it)";
        const bool ok = std::string_view(type) == "an object"      ? it->is_object()
                        : std::string_view(type) == "a list"        ? it->is_array()
                        : std::string_view(type) == "a string"      ? it->is_string()
                        : std::string_view(type) == "true or false" ? it->is_boolean()
                                                                    : it->is_number();
        if (!ok) return at + "/" + key + ": expected " + type + " (" + what + "), got " + kind(*it) + " " + value_at(obj, std::string("/") + key);
        return {};
    };
    for (const auto& [key, type, what] : std::initializer_list<std::tuple<const char*, const char*, const char*>>{
             {"track", "an object", "the track's definition"},
             {"policy", "an object", "the policy's name and kind"},
             {"actions_kept", "true or false", "whether the episodes list their actions"},
             {"commit", "a string", "the source's commit"},
             {"gpuplace_version", "a string", "the gpuplace version that wrote it"},
             {"episodes", "a list", "one entry per episode of the track"}})
        if (auto why = need(result, "", key, type, what); !why.empty()) return why;
    for (const char* key : {"name", "version"})
        if (auto why = need(result.at("track"), "/track", key, "a string", "the track's"); !why.empty()) return why;
    for (const char* key : {"name", "kind"})
        if (auto why = need(result.at("policy"), "/policy", key, "a string", "the policy's"); !why.empty()) return why;
    const auto& eps = result.at("episodes");
    if (eps.empty()) return "/episodes: empty (a result lists every episode of its track, as gpuplace-bench run writes it)";
    const bool kept = result.at("actions_kept").get<bool>();
    for (std::size_t i = 0; i < eps.size(); ++i) {
        const auto at = "/episodes/" + std::to_string(i);
        if (!eps[i].is_object()) return at + ": expected an object (an episode), got " + kind(eps[i]);
        if (auto why = need(eps[i], at, "seed", "a number", "the episode's seed"); !why.empty()) return why;
        if (kept)
            if (auto why = need(eps[i], at, "actions", "a string", "its actions, since /actions_kept is true"); !why.empty()) return why;
    }
    return {};
}

/// The result's episodes reproduced (by `p` when given, else by replaying its actions) as JSON.
inline json reproduce(const json& result, const track& t, const policy_ref& ref, const std::optional<any_policy<env>>& p,
                      const run_options& o) {
    run_result r;
    if (p) {
        r = run(t, *p, ref, o);
    } else {
        std::vector<std::vector<std::int64_t>> actions;
        for (const auto& e : result.at("episodes"))
            actions.push_back(parse_actions(e.at("actions").get<std::string>(), "episode seed " + e.at("seed").dump() + " actions"));
        r = score_actions(t, ref, actions, 0, o);
    }
    r.gpuplace_version = result.at("gpuplace_version").get<std::string>();
    return to_json(r, false);
}

}  // namespace detail_bench

/// Checks a result (its JSON): the track definition is this gpuplace's for that version, and its
/// episodes, reproduced, give the same result bit for bit (every metric, hash, summary and paired
/// difference; "timing" aside). A heuristic is re-run by name; another policy is re-run when
/// `resolve` makes it, else its recorded actions are replayed (a result without them cannot be
/// checked then). A model whose re-run takes other actions (its network's products round
/// differently on another CPU variant) is checked by replaying its recorded actions, and the
/// verdict says so. Never throws for a bad result: the verdict says what is wrong.
[[nodiscard]] inline validation validate(const json& result, const policy_resolver& resolve = {}, std::size_t threads = 0,
                                         const eval_progress& progress = {}) {
    validation v;
    try {
        if (!result.is_object() || result.value("format", std::string()) != result_format)
            return {false, "", "not a gpuplace-bench result (no \"format\": \"" + std::string(result_format) + "\")"};
        if (result.value("format_version", 0) != result_format_version)
            return {false, "", "result format version " + result.at("format_version").dump() + ", this gpuplace reads " +
                                   std::to_string(result_format_version)};
        if (auto why = detail_bench::shape_problem(result); !why.empty()) return {false, "", "not a complete result: " + why};
        const auto& tj = result.at("track");
        if (tj.at("version").get<std::string>() == env_version)  // bench/env_track.hpp
            return {false, "", "track " + tj.at("name").get<std::string>() + " runs an env type of a program's own (version env): "
                               "only that program can reproduce it"};
        const track t = tj.at("version").get<std::string>() == scenario_version
                            ? scenario_track_of_json(tj)
                            : find_track(tj.at("name").get<std::string>(), tj.at("version").get<std::string>());
        if (const auto d = json::diff(tj, to_json(t)); !d.empty()) {
            const auto at = d[0].at("path").get<std::string>();
            return {false, "", "track " + t.name + " " + t.version + ": the result's definition differs from this gpuplace's at /track" +
                                   at + " (result " + value_at(tj, at) + ", " + t.version + " " + value_at(to_json(t), at) + ")"};
        }
        if (const auto n = result.at("episodes").size(); n != t.episodes)
            return {false, "", "/episodes: the result lists " + std::to_string(n) + " episode" + (n == 1 ? "" : "s") + ", track " + t.name +
                                   " " + t.version + " has " + std::to_string(t.episodes) + " (seeds " + std::to_string(t.first_seed) +
                                   ".." + std::to_string(t.first_seed + t.episodes - 1) + "): episodes were dropped or added"};
        const auto ref = policy_of_json(result.at("policy"));
        const bool kept = result.at("actions_kept").get<bool>();
        run_options o;
        o.threads = threads;
        o.keep_actions = kept;
        o.commit = result.at("commit").get<std::string>();
        o.progress = progress;
        std::optional<any_policy<env>> p;
        if (ref.kind == "heuristic") p = heuristic_or_planner(ref.name).policy;  // with its rounds, under a round policy
        else if (resolve) p = resolve(ref);
        if (!p && !kept)
            return {false, "", "policy \"" + ref.name + "\" (" + ref.kind + ") cannot be re-run here and the result "
                               "lists no actions to replay (only their hashes)"};
        auto theirs = result;
        theirs.erase("timing");
        v.how = p ? "re-run" : "replayed";
        auto diff = first_difference(theirs, detail_bench::reproduce(result, t, ref, p, o));
        std::string note;
        if (!p && ref.kind == "model")
            note = " (the model cannot be loaded here, or its checkpoint is not the one recorded: its actions were replayed)";
        if (!p && ref.kind == "planner") note = " (a planner's recorded actions; validate --rerun-planners plays its futures again)";
        if (!diff.empty() && p && ref.kind == "model" && kept) {
            note = " (a re-run took other actions here, at " + diff +
                   ": the network's products round differently between CPU variants)";
            v.how = "replayed";
            diff = first_difference(theirs, detail_bench::reproduce(result, t, ref, std::nullopt, o));
        }
        if (!diff.empty()) return {false, v.how, "differs from its reproduction (" + v.how + ") at " + diff + note};
        v.valid = true;
        v.message = std::to_string(result.at("episodes").size()) + " episodes " + v.how + ", every metric equal bit for bit" + note;
        if (const auto rec = result.at("gpuplace_version").get<std::string>(); rec != version_string)
            v.message += " (recorded with gpuplace " + rec + ", checked with " + version_string + ")";
    } catch (const std::exception& e) {
        v.valid = false;
        v.message = e.what();
    }
    return v;
}

/// validate() of result text (a file's contents); `source` names it in messages.
[[nodiscard]] inline validation validate_text(std::string_view text, const std::string& source, const policy_resolver& resolve = {},
                                              std::size_t threads = 0, const eval_progress& progress = {}) {
    json j;
    try {
        j = parse_json(text, source);
    } catch (const std::exception& e) {
        return {false, "", e.what()};
    }
    return validate(j, resolve, threads, progress);
}

}  // namespace gpuplace::bench
