#pragma once
/// \file reward_registry.hpp
/// Reward terms of one's own, by name. A term is a function of a job that just finished (its
/// record, metrics.hpp) and the episode's constants (reward_term_view); registered with one call,
///
///     gpuplace::register_reward_term("late_hours", "-hours past submit + 2 x ideal duration",
///         [](const gpuplace::job_record& r, const gpuplace::reward_term_view&) {
///             return -std::max(0.0, r.end - r.submit - 2 * r.ideal_duration) / 3600; });
///
/// or at namespace scope with GPUPLACE_REGISTER_REWARD_TERM(name, about, fn). A scenario then
/// weighs it like a built-in term, `"reward": {"late_hours": 0.5}`: each job that finishes adds
/// weight x term(job) to the step's reward. The registry lists it under kind "reward_term". Off
/// unless a scenario weighs one: the step then runs as before.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "detail/named_store.hpp"
#include "error.hpp"
#include "metrics.hpp"

namespace gpuplace {

/// What a reward term sees of the episode besides the finished job.
struct reward_term_view {
    std::size_t num_gpus = 0;  ///< the cluster's GPUs
    double time_scale = 1;     ///< reward.time_scale: seconds per unit of reward
    double now = 0;            ///< the time the job finished at, s
};

/// A reward term: its value for a job that just finished (weighted by the scenario).
using reward_term_fn = std::function<double(const job_record&, const reward_term_view&)>;

/// A registered reward term: its name, what it is, its function.
struct registered_reward_term {
    std::string name, about;
    reward_term_fn value;
};

/// The built-in reward weights' names (reward_config's members, time_scale included): a term of
/// one's own cannot take them.
inline constexpr std::string_view builtin_reward_keys[] = {"jct",      "makespan", "comm",       "placement",
                                                           "time_scale", "deadline_miss", "wasted", "unfairness"};

namespace detail {
[[nodiscard]] inline named_store<registered_reward_term>& reward_terms() {
    static named_store<registered_reward_term> s;
    return s;
}
}  // namespace detail

/// Registers `fn` as reward term `name`. Returns true (for an initializer at namespace scope).
/// ConfigError for an empty name, a built-in key's name, one registered already, or no function.
inline bool register_reward_term(const std::string& name, const std::string& about, reward_term_fn fn) {
    if (name.empty()) throw ConfigError("reward term name \"\": empty");
    for (auto k : builtin_reward_keys)
        if (name == k) throw ConfigError("reward term \"" + name + "\" is a built-in reward key");
    if (!fn) throw ConfigError("reward term \"" + name + "\": no function");
    detail::reward_terms().add<ConfigError>(std::make_shared<const registered_reward_term>(registered_reward_term{name, about, std::move(fn)}),
                               "reward term");
    return true;
}

/// Removes the term registered under `name`; returns whether there was one (envs built with it keep it).
inline bool unregister_reward_term(std::string_view name) { return detail::reward_terms().remove(name); }

/// The registered terms, in registration order.
[[nodiscard]] inline std::vector<std::shared_ptr<const registered_reward_term>> registered_reward_terms() {
    return detail::reward_terms().all();
}

/// The term registered under `name`, or null.
[[nodiscard]] inline std::shared_ptr<const registered_reward_term> find_reward_term(std::string_view name) {
    return detail::reward_terms().find(name);
}

/// Registers a reward term (register_reward_term()) when the program starts; at namespace scope.
#define GPUPLACE_REGISTER_REWARD_TERM(name, about, fn)                                                      \
    [[maybe_unused]] static const bool GPUPLACE_DETAIL_CONCAT(gpuplace_registered_reward_term_, __LINE__) = \
        ::gpuplace::register_reward_term(name, about, fn)

}  // namespace gpuplace
