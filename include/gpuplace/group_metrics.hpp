#pragma once
/// \file group_metrics.hpp
/// Metrics of an episode by group of jobs, with tenants, a spot class or deadlines on
/// (tenancy.hpp): per tenant and overall fairness, per class, and deadlines met. The env fills
/// them from its finished jobs and their job fields (metrics::groups); all zero when off.

#include <array>
#include <cstddef>

namespace gpuplace {

/// How many tenants metrics report one by one (the first, in the tenant field's category order).
inline constexpr std::size_t max_metric_tenants = 8;

struct group_metrics {
    bool tenants = false, spot = false, deadlines = false;  ///< which features were on
    // tenants
    std::size_t num_tenants = 0;  ///< the tenant field's categories (those past max_metric_tenants still count below)
    std::array<std::size_t, max_metric_tenants> tenant_jobs{};  ///< finished jobs per tenant
    std::array<double, max_metric_tenants> tenant_jct{};        ///< mean JCT per tenant (s)
    std::array<double, max_metric_tenants> tenant_slowdown{};   ///< mean JCT / ideal duration per tenant
    std::array<double, max_metric_tenants> tenant_below{};      ///< seconds below its guarantee per tenant
    double jain_index = 0;        ///< Jain's index over the tenants with finished jobs of their mean slowdown (1: equal)
    double worst_tenant_rho = 0;  ///< the largest per-tenant mean finish-time fairness rho (Themis)
    double below_guarantee_hours = 0;  ///< summed over tenants: hours a tenant with demand held fewer GPUs than min(quota, demand)
    // spot class
    double guaranteed_jct = 0, spot_jct = 0;      ///< mean JCT per class (s)
    double guaranteed_delay = 0, spot_delay = 0;  ///< mean queueing delay per class (s)
    double spot_evictions = 0;                    ///< preemptions per finished spot job
    std::size_t spot_jobs = 0;
    // deadlines
    double deadlines_met = 0;     ///< the share of finished jobs with a deadline that ended by it (a job edf_ac did not admit counts as missed)
    double avg_lateness = 0;      ///< mean end - deadline over the jobs that missed (s)
    std::size_t not_admitted = 0; ///< jobs edf_ac did not admit
};

/// Jain's fairness index (sum x)^2 / (n sum x^2) of n values: 1 when all are equal, 1/n when one
/// holds everything; 0 for none (or all zero).
[[nodiscard]] inline double jain_index(const double* x, std::size_t n) noexcept {
    double s = 0, s2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    return s2 > 0 ? s * s / (double(n) * s2) : 0.0;
}

}  // namespace gpuplace
