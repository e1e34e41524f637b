#pragma once
/// \file detail/cpu.hpp
/// Whether this CPU runs code compiled for x86-64-v3 (AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE, and
/// an operating system that saves the AVX registers). Asked by the build (cmake/cpu_probe.cpp)
/// and by the Python package before it loads its x86-64-v3 core. Compiles for any CPU.

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

namespace gpuplace::detail {

/// True when the x86-64-v3 instruction sets are all present and usable; false on other CPUs.
inline bool has_x86_64_v3() noexcept {
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool fma = c & (1u << 12), movbe = c & (1u << 22), osxsave = c & (1u << 27), avx = c & (1u << 28),
               f16c = c & (1u << 29);
    if (!(fma && movbe && osxsave && avx && f16c)) return false;
    unsigned xlo = 0, xhi = 0;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    if ((xlo & 0x6u) != 0x6u) return false;  // the OS saves SSE and AVX state
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool bmi1 = b & (1u << 3), avx2 = b & (1u << 5), bmi2 = b & (1u << 8);
    if (!(bmi1 && avx2 && bmi2)) return false;
    if (!__get_cpuid(0x80000001u, &a, &b, &c, &d)) return false;
    return (c & (1u << 5)) != 0;  // LZCNT (ABM)
#else
    return false;
#endif
}

}  // namespace gpuplace::detail
