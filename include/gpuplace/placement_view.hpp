#pragma once
/// \file placement_view.hpp
/// What a placer reads: one job to place and the state it is placed in, read-only. Every heuristic
/// (heuristics.hpp) and a user's own placer reads a basic_placement_view; the env makes one for its
/// current job in each action mode (its mask, its picks so far, whether DEFER is allowed), and for
/// a queued job or a candidate on scratch masks, so planning never steps or copies the env.
///
/// Placers come in two shapes (heuristics.hpp): a whole placement at once, `plan(view, out)`, or
/// the next GPU, `next(view)`; each gets the other from a base class. The GPU action mode follows a
/// placer pick by pick through next(); the placement and job modes call plan() once per candidate.

#include <cstdint>
#include <span>

#include "cluster.hpp"
#include "comm.hpp"
#include "env/room_index.hpp"
#include "failures.hpp"
#include "gpu_types.hpp"
#include "hierarchy.hpp"
#include "model_zoo.hpp"
#include "simulator.hpp"

namespace gpuplace {

/// A job to place (index `job()` into simulator().jobs()) on topology T with comm model C: the GPUs
/// it may take (mask(), num_gpus() entries, picked GPUs excluded), the GPUs already picked for it
/// (picked(), in pick order), and whether it may be held back (may_defer()). Cheap to copy; valid
/// while the env it was made from is not stepped.
template <class T, class J, class C>
class basic_placement_view {
public:
    using topology_type = T;
    using job_type = J;

    /// The parts of an env a view reads (the env makes them).
    struct state {
        const T* topology = nullptr;
        const C* comm = nullptr;
        const ModelZoo* zoo = nullptr;
        const gpu_type_map* types = nullptr;
        const basic_simulator<J>* sim = nullptr;
        std::span<const std::uint32_t> queue;  ///< the waiting jobs in queue order
        double gpu_memory_gb = 0;              ///< co-location: each GPU's memory
        const failure_process* failures = nullptr;  ///< hardware failures (failures.hpp), or null when off
    };

    basic_placement_view(const state& s, std::uint32_t job, std::span<const std::uint8_t> mask, std::span<const gpu_id> picked,
                         bool may_defer) noexcept
        : s_(s), job_(job), mask_(mask), picked_(picked), may_defer_(may_defer) {}

    /// The same job and picks under a narrower mask (e.g. the GPUs of one type).
    [[nodiscard]] basic_placement_view with_mask(std::span<const std::uint8_t> mask) const noexcept {
        auto v = *this;
        v.mask_ = mask;
        return v;
    }
    /// The same job under another mask and picks (a plan in progress).
    [[nodiscard]] basic_placement_view with_picks(std::span<const std::uint8_t> mask, std::span<const gpu_id> picked,
                                                  bool may_defer) const noexcept {
        auto v = *this;
        v.mask_ = mask;
        v.picked_ = picked;
        v.may_defer_ = may_defer;
        return v;
    }

    // ---- the job ----------------------------------------------------------------------------------
    [[nodiscard]] std::uint32_t job_index() const noexcept { return job_; }
    [[nodiscard]] const J& job() const noexcept { return s_.sim->job(job_); }
    /// GPUs the job is to be placed on: its request, or another count an elastic job was granted
    /// (with_request(); the round front end, env/round_front.hpp).
    [[nodiscard]] std::uint32_t request() const noexcept { return request_ ? request_ : job().num_gpus; }
    /// The same job to be placed on `gpus` GPUs (0: its request).
    [[nodiscard]] basic_placement_view with_request(std::uint32_t gpus) const noexcept {
        auto v = *this;
        v.request_ = gpus;
        return v;
    }
    /// GPUs the job still needs.
    [[nodiscard]] std::size_t remaining() const noexcept { return request() - picked_.size(); }
    /// Per GPU: 1 when the job may take it now.
    [[nodiscard]] std::span<const std::uint8_t> mask() const noexcept { return mask_; }
    [[nodiscard]] std::span<const gpu_id> picked() const noexcept { return picked_; }
    /// Whether the job may be held back (DEFER) instead of placed now.
    [[nodiscard]] bool may_defer() const noexcept { return may_defer_; }

    // ---- the state --------------------------------------------------------------------------------
    [[nodiscard]] std::size_t num_gpus() const noexcept { return mask_.size(); }
    [[nodiscard]] const T& topology() const noexcept { return *s_.topology; }
    [[nodiscard]] const level_hierarchy& hierarchy() const noexcept { return s_.topology->hierarchy(); }
    [[nodiscard]] const cluster_state& cluster() const noexcept { return s_.sim->cluster(); }
    [[nodiscard]] const basic_simulator<J>& simulator() const noexcept { return *s_.sim; }
    [[nodiscard]] const ModelZoo& zoo() const noexcept { return *s_.zoo; }
    [[nodiscard]] const gpu_type_map& gpu_types() const noexcept { return *s_.types; }
    [[nodiscard]] std::span<const std::uint32_t> queue() const noexcept { return s_.queue; }
    /// What is known of the hardware failures (which units are down until when, when each last
    /// failed; failures.hpp), empty (false) when the scenario has none.
    [[nodiscard]] failure_history failures() const noexcept { return failure_history(s_.failures); }
    /// Whether GPU g can take job j now (free, or with co-location room for it).
    [[nodiscard]] bool has_room(gpu_id g, std::uint32_t j) const noexcept {
        return env_detail::has_room(*s_.sim, g, j, s_.gpu_memory_gb);
    }
    /// Expected rate factor of job j on GPU g next to the jobs already there (1 on a free GPU,
    /// 0 where it cannot go).
    [[nodiscard]] double expected_interference(gpu_id g, std::uint32_t j) const noexcept {
        return has_room(g, j) ? env_detail::interference_on(*s_.sim, g, j) : 0.0;
    }
    /// Communication cost and slowdown of the job on `gpus` (sorted ascending).
    [[nodiscard]] comm_result evaluate(std::span<const gpu_id> gpus) const {
        return s_.comm->evaluate(*s_.topology, *s_.zoo, job().model, gpus);
    }

private:
    state s_;
    std::uint32_t job_;
    std::span<const std::uint8_t> mask_;
    std::span<const gpu_id> picked_;
    bool may_defer_;
    std::uint32_t request_ = 0;  ///< with_request(): the GPUs it was granted (0: its request)
};

}  // namespace gpuplace
