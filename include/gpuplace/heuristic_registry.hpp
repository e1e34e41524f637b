#pragma once
/// \file heuristic_registry.hpp
/// The heuristics by name: heuristic<E>("pack+sjf") makes the policy a name stands for (a
/// heuristic of heuristics.hpp, optionally type-aware and under a queue policy), and the lists of
/// names (heuristic_names(), heuristic_variants(), ...) that programs and the harness iterate.

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "any_policy.hpp"
#include "config.hpp"
#include "env.hpp"
#include "error.hpp"
#include "heuristics.hpp"
#include "policy.hpp"
#include "topology.hpp"

namespace gpuplace {

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

/// The queue policies a scenario's yardstick runs its heuristics under: queue_names(), and with
/// preemption on the preemptive disciplines too; with durations hidden, those that need none
/// (no sjf; the oracle references are run apart, oracle_queue_names()).
[[nodiscard]] inline std::vector<std::string> yardstick_queues(const scenario& s) {
    std::vector<std::string> v;
    for (const auto& q : queue_names())
        if (!(q == "sjf" && s.durations.mode == duration_info::hidden)) v.push_back(q);
    if (s.preemption.enabled)
        for (const auto& q : preemptive_queue_names()) v.push_back(q);
    return v;
}

/// heuristic_variants() for scenario s: its yardstick's queue policies (yardstick_queues()), and on
/// a heterogeneous cluster (GPUs of several types) the type-aware heuristics under them too.
[[nodiscard]] inline std::vector<std::string> heuristic_variants(const scenario& s) {
    const auto queues = yardstick_queues(s);
    std::vector<std::string> v;
    for (const auto& h : heuristic_names())
        for (const auto& q : queues) v.push_back(h + "+" + q);
    if (TreeTopology::from_config(s.topology, "/topology").heterogeneous())
        for (const auto& h : type_aware_heuristic_names())
            for (const auto& q : queues) v.push_back(h + "+" + q);
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
/// Calls f(std::type_identity<P>{}) for the placer P named `base`: one of heuristic_names() or
/// "<rule>:<heuristic>" (type_aware_heuristic_names()); false when there is none.
template <class F>
bool with_placer(std::string_view base, F&& f) {
    const auto colon = base.find(':');
    if (colon == std::string_view::npos) return with_heuristic(base, f);
    const auto rule = base.substr(0, colon), placer = base.substr(colon + 1);
    if (rule == to_string(type_rule::fastest_type))
        return with_heuristic(placer, [&]<class P>(std::type_identity<P>) { f(std::type_identity<typed_policy<type_rule::fastest_type, P>>{}); });
    if (rule == to_string(type_rule::throughput_greedy))
        return with_heuristic(placer, [&]<class P>(std::type_identity<P>) { f(std::type_identity<typed_policy<type_rule::throughput_greedy, P>>{}); });
    return false;
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
        std::string known;
        for (const auto& n : all_queue_names()) known += (known.empty() ? "" : ", ") + n;
        throw ConfigError("policy \"" + name + "\": missing queue policy after '+' (known: " + known + ")");
    }
    any_policy<E> p;
    const auto colon = base.find(':');
    const std::string rule = colon == std::string::npos ? std::string() : base.substr(0, colon);
    const bool found = detail::with_placer(base, [&]<class P>(std::type_identity<P>) { p = wrap_policy<E, P>(name); });
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

}  // namespace gpuplace
