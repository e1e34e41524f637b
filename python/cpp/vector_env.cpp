// gpuplace._core.VectorEnv: N environments stepped in one call with autoreset
// (in the step that ends an episode, or in the next: Gymnasium's SAME_STEP and NEXT_STEP).
// Batched observations, masks, rewards and flags are read-only numpy views on the C++ buffers;
// reset and step release the GIL, and a VectorEnv being stepped refuses other threads (StateError).

#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "objects.hpp"

namespace gpuplace_py {

namespace {

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

/// Refuses, before any copy is made, a vector env whose buffers alone cannot fit in this machine's
/// memory: per env at least the env object, its observation and mask, and the vector env's
/// observation, final observation and mask rows.
template <class E>
void check_vector_memory(const E& first, std::size_t n) {
    const double per = static_cast<double>(sizeof(E)) + 3.0 * sizeof(float) * static_cast<double>(first.observation_size()) +
                       2.0 * static_cast<double>(first.num_actions()) + 64.0;
    const double need = per * static_cast<double>(n);
    const auto have = physical_memory();
    if (have && need > static_cast<double>(have))
        throw gp::ConfigError("vector env: num_envs " + std::to_string(n) + " needs at least " + bytes_text(need) + " (" +
                              bytes_text(per) + " per env: its observation of " + std::to_string(first.observation_size()) +
                              " floats, mask and state), more than this machine's " +
                              bytes_text(static_cast<double>(have)) + " of memory");
}

template <class E>
void bind_vector_env(py::module_& m, const char* name, const char* doc) {
    using P = PyVec<E>;
    py::class_<P>(m, name, doc)
        .def(py::init([](py::object s, py::object n_arg, py::object t_arg, const std::string& autoreset) {
                 const auto n = to_count(n_arg, "vector env: num_envs", 1, std::numeric_limits<std::int64_t>::max());
                 const auto t = to_count(t_arg, "vector env: num_threads", 1, n);
                 const auto mode = gp::parse_autoreset_mode(autoreset);
                 auto sc = to_scenario(s);
                 py::gil_scoped_release nogil;
                 E first(sc);
                 check_vector_memory(first, n);
                 std::vector<E> envs;
                 envs.reserve(n);
                 envs.push_back(std::move(first));
                 for (std::size_t i = 1; i < n; ++i) envs.push_back(envs.front());
                 auto p = std::make_unique<P>(std::move(envs), t);
                 p->vec.set_autoreset(mode);
                 return p;
             }),
             py::arg("scenario"), py::arg("num_envs"), py::arg("num_threads") = 1, py::arg("autoreset") = "same_step",
             "N copies of the environment. Results do not depend on num_threads. autoreset: \"same_step\" (an ended "
             "episode's env restarts in the step that ends it; its last observation is in final_observations) or "
             "\"next_step\" (the step that ends it returns its last observation; the next step ignores that env's "
             "action and restarts it, with reward 0 and no flags).")
        .def_property_readonly("comm_model", [](const P& p) { return std::string(p.vec.env(0).comm().name()); },
                               "The scenario's comm model: ring_allreduce or tree_route.")
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
            "reset at once (their last observation is in final_observations), or with autoreset next_step in the next "
            "step, which ignores their actions. obs_out: optional writable float32 "
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
            "stream (seeded by reset(seed) with sampler_seed(seed, i)): deterministic, independent of num_threads; "
            "-1 for an env that restarts in the next step (autoreset next_step). "
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
        .def_property_readonly("autoreset", [](const P& p) { return std::string(gp::to_string(p.vec.autoreset())); },
                               "\"same_step\" or \"next_step\".")
        .def_property_readonly("num_gpus", [](const P& p) { return p.vec.env(0).num_gpus(); })
        .def_property_readonly("short_episodes", [](const P& p) { return p.vec.env(0).short_episodes(); },
                               "Why the episodes are shorter than the scenario asks (Env.short_episodes), or \"\".")
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


}  // namespace

void bind_vector_envs(py::module_& m) {
    bind_vector_env<gp::env>(m, "VectorEnv", "N Env copies stepped in one call.");
}

}  // namespace gpuplace_py
