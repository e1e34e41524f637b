#pragma once
/// \file detail/divider.hpp
/// Division of 32-bit unsigned integers by a divisor fixed at run time, without a `div`
/// instruction: a shift for powers of two, otherwise one 64 x 64 -> 128-bit multiplication
/// (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019), exact for every
/// 32-bit numerator. GPU -> node and GPU -> rack lookups use it: a hardware `div` costs tens of
/// cycles, and a step does several.

#include <bit>
#include <cstdint>

#include "rng.hpp"  // uint128

namespace gpuplace::detail {

class divider {
public:
    /// Divides by 1.
    constexpr divider() noexcept = default;
    /// Divides by d (d >= 1; 0 is treated as 1).
    constexpr explicit divider(std::uint32_t d) noexcept : d_(d == 0 ? 1 : d) {
        if (std::has_single_bit(d_)) shift_ = static_cast<std::uint32_t>(std::countr_zero(d_));
        else m_ = ~std::uint64_t{0} / d_ + 1;
    }

    /// n / d.
    [[nodiscard]] constexpr std::uint32_t divide(std::uint32_t n) const noexcept {
        if (m_ == 0) return n >> shift_;
        return static_cast<std::uint32_t>((static_cast<uint128>(m_) * n) >> 64);
    }
    /// n % d.
    [[nodiscard]] constexpr std::uint32_t remainder(std::uint32_t n) const noexcept { return n - divide(n) * d_; }
    [[nodiscard]] constexpr std::uint32_t divisor() const noexcept { return d_; }

private:
    std::uint64_t m_ = 0;  ///< 0: divide by shifting
    std::uint32_t d_ = 1, shift_ = 0;
};

}  // namespace gpuplace::detail
