#pragma once
/// \file detail/constant.hpp
/// with_constant<Ns...>(n, f): calls f(std::integral_constant<std::size_t, n>) when n is one of
/// Ns, else f(std::integral_constant<std::size_t, 0>) (0: "not a constant", the caller then reads
/// n itself). Hot loops whose trip count is one of a few common values (GPUs per node, levels of
/// a hierarchy) then compile to straight-line code for those values. Inlined, as a switch would be.

#include <cstddef>
#include <type_traits>

#include "inline.hpp"

namespace gpuplace::detail {

template <std::size_t N, std::size_t... Ns, class F>
GPUPLACE_ALWAYS_INLINE decltype(auto) with_constant(std::size_t n, F&& f) {
    if (n == N) return f(std::integral_constant<std::size_t, N>{});
    if constexpr (sizeof...(Ns) > 0) return with_constant<Ns...>(n, static_cast<F&&>(f));
    else return f(std::integral_constant<std::size_t, 0>{});
}

}  // namespace gpuplace::detail
