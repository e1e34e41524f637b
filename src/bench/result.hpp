#pragma once
/// \file bench/result.hpp
/// A benchmark result: one policy's episodes on one track (bench/track.hpp), with per-episode
/// metrics, each episode's actions (their FNV-1a 64 hash, and the actions themselves when kept),
/// the summary (mean and standard error), the paired difference against the track's best
/// heuristic and the timing; and its JSON form, which is the same text bit for bit whichever
/// program writes it (numbers in nlohmann's round-trip form). Only "timing" (wall time,
/// decisions per second) differs between runs: validate() (bench/run.hpp) leaves it out.

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <gpuplace/error.hpp>
#include <gpuplace/eval_report.hpp>
#include <gpuplace/json/parse.hpp>
#include <gpuplace/metrics.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/version.hpp>
#include "track.hpp"

namespace gpuplace::bench {

/// The result format's name and version (the "format" and "format_version" of its JSON).
inline constexpr std::string_view result_format = "gpuplace-bench-result";
inline constexpr int result_format_version = 1;

/// FNV-1a 64 of bytes, continuing from `h`.
[[nodiscard]] constexpr std::uint64_t fnv1a64(const unsigned char* p, std::size_t n,
                                              std::uint64_t h = 0xcbf29ce484222325ull) noexcept {
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/// FNV-1a 64 over an action sequence, each action as 8 bytes little-endian.
[[nodiscard]] inline std::uint64_t actions_hash(const std::vector<std::int64_t>& actions) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const auto a : actions) {
        unsigned char b[8];
        for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(a) >> (8 * i));
        h = fnv1a64(b, 8, h);
    }
    return h;
}

/// A hash as 16 lower-case hex digits.
[[nodiscard]] inline std::string hex64(std::uint64_t h) {
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
    return b;
}

/// Actions as text: decimal numbers separated by single spaces (compact in an indented JSON file).
[[nodiscard]] inline std::string actions_text(const std::vector<std::int64_t>& actions) {
    std::string s;
    s.reserve(actions.size() * 4);
    for (const auto a : actions) {
        if (!s.empty()) s += ' ';
        s += std::to_string(a);
    }
    return s;
}

/// actions_text() read back; ConfigError naming `what` and the offending token.
[[nodiscard]] inline std::vector<std::int64_t> parse_actions(std::string_view text, const std::string& what) {
    std::vector<std::int64_t> v;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto end = std::min(text.find(' ', i), text.size());
        const auto tok = text.substr(i, end - i);
        std::int64_t a = 0;
        bool ok = !tok.empty() && tok.size() <= 18;
        for (std::size_t k = 0; ok && k < tok.size(); ++k) {
            ok = tok[k] >= '0' && tok[k] <= '9';
            a = a * 10 + (tok[k] - '0');
        }
        if (!ok) throw ConfigError(what + ": \"" + std::string(tok) + "\" is not an action (a whole number >= 0)");
        v.push_back(a);
        i = end + 1;
    }
    return v;
}

/// One metric of an episode: its name and how to read it from the metrics.
struct metric_field {
    std::string_view name;
    double metrics::*field = nullptr;
    double group_metrics::*group = nullptr;  ///< a metric by group of jobs (metrics::groups) instead of `field`
    [[nodiscard]] double of(const metrics& m) const noexcept { return field ? m.*field : m.groups.*group; }
};

/// The metrics a result reports per episode and summarises, in this order (times in seconds).
[[nodiscard]] inline const std::vector<metric_field>& result_metrics() {
    static const std::vector<metric_field> v = {
        {"avg_jct", &metrics::avg_jct},
        {"p50_jct", &metrics::p50_jct},
        {"p95_jct", &metrics::p95_jct},
        {"p99_jct", &metrics::p99_jct},
        {"avg_queueing_delay", &metrics::avg_queueing_delay},
        {"p99_queueing_delay", &metrics::p99_queueing_delay},
        {"makespan", &metrics::makespan},
        {"utilization", &metrics::utilization},
        {"avg_comm_cost", &metrics::avg_comm_cost},
        {"avg_slowdown", &metrics::avg_slowdown},
        {"avg_fairness", &metrics::avg_fairness},
        {"max_fairness", &metrics::max_fairness},
        {"avg_preemptions", &metrics::avg_preemptions},
        {"lost_gpu_hours", &metrics::lost_gpu_hours},
    };
    return v;
}

