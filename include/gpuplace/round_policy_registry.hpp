#pragma once
/// \file round_policy_registry.hpp
/// The round policies by name (round_policy_names(), docs/rounds.md): the elastic baselines afs_l
/// and greedy_gain (rounds/elastic.hpp), class_gittins (rounds/gittins.hpp), and Gavel's mechanism (rounds/gavel.hpp) over Gavel's
/// allocations. fifo_perf needs nothing more; the others solve an
/// LP and need the optional component gpuplace::lp (COIN-OR CLP, rounds/gavel_lp.hpp): a program
/// built without it still lists their names, and making one says what is missing. The
/// component's target defines GPUPLACE_WITH_LP; a program compiles all its files with it or all
/// without it.

#include <string>
#include <string_view>

#include "config.hpp"
#include "error.hpp"
#include "round_policy.hpp"
#include "rounds/elastic.hpp"
#include "rounds/gavel.hpp"
#include "rounds/gittins_sample.hpp"
#if defined(GPUPLACE_WITH_LP)
#include "rounds/gavel_lp.hpp"
#endif

namespace gpuplace {

// The definitions that depend on GPUPLACE_WITH_LP live in an inline namespace of their own, so
// that a build with the LP solver and one without give them different symbols.
#if defined(GPUPLACE_WITH_LP)
inline namespace lp_clp {
#else
inline namespace lp_none {
#endif

/// Whether this build has the LP solver the LP round policies need (gpuplace::lp).
[[nodiscard]] inline bool have_lp_solver() noexcept {
#if defined(GPUPLACE_WITH_LP)
    return true;
#else
    return false;
#endif
}

/// The round policy `name` for scenario s (its rounds.min_reset_interval, what it knows of
/// durations). ConfigError for an unknown name (listing the known ones), a policy that needs
/// durations under durations.mode hidden, or an LP policy in a build without the LP solver
/// (naming the Debian package and the CMake option).
[[nodiscard]] inline any_round_policy round_policy(const std::string& name, const scenario& s) {
    if (!is_round_policy(name)) {
        std::string known;
        for (const auto& n : round_policy_names()) known += (known.empty() ? "" : ", ") + n;
        throw ConfigError("unknown round policy \"" + name + "\" (known: " + known + ")");
    }
    if (name == "class_gittins") {
        auto prior = gittins_prior_of(s);
        const double restore = s.rounds.restore.seconds;
        return wrap_round_policy<gittins_round_policy>(name, [prior, restore] { return gittins_round_policy(prior, restore); });
    }
    if (name == "afs_l") return wrap_round_policy<elastic_policy>(name, [] { return elastic_policy(elastic_rule::afs_l); });
    if (name == "greedy_gain") {
        if (s.durations.mode == duration_info::hidden)
            throw ConfigError("round policy greedy_gain needs the jobs' remaining work, but durations.mode is hidden (use oracle or "
                              "predicted, or afs_l, which orders by attained service when durations are hidden)");
        return wrap_round_policy<elastic_policy>(name, [] { return elastic_policy(elastic_rule::greedy_gain); });
    }
    const bool perf = name.ends_with("_perf");
    gavel_options o;
    o.min_reset_interval = s.rounds.min_reset_interval;
    o.shuffle_types = !perf;
    if (name == "fifo_perf") {
        o.fifo = true;
        return wrap_round_policy<gavel_policy<gavel_fifo_allocation>>(name, [o] { return gavel_policy<gavel_fifo_allocation>({}, o); });
    }
    const std::string base = perf ? name.substr(0, name.size() - 5) : name;
    if ((base == "min_total_duration" || base == "finish_time_fairness") && s.durations.mode == duration_info::hidden)
        throw ConfigError("round policy " + name + " needs the jobs' remaining work, but durations.mode is hidden (use oracle or predicted, "
                          "or max_min_fairness" + std::string(perf ? "_perf" : "") + ", which needs none)");
#if defined(GPUPLACE_WITH_LP)
    gavel_objective obj = gavel_objective::max_min_fairness;
    if (base == "min_total_duration") obj = gavel_objective::min_total_duration;
    else if (base == "finish_time_fairness") obj = gavel_objective::finish_time_fairness;
    else if (base == "max_sum_throughput") obj = gavel_objective::max_sum_throughput;
    return wrap_round_policy<gavel_policy<gavel_lp_allocation>>(name, [obj, perf, o] {
        return gavel_policy<gavel_lp_allocation>(gavel_lp_allocation(obj, perf), o);
    });
#else
    throw ConfigError("round policy " + name + " solves an LP, and this build has no LP solver: install the Debian package "
                      "coinor-libclp-dev (COIN-OR CLP) and configure with -DGPUPLACE_WITH_LP=ON (the target gpuplace::lp); "
                      "fifo_perf needs none");
#endif
}

}  // inline namespace

}  // namespace gpuplace
