#pragma once
/// \file rl/blocking.hpp
/// The cache sizes Eigen blocks the networks' matrix products for, pinned so that a build trains
/// to the same numbers on every CPU.
///
/// Eigen splits a large product into blocks sized for the L1 and L2 caches it reads through CPUID
/// at run time. The blocking decides in which order each output's sum is taken, so its rounding:
/// a weight gradient sums over every sample of a minibatch (thousands of columns for a per_gpu
/// network), in blocks of a few hundred on one CPU and of other sizes on another. After a million
/// steps of training the paths part. pin_cache_sizes() makes Eigen block for pinned_cache_sizes,
/// whatever the CPU reports. Eigen keeps one setting for the whole process, so the library never
/// calls it by itself: programs do, once, before they train (gpuplace-train, `python -m gpuplace
/// train`), as they call keep_freed_memory() (rl/memory.hpp). Without it training is still
/// deterministic on one machine, but another CPU may take other paths.
/// What remains CPU-specific is the instruction-set level the code was built for (the vector
/// width, FMA): a build for x86-64-v3 and one for x86-64-v4 still train to different numbers.

#include <cstddef>
#include <string>

#include <Eigen/Core>

#include "../error.hpp"

namespace gpuplace::rl {

/// Cache sizes in bytes, as Eigen::setCpuCacheSizes() takes them.
struct cache_sizes {
    std::ptrdiff_t l1 = 0, l2 = 0, l3 = 0;
    friend bool operator==(const cache_sizes&, const cache_sizes&) = default;
};

/// The sizes the networks' products are blocked for on every CPU: a 48 KiB L1 data cache and a
/// 2 MiB L2 per core (Intel's server cores since Sapphire Rapids), 32 MiB of L3. On an AMD EPYC
/// with a 32 KiB L1 and a 512 KiB L2 the main job's PPO iteration costs the same blocked for these
/// sizes as for its own (docs/performance.md).
inline constexpr cache_sizes pinned_cache_sizes{48 * 1024, 2 * 1024 * 1024, 32 * 1024 * 1024};

/// The sizes Eigen blocks its products for now (unless set, what the CPU reports).
[[nodiscard]] inline cache_sizes eigen_cache_sizes() {
    return {Eigen::l1CacheSize(), Eigen::l2CacheSize(), Eigen::l3CacheSize()};
}

/// Makes Eigen block its products for `s` (process-wide: call it before any thread multiplies).
/// It writes Eigen's setting only when it differs. A size <= 0 is a ConfigError naming it, and
/// leaves Eigen's setting as it was.
inline void pin_cache_sizes(const cache_sizes& s = pinned_cache_sizes) {
    if (s.l1 <= 0 || s.l2 <= 0 || s.l3 <= 0)
        throw ConfigError("pin_cache_sizes: cache sizes must be > 0 bytes, got l1 = " + std::to_string(s.l1) +
                          ", l2 = " + std::to_string(s.l2) + ", l3 = " + std::to_string(s.l3));
    if (eigen_cache_sizes() != s) Eigen::setCpuCacheSizes(s.l1, s.l2, s.l3);
}

}  // namespace gpuplace::rl