/// The metrics of hardware failures (failures.hpp), which a result reports after result_metrics()
/// when its episodes had failures on (other results are unchanged).
[[nodiscard]] inline const std::vector<metric_field>& failure_result_metrics() {
    static const std::vector<metric_field> v = {
        {"goodput", &metrics::goodput},
        {"wasted_gpu_hours", &metrics::wasted_gpu_hours},
        {"avg_interruptions", &metrics::avg_interruptions},
        {"hardware_failures", &metrics::hardware_failures},
        {"avg_jct_completed", &metrics::avg_jct_completed},
    };
    return v;
}

/// The metrics by group of jobs (group_metrics.hpp) a result reports when its episodes had tenants,
/// a spot class or deadlines on.
[[nodiscard]] inline const std::vector<metric_field>& tenancy_result_metrics(const group_metrics& g) {
    static const std::vector<metric_field> tenants = {
        {"jain_index", nullptr, &group_metrics::jain_index},
        {"worst_tenant_rho", nullptr, &group_metrics::worst_tenant_rho},
        {"below_guarantee_hours", nullptr, &group_metrics::below_guarantee_hours},
    };
    static const std::vector<metric_field> spot = {
        {"guaranteed_jct", nullptr, &group_metrics::guaranteed_jct},
        {"spot_jct", nullptr, &group_metrics::spot_jct},
        {"spot_evictions", nullptr, &group_metrics::spot_evictions},
    };
    static const std::vector<metric_field> deadlines = {
        {"deadlines_met", nullptr, &group_metrics::deadlines_met},
        {"avg_lateness", nullptr, &group_metrics::avg_lateness},
    };
    static const std::vector<metric_field> none;
    return g.tenants ? tenants : g.spot ? spot : g.deadlines ? deadlines : none;
}

/// What scored the episodes.
struct policy_ref {
    std::string name;  ///< e.g. "pack+sjf", "default" (a shipped model), "my_agent"
    /// "heuristic" (re-run by name), "planner" (a rollout planner by name: its recorded actions are
    /// replayed unless the validator re-runs planners), "model" (a C++ checkpoint or shipped model:
    /// re-run when it can be loaded), "python" (a Python callable: its recorded actions are
    /// replayed), "actions" (an action sequence per episode, replayed).
    std::string kind = "heuristic";
    std::string queue;     ///< the queue policy it acts under ("" = the track's)
    std::string checksum;  ///< a model: FNV-1a 64 of its checkpoint file (hex), else ""

    /// False for a planner that reads the episode's own future (hindsight:..., is_hindsight_policy()):
    /// its result says "causal": false and its row "NOT causal".
    [[nodiscard]] bool causal() const noexcept { return !(kind == "planner" && is_hindsight_policy(name)); }
};

/// One episode.
struct episode_result {
    std::uint64_t seed = 0;
    metrics m;
    double episode_return = 0;
    std::vector<std::int64_t> actions;
};

/// One policy on one track.
struct run_result {
    track t;
    policy_ref policy;
    std::string gpuplace_version = version_string;
    std::string commit;       ///< the source's commit, when known ("" otherwise)
    bool keep_actions = true; ///< whether the JSON lists each episode's actions (the hash always)
    std::vector<episode_result> episodes;
    std::vector<episode_result> best;  ///< the track's best heuristic on the same seeds
    double seconds = 0;       ///< wall time of the policy's episodes (not of the best heuristic's)
    std::size_t threads = 0;

