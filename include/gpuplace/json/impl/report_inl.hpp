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
        for (const auto& m : p.per_seed) pj["per_seed"].push_back(to_json(m));
        j["policies"][p.policy] = pj;
    }
    return j;
}

}  // namespace gpuplace
