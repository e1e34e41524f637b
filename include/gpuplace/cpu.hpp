#pragma once
/// \file cpu.hpp
/// Whether this CPU runs code compiled for x86-64-v3 (AVX2, FMA, ...) or x86-64-v4 (AVX-512), as
/// the build's probe (cmake/cpu_probe.cpp) and the Python package (before it loads one of its
/// compiled variants) ask. Compiles for any CPU; false on CPUs that are not x86-64.

#include "detail/cpu.hpp"

namespace gpuplace {

/// has_x86_64_v3(): the x86-64-v3 instruction sets are present and the OS saves the AVX registers.
using detail::has_x86_64_v3;
/// has_x86_64_v4(): x86-64-v3 plus AVX-512 F, BW, CD, DQ and VL, with their registers saved.
using detail::has_x86_64_v4;

}  // namespace gpuplace