    /// The metrics it reports: result_metrics(), then failure_result_metrics() when its episodes
    /// had hardware failures on.
    [[nodiscard]] std::vector<metric_field> reported_metrics() const {
        auto v = result_metrics();
        if (!episodes.empty() && episodes.front().m.failures)
            v.insert(v.end(), failure_result_metrics().begin(), failure_result_metrics().end());
        if (!episodes.empty()) {
            const auto& g = tenancy_result_metrics(episodes.front().m.groups);
            v.insert(v.end(), g.begin(), g.end());
        }
        return v;
    }
    [[nodiscard]] std::size_t decisions() const noexcept {
        std::size_t n = 0;
        for (const auto& e : episodes) n += e.actions.size();
        return n;
    }
    /// The mean and standard error of a metric over the episodes.
    [[nodiscard]] stat summary(double metrics::*f) const { return summarize(values(episodes, f)); }
    [[nodiscard]] stat summary(const metric_field& f) const { return summarize(values(episodes, f)); }
    /// The policy minus the best heuristic, episode by episode: mean and standard error, and on how
    /// many episodes the policy's value is lower.
    [[nodiscard]] paired_stat versus_best(double metrics::*f) const { return versus_best(metric_field{"", f}); }
    [[nodiscard]] paired_stat versus_best(const metric_field& f) const {
        const auto a = values(episodes, f), b = values(best, f);
        paired_stat ps{t.best_heuristic, {}, 0, a.size()};
        std::vector<double> d;
        for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
            d.push_back(a[i] - b[i]);
            if (d.back() < 0) ++ps.lower;
        }
        ps.diff = summarize(d);
        return ps;
    }

    [[nodiscard]] static std::vector<double> values(const std::vector<episode_result>& eps, double metrics::*f) {
        return values(eps, metric_field{"", f});
    }
    [[nodiscard]] static std::vector<double> values(const std::vector<episode_result>& eps, const metric_field& f) {
        std::vector<double> v;
        for (const auto& e : eps) v.push_back(f.of(e.m));
        return v;
    }
};

namespace detail_bench {
[[nodiscard]] inline json stat_json(const stat& s) { return {{"mean", s.mean}, {"sem", s.sem}}; }
}  // namespace detail_bench

/// The result as JSON; with `timing` false without the "timing" member (what validate() compares).
[[nodiscard]] inline json to_json(const run_result& r, bool timing = true) {
    json j;
    j["format"] = result_format;
    j["format_version"] = result_format_version;
    j["track"] = to_json(r.t);
    j["gpuplace_version"] = r.gpuplace_version;
    j["commit"] = r.commit;
    json p = {{"name", r.policy.name}, {"kind", r.policy.kind}, {"queue", r.policy.queue}};
    if (!r.policy.checksum.empty()) p["checkpoint_fnv1a64"] = r.policy.checksum;
    if (!r.policy.causal()) p["causal"] = false;
    j["policy"] = p;
    j["actions_kept"] = r.keep_actions;
    const auto reported = r.reported_metrics();
    json eps = json::array();
    for (const auto& e : r.episodes) {
        json m = json::object();
        for (const auto& f : reported) m[std::string(f.name)] = f.of(e.m);
        m["jobs_done"] = e.m.jobs_done;
        m["jobs_total"] = e.m.jobs_total;
        json ej = {{"seed", e.seed},
                   {"steps", e.actions.size()},
                   {"episode_return", e.episode_return},
                   {"actions_fnv1a64", hex64(actions_hash(e.actions))},
                   {"metrics", m}};
        if (r.keep_actions) ej["actions"] = actions_text(e.actions);
        eps.push_back(std::move(ej));
    }
    j["episodes"] = eps;
    json sum = json::object();
    for (const auto& f : reported) sum[std::string(f.name)] = detail_bench::stat_json(r.summary(f));
    j["summary"] = sum;
    json vs = {{"policy", r.t.best_heuristic}};
    vs["avg_jct"] = run_result::values(r.best, &metrics::avg_jct);
    json per = json::object();
    for (const auto& f : reported) {
        const auto ps = r.versus_best(f);
        per[std::string(f.name)] = {{"best", detail_bench::stat_json(summarize(run_result::values(r.best, f)))},
                                    {"diff", detail_bench::stat_json(ps.diff)},
                                    {"lower", ps.lower}};
    }
    vs["metrics"] = per;
    j["vs_best_heuristic"] = vs;
    if (timing) {
        const auto n = r.decisions();
        j["timing"] = {{"seconds", r.seconds},
                       {"threads", r.threads},
                       {"decisions", n},
                       {"decisions_per_second", r.seconds > 0 ? double(n) / r.seconds : 0.0}};
    }
    return j;
}

