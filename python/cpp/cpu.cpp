// gpuplace._cpu: which build of the core this CPU can run, asked before either is loaded.
//
// The package builds gpuplace._core twice on x86-64: portable (SSE2) and for x86-64-v3 (AVX2,
// FMA, BMI1/2, F16C, LZCNT, MOVBE). gpuplace/_load.py imports the second only when
// x86_64_v3() is true: the CPU has every one of those instruction sets and the operating system
// saves the AVX registers. Plain C API, no pybind11: it compiles in a second.

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define GPUPLACE_CPU_X86 1
#endif

namespace {

bool has_x86_64_v3() noexcept {
#if defined(GPUPLACE_CPU_X86)
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

PyObject* x86_64_v3(PyObject*, PyObject*) { return PyBool_FromLong(has_x86_64_v3() ? 1 : 0); }

PyMethodDef methods[] = {
    {"x86_64_v3", x86_64_v3, METH_NOARGS,
     "True when this CPU and OS run x86-64-v3 code (AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cpu", "Which build of gpuplace._core this CPU runs.", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__cpu() { return PyModule_Create(&module); }
