#pragma once
/// \file job.hpp
/// Training jobs: what a workload submits and the environment places.

#include <concepts>
#include <cstdint>

namespace gpuplace {

using job_id = std::uint32_t;
using model_id = std::uint16_t;

/// A job type the environment can schedule: an id, a submit time (s), a GPU request, a model (an
/// index into the model zoo) and an amount of work (training steps).
template <class J>
concept Job = std::copyable<J> && requires(const J& j) {
    { j.id } -> std::convertible_to<job_id>;
    { j.submit_time } -> std::convertible_to<double>;
    { j.num_gpus } -> std::convertible_to<std::uint32_t>;
    { j.model } -> std::convertible_to<model_id>;
    { j.work } -> std::convertible_to<double>;
};

/// The default job: a data-parallel training job.
struct TrainingJob {
    job_id id = 0;              ///< index in the workload (0 .. n-1, in submit order)
    double submit_time = 0.0;   ///< seconds since the start of the episode
    std::uint32_t num_gpus = 1; ///< GPUs requested (all allocated at once)
    model_id model = 0;         ///< index into the model zoo
    double work = 0.0;          ///< training steps to run
    double gpu_fraction = 1.0;  ///< share of each GPU it needs (co-location; 1 = a whole GPU)

    friend bool operator==(const TrainingJob&, const TrainingJob&) = default;
};

static_assert(Job<TrainingJob>);

namespace detail {
/// Orders jobs by submit time (for std::stable_sort: one comparator type, one instantiation, for
/// every job list the library sorts).
struct by_submit_time {
    [[nodiscard]] bool operator()(const TrainingJob& a, const TrainingJob& b) const noexcept { return a.submit_time < b.submit_time; }
};
}  // namespace detail

}  // namespace gpuplace
