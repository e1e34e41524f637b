#pragma once
/// \file feature_registry.hpp
/// Observation features of one's own, by name: a function of a job (its GPUs, model, work, submit
/// time and declared fields) computed for every job when its episode is drawn, registered with one
/// call,
///
///     gpuplace::register_observation_feature("log_work", "log10 of the job's training steps",
///         [](const gpuplace::job_feature_view& j) { return std::log10(1.0 + double(j.job.work)); }, 0, 8);
///
/// or at namespace scope with GPUPLACE_REGISTER_OBSERVATION_FEATURE(name, about, fn, lo, hi). A
/// scenario observes it by declaring it as a job field, by its name alone (`"job_fields":
/// ["log_work"]`) or as {"name": ..., "feature": "log_work", "range": [lo, hi]}: a computed field,
/// observed (segment "job_fields": the current job's value and each queue slot's, scaled by its
/// range into [0, 1]), in the job records, reward terms, disciplines, Python and the result files
/// like any declared field. Jobs entries and trace rows do not give it. The registry lists it
/// under kind "observation_feature". Computed at reset, never in step(): free when unused.

#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "detail/named_store.hpp"
#include "error.hpp"
#include "job.hpp"
#include "job_fields.hpp"

namespace gpuplace {

/// What an observation feature of one's own sees of a job.
struct job_feature_view {
    const TrainingJob& job;                  ///< submit_time (s, from the episode's start), num_gpus, model, work (steps), gpu_fraction
    std::string_view model;                  ///< its model's name in the zoo
    std::span<const double> fields;          ///< the declared fields' values, in declaration order (NaN: missing; a category: its index)
    const std::vector<job_field>& declared;  ///< the declared fields

    /// A declared field's value by name; NaN when missing or not declared.
    [[nodiscard]] double field(std::string_view name) const noexcept {
        const auto i = field_index(declared, name);
        return i < fields.size() ? fields[i] : std::nan("");
    }
};

/// An observation feature: its value for a job (NaN: missing, observed as 0).
using job_feature_fn = std::function<double(const job_feature_view&)>;

/// A registered observation feature: its name, what it is, its function, and the range its values
/// are observed in (a field declared by the feature's name alone takes it).
struct registered_job_feature {
    std::string name, about;
    job_feature_fn value;
    double lo = 0, hi = 1;
};

namespace detail {
[[nodiscard]] inline named_store<registered_job_feature>& job_features() {
    static named_store<registered_job_feature> s;
    return s;
}
}  // namespace detail

/// Registers `fn` as observation feature `name`, observed in [lo, hi]. Returns true (for an
/// initializer at namespace scope). ConfigError for an empty name, a job key's or a known field's
/// name, one registered already, no function, or lo >= hi.
inline bool register_observation_feature(const std::string& name, const std::string& about, job_feature_fn fn, double lo = 0, double hi = 1) {
    if (name.empty()) throw ConfigError("observation feature name \"\": empty");
    if (is_job_key(name) || known_job_field(name)) throw ConfigError("observation feature \"" + name + "\" is a job key or a known job field");
    if (!fn) throw ConfigError("observation feature \"" + name + "\": no function");
    if (!(hi > lo)) throw ConfigError("observation feature \"" + name + "\": range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]: expected lo < hi");
    detail::job_features().add<ConfigError>(
        std::make_shared<const registered_job_feature>(registered_job_feature{name, about, std::move(fn), lo, hi}), "observation feature");
    return true;
}

/// Removes the feature registered under `name`; returns whether there was one (envs built with it keep it).
inline bool unregister_observation_feature(std::string_view name) { return detail::job_features().remove(name); }

/// The registered features, in registration order.
[[nodiscard]] inline std::vector<std::shared_ptr<const registered_job_feature>> registered_observation_features() {
    return detail::job_features().all();
}

/// The feature registered under `name`, or null.
[[nodiscard]] inline std::shared_ptr<const registered_job_feature> find_observation_feature(std::string_view name) {
    return detail::job_features().find(name);
}

/// Registers an observation feature (register_observation_feature()) when the program starts; at namespace scope.
#define GPUPLACE_REGISTER_OBSERVATION_FEATURE(name, about, ...)                                                    \
    [[maybe_unused]] static const bool GPUPLACE_DETAIL_CONCAT(gpuplace_registered_observation_feature_, __LINE__) = \
        ::gpuplace::register_observation_feature(name, about, __VA_ARGS__)

}  // namespace gpuplace
