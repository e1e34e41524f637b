#pragma once
/// \file render.hpp
/// A text picture of the cluster: its top-level domains (racks), their level-1 domains (nodes) and
/// GPUs, and which job holds each GPU.

#include <cstdio>
#include <string>

#include "env.hpp"

namespace gpuplace {

/// Renders the env's cluster as text. Each GPU shows the id of the job holding it, `.` when free,
/// and `*` when picked for the current job.
template <class E>
[[nodiscard]] std::string render_ansi(const E& e) {
    const auto& cl = e.cluster();
    const auto inf = e.info();
    std::string out;
    char buf[256];
    std::snprintf(buf, sizeof buf, "t=%.1fs  step %zu  jobs: %zu running, %zu waiting, %zu/%zu done  GPUs busy %zu/%zu\n",
                  inf.time, inf.steps, inf.running, inf.queued, inf.jobs_done, inf.jobs_total, cl.busy_gpus(),
                  cl.num_gpus());
    out += buf;
    if (e.has_current() && e.current_index() != E::none) {
        const auto& j = e.current_job();
        std::snprintf(buf, sizeof buf, "placing job %u: %u GPUs of %s, %zu picked\n", unsigned(j.id), unsigned(j.num_gpus),
                      e.zoo()[j.model].name.c_str(), e.picked().size());
        out += buf;
    } else {
        out += e.done() ? "episode over\n" : "no job to place\n";
    }
    // width of a cell: enough for the largest job id
    const auto jobs = e.simulator().jobs().size();
    int w = 1;
    for (std::size_t x = jobs; x >= 10; x /= 10) ++w;
    const auto& h = e.hierarchy();
    const std::size_t top = h.num_levels() - 1;
    const auto row = [&](std::size_t n) {
        std::snprintf(buf, sizeof buf, "  %s %-3zu [", h.level(1).name.c_str(), n);
        out += buf;
        for (auto g = h.first(1, n); g < h.end(1, n); ++g) {
            if (e.is_picked(g)) std::snprintf(buf, sizeof buf, " %*s", w, "*");
            else if (cl.is_free(g)) std::snprintf(buf, sizeof buf, " %*s", w, ".");
            else if (cl.holder(g) == cluster_state::failed) std::snprintf(buf, sizeof buf, " %*s", w, "X");  // out of service
            else std::snprintf(buf, sizeof buf, " %*u", w, unsigned(e.simulator().job(cl.holder(g)).id));
            out += buf;
        }
        out += " ]\n";
    };
    for (std::size_t r = 0; r < h.num_domains(top); ++r) {
        std::snprintf(buf, sizeof buf, "%s %zu\n", h.level(top).name.c_str(), r);
        out += buf;
        if (top == 1) row(r);
        else  // the level-1 domains inside top domain r (contiguous)
            for (auto n = h.domain_of(1, h.first(top, r)); n <= h.domain_of(1, h.end(top, r) - 1); ++n) row(n);
    }
    return out;
}

}  // namespace gpuplace
