#pragma once
/// \file detail/fill.hpp
/// fill_const<N>(o, v): sets the N floats at `o` to v, as vector stores written out (GCC and
/// Clang vector types; a plain loop elsewhere). The observation writer's loops over the domains
/// of a level call it for each domain's GPUs: with a plain loop of N stores there, GCC 12
/// vectorises the loop over domains instead, four domains at a time with a shuffle per value and
/// run-time overlap checks, which costs more than it saves with the few domains one call covers.
/// A loop holding vector stores is not vectorised again. The stores go through memcpy: `o` is
/// only float-aligned, and Clang ignores a lowered alignment on a vector type, emitting aligned
/// stores that fault (GCC honoured it); memcpy of a vector is one unaligned store on both.

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "inline.hpp"

namespace gpuplace::detail {

template <std::size_t N>
GPUPLACE_ALWAYS_INLINE void fill_const(float* o, float v) noexcept {
#if defined(__GNUC__)
    if constexpr (N % 8 == 0) {
        using v8 = float __attribute__((vector_size(32)));
        const v8 x = {v, v, v, v, v, v, v, v};
        for (std::size_t i = 0; i < N / 8; ++i) std::memcpy(o + 8 * i, &x, sizeof x);
    } else if constexpr (N % 4 == 0) {
        using v4 = float __attribute__((vector_size(16)));
        const v4 x = {v, v, v, v};
        for (std::size_t i = 0; i < N / 4; ++i) std::memcpy(o + 4 * i, &x, sizeof x);
    } else {
        std::fill_n(o, N, v);
    }
#else
    std::fill_n(o, N, v);
#endif
}

}  // namespace gpuplace::detail
