// gpuplace._core.register_policy: a Python policy registered by name (gpuplace/registry.hpp's
// register_policy): heuristic(), evaluate(), Heuristic, run_episode, the rollout planners
// ("rollout:<name>") and the benchmark then take it by name, under a queue policy too.
//
// The C++ side calls the policy with the GIL held, once per decision, on a copy of the env (an Env
// object of its own: the policy may keep it, read it and fork it). Python objects are owned through
// shared pointers that take the GIL to drop them, so the harness's threads may copy and drop the
// act functions freely. An exception raised by the policy becomes a gpuplace.Error naming the policy.
// gpuplace._core.register_discipline: a preemptive discipline's key written in Python
// (discipline_registry.hpp), called with the GIL taken in the callback alone.

#include <memory>
#include <string>
#include <vector>

#include <gpuplace/discipline_registry.hpp>
#include <gpuplace/registry.hpp>

#include "bindings.hpp"
#include "objects.hpp"

namespace gpuplace_py {

namespace {

/// A Python object C++ threads may copy and drop: its last owner drops it holding the GIL. The
/// registry keeps its factories until the program's static objects go, after the interpreter has
/// finalised (and freed every object): those are let go without touching Python.
using shared_py = std::shared_ptr<py::object>;
shared_py share(py::object o) {
    return shared_py(new py::object(std::move(o)), [](py::object* p) {
        if (!Py_IsInitialized()) {
            (void)p->release();
            delete p;
            return;
        }
        py::gil_scoped_acquire gil;
        delete p;
    });
}

/// Runs f with the GIL held; a Python exception becomes a gp::Error naming the policy and the call.
template <class F>
auto call_python(const std::string& name, const char* what, F&& f) {
    py::gil_scoped_acquire gil;
    try {
        return f();
    } catch (py::error_already_set& e) {
        throw gp::Error("policy \"" + name + "\" (registered from Python): " + what + " raised " + e.what());
    }
}

void register_policy(const std::string& name, const std::string& about, py::object factory) {
    if (!PyCallable_Check(factory.ptr()))
        throw gp::ConfigError("register_policy(\"" + name + "\"): the factory must be callable (seed -> act(env)), got " +
                              std::string(py::repr(factory)));
    auto f = share(std::move(factory));
    gp::register_policy<gp::env>(name, about, [f, name](std::uint64_t seed) {
        auto act = call_python(name, "its factory", [&] {
            py::object a = (*f)(seed);
            if (!PyCallable_Check(a.ptr()))
                throw gp::ConfigError("policy \"" + name + "\" (registered from Python): its factory returned " +
                                      std::string(py::repr(a)) + ", not a callable act(env)");
            return share(std::move(a));
        });
        return std::function<std::int64_t(const gp::env&)>([act, name](const gp::env& e) {
            return call_python(name, "act(env)", [&] {
                py::object env = py::cast(std::make_unique<PyEnv<gp::env>>(gp::env(e)));
                py::object a = (*act)(env);
                try {
                    return to_action(a);
                } catch (const std::exception& x) {
                    throw gp::Error("policy \"" + name + "\" (registered from Python): act(env) returned " + std::string(py::repr(a)) +
                                    ", not an action (" + x.what() + ")");
                }
            });
        });
    });
}

/// A Python key's result as a priority: a number, or a tuple or list of 1 to 3 numbers.
gp::discipline_priority to_priority(const std::string& name, const py::handle& r) {
    const auto fail = [&] {
        return gp::Error("discipline \"" + name + "\" (registered from Python): key(view, job) returned " + std::string(py::repr(r)) +
                         ", not a number or a tuple of 1 to 3 numbers");
    };
    const auto number = [&](const py::handle& h) {
        if (!PyNumber_Check(h.ptr()) || PyUnicode_Check(h.ptr())) throw fail();
        const double d = PyFloat_AsDouble(h.ptr());
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            throw fail();
        }
        return d;
    };
    if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
        const auto seq = py::reinterpret_borrow<py::sequence>(r);
        if (seq.size() < 1 || seq.size() > 3) throw fail();
        double v[3] = {0, 0, 0};
        for (std::size_t i = 0; i < seq.size(); ++i) v[i] = number(seq[i]);
        return {v[0], v[1], v[2]};
    }
    return gp::discipline_priority(number(r));
}

