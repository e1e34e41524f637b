#pragma once
/// \file detail/rng.hpp
/// A small, fast, portable random number generator (xoshiro256**, seeded by splitmix64).
/// Distributions are implemented here (not with <random>) so that the same seed gives the same
/// numbers with every standard library.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace gpuplace::detail {

__extension__ using uint128 = unsigned __int128;

/// splitmix64 step: used for seeding and for hashing seeds together.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// Mixes two seeds into one (used to derive per-env and per-episode seeds).
[[nodiscard]] constexpr std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) noexcept {
    std::uint64_t x = a ^ (b * 0xD1B54A32D192ED03ULL);
    return splitmix64(x);
}

class rng {
public:
    using result_type = std::uint64_t;
    constexpr explicit rng(std::uint64_t seed = 0) noexcept { this->seed(seed); }

    constexpr void seed(std::uint64_t seed) noexcept {
        std::uint64_t x = seed;
        for (auto& w : s_) w = splitmix64(x);
    }
    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return ~std::uint64_t{0}; }

    constexpr result_type operator()() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    /// Uniform double in [0, 1).
    double uniform() noexcept { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }
    /// Uniform double in [lo, hi).
    double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform(); }
    /// Uniform integer in [0, n), n > 0 (Lemire's nearly divisionless method, unbiased).
    std::uint64_t below(std::uint64_t n) noexcept {
        uint128 m = static_cast<uint128>((*this)()) * n;
        auto l = static_cast<std::uint64_t>(m);
        if (l < n) {
            const std::uint64_t t = (0 - n) % n;
            while (l < t) {
                m = static_cast<uint128>((*this)()) * n;
                l = static_cast<std::uint64_t>(m);
            }
        }
        return static_cast<std::uint64_t>(m >> 64);
    }
    /// Exponential with the given rate.
    double exponential(double rate) noexcept { return -std::log1p(-uniform()) / rate; }
    /// Standard normal (Box-Muller, one value per call for simplicity and determinism).
    double normal() noexcept {
        const double u1 = 1.0 - uniform();  // (0, 1]
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925 * u2);
    }

    /// The generator's whole state (to save and restore a stream exactly).
    [[nodiscard]] constexpr std::array<std::uint64_t, 4> state() const noexcept { return {s_[0], s_[1], s_[2], s_[3]}; }
    constexpr void set_state(const std::array<std::uint64_t, 4>& s) noexcept {
        for (std::size_t i = 0; i < 4; ++i) s_[i] = s[i];
    }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4]{};
};

}  // namespace gpuplace::detail
