#pragma once
/// \file evaluate.hpp
/// The evaluation harness: runs policies (each under an optional queue policy) on held-out seeds
/// of a scenario - synthetic or a trace - and summarises each metric as mean +- standard error;
/// prints a table and writes CSV / JSON.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "config.hpp"
#include "detail/progress.hpp"
#include "detail/thread_pool.hpp"
#include "env.hpp"
#include "metrics.hpp"
#include "policy.hpp"

namespace gpuplace {

/// A type-erased policy for env type E, built per episode by a factory (so episodes can run in
/// parallel without sharing state).
template <class E>
struct any_policy {
    std::string name;
    std::function<std::function<std::int64_t(const E&)>(std::uint64_t seed)> make;  ///< seed -> act function
    std::string queue;  ///< queue policy to run under (see apply_queue); empty = the scenario's
};

/// Names of the queue policies: "fifo" (strict head-of-line FIFO), "backfill" (FIFO order, any
/// waiting job that fits may start), "sjf" (shortest ideal duration first, with backfill),
/// "fewest_gpus" (smallest request first, with backfill).
[[nodiscard]] inline std::vector<std::string> queue_names() { return {"fifo", "backfill", "sjf", "fewest_gpus"}; }

/// Sets the scenario's queue order and backfill from a queue policy name (ConfigError otherwise).
inline void apply_queue(scenario& s, std::string_view queue) {
    if (queue.empty()) return;
    if (queue == "fifo") s.env.order = queue_order::fifo, s.env.backfill = false;
    else if (queue == "backfill") s.env.order = queue_order::fifo, s.env.backfill = true;
    else if (queue == "sjf") s.env.order = queue_order::sjf, s.env.backfill = true;
    else if (queue == "fewest_gpus") s.env.order = queue_order::fewest_gpus, s.env.backfill = true;
    else
        throw ConfigError("unknown queue policy \"" + std::string(queue) + "\" (known: fifo, backfill, sjf, fewest_gpus)");
}

/// Wraps a Policy type (default-constructible, reset(seed) per episode) as an any_policy.
template <class E, class P>
[[nodiscard]] any_policy<E> wrap_policy(std::string name) {
    return {std::move(name), [](std::uint64_t seed) {
                auto p = std::make_shared<P>();
                p->reset(seed);
                return std::function<std::int64_t(const E&)>([p](const E& e) { return gpuplace::act(e, *p); });
            },
            {}};
}

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
    throw Error("unknown metric \"" + name + "\"");
}

