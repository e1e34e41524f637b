// gpuplace._core: pybind11 bindings of the header-only gpuplace library.
//
// - Env / TreeRouteEnv: one environment (comm model RingAllReduce / TreeRouteCost).
// - VectorEnv / TreeRouteVectorEnv: N environments stepped in one call with autoreset.
// - Heuristic, evaluate(), EvalReport, run_episode() (the C++ reference run), comm_cost().
//
// Observation, mask and vector buffers are returned as read-only numpy views on the C++ memory
// (no copy); each view keeps its owner alive. reset/step release the GIL. An object that is being
// stepped with the GIL released refuses to be used from another thread (StateError) instead of
// racing. C++ exceptions map to Python: InvalidAction -> gpuplace.InvalidAction (a ValueError),
// ConfigError -> gpuplace.ConfigError (a ValueError), other gpuplace errors -> gpuplace.Error (a
// RuntimeError) and its subclasses.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstring>
#include <fstream>
#include <sstream>
#include <functional>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

#if defined(GPUPLACE_PY_HAVE_RL)
#include <gpuplace/rl/rl.hpp>
#include <variant>
#endif

#ifndef GPUPLACE_PY_MODULE
#define GPUPLACE_PY_MODULE _core  // _core_v3 / _core_v4: the same module compiled for x86-64-v3 / v4 (python/CMakeLists.txt)
#endif
#ifndef GPUPLACE_PY_VARIANT
#define GPUPLACE_PY_VARIANT "portable"
#endif
#ifndef GPUPLACE_PY_VERSION
#define GPUPLACE_PY_VERSION "0.1.0"
#endif

namespace py = pybind11;
namespace gp = gpuplace;
using gp::detail::json;

namespace {

// ---- exceptions ---------------------------------------------------------------------------------

PyObject* exc_error = nullptr;       // gpuplace.Error(RuntimeError)
PyObject* exc_config = nullptr;      // gpuplace.ConfigError(Error, ValueError)
PyObject* exc_invalid = nullptr;     // gpuplace.InvalidAction(Error, ValueError)
PyObject* exc_trace = nullptr;       // gpuplace.TraceError(ConfigError)
PyObject* exc_checkpoint = nullptr;  // gpuplace.CheckpointError(Error)
PyObject* exc_state = nullptr;       // gpuplace.StateError(Error)

PyObject* new_exception(py::module_& m, const char* name, py::tuple bases, const char* doc) {
    const std::string full = std::string("gpuplace.") + name;
    PyObject* e = PyErr_NewExceptionWithDoc(full.c_str(), doc, bases.ptr(), nullptr);
    if (!e) throw py::error_already_set();
    m.add_object(name, py::reinterpret_borrow<py::object>(e));
    return e;  // one reference kept for the life of the process
}

void register_exceptions(py::module_& m) {
    exc_error = new_exception(m, "Error", py::make_tuple(py::handle(PyExc_RuntimeError)),
                              "Base of every error raised by gpuplace's C++ core.");
    exc_config = new_exception(m, "ConfigError", py::make_tuple(py::handle(exc_error), py::handle(PyExc_ValueError)),
                               "A configuration value is missing, unknown or out of range; the message names the "
                               "JSON path.");
    exc_invalid = new_exception(m, "InvalidAction", py::make_tuple(py::handle(exc_error), py::handle(PyExc_ValueError)),
                                "An action is not valid in the current state; the message names the action. The "
                                "environment is left unchanged.");
    exc_trace = new_exception(m, "TraceError", py::make_tuple(py::handle(exc_config)),
                              "A trace or table file could not be read; the message names file:line.");
    exc_checkpoint = new_exception(m, "CheckpointError", py::make_tuple(py::handle(exc_error)),
                                   "A checkpoint is truncated, corrupted or of an unknown version.");
    exc_state = new_exception(m, "StateError", py::make_tuple(py::handle(exc_error)),
                              "An operation is not allowed in the current state (e.g. step() before reset()).");
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const gp::InvalidAction& e) {
            PyErr_SetString(exc_invalid, e.what());
        } catch (const gp::TraceError& e) {
            PyErr_SetString(exc_trace, e.what());
        } catch (const gp::ConfigError& e) {
            PyErr_SetString(exc_config, e.what());
        } catch (const gp::CheckpointError& e) {
            PyErr_SetString(exc_checkpoint, e.what());
        } catch (const gp::StateError& e) {
            PyErr_SetString(exc_state, e.what());
        } catch (const gp::Error& e) {
            PyErr_SetString(exc_error, e.what());
        } catch (const json::exception& e) {
            PyErr_SetString(exc_config, (std::string("JSON: ") + e.what()).c_str());
        }
    });
}

// ---- conversions --------------------------------------------------------------------------------

py::object to_py(const json& j) {
    switch (j.type()) {
        case json::value_t::null: return py::none();
        case json::value_t::boolean: return py::bool_(j.get<bool>());
        case json::value_t::number_integer: return py::int_(j.get<std::int64_t>());
        case json::value_t::number_unsigned: return py::int_(j.get<std::uint64_t>());
        case json::value_t::number_float: return py::float_(j.get<double>());
        case json::value_t::string: return py::str(j.get_ref<const std::string&>());
        case json::value_t::array: {
            py::list l;
            for (const auto& v : j) l.append(to_py(v));
            return l;
        }
        case json::value_t::object: {
            py::dict d;
            for (auto it = j.begin(); it != j.end(); ++it) d[py::str(it.key())] = to_py(it.value());
            return d;
        }
        default: return py::none();
    }
}

std::string type_name(py::handle o) { return py::str(py::type::handle_of(o).attr("__name__")).cast<std::string>(); }

/// A scenario from JSON text, a dict, a preset name or a .json file.
/// A Python value as JSON: dicts (string keys), lists and tuples, str, bool, None, and numbers
/// (numpy's too). A non-finite float or any other type is a ConfigError naming its JSON path.
json py_to_json(py::handle o, const std::string& path) {
    const auto where = [&] { return path.empty() ? std::string("/") : path; };
    if (o.is_none()) return nullptr;
    if (py::isinstance<py::bool_>(o)) return o.cast<bool>();
    if (py::isinstance<py::str>(o)) return o.cast<std::string>();
    if (py::isinstance<py::dict>(o)) {
        json j = json::object();
        for (auto [k, v] : o.cast<py::dict>()) {
            if (!py::isinstance<py::str>(k))
                throw gp::ConfigError("config " + where() + ": keys must be strings, got " + type_name(k) + " " +
                                      py::repr(k).cast<std::string>());
            const auto key = k.cast<std::string>();
            j[key] = py_to_json(v, path + "/" + key);
        }
        return j;
    }
    if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
        json j = json::array();
        std::size_t i = 0;
        for (auto v : o) j.push_back(py_to_json(v, path + "/" + std::to_string(i++)));
        return j;
    }
    if (PyIndex_Check(o.ptr())) {  // int, numpy integers
        py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(o.ptr()));
        if (!v) throw py::error_already_set();
        long long x = PyLong_AsLongLong(v.ptr());
        if (!PyErr_Occurred()) return x;
        PyErr_Clear();
        const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
        if (!PyErr_Occurred()) return u;
        PyErr_Clear();
        throw gp::ConfigError("config " + where() + ": integer " + py::str(v).cast<std::string>() + " is too large");
    }
    if (PyFloat_Check(o.ptr()) || py::hasattr(o, "__float__")) {
        const double x = py::float_(py::reinterpret_borrow<py::object>(o)).cast<double>();
        if (!std::isfinite(x))
            throw gp::ConfigError("config " + where() + ": " + py::repr(o).cast<std::string>() + " is not a finite number");
        return x;
    }
    throw gp::ConfigError("config " + where() + ": " + type_name(o) + " " + py::repr(o).cast<std::string>() +
                          " is not a JSON value (dict, list, str, number, bool or None)");
}

gp::scenario to_scenario(py::handle o) {
    if (py::isinstance<py::str>(o)) {
        const auto text = o.cast<std::string>();
        const auto first = text.find_first_not_of(" \t\r\n");
        if (first != std::string::npos && text[first] == '{') return gp::parse_scenario(text, "scenario JSON");
        if (text.size() > 5 && text.compare(text.size() - 5, 5, ".json") == 0) return gp::load_scenario(text);
        return gp::preset_scenario(text);  // unknown names: ConfigError listing the presets
    }
    if (py::isinstance<py::dict>(o)) return gp::scenario_from_json(py_to_json(o, ""));
    throw py::type_error("scenario must be a JSON string or a dict, got " + type_name(o));
}

std::string comm_model_of(const gp::scenario& s) { return gp::comm_model_name(s); }

/// A seed: a Python int in [0, 2^64).
std::uint64_t to_seed(py::handle o) {
    if (py::isinstance<py::bool_>(o) || !PyIndex_Check(o.ptr()))
        throw py::type_error("seed must be an int, got " + type_name(o));
    py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(o.ptr()));
    if (!v) throw py::error_already_set();
    if (PyObject_RichCompareBool(v.ptr(), py::int_(0).ptr(), Py_LT) == 1)
        throw py::value_error("seed must be >= 0, got " + py::str(v).cast<std::string>());
    const unsigned long long s = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) {
        PyErr_Clear();
        throw py::value_error("seed must be < 2**64, got " + py::str(v).cast<std::string>());
    }
    return s;
}

/// An action: a Python or numpy integer (a 0-d integer array too). Anything else is a TypeError
/// naming the value; an integer outside int64 is reported as an invalid action.
std::int64_t to_action(py::handle o) {
    py::object v = py::reinterpret_borrow<py::object>(o);
    if (py::isinstance<py::array>(v)) {
        auto a = py::reinterpret_borrow<py::array>(v);
        if (a.ndim() != 0 && a.size() != 1)
            throw py::type_error("action must be a single integer, got an array of shape " +
                                 py::str(a.attr("shape")).cast<std::string>());
        const char kind = a.dtype().kind();
        if (kind != 'i' && kind != 'u')
            throw py::type_error("action must be an integer, got an array of dtype " +
                                 py::str(a.dtype()).cast<std::string>() + ": " + py::repr(v).cast<std::string>());
        v = a.attr("item")();
    }
    if (py::isinstance<py::bool_>(v) || !PyIndex_Check(v.ptr()))
        throw py::type_error("action must be an integer, got " + type_name(v) + " " + py::repr(v).cast<std::string>());
    py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
    if (!i) throw py::error_already_set();
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow) throw gp::InvalidAction("invalid action " + py::str(i).cast<std::string>() + ": out of range");
    return x;
}

