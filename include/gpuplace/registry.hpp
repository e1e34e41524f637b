#pragma once
/// \file registry.hpp
/// What can be named, by kind: one catalogue of (kind, name, what it is) that `gpuplace-eval
/// --list` and `python -m gpuplace info` print. The library's own entries are added from where
/// each is declared (the heuristics' table, the queue policies, the workload kinds, trace formats,
/// comm models, reward terms, observation features, job fields; the topology presets written as
/// levels by gpuplace/json/topology.hpp's register_topology_presets()). Kinds are open: a new kind
/// is a new string (e.g. round policies).
///
/// A placer of one's own is registered with one call, register_placer<P>(name, about), or at
/// namespace scope with GPUPLACE_REGISTER_PLACER(P, name, about): heuristic() then knows the name
/// (under a queue policy, "<name>+sjf", and a GPU-type rule, "fastest_type:<name>"), so the
/// harness, gpuplace-eval-style programs, the rollout planners ("rollout:<name>") and the
/// benchmark (bench::run(track, "<name>+sjf")) take it by name in the program that registered it.
/// A preemptive queue discipline of one's own: register_discipline() (discipline_registry.hpp),
/// listed here under kind "queue"; a trace format: register_trace_format() (trace_registry.hpp),
/// under kind "trace_format"; a workload kind: register_workload_kind() (json/workload_registry.hpp),
/// under kind "workload" in json/registry.hpp's all_registry_entries(); a communication model:
/// register_comm_model() (comm_registry.hpp), under kind "comm_model"; an observation feature:
/// register_observation_feature() (feature_registry.hpp), under kind "observation_feature"; a
/// topology preset: register_topology() (json/topology.hpp), under kind "topology".

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "any_policy.hpp"
#include "comm_registry.hpp"
#include "config.hpp"
#include "discipline_registry.hpp"
#include "env.hpp"
#include "error.hpp"
#include "feature_registry.hpp"
#include "heuristic_registry.hpp"
#include "job_fields.hpp"
#include "observation_layout.hpp"
#include "round_config.hpp"
#include "trace.hpp"
#include "reward_registry.hpp"
#include "trace_registry.hpp"