/// Whether a metric is a time (seconds; the tables print hours) rather than a cost, a ratio or a
/// fraction.
[[nodiscard]] inline bool is_time_metric(const std::string& name) noexcept {
    return name != "avg_comm_cost" && name != "total_comm_cost" && name != "avg_slowdown" && name != "utilization";
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

    /// A fixed-width table: one row per policy, mean +- standard error per metric (times in hours).
    [[nodiscard]] std::string table() const {
        std::string out;
        char buf[128];
        int w = 16;
        for (const auto& p : policies) w = std::max(w, int(p.policy.size()) + 1);
        std::snprintf(buf, sizeof buf, "%-*s", w, "policy");
        out += buf;
        for (const auto& n : eval_metric_names()) {
            std::snprintf(buf, sizeof buf, " %20s", n.c_str());
            out += buf;
        }
        out += "\n";
        for (const auto& p : policies) {
            std::snprintf(buf, sizeof buf, "%-*s", w, p.policy.c_str());
            out += buf;
            for (const auto& n : eval_metric_names()) {
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

    /// CSV: policy, seed, every metric (seconds).
    [[nodiscard]] std::string csv() const {
        std::string out = "policy,seed,avg_jct,p50_jct,p95_jct,p99_jct,avg_queueing_delay,makespan,avg_comm_cost,"
                          "total_comm_cost,avg_slowdown,utilization,jobs_done,episode_return\n";
        char buf[512];
        for (const auto& p : policies)
            for (std::size_t i = 0; i < p.per_seed.size(); ++i) {
                const auto& m = p.per_seed[i];
                std::snprintf(buf, sizeof buf, "%s,%llu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%zu,%.17g\n",
                              p.policy.c_str(), static_cast<unsigned long long>(seeds[i]), m.avg_jct, m.p50_jct,
                              m.p95_jct, m.p99_jct, m.avg_queueing_delay, m.makespan, m.avg_comm_cost,
                              m.total_comm_cost, m.avg_slowdown, m.utilization, m.jobs_done, p.returns[i]);
                out += buf;
            }
        return out;
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

/// evaluate()'s progress report: called after each episode with the episodes finished so far and
/// the episodes in all (policies x seeds), from the worker threads but never two calls at once.
using eval_progress = std::function<void(std::size_t done, std::size_t total)>;

/// Runs every policy on every seed of the scenario (each policy under its queue policy, if any),
/// in parallel over `threads` threads (0 = all cores), calling `progress` (when set) after each
/// episode (e.g. detail::progress_line). Results do not depend on the thread count.
template <class E = env>
[[nodiscard]] eval_report evaluate(const scenario& s, const std::vector<any_policy<E>>& policies,
                                   const std::vector<std::uint64_t>& seeds, std::size_t threads = 0,
                                   const eval_progress& progress = {}) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    // one prototype env per distinct queue policy (each reads a trace workload once)
    std::vector<E> protos;
    protos.reserve(policies.size());
    std::map<std::string, std::size_t> proto_of;
    std::vector<std::size_t> which(policies.size());
    for (std::size_t i = 0; i < policies.size(); ++i) {
        auto [it, fresh] = proto_of.try_emplace(policies[i].queue, protos.size());
        if (fresh) {
            scenario q = s;
            apply_queue(q, policies[i].queue);
            protos.emplace_back(q);
        }
        which[i] = it->second;
    }
    eval_report rep;
    rep.scenario = s.name;
    rep.seeds = seeds;
    for (const auto& p : policies) rep.policies.push_back({p.name, std::vector<metrics>(seeds.size()), std::vector<double>(seeds.size())});
    const std::size_t jobs = policies.size() * seeds.size();
    threads = std::min(threads, std::max<std::size_t>(jobs, 1));
    detail::block_pool pool(threads);
    std::atomic<std::size_t> next{0};
    std::mutex progress_mutex;
    std::size_t done = 0;
    auto task = [&](std::size_t) {
        std::vector<std::unique_ptr<E>> envs(protos.size());
        for (std::size_t k; (k = next.fetch_add(1)) < jobs;) {
            const auto pi = k / seeds.size(), si = k % seeds.size();
            auto& slot = envs[which[pi]];
            if (!slot) slot = std::make_unique<E>(protos[which[pi]]);
            E& e = *slot;
            auto act = policies[pi].make(seeds[si]);
            e.reset(seeds[si]);
            while (!e.done()) e.step(act(e));
            rep.policies[pi].per_seed[si] = e.episode_metrics();
            rep.policies[pi].returns[si] = e.episode_return();
            if (progress) {
                const std::lock_guard<std::mutex> lock(progress_mutex);
                progress(++done, jobs);
            }
        }
    };
    pool.run(task);
    return rep;
}

/// Names of every heuristic policy.
[[nodiscard]] inline std::vector<std::string> heuristic_names() {
    return {"random", "first_fit", "pack", "load_balance", "topology_greedy", "pack_wait"};
}

/// The type-aware heuristics of heterogeneous clusters: "<rule>:<heuristic>" for each rule
/// (fastest_type, throughput_greedy) and each of heuristic_names() (heuristics.hpp, typed_policy).
[[nodiscard]] inline std::vector<std::string> type_aware_heuristic_names() {
    std::vector<std::string> v;
    for (auto r : {type_rule::fastest_type, type_rule::throughput_greedy})
        for (const auto& h : heuristic_names()) v.push_back(std::string(to_string(r)) + ":" + h);
    return v;
}

/// Every heuristic under every queue policy, "<heuristic>+<queue>" (heuristic by heuristic): the
/// honest yardstick, since the queue order is as much a scheduler's decision as placement is.
[[nodiscard]] inline std::vector<std::string> heuristic_variants() {
    std::vector<std::string> v;
    for (const auto& h : heuristic_names())
        for (const auto& q : queue_names()) v.push_back(h + "+" + q);
    return v;
}

/// heuristic_variants() for scenario s: on a heterogeneous cluster (GPUs of several types) the
/// type-aware heuristics under every queue policy too.
[[nodiscard]] inline std::vector<std::string> heuristic_variants(const scenario& s) {
    auto v = heuristic_variants();
    if (TreeTopology::from_config(s.topology, "/topology").heterogeneous())
        for (const auto& h : type_aware_heuristic_names())
            for (const auto& q : queue_names()) v.push_back(h + "+" + q);
    return v;
}

namespace detail {
/// Calls f(std::type_identity<P>{}) for the heuristic P named `base` (one of heuristic_names());
/// false when there is none.
template <class F>
bool with_heuristic(std::string_view base, F&& f) {
    if (base == "random") f(std::type_identity<random_policy>{});
    else if (base == "first_fit") f(std::type_identity<first_fit_policy>{});
    else if (base == "pack") f(std::type_identity<pack_policy>{});
    else if (base == "load_balance") f(std::type_identity<load_balance_policy>{});
    else if (base == "topology_greedy") f(std::type_identity<topology_greedy_policy>{});
    else if (base == "pack_wait") f(std::type_identity<pack_wait_policy>{});
    else return false;
    return true;
}
}  // namespace detail

/// A heuristic policy by name: one of heuristic_names() or type_aware_heuristic_names(), optionally
/// with a queue policy, "<policy>+<queue>" (e.g. "pack+sjf", "fastest_type:pack_wait+sjf"; see
/// queue_names()). ConfigError names the known ones.
template <class E = env>
[[nodiscard]] any_policy<E> heuristic(const std::string& name) {
    const auto plus = name.find('+');
    const std::string base = name.substr(0, plus);
    const std::string queue = plus == std::string::npos ? std::string() : name.substr(plus + 1);
    if (!queue.empty()) {
        scenario probe;
        apply_queue(probe, queue);  // validates the name
    } else if (plus != std::string::npos) {
        throw ConfigError("policy \"" + name + "\": missing queue policy after '+' (known: fifo, backfill, sjf, fewest_gpus)");
    }
    any_policy<E> p;
    const auto colon = base.find(':');
    const std::string rule = colon == std::string::npos ? std::string() : base.substr(0, colon);
    const std::string placer = colon == std::string::npos ? base : base.substr(colon + 1);
    bool found = false;
    if (rule.empty())
        found = detail::with_heuristic(placer, [&]<class P>(std::type_identity<P>) { p = wrap_policy<E, P>(name); });
    else if (rule == to_string(type_rule::fastest_type))
        found = detail::with_heuristic(placer, [&]<class P>(std::type_identity<P>) {
            p = wrap_policy<E, typed_policy<type_rule::fastest_type, P>>(name);
        });
    else if (rule == to_string(type_rule::throughput_greedy))
        found = detail::with_heuristic(placer, [&]<class P>(std::type_identity<P>) {
            p = wrap_policy<E, typed_policy<type_rule::throughput_greedy, P>>(name);
        });
    if (!found) {
        std::string known;
        for (const auto& n : heuristic_names()) known += (known.empty() ? "" : ", ") + n;
        if (rule.empty()) throw ConfigError("unknown policy \"" + base + "\" (known: " + known + ")");
        throw ConfigError("unknown policy \"" + base + "\" (known: <rule>:<heuristic> with rule fastest_type or throughput_greedy and heuristic " +
                          known + ")");
    }
    p.queue = queue;
    return p;
}

/// Seeds held out from training: 1000000 + i.
[[nodiscard]] inline std::vector<std::uint64_t> held_out_seeds(std::size_t n) {
    std::vector<std::uint64_t> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(1'000'000 + i);
    return v;
}

}  // namespace gpuplace