namespace detail_bench {
/// `v` as JSON text indented by one space per level, from `depth` down, up to where a value is a
/// leaf record (one line each): the members of the top-level objects and arrays (an episode, a
/// metric's mean and standard error), or below them what holds no object of records.
inline void write_layout(std::string& out, const json& v, int depth) {
    bool records = v.is_object() && !v.empty();
    for (const auto& x : v) records = records && x.is_object();
    const bool expand = v.is_structured() && !v.empty() && (depth < 2 || (depth == 2 && records));
    if (!expand) {
        out += v.dump();
        return;
    }
    const std::string pad = "\n" + std::string(std::size_t(depth) + 1, ' ');
    out += v.is_object() ? "{" : "[";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
        out += (first ? "" : ",") + pad;
        first = false;
        if (v.is_object()) out += json(it.key()).dump() + ": ";
        write_layout(out, *it, depth + 1);
    }
    out += "\n" + std::string(std::size_t(depth), ' ') + (v.is_object() ? "}" : "]");
}
}  // namespace detail_bench

/// The result file's text: to_json() laid out one record a line (an episode, a metric's summary),
/// ending in a newline. It reads back to the same JSON; the same result is the same text.
[[nodiscard]] inline std::string result_text(const run_result& r) {
    std::string out;
    detail_bench::write_layout(out, to_json(r), 0);
    return out + "\n";
}

/// A result file's name for a track and a policy: "<track>__<policy>.json", the policy's
/// characters other than letters, digits, '.', '-', '+' and '_' as '_'.
[[nodiscard]] inline std::string result_file_name(const std::string& track, const std::string& policy) {
    std::string p = policy;
    for (auto& c : p) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                          c == '+' || c == '_';
        if (!keep) c = '_';
    }
    return track + "__" + p + ".json";
}

/// A markdown table row: track, policy, mean JCT (h) +- s.e., against the best heuristic (h),
/// p95 JCT (h), utilisation, decisions per second. result_row_header() is its header.
[[nodiscard]] inline std::string result_row(const run_result& r) {
    const auto jct = r.summary(&metrics::avg_jct), p95 = r.summary(&metrics::p95_jct), util = r.summary(&metrics::utilization);
    const auto vs = r.versus_best(&metrics::avg_jct);
    const double dps = r.seconds > 0 ? double(r.decisions()) / r.seconds : 0.0;
    char b[512];
    std::snprintf(b, sizeof b, "| %s %s | %s%s | %.3f +- %.3f | %+.3f +- %.3f (%s) | %.3f | %.3f | %.0f |", r.t.name.c_str(),
                  r.t.version.c_str(), r.policy.name.c_str(), r.policy.causal() ? "" : " (NOT causal)", jct.mean / 3600, jct.sem / 3600, vs.diff.mean / 3600,
                  vs.diff.sem / 3600, r.t.best_heuristic.c_str(), p95.mean / 3600, util.mean, dps);
    return b;
}
[[nodiscard]] inline std::string result_row_header() {
    return "| track | policy | mean JCT (h) | vs best heuristic (h) | p95 JCT (h) | utilisation | decisions/s |\n"
           "|---|---|---|---|---|---|---|";
}

}  // namespace gpuplace::bench