/// A read-only numpy view of C++ memory, keeping `owner` alive.
template <class T>
py::array view(const T* data, std::vector<py::ssize_t> shape, py::handle owner, const char* dtype = nullptr) {
    py::dtype dt = dtype ? py::dtype(dtype) : py::dtype::of<T>();
    py::array a(dt, std::move(shape), {}, data, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

template <class T>
py::array_t<T> copy_array(const std::vector<T>& v) {
    py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
    if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
    return a;
}

py::dict metrics_dict(const gp::metrics& m) { return to_py(gp::to_json(m)).cast<py::dict>(); }

/// Fields that only some versions of the core's metrics have (co-location adds them).
template <class M, class F>
void read_optional_metrics(M& m, F&& opt) {
    if constexpr (requires { m.sm_utilization; }) opt("sm_utilization", m.sm_utilization);
    if constexpr (requires { m.memory_utilization; }) opt("memory_utilization", m.memory_utilization);
    if constexpr (requires { m.avg_interference; }) opt("avg_interference", m.avg_interference);
}

gp::metrics metrics_from_dict(py::handle o) {
    if (!py::isinstance<py::dict>(o)) throw py::type_error("metrics must be a dict, got " + type_name(o));
    auto d = py::reinterpret_borrow<py::dict>(o);
    gp::metrics m;
    auto num = [&](const char* k, double& out) {
        if (!d.contains(k)) throw gp::ConfigError(std::string("metrics: missing key \"") + k + "\"");
        out = py::float_(d[k]).cast<double>();
    };
    num("avg_jct", m.avg_jct);
    num("p95_jct", m.p95_jct);
    num("avg_queueing_delay", m.avg_queueing_delay);
    num("makespan", m.makespan);
    num("avg_comm_cost", m.avg_comm_cost);
    num("avg_slowdown", m.avg_slowdown);
    num("utilization", m.utilization);
    auto opt = [&](const char* k, double& out) {
        if (d.contains(k)) out = py::float_(d[k]).cast<double>();
    };
    opt("p50_jct", m.p50_jct);
    opt("p99_jct", m.p99_jct);
    opt("total_comm_cost", m.total_comm_cost);
    read_optional_metrics(m, opt);
    if (d.contains("jobs_done")) m.jobs_done = d["jobs_done"].cast<std::size_t>();
    if (d.contains("jobs_total")) m.jobs_total = d["jobs_total"].cast<std::size_t>();
    return m;
}

/// Text of a shape tuple, e.g. "(256,)" or "(256, 425)".
std::string shape_text(const std::vector<py::ssize_t>& shape) {
    std::string t = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) t += (k ? ", " : "") + std::to_string(shape[k]);
    return t + (shape.size() == 1 ? ",)" : ")");
}

/// A caller's numpy array to be written in place: checks type, dtype, shape, C-contiguity and
/// writability, each with a message that names the argument and what was expected.
template <class T>
T* writable_buffer(py::handle h, const char* what, const std::vector<py::ssize_t>& shape, const char* dtype_name) {
    const auto want = std::string(what) + " must be a writable C-contiguous numpy " + dtype_name + " array of shape " +
                      shape_text(shape);
    if (!py::isinstance<py::array>(h)) throw py::type_error(want + ", got " + type_name(h));
    auto a = py::reinterpret_borrow<py::array>(h);
    if (!a.dtype().is(py::dtype::of<T>()))
        throw py::type_error(want + ", got dtype " + py::str(a.dtype()).cast<std::string>());
    std::vector<py::ssize_t> got(a.shape(), a.shape() + a.ndim());
    if (got != shape) throw py::value_error(want + ", got shape " + shape_text(got));
    if (!(a.flags() & py::array::c_style)) throw py::value_error(want + ", got a non-contiguous array (use np.ascontiguousarray)");
    if (!a.writeable()) throw py::value_error(want + ", got a read-only array");
    return static_cast<T*>(a.mutable_data());
}

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

void check_idle(const std::atomic<bool>& f, const char* what) {
    if (f.load()) throw gp::StateError(std::string(what) + " is being stepped by another thread");
}

// ---- queries shared by Env and VectorEnv (env i) ------------------------------------------------

template <class E>
py::dict info_dict(const E& e) {
    // the keys are interned once and live as long as the interpreter: an info dict is built after
    // every Gymnasium step, and making 7 key strings each time was most of its cost
    static PyObject* const keys[] = {PyUnicode_InternFromString("time"),       PyUnicode_InternFromString("steps"),
                                     PyUnicode_InternFromString("jobs_done"),  PyUnicode_InternFromString("jobs_total"),
                                     PyUnicode_InternFromString("queued"),     PyUnicode_InternFromString("running"),
                                     PyUnicode_InternFromString("episode_return")};
    const auto i = e.info();
    py::dict d;
    auto set = [&](int k, py::object v) {
        if (!keys[k]) throw std::runtime_error("gpuplace: the info dict keys could not be created");
        if (PyDict_SetItem(d.ptr(), keys[k], v.ptr()) != 0) throw py::error_already_set();
    };
    set(0, py::float_(i.time));
    set(1, py::int_(i.steps));
    set(2, py::int_(i.jobs_done));
    set(3, py::int_(i.jobs_total));
    set(4, py::int_(i.queued));
    set(5, py::int_(i.running));
    set(6, py::float_(i.episode_return));
    return d;
}

template <class J>
py::dict job_dict(const J& j, const gp::ModelZoo& zoo, double ideal) {
    py::dict d;
    d["id"] = j.id;
    d["submit_time"] = double(j.submit_time);
    d["num_gpus"] = j.num_gpus;
    d["model"] = j.model;
    d["model_name"] = zoo[j.model].name;
    d["work"] = double(j.work);
    d["ideal_duration"] = ideal;
    return d;
}

template <class E>
py::object current_job(const E& e) {
    if (!e.has_current()) return py::none();
    return job_dict(e.current_job(), e.zoo(), e.simulator().ideal_duration(e.current_index()));
}

template <class E>
py::array_t<std::int64_t> gpu_holders(const E& e) {
    const auto& cl = e.cluster();
    py::array_t<std::int64_t> a(static_cast<py::ssize_t>(cl.num_gpus()));
    auto* p = a.mutable_data();
    for (std::size_t g = 0; g < cl.num_gpus(); ++g) {
        const auto h = cl.holder(static_cast<gp::gpu_id>(g));
        p[g] = h == gp::cluster_state::no_job ? -1 : std::int64_t(e.simulator().job(h).id);
    }
    return a;
}

template <class E>
py::array_t<double> gpu_end_times(const E& e) {
    const auto& cl = e.cluster();
    py::array_t<double> a(static_cast<py::ssize_t>(cl.num_gpus()));
    auto* p = a.mutable_data();
    for (std::size_t g = 0; g < cl.num_gpus(); ++g) {
        const auto id = static_cast<gp::gpu_id>(g);
        p[g] = cl.is_free(id) ? std::numeric_limits<double>::quiet_NaN() : cl.end_time(id);
    }
    return a;
}

template <class E>
py::dict cluster_dict(const E& e) {
    const auto& t = e.topology();
    const auto& cl = e.cluster();
    std::vector<std::uint32_t> nf(t.num_nodes()), rf(t.num_racks());
    for (std::size_t n = 0; n < nf.size(); ++n) nf[n] = cl.node_free(n);
    for (std::size_t r = 0; r < rf.size(); ++r) rf[r] = cl.rack_free(r);
    std::vector<std::int64_t> picked(e.picked().begin(), e.picked().end());
    py::dict d;
    d["holders"] = gpu_holders(e);
    d["end_times"] = gpu_end_times(e);
    d["node_free"] = copy_array(nf);
    d["rack_free"] = copy_array(rf);
    d["free_gpus"] = cl.free_gpus();
    d["busy_gpus"] = cl.busy_gpus();
    d["picked"] = copy_array(picked);
    d["time"] = e.now();
    return d;
}

template <class T>
py::dict topology_dict(const T& t) {
    py::dict d = to_py(gp::to_json(t)).template cast<py::dict>();
    d["name"] = t.name();
    d["num_gpus"] = t.num_gpus();
    d["num_nodes"] = t.num_nodes();
    return d;
}

template <class E>
py::list queue_list(const E& e) {
    py::list l;
    for (auto j : e.queue()) l.append(job_dict(e.simulator().job(j), e.zoo(), e.simulator().ideal_duration(j)));
    return l;
}

/// Finished jobs as a dict of numpy arrays; "gpus" is a flat array indexed by gpu_offset / num_gpus.
template <class E>
py::dict finished_jobs(const E& e) {
    const auto fin = e.finished();
    const auto n = static_cast<py::ssize_t>(fin.size());
    py::array_t<std::int64_t> id(n), model(n), k(n), off(n);
    py::array_t<double> submit(n), start(n), end(n), ideal(n), cost(n), slow(n);
    std::vector<std::int64_t> gpus;
    for (py::ssize_t i = 0; i < n; ++i) {
        const auto& r = fin[static_cast<std::size_t>(i)];
        id.mutable_at(i) = r.id;
        model.mutable_at(i) = r.model;
        k.mutable_at(i) = r.num_gpus;
        off.mutable_at(i) = static_cast<std::int64_t>(gpus.size());
        submit.mutable_at(i) = r.submit;
        start.mutable_at(i) = r.start;
        end.mutable_at(i) = r.end;
        ideal.mutable_at(i) = r.ideal_duration;
        cost.mutable_at(i) = r.comm_cost;
        slow.mutable_at(i) = r.slowdown;
        for (auto g : e.simulator().gpus_of(r)) gpus.push_back(g);
    }
    py::dict d;
    d["id"] = id;
    d["model"] = model;
    d["num_gpus"] = k;
    d["submit"] = submit;
    d["start"] = start;
    d["end"] = end;
    d["ideal_duration"] = ideal;
    d["comm_cost"] = cost;
    d["slowdown"] = slow;
    d["gpu_offset"] = off;
    d["gpus"] = copy_array(gpus);
    return d;
}

py::list layout_list(const std::vector<gp::obs_segment>& layout) {
    py::list l;
    for (const auto& s : layout) {
        py::dict d;
        d["name"] = s.name;
        d["offset"] = s.offset;
        d["size"] = s.size;
        d["fields"] = s.fields;
        l.append(d);
    }
    return l;
}

/// GPU ids from a Python sequence: each in [0, G), no duplicates; returned sorted.
std::vector<gp::gpu_id> to_gpus(py::handle o, std::size_t G) {
    if (py::isinstance<py::str>(o) || !py::hasattr(o, "__iter__"))
        throw py::type_error("gpus must be a sequence of GPU indices, got " + type_name(o));
    std::vector<gp::gpu_id> v;
    for (auto item : o) {
        const auto a = to_action(item);
        if (a < 0 || a >= static_cast<std::int64_t>(G))
            throw py::value_error("GPU " + std::to_string(a) + " out of range [0, " + std::to_string(G) + ")");
        v.push_back(static_cast<gp::gpu_id>(a));
    }
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i)
        if (v[i] == v[i - 1]) throw py::value_error("GPU " + std::to_string(v[i]) + " appears twice");
    if (v.empty()) throw py::value_error("gpus must not be empty");
    return v;
}