namespace gpuplace {

/// One named thing of a kind.
struct registry_entry {
    std::string kind;   ///< e.g. "placer", "queue", "topology", "workload", "trace_format", "comm_model"
    std::string name;
    std::string about;  ///< what it is, in one phrase
    friend bool operator==(const registry_entry&, const registry_entry&) = default;
};

namespace detail {
struct registry_store {
    std::mutex m;
    std::vector<registry_entry> entries;
    bool builtins = false;
};
[[nodiscard]] inline registry_store& registry() {
    static registry_store s;
    return s;
}
inline void add_builtins(std::vector<registry_entry>& v);
}  // namespace detail

/// Adds an entry; a (kind, name) declared twice is a ConfigError naming it.
inline void register_entry(registry_entry e) {
    auto& r = detail::registry();
    std::lock_guard lock(r.m);
    if (!r.builtins) {
        r.builtins = true;
        detail::add_builtins(r.entries);
    }
    for (const auto& x : r.entries)
        if (x.kind == e.kind && x.name == e.name)
            throw ConfigError("registry: " + e.kind + " \"" + e.name + "\" is registered already (" + x.about + ")");
    r.entries.push_back(std::move(e));
}

/// Every entry, in kind order of first registration and then registration order.
[[nodiscard]] inline std::vector<registry_entry> registry_entries() {
    auto& r = detail::registry();
    std::lock_guard lock(r.m);
    if (!r.builtins) {
        r.builtins = true;
        detail::add_builtins(r.entries);
    }
    auto all = r.entries;
    for (const auto& d : registered_disciplines()) all.push_back({"queue", d->name, d->about});  // discipline_registry.hpp
    for (const auto& f : registered_trace_formats()) all.push_back({"trace_format", f->name, f->about});  // trace_registry.hpp
    for (const auto& t : registered_reward_terms()) all.push_back({"reward_term", t->name, t->about});   // reward_registry.hpp
    for (const auto& c : registered_comm_models()) all.push_back({"comm_model", c->name, c->about});     // comm_registry.hpp
    for (const auto& f : registered_observation_features()) all.push_back({"observation_feature", f->name, f->about});  // feature_registry.hpp
    std::vector<std::string> kinds;
    for (const auto& e : all)
        if (std::find(kinds.begin(), kinds.end(), e.kind) == kinds.end()) kinds.push_back(e.kind);
    std::vector<registry_entry> out;
    for (const auto& k : kinds)
        for (const auto& e : all)
            if (e.kind == k) out.push_back(e);
    return out;
}

/// The entries of one kind.
[[nodiscard]] inline std::vector<registry_entry> registry_entries(std::string_view kind) {
    auto all = registry_entries();
    std::erase_if(all, [&](const registry_entry& e) { return e.kind != kind; });
    return all;
}

/// Registers placer P (a heuristics/placer.hpp placer: plan() or next()) under `name` for env type
/// E: heuristic<E>(name) makes it, under a queue policy and a GPU-type rule too. Returns true (for
/// an initializer at namespace scope); a name taken is a ConfigError.
template <class P, class E = env>
bool register_placer(const std::string& name, const std::string& about) {
    for (const auto& h : heuristic_names())
        if (h == name) throw ConfigError("registry: placer \"" + name + "\" is a built-in heuristic");
    register_entry({"placer", name, about});
    detail::registered_placers<E>().push_back({name, [](const std::string& full, std::string_view rule) -> any_policy<E> {
                                                   if (rule == to_string(type_rule::fastest_type))
                                                       return wrap_policy<E, typed_policy<type_rule::fastest_type, P>>(full);
                                                   if (rule == to_string(type_rule::throughput_greedy))
                                                       return wrap_policy<E, typed_policy<type_rule::throughput_greedy, P>>(full);
                                                   return wrap_policy<E, P>(full);
                                               }});
    return true;
}

/// Registers a policy made by a factory (seed -> act function, any_policy<E>::make's shape) under
/// `name` for env type E: a policy that is no placer type (one written in Python, a wrapper of
/// another program's policy). heuristic<E>(name) makes it, under a queue policy too ("<name>+sjf"),
/// so the harness, the planners ("rollout:<name>") and the benchmark take it by name; a GPU-type
/// rule ("fastest_type:<name>") needs a placer's plan() and is refused. Registering the name again
/// with the same `kind` replaces the factory (a module imported again); another taken name is a
/// ConfigError. `kind`: the registry kind it is listed under ("placer" by default).
template <class E = env>
bool register_policy(const std::string& name, const std::string& about,
                     std::function<std::function<std::int64_t(const E&)>(std::uint64_t)> factory, const std::string& kind = "placer") {
    if (name.empty() || name.find_first_of("+:,") != std::string::npos)
        throw ConfigError("registry: policy name \"" + name + "\": empty or with '+', ':' or ',' (they separate a queue policy, a rule or a list)");
    for (const auto& h : heuristic_names())
        if (h == name) throw ConfigError("registry: policy \"" + name + "\" is a built-in heuristic");
    auto make = [factory](const std::string& full, std::string_view rule) -> any_policy<E> {
        if (!rule.empty())
            throw ConfigError("policy \"" + full + "\": the GPU-type rule " + std::string(rule) +
                              " wraps a placer's plan(); this policy is registered by a factory (register_policy)");
        any_policy<E> p;
        p.name = full;
        p.make = factory;
        return p;
    };
    auto& placers = detail::registered_placers<E>();
    for (auto& r : placers)
        if (r.name == name && r.by_factory) {
            r.make = std::move(make);
            auto& reg = detail::registry();
            std::lock_guard lock(reg.m);
            for (auto& e : reg.entries)
                if (e.kind == kind && e.name == name) e.about = about;
            return true;
        }
    register_entry({kind, name, about});
    placers.push_back({name, std::move(make), true});
    return true;
}

/// Removes what register_placer<P, E>() or register_policy<E>() registered under `name` (listed
/// under `kind`): heuristic<E>(name) no longer knows it. Returns whether there was one; a built-in
/// name is a ConfigError. For a test or a plugin that must leave the registry as it found it.
template <class E = env>
bool unregister_policy(const std::string& name, const std::string& kind = "placer") {
    for (const auto& h : heuristic_names())
        if (h == name) throw ConfigError("registry: policy \"" + name + "\" is a built-in heuristic and cannot be unregistered");
    auto& placers = detail::registered_placers<E>();
    const auto removed = std::erase_if(placers, [&](const auto& r) { return r.name == name; });
    if (removed == 0) return false;
    auto& reg = detail::registry();
    std::lock_guard lock(reg.m);
    std::erase_if(reg.entries, [&](const registry_entry& e) { return e.kind == kind && e.name == name; });
    return true;
}

/// Registers placer type P under `name` (a string literal) for gpuplace::env when the program starts.
#define GPUPLACE_REGISTER_PLACER(P, name, about) \
    [[maybe_unused]] static const bool gpuplace_registered_placer_##P = ::gpuplace::register_placer<P>(name, about)

namespace detail {
inline void add_builtins(std::vector<registry_entry>& v) {
    std::apply([&](const auto&... h) { (v.push_back({"placer", std::string(h.name), std::string(h.about)}), ...); },
               std::tuple_cat(builtin_heuristics, builtin_failure_heuristics, builtin_colocation_heuristics));
    v.push_back({"type_rule", std::string(to_string(type_rule::fastest_type)),
                 "<rule>:<placer>: each job on the GPU type with room that runs its model fastest, placed there by the placer"});
    v.push_back({"type_rule", std::string(to_string(type_rule::throughput_greedy)),
                 "<rule>:<placer>: each job on the type where its speedup relative to the waiting jobs' is largest (Gavel's max-throughput idea)"});
    // the queue policies of "<placer>+<queue>" (any_policy.hpp: apply_queue())
    const std::pair<const char*, const char*> queues[] = {
        {"fifo", "submit order, strict head of line: only the first waiting job may start"},
        {"backfill", "submit order, a later job starting when the first does not fit"},
        {"sjf", "shortest ideal duration first, with backfill (its estimate with durations predicted)"},
        {"fewest_gpus", "smallest GPU request first, with backfill"},
        {"las", "least attained GPU-service first (preemptive)"},
        {"2d_las", "Tiresias' discretised 2D-LAS (preemptive)"},
        {"gittins", "highest Gittins index of attained service first (preemptive)"},
        {"capacity", "tenants' jobs within their quota first, the rest borrow idle GPUs and are preempted for the owner (preemptive; needs tenants)"},
        {"drf", "progressive filling: the tenant with the fewest GPUs held per weight next (preemptive; needs tenants)"},
        {"themis", "the worst estimated finish-time fairness rho first (preemptive)"},
        {"edf", "earliest deadline first (preemptive; needs deadlines)"},
        {"edf_ac", "EDF with admission control: a job that cannot meet its deadline at arrival runs behind all others (preemptive; needs deadlines)"},
        {"sjf_oracle", "sjf on the true durations whatever the scenario hides (not causal)"},
        {"srtf_oracle", "shortest true remaining time first, preemptive (not causal: a bound)"}};
    for (const auto& [q, about] : queues) v.push_back({"queue", q, about});
    for (const auto& n : round_policy_names())  // rounds (round_env.hpp, docs/rounds.md)
        v.push_back({"queue", n,
                     n == "afs_l"         ? "AFS-L (Hwang et al., NSDI'21): elastic jobs, GPUs one at a time by relative throughput gain, shortest first"
                     : n == "greedy_gain" ? "elastic jobs, each next GPU to the largest drop in remaining time (Optimus-like; needs durations)"
                     : n == "class_gittins" ? "each round the highest Gittins index per GPU-second first, by the size distribution of the job's model and GPU count (hidden durations)"
                     : round_policy_needs_lp(n) ? "Gavel's round policy of that name, an LP over the allocation matrix (needs the LP component)"
                                                : "Gavel's round policy of that name (rounds granted by priority, no LP)"});
    v.push_back({"planner", "rollout:<policy>", "the fair rollout planner: 4 forked futures per action (placement or job mode)"});
    v.push_back({"planner", "rollout<F>:<policy>", "the same with F futures"});
    v.push_back({"planner", "rollout<F>h<H>:<policy>", "the same, each future played H decisions after the action (not to the episode's end)"});
    v.push_back({"planner", "rollout<F>h<H>m<M>:<policy>", "the same, an action kept unless another beats it by M standard errors (1 without m<M>)"});
    v.push_back({"planner", "rollout<F>:<policy>/<policy>[+queue]",
                 "over several bases (any form above): each action scored by its best base on the same futures (parallel rollout)"});
    v.push_back({"planner", "rollout<F>h<H>v:<placer>+class_gittins",
                 "in rounds, the planner over class_gittins, each rollout's cut charged what its active jobs must still cost"});
    v.push_back({"planner", "hindsight:<policy>", "every action scored on the episode's own future: NOT causal"});
    v.push_back({"planner", "hindsighth<H>:<policy>", "the same, each rollout played H decisions (in rounds, H rounds): NOT causal"});
    v.push_back({"planner", "hindsighth<H>v:<placer>+class_gittins",
                 "in rounds, the planner over class_gittins on the episode's own future, each cut charged its true cost: NOT causal"});
    for (const auto& k : builtin_workload_kinds) v.push_back({"workload", std::string(k.name), std::string(k.about)});  // workload.hpp
    const std::pair<trace_format, const char*> formats[] = {
        {trace_format::philly, "Gavel's Philly-derived .trace (tab-separated, 7 fields)"},
        {trace_format::openb, "Alibaba's openb_pod_list_*.csv"},
        {trace_format::csv, "a header naming the columns, or the file's own names mapped by \"columns\" with units"}};
    for (const auto& [f, about] : formats) v.push_back({"trace_format", std::string(to_string(f)), about});
    v.push_back({"model_mix", "by_row", "a fixed pseudo-random zoo model per row (by line number)"});
    v.push_back({"model_mix", "uniform", "a zoo model measured at the row's GPUs, from a seeded stream"});
    v.push_back({"model_mix", "weighted", "a zoo model drawn by weights, from a seeded stream"});
    v.push_back({"comm_model", std::string(RingAllReduce::name), "ring all-reduce calibrated on the zoo's measurements"});
    v.push_back({"comm_model", std::string(TreeRouteCost::name), "Proximity-DRL's route cost on a tree of nodes and racks"});
    const std::pair<const char*, const char*> rewards[] = {
        {"jct", "-(jobs in system x elapsed) / time_scale: an episode's sum is -(sum of JCTs) / time_scale"},
        {"makespan", "-elapsed / time_scale"},
        {"comm", "-(a placement's communication cost)"},
        {"placement", "Proximity-DRL's placement score"},
        {"deadline_miss", "-1 per job that finishes after its deadline (deadlines on)"},
        {"wasted", "-(the finishing job's wasted GPU-time: restarts, lost progress, checkpoint writes) / time_scale"},
        {"unfairness", "-max(0, rho - 1): the finishing job's finish-time fairness (Themis' rho) beyond 1"}};
    for (const auto& [n, about] : rewards) v.push_back({"reward_term", n, about});
    for (auto n : base_gpu_feature_names) v.push_back({"observation_feature", "gpu_" + std::string(n), "per GPU"});
    v.push_back({"observation_feature", "gpu_<level>_free", "per GPU: free GPUs in its domain of each level"});
    for (auto n : colocation_feature_names) v.push_back({"observation_feature", "gpu_" + std::string(n), "per GPU, with co-location"});
    for (auto n : type_feature_names) v.push_back({"observation_feature", "gpu_" + std::string(n), "per GPU, on a heterogeneous cluster"});
    for (auto p : {obs_part::job, obs_part::queue, obs_part::global, obs_part::job_type, obs_part::job_fields})
        v.push_back({"observation_feature", std::string(obs_layout::name(p)),
                     p == obs_part::job_fields ? "the observed job fields of the current job and each queue slot" : "context segment"});
    for (const auto& n : known_job_field_names()) {
        const auto f = known_job_field(n);
        v.push_back({"job_field", n, f->type == field_type::category ? "a category" : "a number"});
    }
}
}  // namespace detail

}  // namespace gpuplace
