#pragma once
/// \file eval_report.hpp
/// An evaluation's report (what evaluate() returns): per policy and metric, mean +- standard error
/// over the seeds and the per-seed values; paired differences between policies; the report as a
/// fixed-width table, CSV and a summary CSV (its JSON form: gpuplace/json/report.hpp). Needs no env.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "error.hpp"
#include "metrics.hpp"

namespace gpuplace {

/// Mean and standard error of a sample.
struct stat {
    double mean = 0, sem = 0;
};

[[nodiscard]] inline stat summarize(const std::vector<double>& v) {
    stat s;
    if (v.empty()) return s;
    for (double x : v) s.mean += x;
    s.mean /= double(v.size());
    if (v.size() > 1) {
        double ss = 0;
        for (double x : v) ss += (x - s.mean) * (x - s.mean);
        s.sem = std::sqrt(ss / double(v.size() - 1) / double(v.size()));
    }
    return s;
}

/// The metrics reported by the harness, in table order.
inline const std::vector<std::string>& eval_metric_names() {
    static const std::vector<std::string> names = {"avg_jct", "p95_jct", "avg_queueing_delay", "makespan",
                                                   "avg_comm_cost", "avg_slowdown", "utilization"};
    return names;
}

[[nodiscard]] inline double metric_value(const metrics& m, const std::string& name) {
    if (name == "avg_jct") return m.avg_jct;
    if (name == "p50_jct") return m.p50_jct;
    if (name == "p95_jct") return m.p95_jct;
    if (name == "p99_jct") return m.p99_jct;
    if (name == "avg_queueing_delay") return m.avg_queueing_delay;
    if (name == "makespan") return m.makespan;
    if (name == "avg_comm_cost") return m.avg_comm_cost;
    if (name == "total_comm_cost") return m.total_comm_cost;
    if (name == "avg_slowdown") return m.avg_slowdown;
    if (name == "utilization") return m.utilization;
    if (name == "p99_queueing_delay") return m.p99_queueing_delay;
    if (name == "avg_preemptions") return m.avg_preemptions;
    if (name == "lost_gpu_hours") return m.lost_gpu_hours;
    if (name == "avg_fairness") return m.avg_fairness;
    if (name == "max_fairness") return m.max_fairness;
    if (name == "avg_moves") return m.avg_moves;
    if (name == "avg_resizes") return m.avg_resizes;
    if (name == "avg_suspended_time") return m.avg_suspended_time;
    if (name == "gpu_time_efficiency") return m.gpu_time_efficiency;
    const auto& g = m.groups;  // tenants, spot, deadlines (group_metrics.hpp)
    if (name == "jain_index") return g.jain_index;
    if (name == "worst_tenant_rho") return g.worst_tenant_rho;
    if (name == "below_guarantee_hours") return g.below_guarantee_hours;
    if (name == "guaranteed_jct") return g.guaranteed_jct;
    if (name == "spot_jct") return g.spot_jct;
    if (name == "guaranteed_queueing_delay") return g.guaranteed_delay;
    if (name == "spot_queueing_delay") return g.spot_delay;
    if (name == "spot_evictions") return g.spot_evictions;
    if (name == "deadlines_met") return g.deadlines_met;
    if (name == "avg_lateness") return g.avg_lateness;
    if (name.starts_with("tenant") && name.size() > 6) {  // tenant<i>_jct, tenant<i>_slowdown
        const auto us = name.find('_');
        const std::string idx = name.substr(6, us == std::string::npos ? std::string::npos : us - 6), what = us == std::string::npos ? "" : name.substr(us + 1);
        if (!idx.empty() && idx.size() <= 1 && idx[0] >= '0' && idx[0] < char('0' + max_metric_tenants) && (what == "jct" || what == "slowdown")) {
            const auto t = std::size_t(idx[0] - '0');
            return what == "jct" ? g.tenant_jct[t] : g.tenant_slowdown[t];
        }
    }
    if (name == "goodput") return m.goodput;
    if (name == "wasted_gpu_hours") return m.wasted_gpu_hours;
    if (name == "avg_interruptions") return m.avg_interruptions;
    if (name == "hardware_failures") return m.hardware_failures;
    if (name == "avg_jct_completed") return m.avg_jct_completed;
    throw Error("unknown metric \"" + name + "\"");
}

/// Whether a metric is a time (seconds; the tables print hours) rather than a cost, a ratio or a
/// fraction.
[[nodiscard]] inline bool is_time_metric(const std::string& name) noexcept {
    for (const char* other : {"avg_comm_cost", "total_comm_cost", "avg_slowdown", "utilization", "avg_preemptions",
                              "lost_gpu_hours", "avg_fairness", "max_fairness", "avg_moves", "avg_resizes", "gpu_time_efficiency",
                              "goodput", "wasted_gpu_hours", "avg_interruptions", "hardware_failures",
                              "jain_index", "worst_tenant_rho", "below_guarantee_hours", "spot_evictions", "deadlines_met"})
        if (name == other) return false;
    if (name.starts_with("tenant") && name.ends_with("_slowdown")) return false;
    return true;
}

/// The metrics the table adds when a policy preempted (docs/information.md): the tail of the
/// queueing delay, preemptions per job and the GPU-hours lost to restarts.
inline const std::vector<std::string>& preemption_metric_names() {
    static const std::vector<std::string> names = {"p99_queueing_delay", "avg_preemptions", "lost_gpu_hours"};
    return names;
}

/// The metrics the table adds when a policy ran in rounds (docs/rounds.md): moves, resizes and
/// suspended time per job (the restores' GPU-hours are in lost_gpu_hours), and the GPU-time
/// efficiency (useful GPU-time / GPU-time held).
inline const std::vector<std::string>& round_metric_names() {
    static const std::vector<std::string> names = {"avg_moves", "avg_resizes", "avg_suspended_time", "gpu_time_efficiency"};
    return names;
}

/// The metrics the table adds with tenants, a spot class or deadlines on (group_metrics.hpp; each
/// list when its feature is on): per tenant (the first max_metric_tenants) its mean JCT as
/// "tenant<i>_jct", Jain's index, the worst tenant rho and the hours below a guarantee; per class
/// JCT, queueing delay and evictions per spot job; deadlines met and the mean lateness of misses.
[[nodiscard]] inline std::vector<std::string> group_metric_names(const group_metrics& g) {
    std::vector<std::string> v;
    if (g.tenants) {
        for (std::size_t t = 0; t < std::min(g.num_tenants, max_metric_tenants); ++t) v.push_back("tenant" + std::to_string(t) + "_jct");
        for (const char* n : {"jain_index", "worst_tenant_rho", "below_guarantee_hours"}) v.emplace_back(n);
    }
    if (g.spot)
        for (const char* n : {"guaranteed_jct", "spot_jct", "guaranteed_queueing_delay", "spot_queueing_delay", "spot_evictions"}) v.emplace_back(n);
    if (g.deadlines)
        for (const char* n : {"deadlines_met", "avg_lateness"}) v.emplace_back(n);
    return v;
}

/// The metrics the table adds when hardware failed (failures.hpp, docs/realities.md): goodput,
/// wasted GPU-hours, interruptions per job, hardware failures per episode, mean JCT of the
/// completed jobs.
inline const std::vector<std::string>& failure_metric_names() {
    static const std::vector<std::string> names = {"goodput", "wasted_gpu_hours", "avg_interruptions", "hardware_failures",
                                                   "avg_jct_completed"};
    return names;
}

/// One policy's results over the seeds.
struct policy_eval {
    std::string policy;
    std::vector<metrics> per_seed;
    std::vector<double> returns;
    [[nodiscard]] stat get(const std::string& metric) const {
        std::vector<double> v;
        for (const auto& m : per_seed) v.push_back(metric_value(m, metric));
        return summarize(v);
    }
};

/// One policy against another on the same seeds: the mean and standard error of the per-seed
/// difference (policy minus other), and on how many seeds the policy's value is lower.
struct paired_stat {
    std::string other;
    stat diff;
    std::size_t lower = 0, seeds = 0;
};

/// Results of an evaluation.
struct eval_report {
    std::string scenario;
    std::vector<std::uint64_t> seeds;
    std::vector<policy_eval> policies;

