#pragma once
/// \file policy_registry.hpp
/// Every named policy of the harness: the heuristics (heuristic_registry.hpp) and the rollout
/// planners over them (planner.hpp, docs/planning.md):
///  - "rollout:<heuristic>" and "rollout<F>:<heuristic>": the fair planner, F forked futures per
///    action (4 without a number), common random numbers, the base heuristic's action kept unless
///    another beats it by one standard error. Causal. "rollout<F>h<H>:" (or "rollouth<H>:") plays
///    H decisions after the action instead of the whole episode: a decision's cost then linear in
///    the cluster, not in the cluster times the episode. A suffix "m<M>" ("rollout8h20m0.5:") sets
///    the margin: M standard errors instead of one (0: any mean gain overrules the base). In rounds,
///    a last "v" ("rollout8h20v:") charges each rollout's cut what its active jobs must still cost
///    (round_rollout_options::terminal_value).
///  - "hindsight:<heuristic>": every action scored on the env's own future. NOT causal (it knows
///    the arrivals and durations to come): an estimate of the headroom above the heuristic.
///  - several bases, "rollout16:pack_wait/topology_greedy+sjf" (parallel rollout, planner.hpp):
///    every action played under each base heuristic, scored by its best; the queue policy is one.
/// A planner chooses among the candidates of the placement or job action mode (env.action_mode);
/// over the round policy class_gittins ("rollout<F>h<H>:<placer>+class_gittins", H in rounds) it
/// chooses each round's allocation (rounds/rollout.hpp, round_rollout_runner()), and stepping an env
/// in the round action mode each decision's slot (round_slot_teacher.hpp: a teacher to clone).
/// "+<queue>" after the whole name applies to the episode and to the planner's rollouts alike.

#include <algorithm>
#include <charconv>
#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <string_view>
#include <vector>

#include "any_policy.hpp"
#include "env_concepts.hpp"
#include "heuristic_registry.hpp"
#include "planner.hpp"
#include "round_env.hpp"
#include "round_policy_registry.hpp"
#include "rounds/rollout.hpp"
#include "round_slot_teacher.hpp"