gp::model_id to_model(py::handle o, const gp::ModelZoo& zoo) {
    if (py::isinstance<py::str>(o)) return zoo.find(o.cast<std::string>());
    const auto m = to_action(o);
    if (m < 0 || m >= static_cast<std::int64_t>(zoo.size()))
        throw py::value_error("model " + std::to_string(m) + " out of range [0, " + std::to_string(zoo.size()) + ")");
    return static_cast<gp::model_id>(m);
}

py::dict comm_dict(const gp::comm_result& r) {
    py::dict d;
    d["cost"] = r.cost;
    d["slowdown"] = r.slowdown;
    return d;
}

template <class E>
py::dict comm_cost_of(const E& e, py::handle gpus, py::handle model) {
    const auto g = to_gpus(gpus, e.num_gpus());
    gp::model_id m;
    if (model.is_none()) {
        if (!e.has_current())
            throw gp::StateError("comm_cost: no job is being placed; pass model= (an index or a name)");
        m = e.current_job().model;
    } else {
        m = to_model(model, e.zoo());
    }
    return comm_dict(e.comm().evaluate(e.topology(), e.zoo(), m, g));
}

// ---- Env ----------------------------------------------------------------------------------------

template <class E>
struct PyEnv {
    E env;
    std::atomic<bool> busy{false};
    explicit PyEnv(const gp::scenario& s) : env(s) {}
};

template <class E>
const E& idle(const PyEnv<E>& p) {
    check_idle(p.busy, "this Env");
    return p.env;
}

template <class E>
void bind_env(py::module_& m, const char* name, const char* doc) {
    using P = PyEnv<E>;
    py::class_<P>(m, name, doc)
        .def(py::init([](py::object s) { return std::make_unique<P>(to_scenario(s)); }), py::arg("scenario"),
             "Builds the environment from a scenario (JSON text or dict). Raises ConfigError on any bad value, "
             "naming its JSON path.")
        .def_property_readonly_static("comm_model", [](py::object) { return std::string(E::comm_type::name); })
        .def(
            "reset",
            [](P& self, py::object seed) {
                const auto s = to_seed(seed);
                py::gil_scoped_release nogil;
                busy_guard g(self.busy, "this Env");
                self.env.reset(s);
            },
            py::arg("seed") = 0, "Starts an episode (the workload drawn from `seed`). Releases the GIL.")
        .def(
            "step",
            [](P& self, py::object action) {
                const auto a = to_action(action);
                gp::step_result r;
                {
                    py::gil_scoped_release nogil;
                    busy_guard g(self.busy, "this Env");
                    r = self.env.step(a);
                }
                return py::make_tuple(r.reward, r.terminated, r.truncated);
            },
            py::arg("action"),
            "Applies an action; returns (reward: float, terminated: bool, truncated: bool). An invalid action "
            "raises InvalidAction (a ValueError) naming it and leaves the env unchanged. Releases the GIL.")
        .def_property_readonly(
            "observation",
            [](py::object self) {
                const auto& e = self.cast<const P&>().env;
                return view(e.observation().data(), {static_cast<py::ssize_t>(e.observation_size())}, self);
            },
            "The observation: a read-only float32 view on the C++ buffer (updated in place by reset/step).")
        .def_property_readonly(
            "action_mask",
            [](py::object self) {
                const auto& e = self.cast<const P&>().env;
                return view(e.action_mask().data(), {static_cast<py::ssize_t>(e.num_actions())}, self);
            },
            "The action mask: a read-only uint8 view on the C++ buffer (1 = valid).")
        .def_property_readonly("observation_size", [](const P& p) { return p.env.observation_size(); })
        .def_property_readonly("num_actions", [](const P& p) { return p.env.num_actions(); })
        .def_property_readonly("num_gpus", [](const P& p) { return p.env.num_gpus(); })
        .def_property_readonly("defer_action", [](const P& p) { return p.env.defer_action(); })
        .def_property_readonly("observation_layout", [](const P& p) { return layout_list(p.env.observation_layout()); },
                               "Named segments of the observation: list of {name, offset, size, fields}.")
        .def_property_readonly("done", [](const P& p) { return idle(p).done(); })
        .def_property_readonly("terminated", [](const P& p) { return idle(p).terminated(); })
        .def_property_readonly("truncated", [](const P& p) { return idle(p).truncated(); })
        .def_property_readonly("steps", [](const P& p) { return idle(p).steps(); })
        .def_property_readonly("time", [](const P& p) { return idle(p).now(); })
        .def_property_readonly("seed", [](const P& p) { return idle(p).seed(); })
        .def_property_readonly("episode_return", [](const P& p) { return idle(p).episode_return(); })
        .def_property_readonly("has_current", [](const P& p) { return idle(p).has_current(); })
        .def("info", [](const P& p) { return info_dict(idle(p)); },
             "Summary of the episode so far: time, steps, jobs_done, jobs_total, queued, running, episode_return.")
        .def("metrics", [](const P& p) { return metrics_dict(idle(p).episode_metrics()); },
             "Metrics of the jobs finished so far (times in seconds).")
        .def("render_ansi", [](const P& p) { return gp::render_ansi(idle(p)); }, "A text picture of the cluster.")
        .def("current_job", [](const P& p) { return current_job(idle(p)); }, "The job being placed (dict) or None.")
        .def("picked", [](const P& p) {
                 const auto s = idle(p).picked();
                 return std::vector<std::int64_t>(s.begin(), s.end());
             }, "GPUs picked so far for the current job, in pick order.")
        .def("queue", [](const P& p) { return queue_list(idle(p)); }, "Waiting jobs in queue order (current one included).")
        .def("gpu_holders", [](const P& p) { return gpu_holders(idle(p)); }, "Per GPU: id of the job holding it, -1 if free.")
        .def("gpu_end_times", [](const P& p) { return gpu_end_times(idle(p)); },
             "Per GPU: when its job is due to end (s), NaN if free.")
        .def("cluster_state", [](const P& p) { return cluster_dict(idle(p)); },
             "Occupancy: holders, end_times, node_free, rack_free, free_gpus, busy_gpus, picked, time.")
        .def("topology", [](const P& p) { return topology_dict(p.env.topology()); })
        .def("node_of", [](const P& p) {
                 const auto& t = p.env.topology();
                 std::vector<std::int64_t> v(t.num_gpus());
                 for (std::size_t g = 0; g < v.size(); ++g) v[g] = t.node_of(static_cast<gp::gpu_id>(g));
                 return copy_array(v);
             }, "Node index of every GPU.")
        .def("rack_of", [](const P& p) {
                 const auto& t = p.env.topology();
                 std::vector<std::int64_t> v(t.num_gpus());
                 for (std::size_t g = 0; g < v.size(); ++g) v[g] = t.rack_of(static_cast<gp::gpu_id>(g));
                 return copy_array(v);
             }, "Rack index of every GPU.")
        .def("models", [](const P& p) {
                 std::vector<std::string> v;
                 for (std::size_t i = 0; i < p.env.zoo().size(); ++i) v.push_back(p.env.zoo()[gp::model_id(i)].name);
                 return v;
             }, "Names of the zoo's models (index = model id).")
        .def("scenario", [](const P& p) { return to_py(gp::to_json(p.env.config())); }, "The scenario, every option filled in.")
        .def("finished_jobs", [](const P& p) { return finished_jobs(idle(p)); },
             "Finished jobs as numpy arrays: id, model, num_gpus, submit, start, end, ideal_duration, comm_cost, "
             "slowdown, gpu_offset and the flat GPU list gpus.")
        .def("comm_cost", [](const P& p, py::object gpus, py::object model) { return comm_cost_of(idle(p), gpus, model); },
             py::arg("gpus"), py::arg("model") = py::none(),
             "Cost and slowdown of placing a job of `model` (default: the current job's) on `gpus`.")
        .def("why_invalid", [](const P& p, py::object a) { return idle(p).why_invalid(to_action(a)); }, py::arg("action"),
             "Why an action is invalid now, or '' when it is valid.")
        .def("__repr__", [name](const P& p) {
            return std::string("<gpuplace.") + name + " " + p.env.config().name + ": " + std::to_string(p.env.num_gpus()) +
                   " GPUs, comm " + std::string(E::comm_type::name) + ">";
        });
}

// ---- VectorEnv ----------------------------------------------------------------------------------

template <class E>
struct PyVec {
    gp::basic_vector_env<E> vec;
    std::vector<std::int64_t> actions;
    std::atomic<bool> busy{false};
    PyVec(const gp::scenario& s, std::size_t n, std::size_t t) : vec(s, n, t), actions(n, 0) {}
};

template <class E>
const E& env_at(const PyVec<E>& p, py::ssize_t i) {
    check_idle(p.busy, "this VectorEnv");
    const auto n = static_cast<py::ssize_t>(p.vec.num_envs());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("env index " + std::to_string(i) + " out of range [0, " + std::to_string(n) + ")");
    return p.vec.env(static_cast<std::size_t>(i));
}

py::dict final_dict(const gp::final_info& f) {
    py::dict d = metrics_dict(f.m);
    d["episode_return"] = f.episode_return;
    d["length"] = f.length;
    d["seed"] = f.seed;
    return d;
}

