#pragma once
/// \file tenancy.hpp
/// Who a job belongs to and what it was promised: tenants with guaranteed quotas (key "tenants"),
/// a spot class that runs on leftover capacity (key "spot") and deadlines (key "deadlines"). Each
/// is off by default; each reads a declared job field (job_fields.hpp). The disciplines that use
/// them (capacity, drf, themis, edf, edf_ac) are preemptive queue orders (config.hpp,
/// env/tenancy.hpp); their metrics are in group_metrics.hpp (docs/realities.md).

#include <string>
#include <utility>
#include <vector>

namespace gpuplace {

/// Tenants (key "tenants"): the categories of category field `field` (default "tenant"), each a
/// tenant. A tenant's guaranteed quota is its entry of `quotas` (GPUs, or with `share` a fraction
/// of the cluster's GPUs; a tenant not listed has none); its fair-share weight is its entry of
/// `weights`, else its quota, else 1.
struct tenants_config {
    bool enabled = false;
    std::string field = "tenant";
    std::vector<std::pair<std::string, double>> quotas;   ///< tenant -> GPUs (or share)
    bool share = false;                                   ///< quotas are fractions of the cluster
    std::vector<std::pair<std::string, double>> weights;  ///< tenant -> fair-share weight (> 0)
    friend bool operator==(const tenants_config&, const tenants_config&) = default;
};

/// A spot class (key "spot"): a job whose category field `field` (default "class") is `value`
/// (default "spot") runs only on GPUs no other job of the discipline's order wants: under any
/// preemptive discipline every guaranteed job comes before every spot job, so a spot job is
/// evicted (suspended, paying the restart) when a guaranteed job needs its GPUs.
struct spot_config {
    bool enabled = false;
    std::string field = "class";
    std::string value = "spot";
    friend bool operator==(const spot_config&, const spot_config&) = default;
};

/// Deadlines (key "deadlines"): a job's deadline is its number field `field` (default "deadline",
/// seconds after its submission); a job without one (a generated workload, a row without it) gets
/// submit + f x its ideal duration, f uniform in [factor_lo, factor_hi] from a stream of the
/// episode's seed of its own (the range of ElasticFlow's evaluation, Gu et al., ASPLOS'23).
struct deadlines_config {
    bool enabled = false;
    std::string field = "deadline";
    double factor_lo = 0.5, factor_hi = 1.5;
    friend bool operator==(const deadlines_config&, const deadlines_config&) = default;
};

}  // namespace gpuplace
