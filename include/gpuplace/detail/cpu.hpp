#pragma once
/// \file detail/cpu.hpp
/// Whether this CPU runs code compiled for x86-64-v3 (AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE, and
/// an operating system that saves the AVX registers) or x86-64-v4 (v3 plus AVX-512 F, BW, CD, DQ
/// and VL, with the AVX-512 registers saved). Asked by the build (cmake/cpu_probe.cpp) and by the
/// Python package before it loads one of its cores. Compiles for any CPU.

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define GPUPLACE_DETAIL_CPUID 1
#endif

namespace gpuplace::detail {

#ifdef GPUPLACE_DETAIL_CPUID
/// XCR0: the register state the operating system saves on a context switch.
inline unsigned os_saved_state() noexcept {
    unsigned xlo = 0, xhi = 0;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    return xlo;
}
#endif

/// True when the x86-64-v3 instruction sets are all present and usable; false on other CPUs.
inline bool has_x86_64_v3() noexcept {
#ifdef GPUPLACE_DETAIL_CPUID
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool fma = c & (1u << 12), movbe = c & (1u << 22), osxsave = c & (1u << 27), avx = c & (1u << 28),
               f16c = c & (1u << 29);
    if (!(fma && movbe && osxsave && avx && f16c)) return false;
    if ((os_saved_state() & 0x6u) != 0x6u) return false;  // the OS saves SSE and AVX state
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool bmi1 = b & (1u << 3), avx2 = b & (1u << 5), bmi2 = b & (1u << 8);
    if (!(bmi1 && avx2 && bmi2)) return false;
    if (!__get_cpuid(0x80000001u, &a, &b, &c, &d)) return false;
    return (c & (1u << 5)) != 0;  // LZCNT (ABM)
#else
    return false;
#endif
}

/// True when x86-64-v4 code runs: x86-64-v3, AVX-512 F, BW, CD, DQ and VL, and an operating system
/// that saves the opmask and all 32 512-bit registers; false on other CPUs.
inline bool has_x86_64_v4() noexcept {
#ifdef GPUPLACE_DETAIL_CPUID
    if (!has_x86_64_v3()) return false;
    if ((os_saved_state() & 0xE6u) != 0xE6u) return false;  // SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    constexpr unsigned need = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);  // F DQ CD BW VL
    return (b & need) == need;
#else
    return false;
#endif
}

}  // namespace gpuplace::detail

#ifdef GPUPLACE_DETAIL_CPUID
#undef GPUPLACE_DETAIL_CPUID
#endif
