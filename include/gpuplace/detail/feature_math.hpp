#pragma once
/// \file detail/feature_math.hpp
/// The observation's feature math that more than one writer needs, defined once: the squashed
/// duration (the observation writer's duration features and the core's per-job duration and
/// attained-service features), a job's communication intensity and a preemption count.

#include <algorithm>
#include <cstdint>

namespace gpuplace::detail {

/// A duration as a feature: t / (t + time_scale), 0 for t <= 0 (in double, rounded once to float).
[[nodiscard]] inline float squash_duration(double seconds, double time_scale) noexcept {
    const double x = std::max(0.0, seconds);
    return static_cast<float>(x / (x + time_scale));
}

/// A job's communication intensity: 1 - spread / consolidated throughput (its model at its GPU
/// count), clamped to [0, 1].
[[nodiscard]] inline float comm_intensity(double spread, double consolidated) noexcept {
    return static_cast<float>(std::clamp(1.0 - spread / consolidated, 0.0, 1.0));
}

/// n preemptions so far as a feature: n / (n + 1).
[[nodiscard]] inline float preemption_feature(std::uint32_t n) noexcept { return float(n) / float(n + 1); }

}  // namespace gpuplace::detail
