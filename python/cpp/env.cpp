// gpuplace._core.Env: one environment (any scenario; its comm model is a run-time value).
// The observation and the mask are read-only numpy views on the C++ buffers (no copy; each view keeps
// its owner alive); reset and step release the GIL.

#include <memory>
#include <string>
#include <vector>

#include <gpuplace/idle_waiting.hpp>

#include "bindings.hpp"
#include "objects.hpp"

namespace gpuplace_py {

namespace {

template <class E>
void bind_env(py::module_& m, const char* name, const char* doc) {
    using P = PyEnv<E>;
    py::class_<P>(m, name, doc)
        .def(py::init([](py::object s) { return std::make_unique<P>(to_scenario(s)); }), py::arg("scenario"),
             "Builds the environment from a scenario (JSON text or dict). Raises ConfigError on any bad value, "
             "naming its JSON path.")
        .def_property_readonly("comm_model", [](const P& p) { return std::string(p.env.comm().name()); },
                               "The scenario's comm model: ring_allreduce or tree_route.")
        .def(
            "fork",
            [](const P& self, py::object seed) {
                const auto s = to_seed(seed);
                const auto& e = idle(self);
                py::gil_scoped_release nogil;
                return std::make_unique<P>(e.fork(s));
            },
            py::arg("seed"),
            "A forked future (causal): a new Env that keeps the present (time, running jobs, queue, the current job "
            "and its picks) and redraws with `seed` what the scheduler cannot know: the arrivals to come and, with "
            "durations hidden, the durations of the jobs present. A planner scores its actions on forks "
            "(docs/planning.md).")
        .def(
            "copy", [](const P& self) { return std::make_unique<P>(E(idle(self))); },
            "A copy that keeps the true future too (hindsight: NOT causal; a planner that reads it knows the arrivals "
            "and durations to come).")
        .def("__copy__", [](const P& self) { return std::make_unique<P>(E(idle(self))); })
        .def("__deepcopy__", [](const P& self, py::dict) { return std::make_unique<P>(E(idle(self))); }, py::arg("memo"))
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
        .def_property_readonly("short_episodes", [](const P& p) { return p.env.short_episodes(); },
                               "Why the episodes are shorter than the scenario asks (a trace with fewer jobs than "
                               "episode_jobs: the real count), or \"\".")
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
             "Occupancy: holders, end_times, node_free, rack_free, domain_free (per level name: free GPUs per domain), "
             "free_gpus, busy_gpus, picked, time.")
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
             }, "Rack index of every GPU (the domain of level 2; 0 when level 2 is the root).")
        .def("domains", [](const P& p) { return domains_array(p.env.topology().hierarchy()); },
             "Per GPU, its domain on every domain level: an int64 array (num_gpus, levels - 1), level 1 (e.g. the "
             "node) first; topology()[\"hierarchy\"] names the levels.")
        .def("domain_of", [](const P& p, py::object level) {
                 const auto& h = p.env.topology().hierarchy();
                 std::vector<std::int64_t> v(h.num_gpus());
                 const auto l = level_index(h, level);
                 for (std::size_t g = 0; g < v.size(); ++g) v[g] = h.domain_of(l, static_cast<gp::gpu_id>(g));
                 return copy_array(v);
             }, py::arg("level"), "Per GPU, its domain on `level` (1 .. levels - 1, or the level's name, e.g. \"node\").")
        .def("job_fields", [](const P& p) {
                 py::list l;
                 const auto& fs = p.env.job_fields();
                 for (std::size_t f = 0; f < fs.size(); ++f) {
                     py::dict d;
                     d["name"] = fs[f].name;
                     d["type"] = fs[f].type == gp::field_type::number ? "number" : "category";
                     d["categories"] = p.env.field_categories(f);
                     d["observe"] = fs[f].observe;
                     l.append(d);
                 }
                 return l;
             }, "The scenario's declared job fields: name, type (number or category), categories (every one the "
                "workload holds, in index order) and observe. Jobs' values: current_job(), queue() and finished_jobs() "
                "under \"fields\".")
        .def("models", [](const P& p) {
                 std::vector<std::string> v;
                 for (std::size_t i = 0; i < p.env.zoo().size(); ++i) v.push_back(p.env.zoo()[gp::model_id(i)].name);
                 return v;
             }, "Names of the zoo's models (index = model id).")
        .def("scenario", [](const P& p) { return to_py(gp::to_json(p.env.config())); }, "The scenario, every option filled in.")
        .def("finished_jobs", [](const P& p) { return finished_jobs(idle(p)); },
             "Finished jobs as numpy arrays: id, model, num_gpus, submit, start, end, ideal_duration, comm_cost, "
             "slowdown, run_time, lost_gpu_time, checkpoint_gpu_time, preemptions, interruptions, gpu_offset and the "
             "flat GPU list gpus.")
        .def("idle_while_waiting_gpu_hours", [](const P& p) {
                 const auto& e = idle(p);
                 return gp::idle_while_waiting_gpu_hours(e.finished(), e.num_gpus());
             },
             "GPU-hours the finished jobs' schedule left idle while a waiting job would have fit on them "
             "(include/gpuplace/idle_waiting.hpp); an episode without preemption, failures or co-location.")
        .def("comm_cost", [](const P& p, py::object gpus, py::object model) { return comm_cost_of(idle(p), gpus, model); },
             py::arg("gpus"), py::arg("model") = py::none(),
             "Cost and slowdown of placing a job of `model` (default: the current job's) on `gpus`.")
        .def("why_invalid", [](const P& p, py::object a) { return idle(p).why_invalid(to_action(a)); }, py::arg("action"),
             "Why an action is invalid now, or '' when it is valid.")
        .def("__repr__", [name](const P& p) {
            return std::string("<gpuplace.") + name + " " + p.env.config().name + ": " + std::to_string(p.env.num_gpus()) +
                   " GPUs, comm " + std::string(p.env.comm().name()) + ">";
        });
}


}  // namespace

void bind_envs(py::module_& m) {
    bind_env<gp::env>(m, "Env", "The environment (every scenario: the comm model is the scenario's comm.model).");
}

}  // namespace gpuplace_py