    /// A fixed-width table: one row per policy, mean +- standard error per metric (times in hours);
    /// with preemption_metric_names() too when some policy preempted.
    [[nodiscard]] std::string table() const {
        std::string out;
        char buf[128];
        int w = 16;
        auto names = eval_metric_names();
        bool preempted = false, rounds = false, failures = false;
        for (const auto& p : policies) {
            w = std::max(w, int(p.policy.size()) + 1);
            for (const auto& m : p.per_seed) {
                preempted = preempted || m.avg_preemptions > 0 || m.rounds;
                rounds = rounds || m.rounds;
                failures = failures || m.failures;
            }
        }
        if (preempted) names.insert(names.end(), preemption_metric_names().begin(), preemption_metric_names().end());
        if (rounds) names.insert(names.end(), round_metric_names().begin(), round_metric_names().end());
        if (failures) names.insert(names.end(), failure_metric_names().begin(), failure_metric_names().end());
        if (!policies.empty() && !policies.front().per_seed.empty())
            for (auto& n : group_metric_names(policies.front().per_seed.front().groups)) names.push_back(std::move(n));
        std::snprintf(buf, sizeof buf, "%-*s", w, "policy");
        out += buf;
        for (const auto& n : names) {
            std::snprintf(buf, sizeof buf, " %20s", n.c_str());
            out += buf;
        }
        out += "\n";
        for (const auto& p : policies) {
            std::snprintf(buf, sizeof buf, "%-*s", w, p.policy.c_str());
            out += buf;
            for (const auto& n : names) {
                const auto s = p.get(n);
                const double f = is_time_metric(n) ? 1.0 / 3600.0 : 1.0;
                std::snprintf(buf, sizeof buf, " %12.3f +- %5.3f", s.mean * f, s.sem * f);
                out += buf;
            }
            out += "\n";
        }
        out += "(times in hours; mean +- standard error over " + std::to_string(seeds.size()) + " seeds)\n";
        return out;
    }

