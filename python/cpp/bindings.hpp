#pragma once
// The parts of gpuplace._core, one function per concern (module.cpp calls them in order).

#include <pybind11/pybind11.h>

namespace gpuplace_py {

namespace py = pybind11;

void register_exceptions(py::module_& m);  // conversions.cpp: gpuplace.Error and its subclasses
void bind_scenarios(py::module_& m);     // scenario.cpp: scenarios, presets, the data folder, seeds
void bind_envs(py::module_& m);          // env.cpp: Env
void bind_vector_envs(py::module_& m);   // vector_env.cpp: VectorEnv
void bind_evaluation(py::module_& m);    // evaluation.cpp: Heuristic, run_episode, evaluate, EvalReport, comm_cost
void bind_teacher(py::module_& m);       // teacher.cpp: Teacher (behaviour cloning from Python)
void bind_registry(py::module_& m);      // registry.cpp: register_policy (Python policies by name)
void bind_ppo(py::module_& m);           // ppo.cpp: PPO, Network, checkpoints (GPUPLACE_PY_HAVE_RL builds)
void bind_training_run(py::module_& m);  // training_run.cpp: train_run, the recipes (GPUPLACE_PY_HAVE_RL builds)
void bind_bench(py::module_& m);         // bench.cpp: the benchmark, gpuplace-bench's code (GPUPLACE_PY_HAVE_RL builds)

}  // namespace gpuplace_py