template <class E>
float* obs_out_ptr(PyVec<E>& self, py::handle obs_out) {
    if (obs_out.is_none()) return nullptr;
    return writable_buffer<float>(obs_out, "obs_out",
                                  {static_cast<py::ssize_t>(self.vec.num_envs()), static_cast<py::ssize_t>(self.vec.observation_size())},
                                  "float32");
}

template <class E>
std::span<float> obs_span(PyVec<E>& self, float* obs) {
    return obs ? std::span<float>(obs, self.vec.num_envs() * self.vec.observation_size()) : std::span<float>{};
}

template <class E>
void bind_vector_env(py::module_& m, const char* name, const char* doc) {
    using P = PyVec<E>;
    py::class_<P>(m, name, doc)
        .def(py::init([](py::object s, py::ssize_t n, py::ssize_t t) {
                 if (n < 1) throw gp::ConfigError("vector env: num_envs must be >= 1, got " + std::to_string(n));
                 if (t < 0) throw gp::ConfigError("vector env: num_threads must be >= 0, got " + std::to_string(t));
                 auto sc = to_scenario(s);
                 py::gil_scoped_release nogil;
                 return std::make_unique<P>(sc, static_cast<std::size_t>(n), static_cast<std::size_t>(t));
             }),
             py::arg("scenario"), py::arg("num_envs"), py::arg("num_threads") = 1,
             "N copies of the environment. Results do not depend on num_threads.")
        .def_property_readonly_static("comm_model", [](py::object) { return std::string(E::comm_type::name); })
        .def(
            "reset",
            [](P& self, py::object seed) {
                const auto s = to_seed(seed);
                py::gil_scoped_release nogil;
                busy_guard g(self.busy, "this VectorEnv");
                self.vec.reset(s);
            },
            py::arg("seed") = 0, "Resets env i with episode_seed(seed, i, 0). Releases the GIL.")
        .def(
            "step",
            [](P& self, py::handle actions, py::handle obs_out) {
                if (!py::isinstance<py::array>(actions))
                    throw py::type_error("actions must be a numpy int64 array of shape (" + std::to_string(self.vec.num_envs()) +
                                         ",), got " + type_name(actions));
                auto a = py::reinterpret_borrow<py::array>(actions);
                if (!a.dtype().is(py::dtype::of<std::int64_t>()))
                    throw py::type_error("actions must have dtype int64, got " + py::str(a.dtype()).cast<std::string>() +
                                         " (convert with actions.astype(np.int64))");
                if (a.ndim() != 1 || a.shape(0) != static_cast<py::ssize_t>(self.vec.num_envs()))
                    throw py::value_error("actions must have shape (" + std::to_string(self.vec.num_envs()) + ",), got " +
                                          py::str(a.attr("shape")).cast<std::string>());
                float* obs = obs_out_ptr(self, obs_out);
                check_idle(self.busy, "this VectorEnv");
                auto u = a.unchecked<std::int64_t, 1>();
                for (py::ssize_t i = 0; i < u.shape(0); ++i) self.actions[static_cast<std::size_t>(i)] = u(i);
                py::gil_scoped_release nogil;
                busy_guard g(self.busy, "this VectorEnv");
                return self.vec.step(self.actions, obs_span(self, obs));
            },
            py::arg("actions"), py::arg("obs_out") = py::none(),
            "Steps env i with actions[i] (int64 array of shape (num_envs,)). All actions are checked first: an "
            "invalid one raises InvalidAction naming the env and the action, and no env moves. Ended episodes are "
            "reset at once (their last observation is in final_observations). obs_out: optional writable float32 "
            "array of shape (num_envs, observation_size) that receives the observations after the step (a copy "
            "made env by env while each row is in cache). Returns the number of episodes that ended. Releases the GIL.")
        .def(
            "sample_valid_actions",
            [](P& self, py::handle out) {
                const auto n = static_cast<py::ssize_t>(self.vec.num_envs());
                py::array_t<std::int64_t> fresh;
                std::int64_t* dst = nullptr;
                if (out.is_none()) {
                    fresh = py::array_t<std::int64_t>(n);
                    dst = fresh.mutable_data();
                } else {
                    dst = writable_buffer<std::int64_t>(out, "out", {n}, "int64");
                }
                check_idle(self.busy, "this VectorEnv");
                {
                    py::gil_scoped_release nogil;
                    busy_guard g(self.busy, "this VectorEnv");
                    self.vec.sample_valid_actions(std::span<std::int64_t>(dst, static_cast<std::size_t>(n)));
                }
                return out.is_none() ? py::object(fresh) : py::reinterpret_borrow<py::object>(out);
            },
            py::arg("out") = py::none(),
            "For every env, a uniformly random valid action (DEFER included when valid) from env i's own random "
            "stream (seeded by reset(seed) with sampler_seed(seed, i)): deterministic, independent of num_threads. "
            "Written into out (int64, shape (num_envs,)) when given, else into a new array; returns it. Releases the GIL.")
        .def(
            "step_random",
            [](P& self, py::handle actions_out, py::handle obs_out) {
                const auto n = static_cast<py::ssize_t>(self.vec.num_envs());
                std::int64_t* acts = actions_out.is_none() ? nullptr
                                                           : writable_buffer<std::int64_t>(actions_out, "actions_out", {n}, "int64");
                float* obs = obs_out_ptr(self, obs_out);
                check_idle(self.busy, "this VectorEnv");
                py::gil_scoped_release nogil;
                busy_guard g(self.busy, "this VectorEnv");
                return self.vec.step_random(acts ? std::span<std::int64_t>(acts, static_cast<std::size_t>(n)) : std::span<std::int64_t>{},
                                            obs_span(self, obs));
            },
            py::arg("actions_out") = py::none(), py::arg("obs_out") = py::none(),
            "Steps every env with a uniformly random valid action, sampled in C++ env by env (the same streams as "
            "sample_valid_actions: step_random() equals step(sample_valid_actions())). actions_out: optional int64 "
            "array of shape (num_envs,) that receives the actions taken; obs_out as in step(). Returns the number of "
            "episodes that ended. Releases the GIL.")
        .def_property_readonly("num_envs", [](const P& p) { return p.vec.num_envs(); })
        .def_property_readonly("num_threads", [](const P& p) { return p.vec.num_threads(); })
        .def_property_readonly("observation_size", [](const P& p) { return p.vec.observation_size(); })
        .def_property_readonly("num_actions", [](const P& p) { return p.vec.num_actions(); })
        .def_property_readonly("num_gpus", [](const P& p) { return p.vec.env(0).num_gpus(); })
        .def_property_readonly("observation_layout", [](const P& p) { return layout_list(p.vec.env(0).observation_layout()); })
        .def_property_readonly(
            "observations",
            [](py::object self) {
                const auto& v = self.cast<const P&>().vec;
                return view(v.observations().data(),
                            {static_cast<py::ssize_t>(v.num_envs()), static_cast<py::ssize_t>(v.observation_size())}, self);
            },
            "(num_envs, observation_size) float32 view (row i = env i).")
        .def_property_readonly(
            "action_masks",
            [](py::object self) {
                const auto& v = self.cast<const P&>().vec;
                return view(v.action_masks().data(),
                            {static_cast<py::ssize_t>(v.num_envs()), static_cast<py::ssize_t>(v.num_actions())}, self);
            },
            "(num_envs, num_actions) uint8 view.")
        .def_property_readonly(
            "rewards",
            [](py::object self) {
                const auto& v = self.cast<const P&>().vec;
                return view(v.rewards().data(), {static_cast<py::ssize_t>(v.num_envs())}, self);
            },
            "(num_envs,) float64 view of the last step's rewards.")
        .def_property_readonly(
            "terminated",
            [](py::object self) {
                const auto& v = self.cast<const P&>().vec;
                return view(v.terminated().data(), {static_cast<py::ssize_t>(v.num_envs())}, self, "?");
            },
            "(num_envs,) bool view.")
        .def_property_readonly(
            "truncated",
            [](py::object self) {
                const auto& v = self.cast<const P&>().vec;
                return view(v.truncated().data(), {static_cast<py::ssize_t>(v.num_envs())}, self, "?");
            },
            "(num_envs,) bool view.")
        .def_property_readonly(
            "dones",
            [](py::object self) {
                const auto& v = self.cast<const P&>().vec;
                return view(v.dones().data(), {static_cast<py::ssize_t>(v.num_envs())}, self, "?");
            },
            "(num_envs,) bool view: terminated or truncated in the last step.")
        .def_property_readonly(
            "final_observations",
            [](py::object self) {
                const auto& v = self.cast<const P&>().vec;
                return view(v.final_observations().data(),
                            {static_cast<py::ssize_t>(v.num_envs()), static_cast<py::ssize_t>(v.observation_size())}, self);
            },
            "(num_envs, observation_size) float32 view: the last observation of an episode that ended in the last step.")
        .def("final_info", [](const P& p, py::ssize_t i) {
                 env_at(p, i);
                 const auto n = static_cast<py::ssize_t>(p.vec.num_envs());
                 return final_dict(p.vec.final(static_cast<std::size_t>(i < 0 ? i + n : i)));
             }, py::arg("i"),
             "Metrics, episode_return, length and seed of env i's last finished episode.")
        .def("episode", [](const P& p, py::ssize_t i) {
                 env_at(p, i);
                 const auto n = static_cast<py::ssize_t>(p.vec.num_envs());
                 return p.vec.episode(static_cast<std::size_t>(i < 0 ? i + n : i));
             }, py::arg("i"), "Index of env i's current episode (0, 1, ...).")
        .def("episode_return", [](const P& p, py::ssize_t i) { return env_at(p, i).episode_return(); }, py::arg("i"),
             "Return of env i's current episode so far.")
        .def("episode_length", [](const P& p, py::ssize_t i) { return env_at(p, i).steps(); }, py::arg("i"))
        .def("seed_of", [](const P& p, py::ssize_t i) { return env_at(p, i).seed(); }, py::arg("i"),
             "Seed of env i's current episode.")
        .def("info", [](const P& p, py::ssize_t i) { return info_dict(env_at(p, i)); }, py::arg("i"))
        .def("metrics", [](const P& p, py::ssize_t i) { return metrics_dict(env_at(p, i).episode_metrics()); }, py::arg("i"))
        .def("render_ansi", [](const P& p, py::ssize_t i) { return gp::render_ansi(env_at(p, i)); }, py::arg("i") = 0)
        .def("cluster_state", [](const P& p, py::ssize_t i) { return cluster_dict(env_at(p, i)); }, py::arg("i"))
        .def("current_job", [](const P& p, py::ssize_t i) { return current_job(env_at(p, i)); }, py::arg("i"))
        .def("topology", [](const P& p) { return topology_dict(p.vec.env(0).topology()); })
        .def("scenario", [](const P& p) { return to_py(gp::to_json(p.vec.env(0).config())); })
        .def("__repr__", [name](const P& p) {
            return std::string("<gpuplace.") + name + " " + std::to_string(p.vec.num_envs()) + " x " +
                   p.vec.env(0).config().name + ">";
        });
}

