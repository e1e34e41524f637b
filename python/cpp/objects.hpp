#pragma once
// The C++ objects behind gpuplace._core's Env and VectorEnv (and the guard that keeps one object
// from being stepped by two threads at once), and the state queries both classes answer
// (queries.cpp, instantiated there for gp::env).

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "conversions.hpp"

namespace gpuplace_py {

/// Marks an object as in use while the GIL is released; a second user gets a StateError.
struct busy_guard {
    std::atomic<bool>& flag;
    explicit busy_guard(std::atomic<bool>& f, const char* what) : flag(f) {
        if (flag.exchange(true))
            throw gp::StateError(std::string(what) + " is being stepped by another thread; use one object per thread");
    }
    ~busy_guard() { flag.store(false); }
    busy_guard(const busy_guard&) = delete;
    busy_guard& operator=(const busy_guard&) = delete;
};

inline void check_idle(const std::atomic<bool>& f, const char* what) {
    if (f.load()) throw gp::StateError(std::string(what) + " is being stepped by another thread");
}

/// gpuplace._core.Env.
template <class E>
struct PyEnv {
    E env;
    std::atomic<bool> busy{false};
    explicit PyEnv(const gp::scenario& s) : env(s) {}
    explicit PyEnv(E e) : env(std::move(e)) {}  ///< a fork or a copy
};

/// The env of an Env object that no other thread is stepping.
template <class E>
const E& idle(const PyEnv<E>& p) {
    check_idle(p.busy, "this Env");
    return p.env;
}

/// gpuplace._core.VectorEnv.
template <class E>
struct PyVec {
    gp::basic_vector_env<E> vec;
    std::vector<std::int64_t> actions;
    std::atomic<bool> busy{false};
    PyVec(const gp::scenario& s, std::size_t n, std::size_t t) : vec(s, n, t), actions(n, 0) {}
    PyVec(std::vector<E> envs, std::size_t t) : vec(std::move(envs), t), actions(vec.num_envs(), 0) {}
};

// ---- queries shared by Env and VectorEnv (env i); defined in queries.cpp ----------------------

template <class E>
py::dict info_dict(const E& e);
template <class E>
py::object current_job(const E& e);
template <class E>
py::array_t<std::int64_t> gpu_holders(const E& e);
template <class E>
py::array_t<double> gpu_end_times(const E& e);
template <class E>
py::dict cluster_dict(const E& e);
template <class E>
py::list queue_list(const E& e);
/// Finished jobs as a dict of numpy arrays; "gpus" is a flat array indexed by gpu_offset / num_gpus.
template <class E>
py::dict finished_jobs(const E& e);
/// Cost and slowdown of placing a job of `model` (None: the current job's) on `gpus`.
template <class E>
py::dict comm_cost_of(const E& e, py::handle gpus, py::handle model);

template <class T>
py::dict topology_dict(const T& t) {
    py::dict d = to_py(gp::to_json(t)).template cast<py::dict>();
    d["name"] = t.name();
    d["num_gpus"] = t.num_gpus();
    d["num_nodes"] = t.num_nodes();
    return d;
}

}  // namespace gpuplace_py
