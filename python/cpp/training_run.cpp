// gpuplace._core.train_run: gpuplace-train's training run (src/training_run/, compiled into the
// module by python/CMakeLists.txt) from Python, with the recipes and the default training config.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include <gpuplace/env.hpp>
#include <gpuplace/json/parse.hpp>
#include <gpuplace/rl/rl.hpp>

#include "training_run.hpp"

#include "bindings.hpp"
#include "conversions.hpp"

namespace gpuplace_py {

namespace rl = gp::rl;

namespace {

/// A training run (gpuplace-train's) from Python: the GIL is released while it trains; `print` and
/// `on_iteration` are called with it held; Ctrl-C stops the run after the current iteration with every
/// state saved (the KeyboardInterrupt is raised once the run has returned).
py::dict train_run(py::object config, const std::string& out, bool resume, std::size_t parallel, py::object print,
                   py::object on_iteration) {
    auto j = rl::default_run_config();
    std::string base_dir;
    if (resume && config.is_none()) {  // the run's own config
        // gpuplace-train's reader: a regular file of at most max_input_bytes, checked to be a run file
        // this build resumes (a FIFO, a device or a folder in its place is refused by name)
        const auto stored = rl::read_run_file(out);
        j = stored.value("config", json::object());
        base_dir = stored.value("base_dir", "");
    } else if (py::isinstance<py::str>(config) && config.cast<std::string>().find('{') == std::string::npos) {
        j = rl::run_recipe(config.cast<std::string>());  // a recipe by name
    } else if (!config.is_none()) {
        j.merge_patch(to_json_obj(config, "training config"));
    }
    const auto rc = rl::run_config::from_json(j, base_dir);
    // a trace shorter than the episodes asked of it replays whole: say so with the real count, as gpuplace-train does
    for (const auto& ts : rc.train_scenarios())
        if (ts.workload.kind == "trace" && ts.workload.episode_jobs > 0)
            if (const auto why = gp::env(ts).short_episodes(); !why.empty())
                py::module_::import("warnings").attr("warn")("scenario " + ts.name + ": " + why, py::module_::import("builtins").attr("UserWarning"));
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
        o.on_event = [&on_iteration](std::string_view event, std::size_t n) {
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
                r = rl::train_run(rc, o);
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

}  // namespace

void bind_training_run(py::module_& m) {
    m.def("train_run", &train_run, py::arg("config") = py::none(), py::arg("out") = "runs/cpp_ppo", py::arg("resume") = false,
          py::arg("parallel") = std::size_t{1}, py::arg("print") = py::none(), py::arg("on_iteration") = py::none(),
          "Runs gpuplace-train's training run (src/training_run/): config (dict or JSON) merged over the default "
          "training config; with resume and no config, the run in `out` continues from its saved states.");
    m.def("run_recipe", [](const std::string& n) { return to_py(rl::run_recipe(n)); }, py::arg("name"),
          "A training recipe's config by name (run_recipe_names()).");
    m.def("run_recipe_names", &rl::run_recipe_names, "Names of the training recipes (data/recipes/*.json, embedded), in name order.");
    m.def("default_run_config", [] { return to_py(rl::default_run_config()); },
          "The default training config (gpuplace-train --print-config).");
}

}  // namespace gpuplace_py