// ---- heuristics, reference runs, evaluation -----------------------------------------------------

/// A heuristic policy by name, usable on either env type.
struct PyHeuristic {
    std::string name;
    gp::any_policy<gp::env> p1;
    gp::any_policy<gp::tree_route_env> p2;
    std::function<std::int64_t(const gp::env&)> f1;
    std::function<std::int64_t(const gp::tree_route_env&)> f2;
    explicit PyHeuristic(const std::string& n) : name(n), p1(gp::heuristic<gp::env>(n)), p2(gp::heuristic<gp::tree_route_env>(n)) {
        reset(0);
    }
    void reset(std::uint64_t seed) {
        f1 = p1.make(seed);
        f2 = p2.make(seed);
    }
};

template <class E>
std::int64_t heuristic_act(PyHeuristic& h, const PyEnv<E>& p) {
    const auto& e = idle(p);
    if (e.done()) throw gp::StateError("Heuristic.act: the episode is over; reset the env");
    if (!e.has_current()) throw gp::StateError("Heuristic.act: no job is being placed; call reset() first");
    if constexpr (std::is_same_v<E, gp::env>) return h.f1(e);
    else return h.f2(e);
}

/// One episode run entirely in C++: by a heuristic (policy name) or by replaying `actions`.
template <class E>
py::dict run_episode_impl(const gp::scenario& sc, const std::string& policy, const std::vector<std::int64_t>* replay,
                          std::uint64_t seed, bool record) {
    E e(sc);
    std::vector<std::int64_t> actions;
    std::vector<double> rewards;
    std::vector<float> obs;
    std::vector<std::uint8_t> masks;
    std::string error;
    {
        py::gil_scoped_release nogil;
        std::function<std::int64_t(const E&)> act;
        if (!replay) act = gp::heuristic<E>(policy).make(seed);
        e.reset(seed);
        auto snap = [&] {
            if (!record) return;
            obs.insert(obs.end(), e.observation().begin(), e.observation().end());
            masks.insert(masks.end(), e.action_mask().begin(), e.action_mask().end());
        };
        snap();
        for (std::size_t t = 0; !e.done(); ++t) {
            std::int64_t a;
            if (replay) {
                if (t >= replay->size()) break;
                a = (*replay)[t];
            } else {
                a = act(e);
            }
            try {
                const auto r = e.step(a);
                rewards.push_back(r.reward);
            } catch (const gp::InvalidAction& ex) {
                throw gp::InvalidAction("run_episode: step " + std::to_string(t) + ": " + ex.what());
            }
            actions.push_back(a);
            snap();
        }
    }
    const auto T = static_cast<py::ssize_t>(actions.size());
    py::dict d;
    d["actions"] = copy_array(actions);
    d["rewards"] = copy_array(rewards);
    if (record) {
        py::array_t<float> o({T + 1, static_cast<py::ssize_t>(e.observation_size())});
        std::memcpy(o.mutable_data(), obs.data(), obs.size() * sizeof(float));
        py::array_t<std::uint8_t> mk({T + 1, static_cast<py::ssize_t>(e.num_actions())});
        std::memcpy(mk.mutable_data(), masks.data(), masks.size());
        d["observations"] = o;
        d["masks"] = mk;
    }
    d["terminated"] = e.terminated();
    d["truncated"] = e.truncated();
    d["episode_return"] = e.episode_return();
    d["steps"] = e.steps();
    d["metrics"] = metrics_dict(e.episode_metrics());
    d["jobs"] = finished_jobs(e);
    d["seed"] = seed;
    return d;
}

py::dict run_episode(py::object scenario, py::object policy, py::object seed, py::object actions, bool record) {
    const auto sc = to_scenario(scenario);
    const auto s = to_seed(seed);
    std::vector<std::int64_t> replay;
    const bool has_replay = !actions.is_none();
    std::string pol;
    if (has_replay) {
        if (!policy.is_none()) throw py::value_error("run_episode: pass either policy or actions, not both");
        if (py::isinstance<py::str>(actions) || !py::hasattr(actions, "__iter__"))
            throw py::type_error("run_episode: actions must be a sequence of integers, got " + type_name(actions));
        for (auto a : actions) replay.push_back(to_action(a));
    } else {
        if (policy.is_none()) throw py::value_error("run_episode: pass a policy name or an action sequence");
        pol = policy.cast<std::string>();
        (void)gp::heuristic<gp::env>(pol);  // unknown names fail here, before any work
    }
    const auto* rp = has_replay ? &replay : nullptr;
    if (comm_model_of(sc) == gp::TreeRouteCost::name) return run_episode_impl<gp::tree_route_env>(sc, pol, rp, s, record);
    return run_episode_impl<gp::env>(sc, pol, rp, s, record);
}

/// A number of held-out seeds: an integer in [1, 10^7]; ConfigError naming the value otherwise.
std::size_t seed_count(py::handle o) {
    if (py::isinstance<py::bool_>(o) || !PyIndex_Check(o.ptr()))
        throw gp::ConfigError("seeds: expected a number of held-out seeds or a list of seeds, got " + type_name(o) + " " +
                              py::repr(o).cast<std::string>());
    py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(o.ptr()));
    if (!v) throw py::error_already_set();
    const long long n = PyLong_AsLongLong(v.ptr());
    if (PyErr_Occurred() || n < 1 || n > 10'000'000) {
        PyErr_Clear();
        throw gp::ConfigError("seeds: " + py::str(v).cast<std::string>() + " is not a number of held-out seeds (1 to 10000000)");
    }
    return static_cast<std::size_t>(n);
}

std::vector<std::uint64_t> to_seeds(py::handle o) {
    if (PyIndex_Check(o.ptr()) && !py::isinstance<py::bool_>(o)) return gp::held_out_seeds(seed_count(o));
    if (py::isinstance<py::str>(o) || !py::hasattr(o, "__iter__"))
        throw py::type_error("seeds must be a count or a sequence of ints, got " + type_name(o));
    std::vector<std::uint64_t> v;
    for (auto s : o) v.push_back(to_seed(s));
    if (v.empty()) throw py::value_error("seeds: need at least one seed");
    return v;
}

/// A report's results for one policy; KeyError when it has none of that name.
const gp::policy_eval& report_policy(const gp::eval_report& r, const std::string& policy) {
    for (const auto& p : r.policies)
        if (p.policy == policy) return p;
    throw py::key_error("no policy \"" + policy + "\" in the report");
}

template <class E>
gp::eval_report evaluate_impl(const gp::scenario& sc, const std::vector<std::string>& names,
                              const std::vector<std::uint64_t>& seeds, std::size_t threads) {
    std::vector<gp::any_policy<E>> pols;
    for (const auto& n : names) pols.push_back(gp::heuristic<E>(n));
    py::gil_scoped_release nogil;
    return gp::evaluate<E>(sc, pols, seeds, threads);
}

gp::eval_report evaluate(py::object scenario, py::object policies, py::object seeds, std::size_t threads) {
    const auto sc = to_scenario(scenario);
    std::vector<std::string> names;
    if (policies.is_none()) names = gp::heuristic_names();
    else if (py::isinstance<py::str>(policies)) names = {policies.cast<std::string>()};
    else names = policies.cast<std::vector<std::string>>();
    const auto sd = to_seeds(seeds);
    if (comm_model_of(sc) == gp::TreeRouteCost::name) return evaluate_impl<gp::tree_route_env>(sc, names, sd, threads);
    return evaluate_impl<gp::env>(sc, names, sd, threads);
}

py::dict comm_cost(py::object gpus, py::object topology, py::object comm, py::object model) {
    auto to_json = [](py::handle o, const char* what) -> json {
        if (py::isinstance<py::str>(o)) {
            const auto s = o.cast<std::string>();
            if (!s.empty() && s.front() == '{') return gp::detail::parse_json(s, what);
            return json::object();
        }
        if (py::isinstance<py::dict>(o)) return py_to_json(o, "");
        throw py::type_error(std::string(what) + " must be a name, JSON text or a dict, got " + type_name(o));
    };
    json tj = to_json(topology, "topology");
    if (py::isinstance<py::str>(topology) && tj.empty()) tj = {{"preset", topology.cast<std::string>()}};
    json cj = to_json(comm, "comm");
    if (py::isinstance<py::str>(comm) && cj.empty()) cj = {{"model", comm.cast<std::string>()}};
    const auto topo = gp::topology_from_json(tj, "/topology");
    const auto zoo = gp::ModelZoo::builtin();
    const auto g = to_gpus(gpus, topo.num_gpus());
    const auto mid = to_model(model, zoo);
    std::string cm = "ring_allreduce";
    if (cj.contains("model") && cj["model"].is_string()) cm = cj["model"].get<std::string>();
    if (cm == gp::TreeRouteCost::name) return comm_dict(gp::comm_from_json<gp::TreeRouteCost>(cj, "/comm").evaluate(topo, zoo, mid, g));
    if (cm == gp::RingAllReduce::name) return comm_dict(gp::comm_from_json<gp::RingAllReduce>(cj, "/comm").evaluate(topo, zoo, mid, g));
    throw gp::ConfigError("config /comm/model: unknown model \"" + cm + "\" (allowed: ring_allreduce, tree_route)");
}

// ---- Teacher: a heuristic acting in every env of a VectorEnv, rolled out in C++ -------------------
// Behaviour cloning from Python (gpuplace.sb3.pretrain) needs the teacher's actions for batches of
// states. Teacher(name, num_envs, seed) holds one instance of the heuristic per env (seeded like
// the C++ PPO's teachers); rollout() steps the vector env `steps` times with the teacher's actions
// and records what it acted on, all in C++ with the GIL released (no Python per step). A teacher
// "<heuristic>+<queue>" (e.g. "pack+sjf") only makes sense in an env that runs under that queue
// policy (the queue policy is an env setting): a vector env whose scenario has another one is
// refused with a message naming both.

