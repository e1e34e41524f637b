// gpuplace._core.register_policy: a Python policy registered by name (gpuplace/registry.hpp's
// register_policy): heuristic(), evaluate(), Heuristic, run_episode, the rollout planners
// ("rollout:<name>") and the benchmark then take it by name, under a queue policy too.
//
// The C++ side calls the policy with the GIL held, once per decision, on a copy of the env (an Env
// object of its own: the policy may keep it, read it and fork it). Python objects are owned through
// shared pointers that take the GIL to drop them, so the harness's threads may copy and drop the
// act functions freely. An exception raised by the policy becomes a gpuplace.Error naming the policy.

#include <memory>
#include <string>

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

}  // namespace

void bind_registry(py::module_& m) {
    m.def("register_policy", &register_policy, py::arg("name"), py::arg("about"), py::arg("factory"),
          "Registers a Python policy by name (gpuplace.register_policy is the decorator): factory(seed) returns "
          "act(env) -> action for one episode. heuristic names, evaluate(), Heuristic, the rollout planners "
          "(\"rollout:<name>\") and the benchmark then take the name, under a queue policy too (\"<name>+sjf\"). "
          "Registering a name again replaces its factory; a built-in or C++ name is a ConfigError.");
}

}  // namespace gpuplace_py
