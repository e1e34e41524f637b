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
// gpuplace._core.register_workload_kind: a workload kind whose jobs a Python function makes
// (json/workload_registry.hpp), called with the GIL taken once per episode, at reset.
// gpuplace._core.register_reward_term: a reward term written in Python (reward_registry.hpp),
// called with the GIL taken once per finished job of a scenario that weighs it.
// gpuplace._core.register_trace_format: a trace reader written in Python (trace_registry.hpp),
// called with the GIL taken once per file, when an env is built.
// gpuplace._core.register_observation_feature: a job's feature written in Python
// (feature_registry.hpp), called with the GIL taken once per job, when its episode is drawn.
// gpuplace._core.register_comm_model: a communication model written in Python (comm_registry.hpp),
// called with the GIL taken at each job start (and candidate priced).

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <algorithm>
#include <cmath>
#include <istream>
#include <iterator>

#include <gpuplace/comm_registry.hpp>
#include <gpuplace/discipline_registry.hpp>
#include <gpuplace/feature_registry.hpp>
#include <gpuplace/json/presets.hpp>
#include <gpuplace/json/topology.hpp>
#include <gpuplace/json/workload_registry.hpp>
#include <gpuplace/registry.hpp>
#include <gpuplace/reward_registry.hpp>
#include <gpuplace/trace_registry.hpp>

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

/// Runs f with the GIL held; a Python exception becomes a gp::Error naming `who` (what was
/// registered, e.g. `policy "x"`) and the call.
template <class F>
auto call_python(const std::string& who, const char* what, F&& f) {
    py::gil_scoped_acquire gil;
    try {
        return f();
    } catch (py::error_already_set& e) {
        throw gp::Error(who + " (registered from Python): " + what + " raised " + e.what());
    }
}