struct PyTeacher {
    std::string name, queue;
    std::size_t num_envs = 0;
    std::vector<std::function<std::int64_t(const gp::env&)>> f1;
    std::vector<std::function<std::int64_t(const gp::tree_route_env&)>> f2;
    std::atomic<bool> busy{false};

    PyTeacher(const std::string& n, std::size_t envs, std::uint64_t seed) : name(n), num_envs(envs) {
        if (envs < 1) throw gp::ConfigError("Teacher: num_envs must be >= 1, got 0");
        const auto p1 = gp::heuristic<gp::env>(n);  // ConfigError naming the known policies
        const auto p2 = gp::heuristic<gp::tree_route_env>(n);
        queue = p1.queue;
        for (std::size_t i = 0; i < envs; ++i) {
            const auto s = gp::detail::mix_seed(seed, 0x7465ULL + i);  // as rl::basic_ppo seeds its teachers
            f1.push_back(p1.make(s));
            f2.push_back(p2.make(s));
        }
    }

    template <class E>
    const std::function<std::int64_t(const E&)>& at(std::size_t i) const {
        if constexpr (std::is_same_v<E, gp::env>) return f1[i];
        else return f2[i];
    }

    /// Throws unless `vec` has num_envs envs and runs under the teacher's queue policy.
    template <class E>
    void check(const PyVec<E>& vec) const {
        if (vec.vec.num_envs() != num_envs)
            throw py::value_error("Teacher \"" + name + "\" was made for " + std::to_string(num_envs) + " envs, the vector env has " +
                                  std::to_string(vec.vec.num_envs()));
        if (queue.empty()) return;
        const auto& have = vec.vec.env(0).config();
        auto want = have;
        gp::apply_queue(want, queue);
        if (want.env.order != have.env.order || want.env.backfill != have.env.backfill) {
            auto desc = [](const gp::scenario& s) {
                return std::string("queue_policy ") + std::string(gp::to_string(s.env.order)) + ", backfill " +
                       (s.env.backfill ? "true" : "false");
            };
            throw gp::ConfigError("Teacher \"" + name + "\" runs under queue policy " + queue + " (" + desc(want) +
                                  "), but the vector env's scenario has " + desc(have) +
                                  ": imitate it in an env whose scenario has {\"env\": {\"queue_policy\": \"" +
                                  std::string(gp::to_string(want.env.order)) + "\", \"backfill\": " +
                                  (want.env.backfill ? "true" : "false") + "}}");
        }
    }
};

/// The teacher's action in every env's current state, into out (int64, shape (num_envs,)).
template <class E>
py::object teacher_act(PyTeacher& t, PyVec<E>& vec, py::handle out) {
    t.check(vec);
    const auto n = static_cast<py::ssize_t>(t.num_envs);
    py::array_t<std::int64_t> fresh;
    std::int64_t* dst = nullptr;
    if (out.is_none()) {
        fresh = py::array_t<std::int64_t>(n);
        dst = fresh.mutable_data();
    } else {
        dst = writable_buffer<std::int64_t>(out, "out", {n}, "int64");
    }
    check_idle(vec.busy, "this VectorEnv");
    {
        py::gil_scoped_release nogil;
        busy_guard g(t.busy, "this Teacher");
        busy_guard gv(vec.busy, "this VectorEnv");
        for (std::size_t i = 0; i < t.num_envs; ++i) dst[i] = t.at<E>(i)(vec.vec.env(i));
    }
    return out.is_none() ? py::object(fresh) : py::reinterpret_borrow<py::object>(out);
}

/// T steps of the teacher in every env: row t of each buffer receives the observations and masks
/// the teacher acted on, its actions, then the rewards and dones of that step. T is obs_out's first
/// dimension; rewards_out and dones_out may be None. Returns the number of episodes that ended.
template <class E>
std::size_t teacher_rollout(PyTeacher& t, PyVec<E>& vec, py::handle obs_out, py::handle masks_out, py::handle actions_out,
                            py::handle rewards_out, py::handle dones_out) {
    t.check(vec);
    if (!py::isinstance<py::array>(obs_out) || py::reinterpret_borrow<py::array>(obs_out).ndim() != 3)
        throw py::type_error("obs_out must be a float32 array of shape (steps, num_envs, observation_size), got " +
                             type_name(obs_out));
    const auto T = py::reinterpret_borrow<py::array>(obs_out).shape(0);
    const auto N = static_cast<py::ssize_t>(vec.vec.num_envs());
    const auto O = static_cast<py::ssize_t>(vec.vec.observation_size()), A = static_cast<py::ssize_t>(vec.vec.num_actions());
    float* obs = writable_buffer<float>(obs_out, "obs_out", {T, N, O}, "float32");
    auto* masks = writable_buffer<std::uint8_t>(masks_out, "masks_out", {T, N, A}, "uint8");
    auto* acts = writable_buffer<std::int64_t>(actions_out, "actions_out", {T, N}, "int64");
    double* rew = rewards_out.is_none() ? nullptr : writable_buffer<double>(rewards_out, "rewards_out", {T, N}, "float64");
    bool* dones = dones_out.is_none() ? nullptr : writable_buffer<bool>(dones_out, "dones_out", {T, N}, "bool");
    check_idle(vec.busy, "this VectorEnv");
    py::gil_scoped_release nogil;
    busy_guard g(t.busy, "this Teacher");
    busy_guard gv(vec.busy, "this VectorEnv");
    auto& v = vec.vec;
    const auto n = static_cast<std::size_t>(N), o = static_cast<std::size_t>(O), a = static_cast<std::size_t>(A);
    std::size_t ended = 0;
    for (std::size_t s = 0; s < static_cast<std::size_t>(T); ++s) {
        std::copy(v.observations().begin(), v.observations().end(), obs + s * n * o);
        std::copy(v.action_masks().begin(), v.action_masks().end(), masks + s * n * a);
        std::int64_t* row = acts + s * n;
        for (std::size_t i = 0; i < n; ++i) row[i] = t.at<E>(i)(v.env(i));
        ended += v.step(std::span<const std::int64_t>(row, n));
        if (rew) std::copy(v.rewards().begin(), v.rewards().end(), rew + s * n);
        if (dones) std::copy(v.dones().begin(), v.dones().end(), dones + s * n);
    }
    return ended;
}

void bind_teacher(py::module_& m) {
    py::class_<PyTeacher>(m, "Teacher",
                          "A heuristic (see heuristic_names(); \"<name>+<queue>\" for a queue policy) acting in every env of a "
                          "VectorEnv, for behaviour cloning.")
        .def(py::init([](const std::string& name, py::ssize_t num_envs, py::object seed) {
                 if (num_envs < 1) throw gp::ConfigError("Teacher: num_envs must be >= 1, got " + std::to_string(num_envs));
                 return std::make_unique<PyTeacher>(name, static_cast<std::size_t>(num_envs), to_seed(seed));
             }),
             py::arg("name"), py::arg("num_envs"), py::arg("seed") = 0,
             "One instance of the heuristic per env; env i's is seeded with mix_seed(seed, 0x7465 + i), like the C++ "
             "PPO's teachers.")
        .def_readonly("name", &PyTeacher::name)
        .def_readonly("queue", &PyTeacher::queue, "The queue policy the teacher runs under (\"\" = the env's own).")
        .def_readonly("num_envs", &PyTeacher::num_envs)
        .def("act", &teacher_act<gp::env>, py::arg("vector_env"), py::arg("out") = py::none())
        .def("act", &teacher_act<gp::tree_route_env>, py::arg("vector_env"), py::arg("out") = py::none(),
             "The teacher's action in every env's current state (int64, shape (num_envs,)), into out when given. "
             "Releases the GIL.")
        .def("rollout", &teacher_rollout<gp::env>, py::arg("vector_env"), py::arg("obs_out"), py::arg("masks_out"),
             py::arg("actions_out"), py::arg("rewards_out") = py::none(), py::arg("dones_out") = py::none())
        .def("rollout", &teacher_rollout<gp::tree_route_env>, py::arg("vector_env"), py::arg("obs_out"), py::arg("masks_out"),
             py::arg("actions_out"), py::arg("rewards_out") = py::none(), py::arg("dones_out") = py::none(),
             "Steps the vector env obs_out.shape[0] times with the teacher's actions. Row t of obs_out (float32, "
             "(steps, num_envs, observation_size)), masks_out (uint8, (steps, num_envs, num_actions)) and "
             "actions_out (int64, (steps, num_envs)) receives the state the teacher acted on and its actions; "
             "rewards_out (float64) and dones_out (bool), both (steps, num_envs), what followed. Every buffer is "
             "checked before anything moves. Returns the number of episodes that ended. Releases the GIL.");
}

#if defined(GPUPLACE_PY_HAVE_RL)
// ---- the C++ PPO ------------------------------------------------------------------------------

namespace rl = gp::rl;

py::dict stats_dict(const rl::ppo_stats& st) {
    py::dict d;
    d["iteration"] = st.iteration;
    d["env_steps"] = st.env_steps;
    d["episodes"] = st.episodes;
    d["window"] = st.window;
    d["mean_return"] = st.mean_return;
    d["mean_jct"] = st.mean_jct;
    d["mean_comm_cost"] = st.mean_comm_cost;
    d["policy_loss"] = st.policy_loss;
    d["value_loss"] = st.value_loss;
    d["entropy"] = st.entropy;
    d["approx_kl"] = st.approx_kl;
    d["clip_frac"] = st.clip_frac;
    d["explained_variance"] = st.explained_variance;
    d["grad_norm"] = st.grad_norm;
    d["learning_rate"] = st.learning_rate;
    d["imitation"] = st.imitation;
    d["teacher_agreement"] = st.teacher_agreement;
    d["defer_share"] = st.defer_share;
    d["rollout_seconds"] = st.rollout_seconds;
    d["update_seconds"] = st.update_seconds;
    return d;
}

json to_json_obj(py::handle o, const char* what) {
    if (o.is_none()) return json::object();
    if (py::isinstance<py::str>(o)) return gp::detail::parse_json(o.cast<std::string>(), what);
    if (py::isinstance<py::dict>(o)) return py_to_json(o, "");
    throw py::type_error(std::string(what) + " must be a dict or JSON text, got " + type_name(o));
}

