// gpuplace._core: conversions between Python values and the C++ core's (conversions.hpp), and the
// exception classes C++ errors map to: InvalidAction -> gpuplace.InvalidAction (a ValueError),
// ConfigError -> gpuplace.ConfigError (a ValueError), other gpuplace errors -> gpuplace.Error (a
// RuntimeError) and its subclasses.

#include "conversions.hpp"

#include <cstdio>
#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

#include "bindings.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace gpuplace_py {

// ---- exceptions ---------------------------------------------------------------------------------

namespace {


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

}  // namespace

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
    if (py::isinstance<gp::scenario>(o)) return o.cast<const gp::scenario&>();
    if (py::isinstance<py::str>(o)) return gp::read_scenario(o.cast<std::string>());  // the one rule: scenario_source.hpp
    if (py::hasattr(o, "__fspath__")) {  // a path object names a file, whatever its name
        const auto path = py::module_::import("os").attr("fspath")(o);
        if (!py::isinstance<py::str>(path)) throw py::type_error("scenario path must be text, got " + type_name(path));
        return gp::load_scenario(gp::resolve_data_path(path.cast<std::string>()));
    }
    if (py::isinstance<py::dict>(o)) return gp::scenario_from_json(py_to_json(o, ""));
    throw py::type_error("scenario must be a preset name, a file path, JSON text, a dict or a gpuplace.Scenario, got " +
                         type_name(o));
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

// ---- metrics, layouts, GPUs and models ---------------------------------------------------------

py::dict metrics_dict(const gp::metrics& m) { return to_py(gp::to_json(m)).cast<py::dict>(); }

namespace {

/// Fields that only some versions of the core's metrics have (co-location adds them).
template <class M, class F>
void read_optional_metrics(M& m, F&& opt) {
    if constexpr (requires { m.sm_utilization; }) opt("sm_utilization", m.sm_utilization);
    if constexpr (requires { m.memory_utilization; }) opt("memory_utilization", m.memory_utilization);
    if constexpr (requires { m.avg_interference; }) opt("avg_interference", m.avg_interference);
}

}  // namespace

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
    opt("p99_queueing_delay", m.p99_queueing_delay);
    opt("avg_preemptions", m.avg_preemptions);
    opt("lost_gpu_hours", m.lost_gpu_hours);
    opt("avg_fairness", m.avg_fairness);
    opt("max_fairness", m.max_fairness);
    read_optional_metrics(m, opt);
    if (d.contains("avg_moves")) {  // an episode in rounds (docs/rounds.md)
        m.rounds = true;
        opt("avg_moves", m.avg_moves);
        opt("avg_resizes", m.avg_resizes);
        opt("avg_suspended_time", m.avg_suspended_time);
        opt("gpu_time_efficiency", m.gpu_time_efficiency);
    }
    if (d.contains("goodput")) {  // an episode with hardware failures (docs/realities.md)
        m.failures = true;
        opt("goodput", m.goodput);
        opt("wasted_gpu_hours", m.wasted_gpu_hours);
        opt("avg_interruptions", m.avg_interruptions);
        opt("hardware_failures", m.hardware_failures);
        opt("avg_jct_completed", m.avg_jct_completed);
    }
    if (d.contains("jobs_done")) m.jobs_done = d["jobs_done"].cast<std::size_t>();
    if (d.contains("jobs_total")) m.jobs_total = d["jobs_total"].cast<std::size_t>();
    auto& g = m.groups;  // tenants, spot, deadlines (group_metrics.hpp), as to_json(metrics) writes them
    if (d.contains("tenants")) {
        g.tenants = true;
        auto t = py::reinterpret_borrow<py::dict>(d["tenants"]);
        const auto fill = [&](const char* k, auto& arr) {
            if (!t.contains(k)) return;
            const auto v = t[k].cast<std::vector<double>>();
            g.num_tenants = std::max(g.num_tenants, v.size());
            for (std::size_t i = 0; i < std::min(v.size(), arr.size()); ++i) arr[i] = static_cast<std::remove_reference_t<decltype(arr[i])>>(v[i]);
        };
        fill("jobs", g.tenant_jobs);
        fill("avg_jct", g.tenant_jct);
        fill("avg_slowdown", g.tenant_slowdown);
        fill("below_guarantee", g.tenant_below);
        opt("jain_index", g.jain_index);
        opt("worst_tenant_rho", g.worst_tenant_rho);
        opt("below_guarantee_hours", g.below_guarantee_hours);
    }
    if (d.contains("spot_jct")) {
        g.spot = true;
        opt("guaranteed_jct", g.guaranteed_jct);
        opt("spot_jct", g.spot_jct);
        opt("guaranteed_queueing_delay", g.guaranteed_delay);
        opt("spot_queueing_delay", g.spot_delay);
        opt("spot_evictions", g.spot_evictions);
        if (d.contains("spot_jobs")) g.spot_jobs = d["spot_jobs"].cast<std::size_t>();
    }
    if (d.contains("deadlines_met")) {
        g.deadlines = true;
        opt("deadlines_met", g.deadlines_met);
        opt("avg_lateness", g.avg_lateness);
        if (d.contains("not_admitted")) g.not_admitted = d["not_admitted"].cast<std::size_t>();
    }
    return m;
}

std::string shape_text(const std::vector<py::ssize_t>& shape) {
    std::string t = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) t += (k ? ", " : "") + std::to_string(shape[k]);
    return t + (shape.size() == 1 ? ",)" : ")");
}

py::list layout_list(const std::vector<gp::obs_segment>& layout) {
    py::list l;
    for (const auto& s : layout) {
        py::dict d;
        d["name"] = s.name;
        d["offset"] = s.offset;
        d["size"] = s.size;
        d["fields"] = s.fields;
        d["item"] = s.item;
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

std::size_t to_count(py::handle o, const std::string& what, std::size_t lo, std::size_t hi) {
    const auto range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (py::isinstance<py::bool_>(o) || !PyIndex_Check(o.ptr()))
        throw gp::ConfigError(what + ": expected a whole number in " + range + ", got " + type_name(o) + " " +
                              py::repr(o).cast<std::string>());
    py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(o.ptr()));
    if (!v) throw py::error_already_set();
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow || n < 0 || static_cast<unsigned long long>(n) < lo || static_cast<unsigned long long>(n) > hi)
        throw gp::ConfigError(what + " " + py::str(v).cast<std::string>() + " out of range " + range);
    return static_cast<std::size_t>(n);
}

std::uint64_t physical_memory() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
#endif
    return 0;
}

std::string bytes_text(double bytes) {
    static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 6) {
        bytes /= 1024.0;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
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


json to_json_obj(py::handle o, const char* what) {
    if (o.is_none()) return json::object();
    if (py::isinstance<py::str>(o)) return gp::parse_json(o.cast<std::string>(), what);
    if (py::isinstance<py::dict>(o)) return py_to_json(o, "");
    throw py::type_error(std::string(what) + " must be a dict or JSON text, got " + type_name(o));
}

}  // namespace gpuplace_py
