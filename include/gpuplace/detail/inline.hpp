#pragma once
/// \file detail/inline.hpp
/// GPUPLACE_ALWAYS_INLINE: inlines a small function of the step path into every caller whatever
/// the compiler's size heuristics say; GPUPLACE_NOINLINE keeps a rare path out of its caller so
/// that the common one is inlined, and uses fewer registers, instead (GCC, Clang and MSVC;
/// nothing elsewhere); GPUPLACE_ASSUME(x) lets the compiler drop the checks that x makes redundant (x
/// must hold). Where they are used, a comment says why (measured with callgrind,
/// docs/performance.md).

#if defined(__GNUC__)
#define GPUPLACE_ALWAYS_INLINE [[gnu::always_inline]] inline
#define GPUPLACE_NOINLINE [[gnu::noinline]]
#define GPUPLACE_ASSUME(x) ((x) ? void(0) : __builtin_unreachable())
#elif defined(_MSC_VER)
#define GPUPLACE_ALWAYS_INLINE __forceinline
#define GPUPLACE_NOINLINE __declspec(noinline)
#define GPUPLACE_ASSUME(x) __assume(x)
#else
#define GPUPLACE_ALWAYS_INLINE inline
#define GPUPLACE_NOINLINE
#define GPUPLACE_ASSUME(x) void(0)
#endif
