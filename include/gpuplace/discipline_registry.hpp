#pragma once
/// \file discipline_registry.hpp
/// Preemptive queue disciplines of one's own, by name. A discipline is a priority per active job
/// (waiting or running), lower first: at every decision point the jobs run in that order while
/// their GPUs fit and the running jobs left out are suspended (env/discipline.hpp), as under the
/// built-in las or edf. Registered with one call,
///
///     gpuplace::register_discipline("oldest_first", "the earliest submitted first",
///                                   [](const gpuplace::discipline_view& v, const gpuplace::discipline_job& j) {
///                                       return j.submit_time; });
///
/// or at namespace scope with GPUPLACE_REGISTER_DISCIPLINE("oldest_first", "...", key), the name is
/// then a queue policy like "las": a scenario's /env/queue_policy (with /preemption/enabled), a
/// policy's "<placer>+<name>" (apply_queue(): preemption turned on), the harness, the planners and
/// the benchmark, in the program that registered it; the registry (registry.hpp) lists it under
/// kind "queue". An env looks the name up once, when it is built, and keeps the function: a step
/// never looks a name up, and an env built before unregister_discipline() keeps its discipline.
///
/// The key may return a number, a discipline_priority (up to three numbers compared in order) or a
/// std::tuple / std::pair of up to three numbers; ties go to the earlier job (submit order). With
/// a spot class (tenancy.hpp) every guaranteed job still comes before every spot job. The key is
/// called from every thread that steps an env (the harness runs episodes in parallel): it must be
/// safe to call concurrently (a pure function of its arguments is). An exception it throws leaves
/// the env's step, which must then be reset.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/named_store.hpp"
#include "config.hpp"
#include "error.hpp"
#include "job_fields.hpp"

