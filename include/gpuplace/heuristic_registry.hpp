#pragma once
/// \file heuristic_registry.hpp
/// The heuristics by name: heuristic<E>("pack+sjf") makes the policy a name stands for (a
/// heuristic of heuristics.hpp, optionally type-aware and under a queue policy), and the lists of
/// names (heuristic_names(), heuristic_variants(), ...) that programs and the harness iterate.

#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "any_policy.hpp"
#include "colocation_policy.hpp"
#include "config.hpp"
#include "env.hpp"
#include "env_concepts.hpp"
#include "error.hpp"
#include "heuristics.hpp"
#include "policy.hpp"
#include "topology.hpp"

namespace gpuplace {

namespace detail {
/// A built-in heuristic: its name, what it does, its type.
template <class P>
struct builtin_heuristic {
    std::string_view name, about;
    using type = P;
};
/// The built-in heuristics, each declared here once (heuristic_names(), heuristic(), the registry).
inline constexpr auto builtin_heuristics = std::tuple{
    builtin_heuristic<random_policy>{"random", "a uniformly random valid action"},
    builtin_heuristic<first_fit_policy>{"first_fit", "the lowest-numbered GPUs with room"},
    builtin_heuristic<pack_policy>{"pack", "best fit: the fullest domain that holds the job, from the root down"},
    builtin_heuristic<load_balance_policy>{"load_balance", "Proximity-DRL's: down into the child domain with the most free GPUs"},
    builtin_heuristic<topology_greedy_policy>{"topology_greedy", "each pick the GPU that adds the least communication cost"},
    builtin_heuristic<pack_wait_policy>{"pack_wait", "pack, holding back a job that would spread while a whole domain can free up"}};
/// The failure-aware heuristics (scenario "failures"): known by name like the others, in a
/// scenario's default table only when its hardware fails (applicable_heuristic_names()).
inline constexpr auto builtin_failure_heuristics = std::tuple{
    builtin_heuristic<avoid_failed_policy>{"avoid_failed", "pack on the GPUs whose node has not failed in the last 24 h, when they hold the job"}};
/// The co-location heuristics (colocation.enabled): known by name like the others, in a scenario's
/// default table and yardstick only when its GPUs are shared (applicable_heuristic_names()).
inline constexpr auto builtin_colocation_heuristics = std::tuple{builtin_heuristic<colocation_packer_policy>{
    "coloc_packer", "free GPUs first (best fit by node), else the GPU whose jobs run fastest next to the job, else hold it back"}};
}  // namespace detail

/// Names of the co-location heuristics (colocation_policy.hpp).
[[nodiscard]] inline std::vector<std::string> colocation_heuristic_names() {
    std::vector<std::string> v;
    std::apply([&](const auto&... h) { (v.emplace_back(h.name), ...); }, detail::builtin_colocation_heuristics);
    return v;
}

/// Names of the failure-aware heuristics (docs/realities.md).
[[nodiscard]] inline std::vector<std::string> failure_aware_heuristic_names() {
    std::vector<std::string> v;
    std::apply([&](const auto&... h) { (v.emplace_back(h.name), ...); }, detail::builtin_failure_heuristics);
    return v;
}

/// Names of every built-in heuristic policy (placers registered by a program are listed by the
/// registry, registry.hpp).
[[nodiscard]] inline std::vector<std::string> heuristic_names() {
    std::vector<std::string> v;
    std::apply([&](const auto&... h) { (v.emplace_back(h.name), ...); }, detail::builtin_heuristics);
    return v;
}

/// The type-aware heuristics of heterogeneous clusters: "<rule>:<heuristic>" for each rule
/// (fastest_type, throughput_greedy) and each of heuristic_names() (heuristics.hpp, typed_policy).
[[nodiscard]] inline std::vector<std::string> type_aware_heuristic_names() {
    std::vector<std::string> v;
    for (auto r : {type_rule::fastest_type, type_rule::throughput_greedy})
        for (const auto& h : heuristic_names()) v.push_back(std::string(to_string(r)) + ":" + h);
    return v;
}

/// The heuristics that apply to scenario s (a scenario's default table): heuristic_names(), and on
/// a heterogeneous cluster (GPUs of several types) type_aware_heuristic_names() too.
[[nodiscard]] inline std::vector<std::string> applicable_heuristic_names(const scenario& s) {
    auto v = heuristic_names();
    if (TreeTopology::from_config(s.topology, "/topology").heterogeneous())
        for (auto& h : type_aware_heuristic_names()) v.push_back(std::move(h));
    if (s.failures.enabled)
        for (auto& h : failure_aware_heuristic_names()) v.push_back(std::move(h));
    if (s.colocation.enabled)
        for (auto& h : colocation_heuristic_names()) v.push_back(std::move(h));
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
/// a heterogeneous cluster (GPUs of several types) the type-aware heuristics under them too, with
/// co-location the co-location heuristics.
[[nodiscard]] inline std::vector<std::string> heuristic_variants(const scenario& s) {
    const auto queues = yardstick_queues(s);
    std::vector<std::string> v;
    for (const auto& h : heuristic_names())
        for (const auto& q : queues) v.push_back(h + "+" + q);
    if (TreeTopology::from_config(s.topology, "/topology").heterogeneous())
        for (const auto& h : type_aware_heuristic_names())
            for (const auto& q : queues) v.push_back(h + "+" + q);
    if (s.colocation.enabled)
        for (const auto& h : colocation_heuristic_names())
            for (const auto& q : queues) v.push_back(h + "+" + q);
    return v;
}

namespace detail {
/// Calls f(std::type_identity<P>{}) for the heuristic P named `base` (one of heuristic_names());
/// false when there is none.
template <class F>
bool with_heuristic(std::string_view base, F&& f) {
    bool found = false;
    std::apply(
        [&](const auto&... h) {
            ((!found && h.name == base ? (f(std::type_identity<typename std::remove_cvref_t<decltype(h)>::type>{}), found = true) : false), ...);
        },
        std::tuple_cat(builtin_heuristics, builtin_failure_heuristics, builtin_colocation_heuristics));
    return found;
}

/// Placers a program registered for env type E (register_placer(), registry.hpp): a factory per
/// type rule ("" for none, fastest_type, throughput_greedy) making the policy of a full name.
template <class E>
struct registered_placer {
    std::string name;
    std::function<any_policy<E>(const std::string& full_name, std::string_view rule)> make;
    bool by_factory = false;  ///< register_policy() (no placer type): registering it again replaces it
};
template <class E>
[[nodiscard]] std::vector<registered_placer<E>>& registered_placers() {
    static std::vector<registered_placer<E>> v;
    return v;
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
    const std::string placer = colon == std::string::npos ? base : base.substr(colon + 1);
    bool found = false;  // the built-in heuristics act through heuristic_action() (HeuristicEnv)
    if constexpr (HeuristicEnv<E>) found = detail::with_placer(base, [&]<class P>(std::type_identity<P>) { p = wrap_policy<E, P>(name); });
    if (!found)
        for (const auto& r : detail::registered_placers<E>())
            if (r.name == placer && (rule.empty() || rule == to_string(type_rule::fastest_type) || rule == to_string(type_rule::throughput_greedy))) {
                p = r.make(name, rule);
                found = true;
                break;
            }
    if (!found) {
        std::string known;
        for (const auto& n : heuristic_names()) known += (known.empty() ? "" : ", ") + n;
        for (const auto& n : failure_aware_heuristic_names()) known += ", " + n;
        for (const auto& n : colocation_heuristic_names()) known += ", " + n;
        for (const auto& r : detail::registered_placers<E>()) known += ", " + r.name;
        if (!HeuristicEnv<E> && detail::with_placer(base, [](auto) {}))
            throw ConfigError("policy \"" + name + "\": the built-in heuristics act through heuristic_action(), which this env type "
                              "lacks (env_concepts.hpp, HeuristicEnv)");
        if (rule.empty()) throw ConfigError("unknown policy \"" + base + "\" (known: " + known + ")");
        throw ConfigError("unknown policy \"" + base + "\" (known: <rule>:<heuristic> with rule fastest_type or throughput_greedy and heuristic " +
                          known + ")");
    }
    p.queue = queue;
    return p;
}

}  // namespace gpuplace
