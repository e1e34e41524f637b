// gpuplace._cpu: which build of the core this CPU can run, asked before either is loaded.
//
// The package builds gpuplace._core three times on x86-64: portable (SSE2), for x86-64-v3 (AVX2,
// FMA, BMI1/2, F16C, LZCNT, MOVBE) and for x86-64-v4 (AVX-512 F/BW/CD/DQ/VL too).
// gpuplace/_load.py imports the v3 or v4 build only when x86_64_v3() or x86_64_v4() is true: the
// CPU has every one of those instruction sets and the operating system saves their registers
// (include/gpuplace/cpu.hpp, which the build's probe uses too).
// Plain C API, no pybind11: it compiles in a second.

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <gpuplace/cpu.hpp>

namespace {

PyObject* x86_64_v3(PyObject*, PyObject*) { return PyBool_FromLong(gpuplace::has_x86_64_v3() ? 1 : 0); }
PyObject* x86_64_v4(PyObject*, PyObject*) { return PyBool_FromLong(gpuplace::has_x86_64_v4() ? 1 : 0); }

PyMethodDef methods[] = {
    {"x86_64_v3", x86_64_v3, METH_NOARGS,
     "True when this CPU and OS run x86-64-v3 code (AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE)."},
    {"x86_64_v4", x86_64_v4, METH_NOARGS,
     "True when this CPU and OS run x86-64-v4 code (x86-64-v3 and AVX-512 F, BW, CD, DQ, VL)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cpu", "Which build of gpuplace._core this CPU runs.", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__cpu() { return PyModule_Create(&module); }
