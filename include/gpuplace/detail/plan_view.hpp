#pragma once
/// \file detail/plan_view.hpp
/// What a heuristic reads of an env in GPU mode (heuristics.hpp), for one job and on scratch picks:
/// the placement and job action modes ask a heuristic for a whole placement through it without
/// stepping the env. The mask and the picks are buffers of the caller's (sized once, so planning
/// allocates nothing).

#include <cstdint>
#include <span>
#include <vector>

#include "../comm.hpp"
#include "../topology.hpp"

namespace gpuplace::detail {

template <class E>
class plan_view {
public:
    /// A plan for job j (index into e.simulator().jobs()) on the GPUs `mask` allows (G + 1 entries,
    /// the last: DEFER allowed), starting without picks.
    plan_view(const E& e, std::uint32_t j, std::span<std::uint8_t> mask, std::vector<gpu_id>& picks)
        : e_(e), job_(j), mask_(mask), picks_(picks) {
        picks_.clear();
    }

    // ---- what the heuristics read (basic_env's names and meanings) --------------------------------
    [[nodiscard]] std::span<const std::uint8_t> action_mask() const noexcept { return mask_; }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return mask_.size() - 1; }
    [[nodiscard]] std::int64_t defer_action() const noexcept { return std::int64_t(num_gpus()); }
    [[nodiscard]] const auto& topology() const noexcept { return e_.topology(); }
    [[nodiscard]] bool has_current() const noexcept { return true; }
    [[nodiscard]] std::uint32_t current_index() const noexcept { return job_; }
    [[nodiscard]] const auto& current_job() const noexcept { return e_.simulator().job(job_); }
    [[nodiscard]] std::span<const gpu_id> picked() const noexcept { return picks_; }
    [[nodiscard]] const auto& cluster() const noexcept { return e_.cluster(); }
    [[nodiscard]] const auto& simulator() const noexcept { return e_.simulator(); }
    [[nodiscard]] const auto& zoo() const noexcept { return e_.zoo(); }
    [[nodiscard]] const auto& gpu_types() const noexcept { return e_.gpu_types(); }
    [[nodiscard]] auto queue() const noexcept { return e_.queue(); }
    [[nodiscard]] bool has_room(gpu_id g, std::uint32_t j) const noexcept { return e_.has_room(g, j); }
    [[nodiscard]] double expected_interference(gpu_id g, std::uint32_t j) const noexcept { return e_.expected_interference(g, j); }
    [[nodiscard]] comm_result evaluate(std::span<const gpu_id> gpus) const {
        return e_.comm().evaluate(e_.topology(), e_.zoo(), current_job().model, gpus);
    }

    /// Adds GPU g to the plan (DEFER is allowed only before the first pick, as in the env).
    void pick(gpu_id g) noexcept {
        mask_[g] = 0;
        mask_[num_gpus()] = 0;
        picks_.push_back(g);
    }

    /// Runs heuristic p until the job has all its GPUs; false (nothing picked) when p defers it.
    template <class P>
    bool place(P& p) {
        const std::size_t k = current_job().num_gpus;
        while (picks_.size() < k) {
            const auto a = p.act(*this);
            if (a < 0 || a >= defer_action() || !mask_[std::size_t(a)]) return false;
            pick(gpu_id(a));
        }
        return true;
    }

private:
    const E& e_;
    std::uint32_t job_;
    std::span<std::uint8_t> mask_;
    std::vector<gpu_id>& picks_;
};

}  // namespace gpuplace::detail