/// The PPO trainer on either env type.
struct PyPPO {
    std::variant<std::unique_ptr<rl::basic_ppo<gp::env>>, std::unique_ptr<rl::basic_ppo<gp::tree_route_env>>> t;
    std::atomic<bool> busy{false};
    template <class F>
    decltype(auto) visit(F&& f) {
        return std::visit([&](auto& p) -> decltype(auto) { return f(*p); }, t);
    }
};

/// A trained network (from a checkpoint), acting greedily on either env type.
struct PyNetwork {
    std::shared_ptr<const rl::basic_actor_critic<float>> net;
    json scenario, ppo;
    std::string queue;  ///< the queue policy it acts under ("" = the scenario's)
};

template <class E>
std::int64_t network_act(PyNetwork& n, const PyEnv<E>& p) {
    const auto& e = idle(p);
    if (e.done()) throw gp::StateError("Network.act: the episode is over; reset the env");
    if (!e.has_current()) throw gp::StateError("Network.act: no job is being placed; call reset() first");
    rl::basic_network_policy<float> pol(n.net);
    return pol.act(e);
}

// ---- training runs that resume (rl/run.hpp) ------------------------------------------------------

/// A training run (gpuplace-train's) from Python: the GIL is released while it trains; `print` and
/// `on_iteration` are called with it held; Ctrl-C stops the run after the current iteration with every
/// state saved (the KeyboardInterrupt is raised once the run has returned).
py::dict train_run(py::object config, const std::string& out, bool resume, std::size_t parallel, py::object print,
                   py::object on_iteration) {
    auto j = gp::detail::parse_json(rl::default_run_config_json, "default training config");
    std::string base_dir;
    if (resume && config.is_none()) {  // the run's own config
        const auto run_file = out + "/run.json";
        std::ifstream in(run_file);
        if (!in) throw gp::CheckpointError("resume: " + out + " holds no run to resume (" + run_file + " does not exist)");
        std::stringstream ss;
        ss << in.rdbuf();
        const auto stored = gp::detail::parse_json(ss.str(), run_file);
        j = stored.value("config", json::object());
        base_dir = stored.value("base_dir", "");
    } else if (py::isinstance<py::str>(config) && config.cast<std::string>().find('{') == std::string::npos) {
        j = rl::run_recipe(config.cast<std::string>());  // a recipe by name
    } else if (!config.is_none()) {
        j.merge_patch(to_json_obj(config, "training config"));
    }
    const auto rc = rl::run_config::from_json(j, base_dir);
    rl::run_options o;
    o.out = out;
    o.resume = resume;
    o.parallel = parallel;
    std::atomic<bool> interrupted{false}, finished{false};
    std::exception_ptr err;
    if (!print.is_none())
        o.print = [&print](const std::string& line) {
            py::gil_scoped_acquire gil;
            print(line);
        };
    o.stop_requested = [&interrupted] { return interrupted.load(); };
    if (!on_iteration.is_none())
        o.hook = [&on_iteration](std::string_view event, std::size_t n) {
            if (event != "iteration") return;
            py::gil_scoped_acquire gil;
            on_iteration(n);
        };
    rl::run_result r;
    {
        // The run trains in a thread of its own while this (the main) thread watches for Ctrl-C:
        // Python runs signal handlers only in the main thread.
        py::gil_scoped_release nogil;
        std::mutex m;
        std::condition_variable cv;
        std::thread worker([&] {
            try {
                r = gp::visit_env(rc.eval_scenario(), [&](auto type) { return rl::train_run<typename decltype(type)::type>(rc, o); });
            } catch (...) {
                err = std::current_exception();
            }
            const std::lock_guard lock(m);
            finished = true;
            cv.notify_all();
        });
        std::unique_lock lock(m);
        while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return finished.load(); })) {
            lock.unlock();
            {
                py::gil_scoped_acquire gil;
                if (PyErr_CheckSignals() != 0) {  // a KeyboardInterrupt (or another handler's error) is pending
                    PyErr_Clear();
                    interrupted = true;
                }
            }
            lock.lock();
        }
        lock.unlock();
        worker.join();
    }
    if (PyErr_CheckSignals() != 0) {  // a Ctrl-C that came as the run ended
        PyErr_Clear();
        interrupted = true;
    }
    if (err) std::rethrow_exception(err);
    if (interrupted) {
        const auto msg = r.complete ? "training stopped after the run had finished; its checkpoint is " + out + "/ppo.json"
                                    : "training stopped; every state is saved: resume with out=\"" + out + "\", resume=True";
        PyErr_SetString(PyExc_KeyboardInterrupt, msg.c_str());
        throw py::error_already_set();
    }
    py::dict d;
    d["complete"] = r.complete;
    d["kept"] = r.complete ? py::object(py::int_(r.restarts[r.kept].seed)) : py::none();
    d["checkpoint"] = r.complete ? py::object(py::str(out + "/ppo.json")) : py::none();
    d["seconds"] = r.seconds;
    d["env_steps"] = r.env_steps;
    py::list rs;
    for (const auto& x : r.restarts) {
        py::dict e;
        e["seed"] = x.seed;
        e["finished"] = x.finished;
        e["best_val_jct"] = x.best_val;
        e["env_steps"] = x.env_steps;
        e["seconds"] = x.seconds;
        rs.append(e);
    }
    d["restarts"] = rs;
    return d;
}

void bind_training_run(py::module_& m) {
    m.def("train_run", &train_run, py::arg("config") = py::none(), py::arg("out") = "runs/cpp_ppo", py::arg("resume") = false,
          py::arg("parallel") = std::size_t{1}, py::arg("print") = py::none(), py::arg("on_iteration") = py::none(),
          "Runs gpuplace-train's training run (include/gpuplace/rl/run.hpp): config (dict or JSON) merged over the default "
          "training config; with resume and no config, the run in `out` continues from its saved states.");
    m.def("run_recipe", [](const std::string& n) { return to_py(rl::run_recipe(n)); }, py::arg("name"),
          "A training recipe's config by name (run_recipe_names()).");
    m.def("run_recipe_names", &rl::run_recipe_names, "Names of the training recipes (default, philly, proximity_drl).");
    m.def("default_run_config", [] { return to_py(gp::detail::parse_json(rl::default_run_config_json, "default training config")); },
          "The default training config (gpuplace-train --print-config).");
}

void bind_ppo(py::module_& m) {
    py::class_<PyPPO>(m, "PPO", "The reference C++ PPO (Eigen) on a vector env of the scenario.")
        .def(py::init([](py::object scenario, py::object config) {
                 const auto sc = to_scenario(scenario);
                 const auto cfg = rl::ppo_config::from_json(to_json_obj(config, "ppo config"), "/ppo");
                 auto p = std::make_unique<PyPPO>();
                 py::gil_scoped_release nogil;
                 if (comm_model_of(sc) == gp::TreeRouteCost::name)
                     p->t = std::make_unique<rl::basic_ppo<gp::tree_route_env>>(sc, cfg);
                 else
                     p->t = std::make_unique<rl::basic_ppo<gp::env>>(sc, cfg);
                 return p;
             }),
             py::arg("scenario"), py::arg("config") = py::none(),
             "config: PPO hyperparameters (dict or JSON; unknown keys are ConfigErrors naming the path).")
        .def("iterate", [](PyPPO& self) {
                 rl::ppo_stats st;
                 {
                     py::gil_scoped_release nogil;
                     busy_guard g(self.busy, "this PPO");
                     st = self.visit([](auto& p) { return p.iterate(); });
                 }
                 return stats_dict(st);
             }, "One iteration (rollout + update) with the GIL released; returns its statistics.")
        .def_property_readonly("done", [](PyPPO& s) { return s.visit([](auto& p) { return p.done(); }); })
        .def_property_readonly("iterations", [](PyPPO& s) { return s.visit([](auto& p) { return p.iterations(); }); })
        .def_property_readonly("total_iterations", [](PyPPO& s) { return s.visit([](auto& p) { return p.total_iterations(); }); })
        .def_property_readonly("env_steps", [](PyPPO& s) { return s.visit([](auto& p) { return p.env_steps(); }); })
        .def("config", [](PyPPO& s) { return to_py(s.visit([](auto& p) { return p.config().to_json(); })); })
        .def("save", [](PyPPO& s, const std::string& file) {
                 check_idle(s.busy, "this PPO");
                 s.visit([&](auto& p) { rl::save_checkpoint(file, p.network(), p.config(), p.scenario_config()); });
             }, py::arg("path"), "Writes a JSON checkpoint.");

    py::class_<PyNetwork>(m, "Network", "A trained actor-critic loaded from a checkpoint; acts greedily under the mask.")
        .def_property_readonly("scenario", [](const PyNetwork& n) { return to_py(n.scenario); })
        .def_property_readonly("ppo_config", [](const PyNetwork& n) { return to_py(n.ppo); })
        .def_property_readonly("queue", [](const PyNetwork& n) { return n.queue; },
                               "The queue policy the network acts under (\"\" = the scenario's).")
        .def("act", &network_act<gp::env>, py::arg("env"))
        .def("act", &network_act<gp::tree_route_env>, py::arg("env"));

    m.def("keep_freed_memory", &rl::keep_freed_memory, py::arg("keep_bytes") = std::size_t{512} << 20,
          "Makes the C library keep freed memory for reuse (process-wide; glibc only, else returns False). Training "
          "the per_gpu network allocates matrices whose sizes change every minibatch; by default glibc returns them to "
          "the system and faults them in again. `python -m gpuplace train` calls it.");
    m.def("pin_cache_sizes", [] { rl::pin_cache_sizes(); },
          "Makes Eigen block the networks' products for fixed cache sizes (include/gpuplace/rl/blocking.hpp; process-wide), "
          "so that training gives the same numbers on every CPU that runs this core. `python -m gpuplace train` calls it.");

    m.def("model_names", &rl::model_names, "Names of the reference policies shipped with gpuplace (data/models/).");
    m.def("model_path", &rl::model_path, py::arg("name"),
          "The checkpoint file a name means: a reference policy's file in the data folder, else the name as a path.");
    m.def("load_checkpoint", [](const std::string& file) {
              auto ck = rl::load_checkpoint<float>(file);
              PyNetwork n;
              n.scenario = ck.scenario;
              n.ppo = ck.ppo.to_json();
              n.queue = ck.queue;
              n.net = std::make_shared<const rl::basic_actor_critic<float>>(std::move(ck.network));
              return n;
          }, py::arg("path"), "Loads a PPO checkpoint (CheckpointError when truncated, corrupted or of another version).");

    m.def("evaluate_network", [](py::object scenario, const PyNetwork& n, py::object seeds, const std::string& name,
                                 std::size_t threads) {
              const auto sc = to_scenario(scenario);
              const auto sd = to_seeds(seeds);
              py::gil_scoped_release nogil;
              return gp::visit_env(sc, [&](auto type) {
                  using E = typename decltype(type)::type;
                  auto p = rl::as_policy<E>(name, n.net);
                  p.queue = n.queue;  // under its own queue policy, as in training
                  return gp::evaluate<E>(sc, {std::move(p)}, sd, threads);
              });
          }, py::arg("scenario"), py::arg("network"), py::arg("seeds") = 20, py::arg("name") = "ppo", py::arg("threads") = 1,
          "Runs a loaded network through the C++ harness; returns an EvalReport.");

    bind_training_run(m);
}
#endif

}  // namespace

