#pragma once
/// \file json/workload_registry.hpp
/// Workload kinds by name: the built-in ones (builtin_workload_kinds, workload.hpp: synthetic,
/// proximity_drl, trace, jobs, mixture) and kinds of one's own. A kind of one's own is a factory
/// that reads the workload's JSON object into a workload_generator (workload.hpp), registered with
/// one call,
///
///     gpuplace::register_workload_kind("bursts", "bursts of same-sized jobs", make_bursts);
///
/// or at namespace scope with GPUPLACE_REGISTER_WORKLOAD_KIND("bursts", "...", make_bursts). The
/// name is then a workload's "kind" in a scenario (its other keys are the factory's to read; a
/// mixture's component may be one too), in the program that registered it; the registry lists it
/// under kind "workload" (json/registry.hpp: all_registry_entries()). The factory runs once, when
/// the scenario is read; the generator makes each episode's jobs from its seed.

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../detail/named_store.hpp"
#include "../error.hpp"
#include "../workload.hpp"
#include "parse.hpp"

namespace gpuplace {

/// A workload kind's factory: the workload's JSON object (its "kind" included) and its JSON path
/// ("config /workload", for messages) to the generator of its episodes. Bad options: a
/// ConfigError naming the path and the value.
using workload_factory = std::function<std::shared_ptr<const workload_generator>(const json& j, const std::string& path)>;

/// A registered workload kind: its name, what it is, its factory.
struct registered_workload_kind {
    std::string name, about;
    workload_factory make;
};

namespace detail {
[[nodiscard]] inline named_store<registered_workload_kind>& workload_kinds() {
    static named_store<registered_workload_kind> s;
    return s;
}
}  // namespace detail

/// Registers `make` as workload kind `name`. Returns true (for an initializer at namespace scope).
/// ConfigError for an empty name, a built-in kind's name, one registered already, or no factory.
inline bool register_workload_kind(const std::string& name, const std::string& about, workload_factory make) {
    if (name.empty()) throw ConfigError("workload kind name \"\": empty");
    if (builtin_workload_kind_index(name) < std::size(builtin_workload_kinds))
        throw ConfigError("workload kind \"" + name + "\" is a built-in kind");
    if (!make) throw ConfigError("workload kind \"" + name + "\": no factory");
    detail::workload_kinds().add<ConfigError>(std::make_shared<const registered_workload_kind>(registered_workload_kind{name, about, std::move(make)}),
                                 "workload kind");
    return true;
}

/// Removes the kind registered under `name`; returns whether there was one. For a test or a plugin
/// that must leave the registry as it found it (scenarios read before keep their generators).
inline bool unregister_workload_kind(std::string_view name) {
    return detail::workload_kinds().remove(name);
}

/// The registered kinds, in registration order.
[[nodiscard]] inline std::vector<std::shared_ptr<const registered_workload_kind>> registered_workload_kinds() {
    return detail::workload_kinds().all();
}

/// The kind registered under `name`, or null.
[[nodiscard]] inline std::shared_ptr<const registered_workload_kind> find_workload_kind(std::string_view name) {
    return detail::workload_kinds().find(name);
}

/// Every workload kind's name: the built-in ones, then the registered ones.
[[nodiscard]] inline std::string workload_kind_names() {
    std::string s;
    for (const auto& k : builtin_workload_kinds) s += (s.empty() ? "" : ", ") + std::string(k.name);
    for (const auto& k : registered_workload_kinds()) s += ", " + k->name;
    return s;
}

/// Registers a workload kind (register_workload_kind()) when the program starts; at namespace scope.
#define GPUPLACE_REGISTER_WORKLOAD_KIND(name, about, factory)                                                     \
    [[maybe_unused]] static const bool GPUPLACE_DETAIL_CONCAT(gpuplace_registered_workload_kind_, __LINE__) = \
        ::gpuplace::register_workload_kind(name, about, factory)

}  // namespace gpuplace