namespace gpuplace {

/// One active job as a registered discipline sees it at a decision.
struct discipline_job {
    std::uint32_t index = 0;        ///< the job's index in the episode (submit order)
    double submit_time = 0;         ///< s
    std::uint32_t gpus = 0;         ///< GPUs it requests
    double attained = 0;            ///< GPU-seconds of service attained so far
    double shown_duration = 0;      ///< the duration the scheduler is shown (/durations/mode; 0 when "hidden")
    bool running = false;           ///< it holds GPUs now (else it waits)
    std::uint32_t preemptions = 0;  ///< times it was suspended
    std::span<const double> fields; ///< its declared job fields, in /job_fields order (NaN where missing; a category by index)
};

/// The decision a registered discipline's key is asked about.
struct discipline_view {
    double now = 0;                           ///< s
    std::size_t num_gpus = 0;                 ///< the cluster's GPUs
    std::size_t active = 0;                   ///< waiting and running jobs at this decision
    std::span<const job_field> job_fields;    ///< the scenario's declared job fields
    /// The index of the declared field `name` in discipline_job::fields, or npos (a linear search:
    /// look it up once per call of the key, not once per field read).
    [[nodiscard]] std::size_t field(std::string_view name) const noexcept {
        for (std::size_t i = 0; i < job_fields.size(); ++i)
            if (job_fields[i].name == name) return i;
        return npos;
    }
    static constexpr std::size_t npos = ~std::size_t{0};
};

/// A priority: compared on `first`, then `second`, then `third`; lower runs first.
struct discipline_priority {
    double first = 0, second = 0, third = 0;
    constexpr discipline_priority() = default;
    constexpr discipline_priority(double a, double b = 0, double c = 0) noexcept : first(a), second(b), third(c) {}  // NOLINT: a number is a priority
};

/// A registered discipline's key, type-erased.
using discipline_key = std::function<discipline_priority(const discipline_view&, const discipline_job&)>;

/// A registered discipline: its name, what it is, its key.
struct registered_discipline {
    std::string name, about;
    discipline_key key;
};

namespace detail {
[[nodiscard]] inline named_store<registered_discipline>& disciplines() {
    static named_store<registered_discipline> s;
    return s;
}
/// A key's result as a priority: a number, a discipline_priority, or a tuple/pair of 1-3 numbers.
template <class R>
[[nodiscard]] discipline_priority to_priority(const R& r) {
    if constexpr (std::is_arithmetic_v<R>) {
        return {double(r)};
    } else if constexpr (std::is_same_v<R, discipline_priority>) {
        return r;
    } else {
        constexpr std::size_t n = std::tuple_size_v<R>;
        static_assert(n >= 1 && n <= 3, "a discipline's key returns a number, a discipline_priority or a tuple of 1 to 3 numbers");
        if constexpr (n == 1) return {double(std::get<0>(r))};
        else if constexpr (n == 2) return {double(std::get<0>(r)), double(std::get<1>(r))};
        else return {double(std::get<0>(r)), double(std::get<1>(r)), double(std::get<2>(r))};
    }
}
/// The built-in queue policy names (any_policy.hpp's all_queue_names(), which includes this header's registered ones).
[[nodiscard]] inline bool is_builtin_queue_name(std::string_view name) {
    if (detail::enum_from_name<queue_order>(name)) return true;
    if (name == "backfill" || name == "sjf_oracle" || name == "srtf_oracle") return true;
    return is_round_policy(name);
}
}  // namespace detail

/// Registers a preemptive discipline under `name`: `key(view, job)` is each active job's priority,
/// lower first (see the file's comment). Returns true (for an initializer at namespace scope).
/// ConfigError for an empty name, one with '+', ':' or ',' (they separate a placer, a rule or a
/// list), a built-in queue policy's name or one registered already.
template <class F>
    requires std::invocable<const F&, const discipline_view&, const discipline_job&>
bool register_discipline(const std::string& name, const std::string& about, F key) {
    if (name.empty() || name.find_first_of("+:,") != std::string::npos)
        throw ConfigError("discipline name \"" + name + "\": empty or with '+', ':' or ',' (they separate a placer, a rule or a list)");
    if (detail::is_builtin_queue_name(name)) throw ConfigError("discipline \"" + name + "\" is a built-in queue policy");
    auto d = std::make_shared<registered_discipline>();
    d->name = name;
    d->about = about;
    if constexpr (std::is_convertible_v<F, discipline_key> &&
                  std::is_same_v<std::invoke_result_t<const F&, const discipline_view&, const discipline_job&>, discipline_priority>)
        d->key = std::move(key);
    else
        d->key = [k = std::move(key)](const discipline_view& v, const discipline_job& j) { return detail::to_priority(k(v, j)); };
    detail::disciplines().add<ConfigError>(std::move(d), "discipline");
    return true;
}

/// Removes the discipline registered under `name`; returns whether there was one. Envs built with
/// it keep it. For a test or a plugin that must leave the registry as it found it.
inline bool unregister_discipline(std::string_view name) {
    return detail::disciplines().remove(name);
}

/// The registered disciplines, in registration order.
[[nodiscard]] inline std::vector<std::shared_ptr<const registered_discipline>> registered_disciplines() {
    return detail::disciplines().all();
}

/// Their names, in registration order.
[[nodiscard]] inline std::vector<std::string> registered_discipline_names() {
    std::vector<std::string> out;
    for (const auto& d : registered_disciplines()) out.push_back(d->name);
    return out;
}

/// The discipline registered under `name`, or null.
[[nodiscard]] inline std::shared_ptr<const registered_discipline> find_discipline(std::string_view name) {
    return detail::disciplines().find(name);
}

/// The discipline registered under `name`; a ConfigError naming `where`, the value and the
/// registered ones otherwise.
[[nodiscard]] inline std::shared_ptr<const registered_discipline> require_discipline(std::string_view name,
                                                                                   std::string_view where = "/env/queue_policy") {
    if (auto d = find_discipline(name)) return d;
    std::string known;
    for (const auto& n : registered_discipline_names()) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError("config " + std::string(where) + ": no discipline is registered as \"" + std::string(name) + "\" (registered: " +
                      (known.empty() ? "none" : known) + ")");
}

/// Registers a discipline (register_discipline()) when the program starts; at namespace scope.
#define GPUPLACE_REGISTER_DISCIPLINE(name, about, key)                                                   \
    [[maybe_unused]] static const bool GPUPLACE_DETAIL_CONCAT(gpuplace_registered_discipline_, __LINE__) = \
        ::gpuplace::register_discipline(name, about, key)

}  // namespace gpuplace