void register_policy(const std::string& name, const std::string& about, py::object factory) {
    if (!PyCallable_Check(factory.ptr()))
        throw gp::ConfigError("register_policy(\"" + name + "\"): the factory must be callable (seed -> act(env)), got " +
                              std::string(py::repr(factory)));
    auto f = share(std::move(factory));
    gp::register_policy<gp::env>(name, about, [f, who = "policy \"" + name + "\""](std::uint64_t seed) {
        auto act = call_python(who, "its factory", [&] {
            py::object a = (*f)(seed);
            if (!PyCallable_Check(a.ptr()))
                throw gp::ConfigError(who + " (registered from Python): its factory returned " + std::string(py::repr(a)) +
                                      ", not a callable act(env)");
            return share(std::move(a));
        });
        return std::function<std::int64_t(const gp::env&)>([act, who](const gp::env& e) {
            return call_python(who, "act(env)", [&] {
                py::object env = py::cast(std::make_unique<PyEnv<gp::env>>(gp::env(e)));
                py::object a = (*act)(env);
                try {
                    return to_action(a);
                } catch (const std::exception& x) {
                    throw gp::Error(who + " (registered from Python): act(env) returned " + std::string(py::repr(a)) + ", not an action (" +
                                    x.what() + ")");
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

/// One job from its mapping (submit_time, num_gpus, model, work or duration, gpu_fraction, and the
/// names of `fields`, declared job fields a trace reader may give); ConfigError naming the job and
/// the key otherwise.
gp::TrainingJob job_from_dict(const gp::ModelZoo& zoo, const py::handle& h, const std::string& where,
                              const std::vector<gp::job_field>& fields = {}) {
    if (!py::isinstance<py::dict>(h)) throw gp::ConfigError(where + ": " + std::string(py::repr(h)) + " is not a dict");
    const auto d = py::reinterpret_borrow<py::dict>(h);
    for (const auto& kv : d) {
        const auto k = py::str(kv.first).cast<std::string>();
        if (k != "submit_time" && k != "num_gpus" && k != "model" && k != "work" && k != "duration" && k != "gpu_fraction" &&
            std::none_of(fields.begin(), fields.end(), [&](const gp::job_field& f) { return f.name == k; })) {
            std::string declared;
            for (const auto& f : fields) declared += ", " + f.name;
            throw gp::ConfigError(where + ": unknown key \"" + k + "\" (allowed: submit_time, num_gpus, model, work or duration, gpu_fraction" +
                                  declared + ")");
        }
    }
    const auto number = [&](const char* key, double lo) {
        if (!d.contains(key)) throw gp::ConfigError(where + ": missing \"" + key + "\"");
        const py::handle v = d[key];
        if (!PyNumber_Check(v.ptr()) || PyBool_Check(v.ptr()))
            throw gp::ConfigError(where + ": " + key + " " + std::string(py::repr(v)) + " is not a number");
        const double x = py::cast<double>(v);
        if (!std::isfinite(x) || x < lo)
            throw gp::ConfigError(where + ": " + key + " " + std::string(py::repr(v)) + " (expected a finite number >= " +
                                  std::string(py::repr(py::float_(lo))) + ")");
        return x;
    };
    gp::TrainingJob j;
    j.submit_time = number("submit_time", 0.0);
    const double g = number("num_gpus", 1.0);
    if (g != std::floor(g) || g > 1e6)
        throw gp::ConfigError(where + ": num_gpus " + std::string(py::repr(d["num_gpus"])) + " is not a whole number of GPUs");
    j.num_gpus = std::uint32_t(g);
    if (!d.contains("model")) throw gp::ConfigError(where + ": missing \"model\" (a zoo model's name or id)");
    const py::handle m = d["model"];
    if (py::isinstance<py::str>(m)) {
        try {
            j.model = zoo.find(m.cast<std::string>());
        } catch (const gp::ConfigError& e) {
            throw gp::ConfigError(where + ": " + e.what());
        }
    } else if (py::isinstance<py::int_>(m) && !PyBool_Check(m.ptr())) {
        const auto id = m.cast<long long>();
        if (id < 0 || std::size_t(id) >= zoo.size())
            throw gp::ConfigError(where + ": model id " + std::to_string(id) + " is not in the zoo (" + std::to_string(zoo.size()) + " models)");
        j.model = gp::model_id(id);
    } else {
        throw gp::ConfigError(where + ": model " + std::string(py::repr(m)) + " is not a zoo model's name or id");
    }
    const bool work = d.contains("work"), dur = d.contains("duration");
    if (work == dur) throw gp::ConfigError(where + ": give \"work\" (training steps) or \"duration\" (seconds), exactly one");
    if (work) {
        j.work = number("work", 0.0);
    } else {
        j.work = number("duration", 0.0) * zoo[j.model].at(j.num_gpus).consolidated;  // (interpolated between measured counts)
    }
    if (!(j.work > 0)) throw gp::ConfigError(where + ": a job needs work > 0");
    if (d.contains("gpu_fraction")) {
        j.gpu_fraction = number("gpu_fraction", 0.0);
        if (!(j.gpu_fraction > 0 && j.gpu_fraction <= 1)) throw gp::ConfigError(where + ": gpu_fraction must be in (0, 1]");
    }
    return j;
}

/// The jobs of a workload kind registered from Python: generate(options, num_gpus, seed) returns
/// the episode's jobs, each a mapping with submit_time (s), num_gpus, model (a zoo name or id),
/// and work (training steps) or duration (seconds at the model's measured rate on its GPUs), and
/// optionally gpu_fraction.
class python_workload final : public gp::workload_generator {
public:
    python_workload(std::string name, shared_py generate, shared_py options)
        : name_(std::move(name)), gen_(std::move(generate)), options_(std::move(options)) {}

    void generate(const gp::ModelZoo& zoo, std::size_t cluster_gpus, std::uint64_t seed, std::vector<gp::TrainingJob>& out) const override {
        py::gil_scoped_acquire gil;
        const std::string who = "workload kind \"" + name_ + "\" (registered from Python): ";
        py::object r;
        try {
            r = (*gen_)(*options_, cluster_gpus, seed);
        } catch (py::error_already_set& e) {
            throw gp::Error(who + "generate(options, num_gpus, seed) raised " + e.what());
        }
        if (!py::isinstance<py::sequence>(r) || py::isinstance<py::str>(r))
            throw gp::ConfigError(who + "generate() returned " + std::string(py::repr(r)) + ", not a list of jobs");
        const auto jobs = py::reinterpret_borrow<py::sequence>(r);
        for (std::size_t i = 0; i < jobs.size(); ++i) out.push_back(job_from_dict(zoo, jobs[i], who + "job " + std::to_string(i)));
    }

private:
    std::string name_;
    shared_py gen_, options_;
};

/// A trace format whose rows a Python function reads: read(text, source, fields) returns the jobs,
/// dicts as a workload kind's, each with the declared fields it gives (a number, or a category's
/// name); the library then applies the trace options as for a built-in format.
void register_trace_format(const std::string& name, const std::string& about, py::object read) {
    if (!PyCallable_Check(read.ptr()))
        throw gp::ConfigError("register_trace_format(\"" + name + "\"): read must be callable (text, source, fields) -> jobs, got " +
                              std::string(py::repr(read)));
    auto r = share(std::move(read));
    gp::register_trace_format(name, about, [r, name](std::istream& in, const std::string& source, const gp::ModelZoo& zoo,
                                                     const gp::trace_options& o) {
        const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        py::gil_scoped_acquire gil;
        const std::string who = "trace format \"" + name + "\" (registered from Python), " + source + ": ";
        py::list names;
        for (const auto& f : o.fields) names.append(f.name);
        py::object rows;
        try {
            rows = (*r)(text, source, names);
        } catch (py::error_already_set& e) {
            throw gp::Error(who + "read(text, source, fields) raised " + e.what());
        }
        if (!py::isinstance<py::sequence>(rows) || py::isinstance<py::str>(rows))
            throw gp::TraceError(who + "read() returned " + std::string(py::repr(rows)) + ", not a list of jobs");
        gp::trace t;
        t.categories.resize(o.fields.size());
        const auto jobs = py::reinterpret_borrow<py::sequence>(rows);
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const std::string where = who + "job " + std::to_string(i);
            try {
                t.jobs.push_back(job_from_dict(zoo, jobs[i], where, o.fields));
            } catch (const gp::ConfigError& e) {
                throw gp::TraceError(e.what());
            }
            const auto d = py::reinterpret_borrow<py::dict>(jobs[i]);
            for (std::size_t f = 0; f < o.fields.size(); ++f) {
                const auto& field = o.fields[f];
                double v = std::nan("");
                if (d.contains(field.name.c_str())) {
                    const py::handle x = d[field.name.c_str()];
                    if (field.type == gp::field_type::category) {
                        if (!py::isinstance<py::str>(x))
                            throw gp::TraceError(where + ": " + field.name + " " + std::string(py::repr(x)) + " is not a category's name");
                        auto& cats = t.categories[f];
                        const auto c = x.cast<std::string>();
                        const auto at = std::find(cats.begin(), cats.end(), c);
                        v = double(at - cats.begin());
                        if (at == cats.end()) cats.push_back(c);
                    } else {
                        if (!PyNumber_Check(x.ptr()) || PyBool_Check(x.ptr()) || !std::isfinite(py::cast<double>(x)))
                            throw gp::TraceError(where + ": " + field.name + " " + std::string(py::repr(x)) + " is not a finite number");
                        v = py::cast<double>(x);
                    }
                }
                t.field_values.push_back(v);
            }
        }
        t.rows = t.jobs.size();
        return t;
    });
}

void register_workload_kind(const std::string& name, const std::string& about, py::object generate) {
    if (!PyCallable_Check(generate.ptr()))
        throw gp::ConfigError("register_workload_kind(\"" + name + "\"): generate must be callable (options, num_gpus, seed) -> jobs, got " +
                              std::string(py::repr(generate)));
    auto g = share(std::move(generate));
    gp::register_workload_kind(name, about, [g, name](const gp::json& j, const std::string&) -> std::shared_ptr<const gp::workload_generator> {
        py::gil_scoped_acquire gil;
        return std::make_shared<python_workload>(name, g, share(to_py(j)));
    });
}

/// A finished job's record as a reward term of Python sees it: a dict of its numbers.
py::dict record_dict(const gp::job_record& r) {
    py::dict d;
    d["id"] = r.id;
    d["model"] = r.model;
    d["num_gpus"] = r.num_gpus;
    d["submit"] = r.submit;
    d["start"] = r.start;
    d["end"] = r.end;
    d["ideal_duration"] = r.ideal_duration;
    d["comm_cost"] = r.comm_cost;
    d["slowdown"] = r.slowdown;
    d["preemptions"] = r.preemptions;
    d["run_time"] = r.run_time;
    d["lost_gpu_time"] = r.lost_gpu_time;
    d["checkpoint_gpu_time"] = r.checkpoint_gpu_time;
    d["interruptions"] = r.interruptions;
    return d;
}

/// What a Python function registered as `who` (e.g. `reward term "x"`) returned from `call`, as a
/// number: gp::Error naming both unless it is one (and finite, or NaN where `nan_ok`).
double number_of(const std::string& who, const char* call, const py::object& x, bool nan_ok = false) {
    if (!PyNumber_Check(x.ptr()) || PyBool_Check(x.ptr()))
        throw gp::Error(who + " (registered from Python): " + call + " returned " + std::string(py::repr(x)) + ", not a number");
    const double d = py::cast<double>(x);
    if (!std::isfinite(d) && !(nan_ok && std::isnan(d)))
        throw gp::Error(who + " (registered from Python): " + call + " returned " + std::string(py::repr(x)) + ", not a finite number" +
                        (nan_ok ? " (NaN marks a missing one)" : ""));
    return d;
}

void register_reward_term(const std::string& name, const std::string& about, py::object term) {
    if (!PyCallable_Check(term.ptr()))
        throw gp::ConfigError("register_reward_term(\"" + name + "\"): the term must be callable (job, view) -> number, got " +
                              std::string(py::repr(term)));
    auto t = share(std::move(term));
    gp::register_reward_term(name, about, [t, who = "reward term \"" + name + "\""](const gp::job_record& r, const gp::reward_term_view& v) {
        py::gil_scoped_acquire gil;  // held until x is dropped
        const py::object x = call_python(who, "term(job, view)", [&] {
            py::dict view;
            view["num_gpus"] = v.num_gpus;
            view["time_scale"] = v.time_scale;
            view["now"] = v.now;
            return (*t)(record_dict(r), view);
        });
        return number_of(who, "term(job, view)", x);
    });
}

void register_observation_feature(const std::string& name, const std::string& about, py::object feature, double lo, double hi) {
    if (!PyCallable_Check(feature.ptr()))
        throw gp::ConfigError("register_observation_feature(\"" + name + "\"): the feature must be callable (job) -> number, got " +
                              std::string(py::repr(feature)));
    auto f = share(std::move(feature));
    gp::register_observation_feature(name, about, [f, who = "observation feature \"" + name + "\""](const gp::job_feature_view& j) {
        py::gil_scoped_acquire gil;  // held until x is dropped
        const py::object x = call_python(who, "feature(job)", [&] {
            py::dict d, fields;
            d["submit_time"] = j.job.submit_time;
            d["num_gpus"] = j.job.num_gpus;
            d["model"] = std::string(j.model);
            d["work"] = j.job.work;
            d["gpu_fraction"] = j.job.gpu_fraction;
            for (std::size_t k = 0; k < j.declared.size() && k < j.fields.size(); ++k) fields[py::str(j.declared[k].name)] = j.fields[k];
            d["fields"] = fields;
            return (*f)(d);
        });
        return number_of(who, "feature(job)", x, true);
    }, lo, hi);
}

/// A communication model written in Python (gpuplace.register_comm_model): slowdown(model, gpus,
/// view) prices a placement against the ring all-reduce's ideal step time (the unit of a job's
/// work); the cost bounds are its costs on the first k GPUs (compact) and on k GPUs spread evenly
/// over the cluster. Called with the GIL taken from the env's noexcept pricing: an error is kept
/// (neutral values meanwhile) and raised by the env's next start or reset (take_error()).
class python_comm_model final : public gp::comm_model_interface {
public:
    python_comm_model(std::string name, shared_py fn) : name_(std::move(name)), who_("comm model \"" + name_ + "\""), fn_(std::move(fn)) {}
    std::string_view name() const noexcept override { return name_; }
    double ideal_step_time(const gp::TreeTopology& t, const gp::ModelZoo& z, gp::model_id m, std::uint32_t k) const noexcept override {
        return gp::RingAllReduce{}.ideal_step_time(t, z, m, k);
    }
    gp::comm_result evaluate(const gp::TreeTopology& t, const gp::ModelZoo& z, gp::model_id m, std::span<const gp::gpu_id> gpus) const noexcept override {
        try {
            return call(t, z, m, gpus);
        } catch (const std::exception& e) {
            keep(e.what());
        } catch (...) {
            keep(who_ + " (registered from Python): an unknown error");
        }
        return {};
    }
    gp::cost_bounds bounds(const gp::TreeTopology& t, const gp::ModelZoo& z, gp::model_id m, std::uint32_t k) const noexcept override {
        const auto G = static_cast<std::uint32_t>(t.num_gpus());
        k = std::min(k, G);
        std::vector<gp::gpu_id> compact(k), spread(k);
        for (std::uint32_t i = 0; i < k; ++i) {
            compact[i] = i;
            spread[i] = static_cast<gp::gpu_id>(std::uint64_t(i) * G / std::max<std::uint32_t>(k, 1));
        }
        const double best = evaluate(t, z, m, compact).cost, worst = evaluate(t, z, m, spread).cost;
        return {best, std::max(best, worst)};
    }
    std::string take_error() const override {
        std::lock_guard lock(mu_);
        return std::exchange(error_, {});
    }

private:
    gp::comm_result call(const gp::TreeTopology& t, const gp::ModelZoo& z, gp::model_id m, std::span<const gp::gpu_id> gpus) const {
        const char* what = "slowdown(model, gpus, view)";
        py::gil_scoped_acquire gil;  // held until x is dropped
        const py::object x = call_python(who_, what, [&] {
            const auto& h = t.hierarchy();
            const std::size_t L = h.num_levels();
            py::list levels, domains, ids;
            for (auto g : gpus) ids.append(g);
            for (std::size_t l = 1; l <= L; ++l) {
                levels.append(h.level(l).name);
                std::size_t n = 0, last = ~std::size_t{0};
                for (auto g : gpus)  // sorted, and every domain a range of GPU ids
                    if (const std::size_t d = h.domain_of(l, g); d != last) ++n, last = d;
                domains.append(n);
            }
            py::dict view;
            view["num_gpus"] = t.num_gpus();
            view["levels"] = levels;
            view["domains"] = domains;
            view["link"] = gpus.empty() ? std::size_t{0} : h.link(gpus.front(), gpus.back());
            return (*fn_)(z[m].name, ids, view);
        });
        double cost = 0, slowdown = 1;
        if (py::isinstance<py::tuple>(x) && py::len(x) == 2) {
            cost = number_of(who_, what, x[py::int_(0)]);
            slowdown = number_of(who_, what, x[py::int_(1)]);
        } else {
            slowdown = number_of(who_, what, x);
            cost = slowdown - 1;
        }
        if (!(slowdown >= 1))
            throw gp::Error(who_ + " (registered from Python): " + what + " returned a slowdown of " + std::to_string(slowdown) + ", below 1");
        return {cost, slowdown};
    }
    void keep(std::string e) const {
        std::lock_guard lock(mu_);
        if (error_.empty()) error_ = std::move(e);
    }

    std::string name_, who_;  ///< its name; `comm model "<name>"` for its errors
    shared_py fn_;
    mutable std::mutex mu_;
    mutable std::string error_;
};

void register_comm_model(const std::string& name, const std::string& about, py::object slowdown) {
    if (!PyCallable_Check(slowdown.ptr()))
        throw gp::ConfigError("register_comm_model(\"" + name + "\"): expected a function slowdown(model, gpus, view), got " +
                              std::string(py::repr(slowdown)));
    auto f = share(std::move(slowdown));
    gp::register_comm_model(name, about, [f, name](const gp::comm_config&, std::string_view) -> std::shared_ptr<const gp::comm_model_interface> {
        return std::make_shared<const python_comm_model>(name, f);
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
    m.def("register_workload_kind", &register_workload_kind, py::arg("name"), py::arg("about"), py::arg("generate"),
          "Registers a workload kind by name (gpuplace.register_workload_kind is the decorator): generate(options, num_gpus, "
          "seed) returns an episode's jobs, each a dict with submit_time (s), num_gpus, model (a zoo name or id), work "
          "(steps) or duration (s at the model's measured rate), and optionally gpu_fraction. The name is then a "
          "scenario's workload kind; its other keys are the options. A built-in or registered name is a ConfigError.");
    m.def("unregister_workload_kind", [](const std::string& name) { return gp::unregister_workload_kind(name); }, py::arg("name"),
          "Removes a registered workload kind; returns whether there was one (scenarios read before keep it).");
    m.def("register_trace_format", &register_trace_format, py::arg("name"), py::arg("about"), py::arg("read"),
          "Registers a trace format by name (gpuplace.register_trace_format is the decorator): read(text, source, fields) "
          "returns the file's jobs, each a dict as a workload kind's, with the declared fields it gives (a number, or a "
          "category's name). The name is then a trace workload's format; the trace options apply as for a built-in one. "
          "A built-in or registered name is a ConfigError.");
    m.def("unregister_trace_format", [](const std::string& name) { return gp::unregister_trace_format(name); }, py::arg("name"),
          "Removes a registered trace format; returns whether there was one.");
    m.def("register_reward_term", &register_reward_term, py::arg("name"), py::arg("about"), py::arg("term"),
          "Registers a reward term by name (gpuplace.register_reward_term is the decorator): term(job, view) returns a "
          "finished job's value (job: a dict of its record; view: num_gpus, time_scale, now). A scenario weighs it in "
          "\"reward\" like a built-in term: + weight x term(job) for each job that finishes. A built-in or registered "
          "name is a ConfigError.");
    m.def("unregister_reward_term", [](const std::string& name) { return gp::unregister_reward_term(name); }, py::arg("name"),
          "Removes a registered reward term; returns whether there was one (envs built with it keep it).");
    m.def("register_observation_feature", &register_observation_feature, py::arg("name"), py::arg("about"), py::arg("feature"),
          py::arg("lo") = 0.0, py::arg("hi") = 1.0,
          "Registers an observation feature by name (gpuplace.register_observation_feature is the decorator): feature(job) "
          "returns a job's value (job: a dict with submit_time, num_gpus, model, work, gpu_fraction and fields), computed for "
          "every job when its episode is drawn. A scenario declares it as a job field (\"job_fields\": [name]): observed in "
          "[lo, hi]. A known field's or registered name is a ConfigError.");
    m.def("unregister_observation_feature", [](const std::string& name) { return gp::unregister_observation_feature(name); }, py::arg("name"),
          "Removes a registered observation feature; returns whether there was one (envs built with it keep it).");
    m.def("register_comm_model", &register_comm_model, py::arg("name"), py::arg("about"), py::arg("slowdown"),
          "Registers a communication model by name (gpuplace.register_comm_model is the decorator): slowdown(model, gpus, view) "
          "returns a placement's slowdown (>= 1) or (cost, slowdown). A scenario's {\"comm\": {\"model\": name}} then takes it. "
          "A built-in or registered name is a ConfigError.");
    m.def("unregister_comm_model", [](const std::string& name) { return gp::unregister_comm_model(name); }, py::arg("name"),
          "Removes a registered communication model; returns whether there was one (envs built with it keep it).");
    m.def("register_scenario", [](const std::string& name, const std::string& about, py::object scenario) {
              gp::register_scenario(name, about, gp::to_json(to_scenario(scenario)));
          }, py::arg("name"), py::arg("about"), py::arg("scenario"),
          "Registers a scenario by name (a preset name, JSON text, a file, a dict or a Scenario, read now): the name is "
          "then a scenario wherever a preset's is, and info --list shows it. A preset's or registered name is a ConfigError.");
    m.def("unregister_scenario", [](const std::string& name) { return gp::unregister_scenario(name); }, py::arg("name"),
          "Removes a registered scenario; returns whether there was one.");
    m.def("register_topology", [](const std::string& name, const std::string& entry) { return gp::register_topology(name, entry); },
          py::arg("name"), py::arg("entry"),
          "Registers a topology preset by name (gpuplace.register_topology): entry is JSON text of the catalogue's form, "
          "{\"levels\": [...], \"about\": ..., \"parameters\": {\"key\": \"<level>\"}}. A scenario's {\"topology\": {\"preset\": name}} "
          "then takes it. A built-in or registered name is a ConfigError.");
    m.def("unregister_topology", [](const std::string& name) { return gp::unregister_topology(name); }, py::arg("name"),
          "Removes a registered topology preset; returns whether there was one.");
    m.def("register_policy", &register_policy, py::arg("name"), py::arg("about"), py::arg("factory"),
          "Registers a Python policy by name (gpuplace.register_policy is the decorator): factory(seed) returns "
          "act(env) -> action for one episode. heuristic names, evaluate(), Heuristic, the rollout planners "
          "(\"rollout:<name>\") and the benchmark then take the name, under a queue policy too (\"<name>+sjf\"). "
          "Registering a name again replaces its factory; a built-in or C++ name is a ConfigError.");
}

}  // namespace gpuplace_py