PYBIND11_MODULE(GPUPLACE_PY_MODULE, m) {
    m.doc() = "gpuplace C++ core: environments, vector environments, heuristics and the evaluation harness.";
    m.attr("__version__") = GPUPLACE_PY_VERSION;
    m.attr("core_version") = gp::version_string;
    m.attr("variant") = GPUPLACE_PY_VARIANT;
    register_exceptions(m);

    bind_env<gp::env>(m, "Env", "The environment with the ring all-reduce communication model (comm.model = ring_allreduce).");
    bind_env<gp::tree_route_env>(m, "TreeRouteEnv",
                                 "The environment with Proximity-DRL's route cost (comm.model = tree_route).");
    bind_vector_env<gp::env>(m, "VectorEnv", "N Env copies stepped in one call (comm.model = ring_allreduce).");
    bind_vector_env<gp::tree_route_env>(m, "TreeRouteVectorEnv", "N TreeRouteEnv copies stepped in one call.");

    m.def("comm_model_of", [](py::object s) { return comm_model_of(to_scenario(s)); }, py::arg("scenario"),
          "The scenario's communication model name (ring_allreduce or tree_route); validates the scenario.");
    m.def("normalize_scenario", [](py::object s, const std::string& base_dir) {
              auto sc = to_scenario(s);
              sc.resolve_paths(base_dir);
              return to_py(gp::to_json(sc));
          }, py::arg("scenario"), py::arg("base_dir") = "",
          "Parses and validates a scenario; returns it with every option filled in. With base_dir (a scenario file's "
          "folder), relative file paths in it become paths under that folder.");
    m.def("set_data_dir", &gp::set_data_dir, py::arg("path"),
          "Sets the folder \"$GPUPLACE_DATA/...\" paths name (the package sets it to the data it ships).");
    m.def("data_dir", &gp::data_dir, "The folder \"$GPUPLACE_DATA/...\" paths name.");
    m.def("resolve_data_path", [](const std::string& p) { return gp::resolve_data_path(p); }, py::arg("path"),
          "The file a path names (\"$GPUPLACE_DATA/x\" in data_dir()).");
    m.def("preset_names", &gp::preset_names, "Names of the preset scenarios (\"philly:<file>\" is one too).");
    m.def("is_preset_name", [](const std::string& n) { return gp::is_preset_name(n); }, py::arg("name"),
          "Whether a name is a preset scenario (preset_names(), or \"philly:<file>\").");
    m.def("philly_training_files", &gp::philly_training_files, "The Philly-derived trace files policies are trained on.");
    m.def("philly_heldout_files", &gp::philly_heldout_files, "The Philly-derived trace files held out from training.");
    m.def("preset_scenario", [](const std::string& n) { return to_py(gp::to_json(gp::preset_scenario(n))); }, py::arg("name"),
          "A named preset scenario (default, proximity_drl) as a dict.");
    m.def("episode_seed", &gp::episode_seed, py::arg("seed"), py::arg("index"), py::arg("episode"),
          "Seed of episode `episode` of env `index` in a vector env reset with `seed`.");
    m.def("sampler_seed", &gp::sampler_seed, py::arg("seed"), py::arg("index"),
          "Seed of env `index`'s action sampler (sample_valid_actions, step_random) in a vector env reset with `seed`.");
    m.def("heuristic_names", &gp::heuristic_names, "Names of the heuristic policies.");
    m.def("eval_metric_names", &gp::eval_metric_names, "Metrics of the harness table, in order.");
    m.def("held_out_seeds", [](py::object n) { return gp::held_out_seeds(seed_count(n)); }, py::arg("n"),
          "The held-out evaluation seeds 1000000 + i, i < n.");

    py::class_<PyHeuristic>(m, "Heuristic", "A heuristic policy by name (see heuristic_names()).")
        .def(py::init<const std::string&>(), py::arg("name"))
        .def_readonly("name", &PyHeuristic::name)
        .def("reset", [](PyHeuristic& h, py::object seed) { h.reset(to_seed(seed)); }, py::arg("seed") = 0,
             "Starts an episode (seeds the random policy).")
        .def("act", &heuristic_act<gp::env>, py::arg("env"), "The policy's action in env's current state.")
        .def("act", &heuristic_act<gp::tree_route_env>, py::arg("env"));

    m.def("run_episode", &run_episode, py::arg("scenario"), py::arg("policy") = py::none(), py::arg("seed") = 0,
          py::arg("actions") = py::none(), py::arg("record") = true,
          "Runs one episode entirely in C++ (the reference for Python runs): with a heuristic by name, or by "
          "replaying an action sequence (stops when it runs out or the episode ends). Returns actions, rewards, "
          "observations and masks (T + 1 rows, when record), terminated, truncated, episode_return, steps, "
          "metrics and the finished jobs.");

    py::class_<gp::eval_report>(m, "EvalReport", "Results of evaluate(): per policy, metrics on every seed.")
        .def(py::init([](std::string scenario, py::object seeds) {
                 gp::eval_report r;
                 r.scenario = std::move(scenario);
                 r.seeds = to_seeds(seeds);
                 return r;
             }),
             py::arg("scenario"), py::arg("seeds"))
        .def_readonly("scenario", &gp::eval_report::scenario)
        .def_readonly("seeds", &gp::eval_report::seeds)
        .def_property_readonly("policies", [](const gp::eval_report& r) {
            std::vector<std::string> v;
            for (const auto& p : r.policies) v.push_back(p.policy);
            return v;
        })
        .def("table", &gp::eval_report::table, "The harness table (mean +- standard error, times in hours).")
        .def("csv", &gp::eval_report::csv)
        .def("to_json", [](const gp::eval_report& r) { return to_py(gp::to_json(r)); })
        .def("summary", [](const gp::eval_report& r, const std::string& policy, const std::string& metric) {
                 const auto s = report_policy(r, policy).get(metric);
                 return py::make_tuple(s.mean, s.sem);
             }, py::arg("policy"), py::arg("metric"), "(mean, standard error) of a metric.")
        .def("per_seed", [](const gp::eval_report& r, const std::string& policy) {
                 py::list l;
                 for (const auto& x : report_policy(r, policy).per_seed) l.append(metrics_dict(x));
                 return l;
             }, py::arg("policy"))
        .def("paired", [](const gp::eval_report& r, const std::string& policy, const std::string& metric) {
                 (void)report_policy(r, policy);  // KeyError, like summary()
                 py::list l;
                 for (const auto& ps : r.paired(policy, metric))
                     l.append(py::dict(py::arg("other") = ps.other, py::arg("mean") = ps.diff.mean,
                                       py::arg("sem") = ps.diff.sem, py::arg("lower") = ps.lower,
                                       py::arg("seeds") = ps.seeds));
                 return l;
             }, py::arg("policy"), py::arg("metric") = "avg_jct",
             "`policy` against every other policy on the same seeds: per other policy, the mean and standard "
             "error of the per-seed difference (policy minus other; seconds for times) and on how many seeds "
             "`policy` is lower.")
        .def("paired_table", [](const gp::eval_report& r, const std::string& policy, const std::string& metric) {
                 (void)report_policy(r, policy);
                 return r.paired_table(policy, metric);
             }, py::arg("policy"), py::arg("metric") = "avg_jct", "paired() as text (times in hours).")
        .def("returns", [](const gp::eval_report& r, const std::string& policy) {
                 return report_policy(r, policy).returns;
             }, py::arg("policy"))
        .def("add", [](gp::eval_report& r, const std::string& name, py::list metrics, std::vector<double> returns) {
                 if (static_cast<std::size_t>(py::len(metrics)) != r.seeds.size() || returns.size() != r.seeds.size())
                     throw py::value_error("EvalReport.add: need one metrics dict and one return per seed (" +
                                           std::to_string(r.seeds.size()) + "), got " + std::to_string(py::len(metrics)) +
                                           " and " + std::to_string(returns.size()));
                 for (const auto& p : r.policies)
                     if (p.policy == name) throw py::value_error("EvalReport.add: policy \"" + name + "\" is already in the report");
                 gp::policy_eval pe;
                 pe.policy = name;
                 for (auto x : metrics) pe.per_seed.push_back(metrics_from_dict(x));
                 pe.returns = std::move(returns);
                 r.policies.push_back(std::move(pe));
             }, py::arg("policy"), py::arg("metrics"), py::arg("returns"),
             "Adds a policy evaluated elsewhere (e.g. a Python agent) on the report's seeds, in seed order.");

    m.def("evaluate", &evaluate, py::arg("scenario"), py::arg("policies") = py::none(), py::arg("seeds") = 20,
          py::arg("threads") = 1,
          "Runs heuristics (names; default all) on seeds (a count of held-out seeds or a list) in C++ with the GIL "
          "released; returns an EvalReport.");
    m.def("comm_cost", &comm_cost, py::arg("gpus"), py::arg("topology") = "proximity_drl", py::arg("comm") = "tree_route",
          py::arg("model") = 0,
          "Communication cost and slowdown of a job of `model` (index or name in the built-in zoo) on `gpus` of a "
          "topology (preset name, JSON text or dict) under a comm model (name, JSON text or dict).");

    bind_teacher(m);

#if defined(GPUPLACE_PY_HAVE_RL)
    m.attr("has_ppo") = true;
    bind_ppo(m);
#else
    m.attr("has_ppo") = false;
#endif
}
