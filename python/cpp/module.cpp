// gpuplace._core: pybind11 bindings of the header-only gpuplace library.
//
// - Env: one environment (any scenario; the comm model is a run-time value).
// - VectorEnv: N environments stepped in one call with autoreset.
// - Heuristic, evaluate(), EvalReport, run_episode() (the C++ reference run), comm_cost(), Teacher.
// - register_policy(): a Python policy by name, wherever a heuristic's name is taken.
// - PPO, Network, train_run() (the C++ PPO), when built with Eigen (GPUPLACE_PY_HAVE_RL).
//
// Observation, mask and vector buffers are returned as read-only numpy views on the C++ memory
// (no copy); each view keeps its owner alive. reset/step release the GIL. An object that is being
// stepped with the GIL released refuses to be used from another thread (StateError) instead of
// racing. C++ exceptions map to Python (conversions.cpp): InvalidAction -> gpuplace.InvalidAction
// (a ValueError), ConfigError -> gpuplace.ConfigError (a ValueError), other gpuplace errors ->
// gpuplace.Error (a RuntimeError) and its subclasses.
//
// Every part but the PPO is compiled once and linked into each CPU variant of the module
// (_core, _core_v3, _core_v4: python/CMakeLists.txt); this file and the PPO's are compiled per variant.

#include <gpuplace/version.hpp>

#include "bindings.hpp"

#ifndef GPUPLACE_PY_MODULE
#define GPUPLACE_PY_MODULE _core  // _core_v3 / _core_v4: the same module for x86-64-v3 / v4 (python/CMakeLists.txt)
#endif
#ifndef GPUPLACE_PY_VARIANT
#define GPUPLACE_PY_VARIANT "portable"
#endif
#ifndef GPUPLACE_PY_VERSION
#define GPUPLACE_PY_VERSION "0.1.0"
#endif

PYBIND11_MODULE(GPUPLACE_PY_MODULE, m) {
    namespace gpy = gpuplace_py;
    m.doc() = "gpuplace C++ core: environments, vector environments, heuristics and the evaluation harness.";
    m.attr("__version__") = GPUPLACE_PY_VERSION;
    m.attr("core_version") = gpuplace::version_string;
    m.attr("variant") = GPUPLACE_PY_VARIANT;
    gpy::register_exceptions(m);
    gpy::bind_envs(m);
    gpy::bind_vector_envs(m);
    gpy::bind_scenarios(m);
    gpy::bind_evaluation(m);
    gpy::bind_teacher(m);
    gpy::bind_registry(m);
#if defined(GPUPLACE_PY_HAVE_RL)
    gpy::bind_bench(m);
    m.attr("has_ppo") = true;
    gpy::bind_ppo(m);
    gpy::bind_training_run(m);
#else
    m.attr("has_ppo") = false;
#endif
}
