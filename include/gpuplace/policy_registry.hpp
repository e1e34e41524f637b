#pragma once
/// \file policy_registry.hpp
/// Every named policy of the harness: the heuristics (heuristic_registry.hpp) and the rollout
/// planners over them (planner.hpp, docs/planning.md):
///  - "rollout:<heuristic>" and "rollout<F>:<heuristic>": the fair planner, F forked futures per
///    action (4 without a number), common random numbers, the base heuristic's action kept unless
///    another beats it by one standard error. Causal.
///  - "hindsight:<heuristic>": every action scored on the env's own future. NOT causal (it knows
///    the arrivals and durations to come): an estimate of the headroom above the heuristic.
/// A planner chooses among the candidates of the placement or job action mode (env.action_mode).
/// "+<queue>" after the whole name applies to the episode and to the planner's rollouts alike.

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "any_policy.hpp"
#include "heuristic_registry.hpp"
#include "planner.hpp"

namespace gpuplace {

/// Whether a policy name is a planner's that reads the future (not causal): "hindsight:...".
[[nodiscard]] inline bool is_hindsight_policy(std::string_view name) noexcept { return name.starts_with("hindsight:"); }

/// The options a planner name means, and its base heuristic's name (with the queue policy, if
/// any); false when `name` names no planner. ConfigError for a malformed future count.
[[nodiscard]] inline bool parse_planner_name(std::string_view name, rollout_options& o, std::string& base) {
    const auto colon = name.find(':');
    if (colon == std::string_view::npos) return false;
    const auto head = name.substr(0, colon);
    if (head == "hindsight") {
        o.hindsight = true;
    } else if (head.starts_with("rollout")) {
        const auto digits = head.substr(7);
        if (!digits.empty()) {
            std::size_t f = 0;
            const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), f);
            if (ec != std::errc{} || end != digits.data() + digits.size() || f == 0 || f > 4096)
                throw ConfigError("policy \"" + std::string(name) + "\": rollout<F> takes a number of futures from 1 to 4096, got \"" +
                                  std::string(digits) + "\"");
            o.futures = f;
        }
    } else {
        return false;
    }
    base = std::string(name.substr(colon + 1));
    return true;
}

/// A policy by name: a heuristic (heuristic()) or a rollout planner over one (see the file's
/// comment). `o`: the planner's options other than what its name sets (threads; a teacher's
/// ties_to_base and min_gain). ConfigError names what is wrong.
template <class E = env>
[[nodiscard]] any_policy<E> named_policy(const std::string& name, rollout_options o) {
    std::string base_name;
    if (!parse_planner_name(name, o, base_name)) return heuristic<E>(name);
    const auto base = heuristic<E>(base_name);  // validates the heuristic and its queue policy
    any_policy<E> p;
    p.name = name;
    p.queue = base.queue;
    p.make = [make = base.make, o](std::uint64_t seed) {
        auto planner = std::make_shared<rollout_policy<E>>(make, o);
        planner->reset(seed);
        return std::function<std::int64_t(const E&)>([planner](const E& e) { return planner->act(e); });
    };
    return p;
}

/// named_policy() with a planner's default options on `planner_threads` threads.
template <class E = env>
[[nodiscard]] any_policy<E> named_policy(const std::string& name, std::size_t planner_threads = 1) {
    rollout_options o;
    o.threads = planner_threads;
    return named_policy<E>(name, o);
}

}  // namespace gpuplace
