#pragma once
/// \file idle_waiting.hpp
/// GPU-hours a schedule left idle while a waiting job would have fit on them: the cost of holding
/// jobs back (DEFER, a strict queue head, a heuristic that waits for a better placement). At each
/// moment, the waiting jobs (submitted, not yet started) are taken smallest request first while
/// their GPUs fit in the idle ones (the cluster's GPUs less those of the running jobs); the GPUs
/// they would take, integrated over time, in hours. Counted by GPU count alone (which GPUs are
/// idle, their type and their topology do not enter): a work-conserving scheduler on one GPU type
/// scores 0, and a score above 0 is time a policy chose to hold GPUs it could have used.
///
/// Read from the finished jobs' records after an episode (nothing is added to a step): an episode
/// without preemption, failures or co-location, whose records give each job's one run exactly.
/// Jobs that did not finish are not in the records, so an unfinished episode is undercounted.

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "error.hpp"
#include "metrics.hpp"

namespace gpuplace {

/// Idle-while-waiting GPU-hours of the finished jobs `done` on `num_gpus` GPUs. Throws Error for
/// a record of a preempted, interrupted or co-located job (its runs are not in the record).
[[nodiscard]] inline double idle_while_waiting_gpu_hours(std::span<const job_record> done, std::size_t num_gpus) {
    struct event {
        double t;
        int what;  ///< 0 a run ends, 1 a job is submitted, 2 a job starts (the order within one time)
        std::uint32_t k;
    };
    std::vector<event> ev;
    ev.reserve(3 * done.size());
    for (const auto& r : done) {
        if (r.preemptions || r.interruptions || r.share < 1.0)
            throw Error("idle_while_waiting_gpu_hours: job " + std::to_string(r.id) + " was " +
                        (r.preemptions ? "preempted" : r.interruptions ? "interrupted by a failure" : "co-located") +
                        "; its record does not give its runs (an episode without preemption, failures or co-location is needed)");
        ev.push_back({r.submit, 1, r.num_gpus});
        ev.push_back({r.start, 2, r.num_gpus});
        ev.push_back({r.end, 0, r.num_gpus});
    }
    std::sort(ev.begin(), ev.end(), [](const event& a, const event& b) { return a.t != b.t ? a.t < b.t : a.what < b.what; });
    std::map<std::uint32_t, std::size_t> waiting;  // request -> jobs waiting with it (a few distinct requests)
    double busy = 0, held = 0;
    for (std::size_t i = 0; i < ev.size();) {
        const double t = ev[i].t;
        for (; i < ev.size() && ev[i].t == t; ++i) {
            const auto& e = ev[i];
            if (e.what == 0) busy -= e.k;
            else if (e.what == 1) ++waiting[e.k];
            else {
                busy += e.k;
                if (--waiting[e.k] == 0) waiting.erase(e.k);
            }
        }
        if (i == ev.size() || waiting.empty()) continue;
        double idle = double(num_gpus) - busy, take = 0;
        for (const auto& [k, n] : waiting) {
            const double fit = std::min(double(n), std::floor(idle / double(k)));
            if (fit <= 0) break;  // requests ascend: no larger one fits either
            take += fit * k;
            idle -= fit * k;
        }
        held += take * (ev[i].t - t);
    }
    return held / 3600.0;
}

}  // namespace gpuplace
