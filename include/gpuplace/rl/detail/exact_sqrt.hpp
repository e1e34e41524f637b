#pragma once
/// \file rl/detail/exact_sqrt.hpp
/// A square root of Eigen arrays that is correctly rounded (IEEE 754) and vectorised:
/// `x.unaryExpr(exact_sqrt_op{})`. Eigen's own `.sqrt()` and `.rsqrt()`, on float (and on double
/// with AVX-512), start from the CPU's reciprocal-square-root estimate (rsqrtps, vrsqrt14ps) and
/// take a Newton step whenever EIGEN_FAST_MATH is on, its default. The estimate is specified only
/// to a relative error, so Intel and AMD CPUs return different bits for it, and a network trained
/// with Adam on one takes another path on the other. The exact square root (sqrtps) is the same
/// everywhere.

#include <cmath>

#include <Eigen/Core>

namespace gpuplace::rl::detail {

/// Eigen functor of the correctly rounded square root, scalar and per SIMD packet.
struct exact_sqrt_op {
    template <class S>
    S operator()(const S& x) const {
        using std::sqrt;
        return sqrt(x);
    }
#if defined(EIGEN_VECTORIZE_SSE2)
    __m128 packetOp(const __m128& x) const { return _mm_sqrt_ps(x); }
    __m128d packetOp(const __m128d& x) const { return _mm_sqrt_pd(x); }
#endif
#if defined(EIGEN_VECTORIZE_AVX)
    __m256 packetOp(const __m256& x) const { return _mm256_sqrt_ps(x); }
    __m256d packetOp(const __m256d& x) const { return _mm256_sqrt_pd(x); }
#endif
#if defined(EIGEN_VECTORIZE_AVX512)
    __m512 packetOp(const __m512& x) const { return _mm512_sqrt_ps(x); }
    __m512d packetOp(const __m512d& x) const { return _mm512_sqrt_pd(x); }
#endif
};

/// Whether exact_sqrt_op has packet versions for Eigen's packets here (x86 with SSE2 or more);
/// elsewhere Eigen calls the scalar std::sqrt.
inline constexpr bool exact_sqrt_vectorized =
#if defined(EIGEN_VECTORIZE_SSE2)
    true;
#else
    false;
#endif

}  // namespace gpuplace::rl::detail

namespace Eigen::internal {
template <>
struct functor_traits<gpuplace::rl::detail::exact_sqrt_op> {
    enum { Cost = 8 * NumTraits<float>::MulCost, PacketAccess = gpuplace::rl::detail::exact_sqrt_vectorized };
};
}  // namespace Eigen::internal
