#pragma once
/// \file env/invalid_action.hpp
/// The message of an invalid action of the GPU action mode (basic_env::why_invalid, InvalidAction):
/// why the mask forbids it, in words that name the job, the GPU and what holds it. Cold code, apart
/// from the env.

#include <cstdint>
#include <cstdio>
#include <string>

namespace gpuplace::env_detail {

/// Why `action` is invalid in env e's state (an episode is running), or an empty string when it is valid.
template <class E>
[[nodiscard]] std::string invalid_gpu_action(const E& e, std::int64_t action) {
    const auto A = e.defer_action();
    if (action < 0 || action > A)
        return "out of range [0, " + std::to_string(A) + "] (" + std::to_string(A) + " GPUs, DEFER = " + std::to_string(A) + ")";
    if (e.action_mask()[static_cast<std::size_t>(action)]) return {};
    if (!e.has_current()) return "no job is being placed";
    const auto& job = e.current_job();
    const std::string cur = "job " + std::to_string(job.id) + " needs " + std::to_string(job.num_gpus) + " GPUs, " +
                            std::to_string(e.picked().size()) + " picked";
    if (action == A) {
        if (!e.config().env.allow_defer) return "DEFER is disabled (env.allow_defer = false)";
        if (!e.picked().empty()) return "DEFER is only allowed before the first GPU of a job is picked (" + cur + ")";
        return "DEFER would stall the episode: no other waiting job fits and no event is pending";
    }
    const auto g = static_cast<std::uint32_t>(action);
    if (e.is_picked(g)) return "GPU " + std::to_string(g) + " is already picked (" + cur + ")";
    const auto& cl = e.cluster();
    if (e.simulator().colocation()) {
        char buf[128];
        std::snprintf(buf, sizeof buf, " (%u/%zu jobs, %.1f/%.1f GB used; ", unsigned(cl.jobs_on_count(g)), cl.max_jobs_per_gpu(),
                      cl.memory_used(g), e.config().colocation.gpu_memory_gb);
        return "GPU " + std::to_string(g) + " has no room for job " + std::to_string(job.id) + buf + cur + ")";
    }
    if (cl.is_free(g)) return "GPU " + std::to_string(g) + " is not of a GPU type the job may use (env.confine_type; " + cur + ")";
    if (cl.holder(g) == cluster_state::failed)
        return "GPU " + std::to_string(g) + " is out of service after a hardware failure until t = " + std::to_string(cl.end_time(g)) + " s (" + cur + ")";
    return "GPU " + std::to_string(g) + " is busy with job " + std::to_string(e.simulator().job(cl.holder(g)).id) + " (" + cur + ")";
}

}  // namespace gpuplace::env_detail
