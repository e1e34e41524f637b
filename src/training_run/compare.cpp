// The training run (training_run.hpp): gpuplace-train --compare, the network against every heuristic, and the spread
// over training seeds.

#include "training_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gpuplace/json.hpp>
#include <gpuplace/input_file.hpp>
#include <gpuplace/detail/number_format.hpp>
#include <gpuplace/rl/checkpoint.hpp>
#include <gpuplace/rl/state_file.hpp>
#include <gpuplace/version.hpp>

namespace gpuplace::rl {

/// gpuplace-train --compare: the network (under the run's queue policy) and every heuristic under
/// every queue policy, on `seeds` of the run's scenario.
/// `restarts` (optional) adds each restart's own network as "<name>[seed K]", for the spread over
/// training seeds.
namespace {
template <class E>
eval_report compare_on_env(const gpuplace::scenario& s, const run_config& rc, std::shared_ptr<const actor_critic> net,
                           const std::vector<std::uint64_t>& seeds, std::size_t threads, const std::vector<restart_result>& restarts) {
    std::vector<any_policy<E>> ps;
    auto add = [&](std::string name, std::shared_ptr<const actor_critic> n) {
        auto p = as_policy<E>(std::move(name), std::move(n));
        p.queue = rc.queue;
        ps.push_back(std::move(p));
    };
    add(policy_name(rc), std::move(net));
    for (const auto& r : restarts)
        if (r.network) add(policy_name(rc) + "[seed " + std::to_string(r.seed) + "]", r.network);
    for (const auto& n : heuristic_variants(s)) ps.push_back(heuristic<E>(n));
    return evaluate<E>(s, ps, seeds, threads);
}

}  // namespace

eval_report compare_with_heuristics(const gpuplace::scenario& s, const run_config& rc, std::shared_ptr<const actor_critic> net,
                                    const std::vector<std::uint64_t>& seeds, std::size_t threads,
                                    const std::vector<restart_result>& restarts) {
    return compare_on_env<gpuplace::env>(s, rc, std::move(net), seeds, threads, restarts);
}

std::string seed_spread::text(const std::string& metric) const {
        const double f = is_time_metric(metric) ? 1.0 / 3600 : 1.0;
        std::string out = "training seeds, held-out mean " + metric + ":";
        char b[256];
        for (const auto& [n, v] : seeds) {
            std::snprintf(b, sizeof b, " %s %.3f", n.substr(n.find('[')).c_str(), v * f);
            out += b;
        }
        std::snprintf(b, sizeof b, "\nthe median seed %s minus the best heuristic %s: %+.3f +- %.3f (lower on %zu of %zu seeds)\n",
                      median.c_str(), best_heuristic.c_str(), median_vs_best.diff.mean * f, median_vs_best.diff.sem * f,
                      median_vs_best.lower, median_vs_best.seeds);
    return out + b;
}

seed_spread spread_over_seeds(const eval_report& rep, const std::string& name, const std::string& metric) {
    seed_spread s;
    for (const auto& p : rep.policies)
        if (p.policy.rfind(name + "[seed ", 0) == 0) s.seeds.emplace_back(p.policy, p.get(metric).mean);
    if (s.seeds.empty()) throw Error("spread_over_seeds(): no \"" + name + "[seed K]\" in the report");
    std::sort(s.seeds.begin(), s.seeds.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    s.median = s.seeds[(s.seeds.size() - 1) / 2].first;
    s.best_heuristic = rep.best(metric, {name});
    for (const auto& ps : rep.paired(s.median, metric))
        if (ps.other == s.best_heuristic) s.median_vs_best = ps;
    return s;
}

}  // namespace gpuplace::rl