void register_discipline(const std::string& name, const std::string& about, py::object key) {
    if (!PyCallable_Check(key.ptr()))
        throw gp::ConfigError("register_discipline(\"" + name + "\"): the key must be callable (view, job) -> priority, got " +
                              std::string(py::repr(key)));
    auto k = share(std::move(key));
    gp::register_discipline(name, about, [k, name](const gp::discipline_view& v, const gp::discipline_job& j) {
        py::gil_scoped_acquire gil;
        try {
            return to_priority(name, (*k)(v, j));
        } catch (py::error_already_set& e) {
            throw gp::Error("discipline \"" + name + "\" (registered from Python): key(view, job) raised " + e.what());
        }
    });
}

}  // namespace

void bind_registry(py::module_& m) {
    py::class_<gp::discipline_view>(m, "DisciplineView", "What a registered discipline's key sees of a decision (discipline_registry.hpp).")
        .def_readonly("now", &gp::discipline_view::now, "the time, s")
        .def_readonly("num_gpus", &gp::discipline_view::num_gpus, "the cluster's GPUs")
        .def_readonly("active", &gp::discipline_view::active, "waiting and running jobs at this decision")
        .def_property_readonly("job_fields", [](const gp::discipline_view& v) {
            py::list out;
            for (const auto& f : v.job_fields) out.append(f.name);
            return out;
        }, "the declared job fields' names, in the order of DisciplineJob.fields")
        .def("field", [](const gp::discipline_view& v, const std::string& n) -> py::object {
            const auto i = v.field(n);
            return i == gp::discipline_view::npos ? py::object(py::none()) : py::object(py::int_(i));
        }, py::arg("name"), "the index of a declared field in DisciplineJob.fields, or None");
    py::class_<gp::discipline_job>(m, "DisciplineJob", "One active job as a registered discipline's key sees it.")
        .def_readonly("index", &gp::discipline_job::index, "the job's index in the episode (submit order)")
        .def_readonly("submit_time", &gp::discipline_job::submit_time, "s")
        .def_readonly("gpus", &gp::discipline_job::gpus, "GPUs it requests")
        .def_readonly("attained", &gp::discipline_job::attained, "GPU-seconds of service attained")
        .def_readonly("shown_duration", &gp::discipline_job::shown_duration, "the duration the scheduler is shown (0 when hidden)")
        .def_readonly("running", &gp::discipline_job::running, "whether it holds GPUs now")
        .def_readonly("preemptions", &gp::discipline_job::preemptions, "times it was suspended")
        .def_property_readonly("fields", [](const gp::discipline_job& j) {
            return py::tuple(py::cast(std::vector<double>(j.fields.begin(), j.fields.end())));
        }, "its declared job fields (NaN where missing; a category by index)");
    m.def("register_discipline", &register_discipline, py::arg("name"), py::arg("about"), py::arg("key"),
          "Registers a preemptive queue discipline by name (gpuplace.register_discipline is the decorator): key(view, job) "
          "returns the job's priority, a number or a tuple of up to 3, lower first. The name is then a queue policy like "
          "\"las\": a scenario's env.queue_policy, \"<placer>+<name>\". A built-in or registered name is a ConfigError.");
    m.def("unregister_discipline", [](const std::string& name) { return gp::unregister_discipline(name); }, py::arg("name"),
          "Removes a registered discipline; returns whether there was one (envs built with it keep it).");
    m.def("register_policy", &register_policy, py::arg("name"), py::arg("about"), py::arg("factory"),
          "Registers a Python policy by name (gpuplace.register_policy is the decorator): factory(seed) returns "
          "act(env) -> action for one episode. heuristic names, evaluate(), Heuristic, the rollout planners "
          "(\"rollout:<name>\") and the benchmark then take the name, under a queue policy too (\"<name>+sjf\"). "
          "Registering a name again replaces its factory; a built-in or C++ name is a ConfigError.");
}

}  // namespace gpuplace_py
