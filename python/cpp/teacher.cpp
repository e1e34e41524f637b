// gpuplace._core.Teacher: a heuristic acting in every env of a VectorEnv, rolled out in C++.

#include <algorithm>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <gpuplace/policy_registry.hpp>

#include "bindings.hpp"
#include "objects.hpp"

namespace gpuplace_py {

namespace {

// Behaviour cloning from Python (gpuplace.sb3.pretrain) needs the teacher's actions for batches of
// states. Teacher(name, num_envs, seed) holds one instance of the heuristic per env (seeded like
// the C++ PPO's teachers); rollout() steps the vector env `steps` times with the teacher's actions
// and records what it acted on, all in C++ with the GIL released (no Python per step). A teacher
// "<heuristic>+<queue>" (e.g. "pack+sjf") only makes sense in an env that runs under that queue
// policy (the queue policy is an env setting): a vector env whose scenario has another one is
// refused with a message naming both. The round planner ("rollout<F>h<H>:<placer>+class_gittins",
// gp::teacher_policy()) acts in the round action mode through the slots; a vector env it cannot
// act in (another mode, no class_gittins advisor, elastic jobs) is refused before anything moves.

struct PyTeacher {
    std::string name, queue;
    std::size_t num_envs = 0;
    std::vector<std::function<std::int64_t(const gp::env&)>> f;
    std::function<void(const gp::env&)> can_act;  // the policy's own check of an env (the round planner's); empty: none
    std::atomic<bool> busy{false};

    PyTeacher(const std::string& n, std::size_t envs, std::uint64_t seed) : name(n), num_envs(envs) {
        if (envs < 1) throw gp::ConfigError("Teacher: num_envs must be >= 1, got 0");
        const auto p = gp::teacher_policy<gp::env>(n);  // ConfigError naming the known policies
        queue = p.rounds ? "" : p.queue;  // the round planner: the round mode's own queue, its base the env's advisor
        can_act = p.check;
        for (std::size_t i = 0; i < envs; ++i) f.push_back(p.make(gp::mix_seed(seed, 0x7465ULL + i)));  // as rl::basic_ppo seeds its teachers
    }

    template <class E>
    const std::function<std::int64_t(const E&)>& at(std::size_t i) const {
        return f[i];
    }

    /// Throws unless `vec` has num_envs envs and runs under the teacher's queue policy.
    template <class E>
    void check(const PyVec<E>& vec) const {
        if (vec.vec.num_envs() != num_envs)
            throw py::value_error("Teacher \"" + name + "\" was made for " + std::to_string(num_envs) + " envs, the vector env has " +
                                  std::to_string(vec.vec.num_envs()));
        if (can_act) can_act(vec.vec.env(0));  // every env of a VectorEnv has the same scenario
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

}  // namespace

void bind_teacher(py::module_& m) {
    py::class_<PyTeacher>(m, "Teacher",
                          "A heuristic (see heuristic_names(); \"<name>+<queue>\" for a queue policy), or in the round action "
                          "mode the round planner (\"rollout<F>h<H>:<placer>+class_gittins\", with env.round_advisor "
                          "\"class_gittins\"), acting in every env of a VectorEnv, for behaviour cloning.")
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
        .def("act", &teacher_act<gp::env>, py::arg("vector_env"), py::arg("out") = py::none(),
             "The teacher's action in every env's current state (int64, shape (num_envs,)), into out when given. "
             "Releases the GIL.")
        .def("rollout", &teacher_rollout<gp::env>, py::arg("vector_env"), py::arg("obs_out"), py::arg("masks_out"),
             py::arg("actions_out"), py::arg("rewards_out") = py::none(), py::arg("dones_out") = py::none(),
             "Steps the vector env obs_out.shape[0] times with the teacher's actions. Row t of obs_out (float32, "
             "(steps, num_envs, observation_size)), masks_out (uint8, (steps, num_envs, num_actions)) and "
             "actions_out (int64, (steps, num_envs)) receives the state the teacher acted on and its actions; "
             "rewards_out (float64) and dones_out (bool), both (steps, num_envs), what followed. Every buffer is "
             "checked before anything moves. Returns the number of episodes that ended. Releases the GIL.");
}


}  // namespace gpuplace_py
