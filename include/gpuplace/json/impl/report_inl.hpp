#pragma once
/// \file json/impl/report_inl.hpp
/// The definitions json/report.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <cmath>

#include "../../evaluate.hpp"
#include "../../metrics.hpp"
#include "../parse.hpp"
#include "../report.hpp"

namespace gpuplace {

GPUPLACE_INLINE detail::json to_json(const metrics& m) {
    detail::json j = {{"avg_jct", m.avg_jct},
            {"p50_jct", m.p50_jct},
            {"p95_jct", m.p95_jct},
            {"p99_jct", m.p99_jct},
            {"avg_queueing_delay", m.avg_queueing_delay},
            {"makespan", m.makespan},
            {"avg_comm_cost", m.avg_comm_cost},
            {"total_comm_cost", m.total_comm_cost},
            {"avg_slowdown", m.avg_slowdown},
            {"utilization", m.utilization},
            {"sm_utilization", m.sm_utilization},
            {"memory_utilization", m.memory_utilization},
            {"avg_interference", m.avg_interference},
            {"jobs_done", m.jobs_done},
            {"jobs_total", m.jobs_total},
            {"type_utilization", m.type_utilization},
            {"p99_queueing_delay", m.p99_queueing_delay},
            {"avg_preemptions", m.avg_preemptions},
            {"lost_gpu_hours", m.lost_gpu_hours},
            {"avg_fairness", m.avg_fairness},
            {"max_fairness", m.max_fairness}};
    if (m.rounds) {  // written only for episodes in rounds: other reports are unchanged
        j["avg_moves"] = m.avg_moves;
        j["avg_resizes"] = m.avg_resizes;
        j["avg_suspended_time"] = m.avg_suspended_time;
        j["gpu_time_efficiency"] = m.gpu_time_efficiency;
    }
    if (m.failures) {  // written only for episodes with hardware failures: other reports are unchanged
        j["goodput"] = m.goodput;
        j["wasted_gpu_hours"] = m.wasted_gpu_hours;
        j["avg_interruptions"] = m.avg_interruptions;
        j["hardware_failures"] = m.hardware_failures;
        j["avg_jct_completed"] = m.avg_jct_completed;
    }
    const auto& g = m.groups;  // written only with tenants, spot or deadlines on: other reports are unchanged
    if (g.tenants) {
        const std::size_t n = std::min(g.num_tenants, max_metric_tenants);
        j["tenants"] = {{"jobs", std::vector<std::size_t>(g.tenant_jobs.begin(), g.tenant_jobs.begin() + std::ptrdiff_t(n))},
                        {"avg_jct", std::vector<double>(g.tenant_jct.begin(), g.tenant_jct.begin() + std::ptrdiff_t(n))},
                        {"avg_slowdown", std::vector<double>(g.tenant_slowdown.begin(), g.tenant_slowdown.begin() + std::ptrdiff_t(n))},
                        {"below_guarantee", std::vector<double>(g.tenant_below.begin(), g.tenant_below.begin() + std::ptrdiff_t(n))}};
        j["jain_index"] = g.jain_index;
        j["worst_tenant_rho"] = g.worst_tenant_rho;
        j["below_guarantee_hours"] = g.below_guarantee_hours;
    }
    if (g.spot) {
        j["guaranteed_jct"] = g.guaranteed_jct;
        j["spot_jct"] = g.spot_jct;
        j["guaranteed_queueing_delay"] = g.guaranteed_delay;
        j["spot_queueing_delay"] = g.spot_delay;
        j["spot_evictions"] = g.spot_evictions;
        j["spot_jobs"] = g.spot_jobs;
    }
    if (g.deadlines) {
        j["deadlines_met"] = g.deadlines_met;
        j["avg_lateness"] = g.avg_lateness;
        j["not_admitted"] = g.not_admitted;
    }
    return j;
}

GPUPLACE_INLINE detail::json to_json(const eval_report& r) {
    detail::json j;
    j["scenario"] = r.scenario;
    j["seeds"] = r.seeds;
    for (const auto& p : r.policies) {
        detail::json pj;
        for (const auto& n : eval_metric_names()) {
            const auto s = p.get(n);
            pj["summary"][n] = {{"mean", s.mean}, {"sem", s.sem}};
        }
        if (!p.per_seed.empty() && p.per_seed.front().failures)
            for (const auto& n : failure_metric_names()) {
                const auto s = p.get(n);
                pj["summary"][n] = {{"mean", s.mean}, {"sem", s.sem}};
            }
        if (!p.per_seed.empty())
            for (const auto& n : group_metric_names(p.per_seed.front().groups)) {
                const auto s = p.get(n);
                pj["summary"][n] = {{"mean", s.mean}, {"sem", s.sem}};
            }
        for (const auto& m : p.per_seed) pj["per_seed"].push_back(to_json(m));
        j["policies"][p.policy] = pj;
    }
    return j;
}

}  // namespace gpuplace
