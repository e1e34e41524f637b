#pragma once
/// \file any_policy.hpp
/// A type-erased policy for an env type (any_policy), the queue policies a policy may run under
/// (queue_names(), apply_queue()), and wrap_policy() for a heuristic type: what the evaluation
/// harness (evaluate.hpp) runs and the heuristic registry (heuristic_registry.hpp) makes.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "discipline_registry.hpp"
#include "error.hpp"
#include "metrics.hpp"
#include "policy.hpp"

namespace gpuplace {

/// What a whole episode run outside an env's steps ends with (a policy under a round policy).
struct episode_outcome {
    metrics m;
    double episode_return = 0;
};

/// A type-erased policy for env type E, built per episode by a factory (so episodes can run in
/// parallel without sharing state).
template <class E>
struct any_policy {
    std::string name;
    std::function<std::function<std::int64_t(const E&)>(std::uint64_t seed)> make;  ///< seed -> act function
    std::string queue;  ///< queue policy to run under (see apply_queue); empty = the scenario's
    /// Under a round policy (queue one of round_policy_names(); set by named_policy()): given the
    /// scenario with the queue applied, a runner of whole episodes by seed (round_env.hpp), safe
    /// to call from several threads at once. The harness calls it instead of stepping an env.
    std::function<std::function<episode_outcome(std::uint64_t seed)>(const scenario&)> rounds;
    /// Called by the harness with an env of the scenario (the queue policy applied) before any
    /// episode runs: throws ConfigError when the policy cannot run there in reasonable time (a
    /// rollout planner on a cluster too large for it, planner.hpp). Empty: nothing to check.
    std::function<void(const E&)> check = {};
};

/// Names of the non-preemptive queue policies: "fifo" (strict head-of-line FIFO), "backfill" (FIFO
/// order, any waiting job that fits may start), "sjf" (shortest ideal duration first, with
/// backfill; the estimate with durations "predicted", refused with "hidden"), "fewest_gpus"
/// (smallest request first, with backfill).
[[nodiscard]] inline std::vector<std::string> queue_names() { return {"fifo", "backfill", "sjf", "fewest_gpus"}; }
/// The preemptive disciplines that need no duration (docs/information.md): they turn preemption
/// on, under the scenario's preemption costs.
[[nodiscard]] inline std::vector<std::string> preemptive_queue_names() { return {"las", "2d_las", "gittins"}; }
/// The preemptive disciplines of tenants, classes and deadlines (tenancy.hpp, env/tenancy.hpp):
/// "capacity" (quotas with borrowing) and "drf" (progressive filling) need the scenario's tenants,
/// "themis" (worst finish-time fairness first) none, "edf" and "edf_ac" (EDF with admission
/// control) its deadlines. They turn preemption on, under the scenario's preemption costs.
[[nodiscard]] inline std::vector<std::string> tenancy_queue_names() { return {"capacity", "drf", "themis", "edf", "edf_ac"}; }
/// The references that read the true durations whatever the scenario's durations say (not
/// causal): "sjf_oracle" (sjf, non-preemptive) and "srtf_oracle" (shortest remaining time first,
/// preemptive: a bound).
[[nodiscard]] inline std::vector<std::string> oracle_queue_names() { return {"sjf_oracle", "srtf_oracle"}; }
/// Every queue policy name, in the order above, then the round policies (round_policy_names(),
/// Gavel's: they decide in rounds who runs, on which GPU type; docs/rounds.md), then the
/// disciplines registered by name (registered_discipline_names(), discipline_registry.hpp).
[[nodiscard]] inline std::vector<std::string> all_queue_names() {
    auto v = queue_names();
    for (auto* more : {&preemptive_queue_names, &tenancy_queue_names, &oracle_queue_names, &round_policy_names, &registered_discipline_names})
        for (auto& n : (*more)()) v.push_back(std::move(n));
    return v;
}
/// Whether a queue policy reads the true durations (not causal when the scenario hides them).
[[nodiscard]] inline bool is_oracle_queue(std::string_view queue) noexcept { return queue.ends_with("_oracle"); }

/// Sets the scenario's queue order, backfill, preemption and, for the oracle references, durations
/// from a queue policy name; a round policy turns rounds on with it, a registered discipline
/// (discipline_registry.hpp) preemption (ConfigError for an unknown name).
inline void apply_queue(scenario& s, std::string_view queue) {
    if (queue.empty()) return;
    const auto order = [&](queue_order o, bool backfill, bool preempt) {
        s.env.order = o;
        s.env.discipline.clear();
        s.env.backfill = backfill;
        s.preemption.enabled = preempt;
    };
    if (queue == "fifo") order(queue_order::fifo, false, false);
    else if (queue == "backfill") order(queue_order::fifo, true, false);
    else if (queue == "sjf") order(queue_order::sjf, true, false);
    else if (queue == "fewest_gpus") order(queue_order::fewest_gpus, true, false);
    else if (queue == "las") order(queue_order::las, true, true);
    else if (queue == "2d_las") order(queue_order::two_d_las, true, true);
    else if (queue == "gittins") order(queue_order::gittins, true, true);
    else if (queue == "capacity") order(queue_order::capacity, true, true);
    else if (queue == "drf") order(queue_order::drf, true, true);
    else if (queue == "themis") order(queue_order::themis, true, true);
    else if (queue == "edf") order(queue_order::edf, true, true);
    else if (queue == "edf_ac") order(queue_order::edf_ac, true, true);
    else if (queue == "sjf_oracle" || queue == "srtf_oracle") {
        order(queue == "sjf_oracle" ? queue_order::sjf : queue_order::srtf, true, queue == "srtf_oracle");
        s.durations.mode = duration_info::oracle;
    } else if (is_round_policy(queue)) {  // rounds decide who runs: no preemptive discipline beside them
        s.preemption.enabled = false;
        if (is_preemptive(s.env.order)) s.env.order = queue_order::fifo;  // a preset's discipline (philly_hidden's las)
        s.rounds.enabled = true;
        s.rounds.policy = std::string(queue);
    } else if (find_discipline(queue)) {  // registered by name: preemptive, like las
        order(queue_order::registered, true, true);
        s.env.discipline = std::string(queue);
    } else {
        std::string known;
        for (const auto& n : all_queue_names()) known += (known.empty() ? "" : ", ") + n;
        throw ConfigError("unknown queue policy \"" + std::string(queue) + "\" (known: " + known + ")");
    }
}

/// Wraps a Policy type (default-constructible, reset(seed) per episode) as an any_policy.
template <class E, class P>
[[nodiscard]] any_policy<E> wrap_policy(std::string name) {
    return {std::move(name), [](std::uint64_t seed) {
                auto p = std::make_shared<P>();
                p->reset(seed);
                return std::function<std::int64_t(const E&)>([p](const E& e) { return gpuplace::act(e, *p); });
            },
            {},
            {}};
}

}  // namespace gpuplace