    /// `policy` against every other policy on the same seeds, for `metric` (seconds for times):
    /// paired differences, which cancel what the seeds share (a heavy seed is heavy for all).
    /// Throws Error naming the policy when it is not in the report.
    [[nodiscard]] std::vector<paired_stat> paired(const std::string& policy, const std::string& metric = "avg_jct") const {
        const auto* ref = find(policy);
        (void)metric_value(metrics{}, metric);  // an unknown metric is an Error even with no other policy
        std::vector<paired_stat> out;
        for (const auto& p : policies) {
            if (&p == ref) continue;
            paired_stat ps{p.policy, {}, 0, ref->per_seed.size()};
            std::vector<double> d;
            for (std::size_t i = 0; i < ref->per_seed.size(); ++i) {
                d.push_back(metric_value(ref->per_seed[i], metric) - metric_value(p.per_seed[i], metric));
                if (d.back() < 0) ++ps.lower;
            }
            ps.diff = summarize(d);
            out.push_back(std::move(ps));
        }
        return out;
    }

    /// paired() as text, times in hours: one line per other policy.
    [[nodiscard]] std::string paired_table(const std::string& policy, const std::string& metric = "avg_jct") const {
        const bool time = is_time_metric(metric);
        const double f = time ? 1.0 / 3600.0 : 1.0;
        std::string out = policy + " against each policy on the same seeds, " + metric +
                          (time ? " (h)" : "") + ", " + policy + " minus the other (mean +- standard error):\n";
        char buf[256];
        for (const auto& ps : paired(policy, metric)) {
            std::snprintf(buf, sizeof buf, "  %-20s %+8.3f +- %5.3f   %s lower on %zu of %zu seeds\n", ps.other.c_str(),
                          ps.diff.mean * f, ps.diff.sem * f, policy.c_str(), ps.lower, ps.seeds);
            out += buf;
        }
        return out;
    }

