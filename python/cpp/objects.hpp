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

/// The levels of a hierarchy, level 1 first and the root last: name, bandwidth (GB/s), latency (s),
/// num_domains and sizes (each domain's GPUs).
inline py::list hierarchy_list(const gp::level_hierarchy& h) {
    py::list l;
    for (std::size_t k = 1; k <= h.num_levels(); ++k) {
        py::dict e;
        e["name"] = h.level(k).name;
        e["bandwidth"] = h.bandwidth(k);
        e["latency"] = h.latency(k);
        e["num_domains"] = h.num_domains(k);
        std::vector<std::uint32_t> sizes(h.num_domains(k));
        for (std::size_t d = 0; d < sizes.size(); ++d) sizes[d] = h.size(k, d);
        e["sizes"] = sizes;
        l.append(e);
    }
    return l;
}

/// The topology's JSON (a tree's keys, or its name and levels) with num_gpus, num_nodes (level-1
/// domains), racks, nodes_per_rack and gpus_per_node (0 where domains differ in size) and
/// "hierarchy" (hierarchy_list()).
template <class T>
py::dict topology_dict(const T& t) {
    py::dict d = to_py(gp::to_json(t)).template cast<py::dict>();
    d["name"] = t.name();
    d["num_gpus"] = t.num_gpus();
    d["num_nodes"] = t.num_nodes();
    if (t.levels_form()) {  // the tree's sizes, as far as the levels have them
        d["racks"] = t.num_racks();
        d["nodes_per_rack"] = t.nodes_per_rack();
        d["gpus_per_node"] = t.gpus_per_node();
    }
    d["hierarchy"] = hierarchy_list(t.hierarchy());
    return d;
}

/// The level `level` names: an int 1 .. L-1, or a level's name (ConfigError otherwise).
inline std::size_t level_index(const gp::level_hierarchy& h, py::handle level) {
    const std::size_t L = h.num_levels();
    std::string known;
    for (std::size_t k = 1; k < L; ++k) known += (known.empty() ? "" : ", ") + h.level(k).name;
    if (py::isinstance<py::str>(level)) {
        const auto n = level.cast<std::string>();
        for (std::size_t k = 1; k < L; ++k)
            if (h.level(k).name == n) return k;
        throw gp::ConfigError("level \"" + n + "\": not a domain level of the topology (levels: " + known + ")");
    }
    if (py::isinstance<py::int_>(level) && !py::isinstance<py::bool_>(level)) {
        const auto k = level.cast<long long>();
        if (k >= 1 && std::size_t(k) < L) return std::size_t(k);
        throw gp::ConfigError("level " + std::to_string(k) + ": expected 1 .. " + std::to_string(L - 1) + " (" + known + ")");
    }
    throw py::type_error("level must be an int or a level name, got " + type_name(level));
}

/// Per GPU, its domain on every domain level: an int64 array (G, L - 1), level 1 first.
inline py::array_t<std::int64_t> domains_array(const gp::level_hierarchy& h) {
    const auto G = static_cast<py::ssize_t>(h.num_gpus()), W = static_cast<py::ssize_t>(h.num_levels() - 1);
    py::array_t<std::int64_t> a({G, W});
    auto* p = a.mutable_data();
    for (py::ssize_t g = 0; g < G; ++g)
        for (py::ssize_t l = 0; l < W; ++l) p[g * W + l] = h.domain_of(std::size_t(l + 1), gp::gpu_id(g));
    return a;
}

}  // namespace gpuplace_py