namespace gpuplace {

/// Whether a policy name is a planner's that reads the future (not causal): "hindsight:...",
/// "hindsight<suffixes>:...".
[[nodiscard]] inline bool is_hindsight_policy(std::string_view name) noexcept {
    return name.starts_with("hindsight") && name.find(':') != std::string_view::npos;
}

/// The options a planner name means, and its base heuristic's name (with the queue policy, if
/// any); false when `name` names no planner. The names: rollout<F>h<H>m<M>v:<base> (each part
/// optional) and hindsighth<H>v:<base> (h<H> and v optional: a horizon and a value at the cut
/// only, for one future, the true one, and no margin). ConfigError for a malformed future count, horizon or margin.
[[nodiscard]] inline bool parse_planner_name(std::string_view name, rollout_options& o, std::string& base) {
    const auto colon = name.find(':');
    if (colon == std::string_view::npos) return false;
    const auto head = name.substr(0, colon);
    rollout_options t = o;  // o is left as it was when the name is refused
    const bool hindsight = head.starts_with("hindsight");
    if (hindsight || head.starts_with("rollout")) {
        t.hindsight = hindsight;
        auto rest = head.substr(hindsight ? 9 : 7);
        if (rest.ends_with('v')) {  // "v": a value at the cut (the round planner's only)
            t.terminal_value = true;
            rest.remove_suffix(1);
        }
        if (hindsight && ((!rest.empty() && rest.front() != 'h') || rest.find('m') != std::string_view::npos))
            throw ConfigError("policy \"" + std::string(name) + "\": hindsight plays the one true future with no margin, so it takes "
                              "a horizon and a value at the cut only (hindsight:, hindsighth<H>:, hindsighth<H>v:), got \"" +
                              std::string(head) + "\"");
        if (const auto m = rest.find('m'); m != std::string_view::npos) {  // "m<M>": the margin, in standard errors
            const auto digits = rest.substr(m + 1);
            double v = -1;
            const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
            if (ec != std::errc{} || end != digits.data() + digits.size() || !(v >= 0 && v <= 100))
                throw ConfigError("policy \"" + std::string(name) + "\": rollout<F>h<H>m<M> takes a margin M (standard errors) from 0 to "
                                  "100, got \"" + std::string(digits) + "\"");
            t.margin = v;
            rest = rest.substr(0, m);
        }
        const auto h = rest.find('h');
        const auto number = [&](std::string_view digits, std::size_t most, const char* what) {
            std::size_t v = 0;
            const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
            if (ec != std::errc{} || end != digits.data() + digits.size() || v == 0 || v > most)
                throw ConfigError("policy \"" + std::string(name) + "\": rollout<F>h<H> takes " + what + " from 1 to " +
                                  std::to_string(most) + ", got \"" + std::string(digits) + "\"");
            return v;
        };
        if (const auto f = rest.substr(0, h); !f.empty()) t.futures = number(f, 4096, "a number of futures F");
        if (h != std::string_view::npos) t.horizon = number(rest.substr(h + 1), 1000000, "a horizon H (decisions)");
    } else {
        return false;
    }
    o = t;
    base = std::string(name.substr(colon + 1));
    return true;
}

/// A runner of whole episodes of scenario s in rounds (round_env.hpp): s.rounds.policy decides,
/// the placer `placer` (a name of heuristic_names() or type_aware_heuristic_names()) places. The
/// scenario's workload is read once; each call copies it. ConfigError for an unknown placer or a
/// round policy s cannot run (round_policy()).
template <class E = env>
[[nodiscard]] std::function<episode_outcome(std::uint64_t)> round_runner(const scenario& s, const std::string& placer) {
    using round_env_type = basic_round_env<typename E::topology_type, typename E::job_type, typename E::comm_type>;
    const auto policy = round_policy(s.rounds.policy, s);
    if constexpr (!std::constructible_from<round_env_type, const scenario&>)
        throw ConfigError("round policy " + s.rounds.policy + ": rounds run on a topology a scenario describes (this env's is built in code)");
    else {
        auto proto = std::make_shared<const round_env_type>(s);
        std::function<episode_outcome(std::uint64_t)> run;
        const bool found = detail::with_placer(placer, [&]<class P>(std::type_identity<P>) {
            run = [proto, policy](std::uint64_t seed) {
                round_env_type e(*proto);
                P p;
                p.reset(seed);
                p.reserve(e.hierarchy());
                typename round_env_type::any_placer erased{[&p](const auto& v, auto& out) { return p.plan(v, out); }};
                auto allocate = policy.make(seed);
                e.reset(seed);
                e.run(allocate, erased);
                return episode_outcome{e.episode_metrics(), e.episode_return()};
            };
        });
        if (!found) throw ConfigError("unknown placer \"" + placer + "\" for the round policy " + s.rounds.policy);
        return run;
    }
}

namespace detail {
/// The round planner's settings a planner name's options give (futures, horizon, margin, the value
/// at the cut, threads).
[[nodiscard]] inline round_rollout_options round_rollout_options_of(const rollout_options& o) {
    return {.futures = o.futures, .horizon = o.horizon, .margin = o.margin, .terminal_value = o.terminal_value,
            .hindsight = o.hindsight, .threads = o.threads};
}

/// The makers of the round planner's rollout placer, by name (a placer of heuristic_names()), as
/// basic_round_rollout takes them; ConfigError for an unknown placer.
template <class RoundEnv>
[[nodiscard]] std::function<typename RoundEnv::any_placer(std::uint64_t, const RoundEnv&)> round_placer_maker(const std::string& placer,
                                                                                                            const std::string& policy) {
    using erased = typename RoundEnv::any_placer;
    std::function<erased(std::uint64_t, const RoundEnv&)> make;
    const bool found = with_placer(placer, [&]<class P>(std::type_identity<P>) {
        make = [](std::uint64_t seed, const RoundEnv& e) {
            auto p = std::make_shared<P>();
            p->reset(seed);
            p->reserve(e.hierarchy());
            return erased{[p](const auto& v, auto& out) { return p->plan(v, out); }};
        };
    });
    if (!found) throw ConfigError("unknown placer \"" + placer + "\" for the round policy " + policy);
    return make;
}

template <class E>
concept basic_env_type = requires { typename E::topology_type; typename E::job_type; typename E::comm_type; } &&
                         std::same_as<E, basic_env<typename E::topology_type, typename E::job_type, typename E::comm_type>>;
}  // namespace detail

/// round_runner() for the rollout planner in rounds over class_gittins (rounds/rollout.hpp,
/// "rollout<F>h<H>:<placer>+class_gittins"): F futures, H rounds a rollout (0: to the episode's
/// end), the margin and threads of `o`.
template <class E = env>
[[nodiscard]] std::function<episode_outcome(std::uint64_t)> round_rollout_runner(const scenario& s, const std::string& placer,
                                                                                 const rollout_options& o) {
    using round_env_type = basic_round_env<typename E::topology_type, typename E::job_type, typename E::comm_type>;
    if constexpr (!std::constructible_from<round_env_type, const scenario&>)
        throw ConfigError("round policy " + s.rounds.policy + ": rounds run on a topology a scenario describes (this env's is built in code)");
    else {
        const auto make = detail::round_placer_maker<round_env_type>(placer, s.rounds.policy);  // one planner type for every placer
        auto proto = std::make_shared<const round_env_type>(s);
        const gittins_round_policy base(gittins_prior_of(s), s.rounds.restore.seconds);
        const auto ro = detail::round_rollout_options_of(o);
        using planner_type = basic_round_rollout<round_env_type, gittins_round_policy, typename round_env_type::any_placer>;
        return [proto, base, ro, make](std::uint64_t seed) {
            round_env_type e(*proto);
            auto p = make(seed, e);
            planner_type planner(base, ro, make);
            planner.reset(seed);
            e.reset(seed);
            round_allocation a;
            while (!e.done()) {
                a.clear();
                planner.allocate(e, a);
                e.step(a, p);
            }
            return episode_outcome{e.episode_metrics(), e.episode_return()};
        };
    }
}

namespace detail {
/// A rollout planner over heuristics (planner.hpp) as a policy: the makers of its bases (one, or
/// several: parallel rollout), their queue policy, its options. ConfigError for a value at the cut
/// (the round planner's) or an env type it cannot play.
template <PolicyEnv E>
[[nodiscard]] any_policy<E> planner_policy(const std::string& name, const std::string& base_name,
                                           std::vector<decltype(any_policy<E>::make)> makes, const std::string& queue,
                                           rollout_options o) {
    if (o.terminal_value)
        throw ConfigError("policy \"" + name + "\": the suffix v (a value at the rollout's cut) is the round planner's "
                          "(rollout<F>h<H>v:<placer>+class_gittins); a planner over a heuristic plays each rollout to its horizon");
    if constexpr (!RolloutEnv<E>) {
        throw ConfigError("policy \"" + name + "\": a rollout planner plays on copies of the env, and this env type is not a "
                          "RolloutEnv (env_concepts.hpp: copies and num_gpus())");
    } else {
        if (!o.hindsight && !ForkableEnv<E>)
            throw ConfigError("policy \"" + name + "\": the fair rollout planner plays on forked futures, and this env type has no "
                              "fork(seed) (env_concepts.hpp, ForkableEnv); \"hindsight:" + base_name + "\" plays on copies (NOT causal)");
        any_policy<E> p;
        p.name = name;
        p.queue = queue;
        if (o.label == rollout_options{}.label) o.label = name;
        p.check = [o, name](const E& e) { o.check_scale(name, e.num_gpus()); };
        p.make = [makes = std::move(makes), o](std::uint64_t seed) {
            auto planner = std::make_shared<rollout_policy<E>>(makes, o);
            planner->reset(seed);
            return std::function<std::int64_t(const E&)>([planner](const E& e) { return planner->act(e); });
        };
        return p;
    }
}

/// named_policy() of a planner over several bases, "<planner>:<h1>/<h2>[/...][+queue]" (parallel
/// rollout): each base a heuristic under the one queue policy. ConfigError for an empty or repeated
/// base, a round policy, a value at the cut, or an env type the planner cannot play.
template <PolicyEnv E>
[[nodiscard]] any_policy<E> parallel_rollout(const std::string& name, const std::string& bases, rollout_options o) {
    const auto plus = bases.find('+');
    const std::string placers = bases.substr(0, plus), queue = plus == std::string::npos ? "" : bases.substr(plus);
    std::vector<std::string> names;
    for (std::size_t from = 0;;) {
        const auto to = placers.find('/', from);
        names.push_back(placers.substr(from, to - from));
        if (names.back().empty())
            throw ConfigError("policy \"" + name + "\": bases are written <heuristic>/<heuristic>[/...][+queue], and base " +
                              std::to_string(names.size()) + " of \"" + bases + "\" is empty");
        if (std::count(names.begin(), names.end(), names.back()) > 1)
            throw ConfigError("policy \"" + name + "\": the base " + names.back() + " is named twice");
        if (to == std::string::npos) break;
        from = to + 1;
    }
    std::vector<decltype(any_policy<E>::make)> makes;
    std::string q;
    for (const auto& n : names) {
        auto h = heuristic<E>(n + queue);  // validates the heuristic and its queue policy
        if (is_round_policy(h.queue))
            throw ConfigError("policy \"" + name + "\": several bases are for a planner over heuristics; in rounds the planner plans over "
                              "class_gittins alone");
        q = h.queue;
        makes.push_back(std::move(h.make));
    }
    return planner_policy<E>(name, bases, std::move(makes), q, o);
}
}  // namespace detail

/// A policy by name: a heuristic (heuristic()) or a rollout planner over one (see the file's
/// comment). `o`: the planner's options other than what its name sets (threads; a teacher's
/// ties_to_base and min_gain). Under a round policy ("pack+max_min_fairness_perf"), the heuristic
/// places the jobs the round policy grants (any_policy::rounds, round_runner()). ConfigError names
/// what is wrong, and what an env type of one's own lacks for it (env_concepts.hpp: a planner
/// needs a RolloutEnv, the fair one a ForkableEnv; rounds a basic_env's topology and job types).
template <PolicyEnv E = env>
[[nodiscard]] any_policy<E> named_policy(const std::string& name, rollout_options o) {
    std::string base_name;
    if (!parse_planner_name(name, o, base_name)) {
        auto p = heuristic<E>(name);
        if (is_round_policy(p.queue)) {
            if constexpr (requires { typename E::topology_type; typename E::job_type; typename E::comm_type; }) {
                if (round_policy_needs_lp(p.queue) && !have_lp_solver()) (void)round_policy(p.queue, scenario{});  // says what is missing
                p.rounds = [placer = name.substr(0, name.find('+'))](const scenario& s) { return round_runner<E>(s, placer); };
            } else {
                throw ConfigError("policy \"" + name + "\": the round policy " + p.queue +
                                  " runs on a basic_env's topology, job and comm types, which this env type does not name");
            }
        }
        return p;
    }
    if (base_name.find('/') != std::string::npos) return detail::parallel_rollout<E>(name, base_name, o);
    auto base = heuristic<E>(base_name);  // validates the heuristic and its queue policy
    if (is_round_policy(base.queue)) {  // the planner in rounds (rounds/rollout.hpp)
        if (base.queue != "class_gittins")
            throw ConfigError("policy \"" + name + "\": in rounds the rollout planner plans over class_gittins only (its base is copied into "
                              "every rollout with its episode's state), not over " + base.queue);
        if constexpr (requires { typename E::topology_type; typename E::job_type; typename E::comm_type; }) {
            base.name = name;
            const auto placer = base_name.substr(0, base_name.find('+'));
            base.rounds = [placer, o](const scenario& s) { return round_rollout_runner<E>(s, placer, o); };
            if constexpr (detail::basic_env_type<E>) {  // stepping an env in the round action mode: the planner's slots
                using teacher = basic_round_slot_teacher<E>;
                base.check = [](const E& e) { teacher::check(e); };
                base.make = [make = detail::round_placer_maker<typename teacher::round_env_type>(placer, base.queue),
                             ro = detail::round_rollout_options_of(o)](std::uint64_t seed) {
                    auto t = std::make_shared<teacher>(ro, make, seed);
                    return std::function<std::int64_t(const E&)>([t](const E& e) { return t->act(e); });
                };
            }
            return base;
        } else {
            throw ConfigError("policy \"" + name + "\": the round policy " + base.queue +
                              " runs on a basic_env's topology, job and comm types, which this env type does not name");
        }
    }
    return detail::planner_policy<E>(name, base_name, {base.make}, base.queue, o);
}

/// named_policy() with a planner's default options on `planner_threads` threads.
template <PolicyEnv E = env>
[[nodiscard]] any_policy<E> named_policy(const std::string& name, std::size_t planner_threads = 1) {
    rollout_options o;
    o.threads = planner_threads;
    return named_policy<E>(name, o);
}

/// The policy a "teacher" name means (the reference PPO's, rl/ppo_config.hpp, and Python's
/// gpuplace._core.Teacher): a heuristic (heuristic()), or the round planner
/// ("rollout<F>h<H>:<placer>+class_gittins"), which acts in the round action mode through its
/// slots (round_slot_teacher.hpp; its any_policy::check says before acting whether an env is one
/// it can act in). ConfigError for another planner: a planner labels the states the network visits
/// instead ("dagger_teacher").
template <PolicyEnv E = env>
[[nodiscard]] any_policy<E> teacher_policy(const std::string& name) {
    rollout_options o;
    std::string base;
    if (!parse_planner_name(name, o, base)) return heuristic<E>(name);
    auto p = named_policy<E>(name, o);
    if (!p.rounds)
        throw ConfigError("teacher \"" + name + "\": a rollout planner labels the states the network visits (dagger_teacher); the teacher "
                          "to clone may be a heuristic or the round planner (rollout<F>h<H>:<placer>+class_gittins, round action mode)");
    return p;
}

}  // namespace gpuplace
