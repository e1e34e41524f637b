// Tests of include/gpuplace/cpu.hpp: the CPU checks behind GPUPLACE_ARCH's probe and the
// Python package's choice of core. A level includes the one below it, and a program compiled for a
// level (this test suite, under GPUPLACE_ARCH=x86-64-v3 or x86-64-v4) runs only where the check
// for that level holds.

#include <doctest/doctest.h>

#include <gpuplace/cpu.hpp>

TEST_CASE("cpu: x86-64-v4 includes x86-64-v3, the levels this program was compiled for hold") {
    const bool v3 = gpuplace::has_x86_64_v3(), v4 = gpuplace::has_x86_64_v4();
    CHECK((!v4 || v3));
    CHECK(gpuplace::has_x86_64_v3() == v3);  // the same answer every time
#if defined(__AVX2__) && defined(__FMA__) && defined(__BMI2__) && defined(__F16C__)
    CHECK(v3);  // compiled for x86-64-v3 (or above) and running
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && defined(__AVX512DQ__) && \
    defined(__AVX512VL__)
    CHECK(v4);
#endif
#if !defined(__x86_64__) && !defined(_M_X64)
    CHECK_FALSE(v3);
    CHECK_FALSE(v4);
#endif
}