    /// CSV: policy, seed, every metric (seconds); with hardware failures, failure_metric_names() too.
    [[nodiscard]] std::string csv() const {
        const bool failures = has_failures();
        std::string out = "policy,seed,avg_jct,p50_jct,p95_jct,p99_jct,avg_queueing_delay,makespan,avg_comm_cost,"
                          "total_comm_cost,avg_slowdown,utilization,jobs_done,episode_return";
        if (failures)
            for (const auto& n : failure_metric_names()) out += "," + n;
        out += "\n";
        char buf[512];
        for (const auto& p : policies)
            for (std::size_t i = 0; i < p.per_seed.size(); ++i) {
                const auto& m = p.per_seed[i];
                std::snprintf(buf, sizeof buf, "%s,%llu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%zu,%.17g",
                              p.policy.c_str(), static_cast<unsigned long long>(seeds[i]), m.avg_jct, m.p50_jct,
                              m.p95_jct, m.p99_jct, m.avg_queueing_delay, m.makespan, m.avg_comm_cost,
                              m.total_comm_cost, m.avg_slowdown, m.utilization, m.jobs_done, p.returns[i]);
                out += buf;
                if (failures)
                    for (const auto& n : failure_metric_names()) {
                        std::snprintf(buf, sizeof buf, ",%.17g", metric_value(m, n));
                        out += buf;
                    }
                out += "\n";
            }
        return out;
    }

    /// Whether some episode of the report had hardware failures (or trace outcomes).
    [[nodiscard]] bool has_failures() const noexcept {
        for (const auto& p : policies)
            for (const auto& m : p.per_seed)
                if (m.failures) return true;
        return false;
    }

    /// CSV: policy, then mean and standard error of each metric (seconds), one row per policy.
    [[nodiscard]] std::string summary_csv() const {
        std::string out = "policy,seeds";
        for (const auto& n : eval_metric_names()) out += "," + n + "_mean," + n + "_sem";
        out += "\n";
        char buf[64];
        for (const auto& p : policies) {
            out += p.policy + "," + std::to_string(p.per_seed.size());
            for (const auto& n : eval_metric_names()) {
                const auto st = p.get(n);
                std::snprintf(buf, sizeof buf, ",%.10g,%.10g", st.mean, st.sem);
                out += buf;
            }
            out += "\n";
        }
        return out;
    }

    /// The policy with the lowest mean `metric`, among those whose name does not start with one
    /// of `exclude` (e.g. {"ppo"}: the best heuristic). Error when none is left.
    [[nodiscard]] std::string best(const std::string& metric = "avg_jct", const std::vector<std::string>& exclude = {}) const {
        const policy_eval* b = nullptr;
        for (const auto& p : policies) {
            bool skip = false;
            for (const auto& x : exclude) skip = skip || p.policy.rfind(x, 0) == 0;
            if (!skip && (!b || p.get(metric).mean < b->get(metric).mean)) b = &p;
        }
        if (!b) throw Error("eval_report::best(): no policy left to choose from");
        return b->policy;
    }

private:
    [[nodiscard]] const policy_eval* find(const std::string& policy) const {
        std::string known;
        for (const auto& p : policies) {
            if (p.policy == policy) return &p;
            known += (known.empty() ? "" : ", ") + p.policy;
        }
        throw Error("eval_report: no policy \"" + policy + "\" (evaluated: " + known + ")");
    }
};

}  // namespace gpuplace
