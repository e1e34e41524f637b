// gpuplace._core: the reference C++ PPO (include/gpuplace/rl/): the trainer (PPO), trained networks
// (Network, load_checkpoint) and their evaluation in the C++ harness. Compiled for each CPU variant
// of the module (python/CMakeLists.txt): Eigen's products are what AVX2 / AVX-512 speed up.

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include <gpuplace/rl/rl.hpp>

#include <gpuplace/rl/hold_guard.hpp>

#include "bindings.hpp"
#include "objects.hpp"

namespace gpuplace_py {

namespace rl = gp::rl;

namespace {

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
    d["dagger"] = st.dagger;
    d["demonstrations"] = st.demonstrations;
    d["moved_demonstrations"] = st.moved_demonstrations;
    d["split_demonstrations"] = st.split_demonstrations;
    d["teacher_agreement"] = st.teacher_agreement;
    d["defer_share"] = st.defer_share;
    d["rollout_seconds"] = st.rollout_seconds;
    d["update_seconds"] = st.update_seconds;
    return d;
}

/// The PPO trainer.
struct PyPPO {
    std::unique_ptr<rl::basic_ppo<gp::env>> t;
    std::atomic<bool> busy{false};
    template <class F>
    decltype(auto) visit(F&& f) {
        return f(*t);
    }
};

/// A trained network (from a checkpoint), acting greedily.
struct PyNetwork {
    std::shared_ptr<const rl::basic_actor_critic<float>> net;
    json scenario, ppo;
    std::string queue;  ///< the queue policy it acts under ("" = the scenario's)
};

/// The network as a harness policy, guarded as asked (rl/hold_guard.hpp): holding only where the
/// heuristic `hold_with` holds, or only on clusters of at least `hold_from` GPUs (ConfigError for
/// both); placing elsewhere than the heuristic `place_with` only by more than `place_margin` logits.
template <class E>
gp::any_policy<E> guarded_network(const std::string& name, const PyNetwork& n, const std::string& hold_with, std::size_t hold_from,
                                  const std::string& place_with, double place_margin) {
    if (!hold_with.empty() && hold_from > 0)
        throw gp::ConfigError("hold_with=\"" + hold_with + "\" and hold_from=" + std::to_string(hold_from) +
                              ": give one hold guard, not both");
    if (place_with.empty() && place_margin != 0)
        throw gp::ConfigError("place_margin=" + std::to_string(place_margin) + " without place_with: name the heuristic (e.g. \"pack\")");
    rl::place_margin<E> m;
    if (!place_with.empty()) m = {gp::named_policy<E>(place_with), place_margin};
    if (hold_from > 0) return rl::hold_from<E>(name, n.net, hold_from, std::move(m));
    if (!hold_with.empty()) return rl::hold_only_with<E>(name, n.net, gp::named_policy<E>(hold_with), std::move(m));
    if (!place_with.empty()) return rl::with_place_margin<E>(name, n.net, std::move(m));
    return rl::as_policy<E>(name, n.net);
}

template <class E>
std::int64_t network_act(PyNetwork& n, const PyEnv<E>& p, const std::string& hold_with, std::size_t hold_from,
                         const std::string& place_with, double place_margin) {
    const auto& e = idle(p);
    if (e.done()) throw gp::StateError("Network.act: the episode is over; reset the env");
    if (!e.has_current()) throw gp::StateError("Network.act: no job is being placed; call reset() first");
    if (!hold_with.empty() || hold_from > 0 || !place_with.empty() || place_margin != 0)
        // rl/hold_guard.hpp, for one step (the heuristic's state is not kept across steps)
        return guarded_network<E>("ppo", n, hold_with, hold_from, place_with, place_margin).make(e.seed())(e);
    rl::basic_network_policy<float> pol(n.net);
    return pol.act(e);
}

/// The network's logit of every action in env's state; -inf where the action is masked.
template <class E>
py::array_t<float> network_logits(PyNetwork& n, const PyEnv<E>& p) {
    const auto& e = idle(p);
    if (e.done()) throw gp::StateError("Network.logits: the episode is over; reset the env");
    if (!e.has_current()) throw gp::StateError("Network.logits: no job is being placed; call reset() first");
    rl::basic_network_policy<float> pol(n.net);
    (void)pol.act(e);
    const auto mask = e.action_mask();
    py::array_t<float> out(static_cast<py::ssize_t>(mask.size()));
    auto* o = out.mutable_data();
    for (std::size_t a = 0; a < mask.size(); ++a)
        o[a] = mask[a] ? pol.logit(std::int64_t(a)) : -std::numeric_limits<float>::infinity();
    return out;
}


}  // namespace

void bind_ppo(py::module_& m) {
    py::class_<PyPPO>(m, "PPO", "The reference C++ PPO (Eigen) on a vector env of the scenario.")
        .def(py::init([](py::object scenario, py::object config) {
                 const auto sc = to_scenario(scenario);
                 const auto cfg = rl::ppo_config::from_json(to_json_obj(config, "ppo config"), "/ppo");
                 auto p = std::make_unique<PyPPO>();
                 py::gil_scoped_release nogil;
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
        .def("act", &network_act<gp::env>, py::arg("env"), py::arg("hold_with") = "", py::arg("hold_from") = 0,
             py::arg("place_with") = "", py::arg("place_margin") = 0.0,
             "The greedy action in env's state. A hold guard (include/gpuplace/rl/hold_guard.hpp), where the network's "
             "action is DEFER and holding is not allowed, takes the most probable other valid action: hold_with: a "
             "heuristic (e.g. \"pack_wait\"): DEFER only where it defers too; hold_from: a number of GPUs (e.g. 64): "
             "DEFER only on clusters of at least that many. A placement margin: where the network places the job "
             "elsewhere than the heuristic place_with (e.g. \"pack\") would, its placement stands only if its logit is "
             "higher than the heuristic's action's by more than place_margin; the heuristic's placement otherwise.")
        .def("logits", &network_logits<gp::env>, py::arg("env"),
             "The network's logit of every action in env's state (a float32 array of env.num_actions; -inf where the "
             "action mask forbids the action): its greedy action is the argmax, its policy the softmax.");

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
                                 py::object threads_arg, const std::string& hold_with, std::size_t hold_from,
                                 const std::string& place_with, double place_margin) {
              const auto threads = to_count(threads_arg, "evaluate_network: threads", 0, 4096);
              const auto sc = to_scenario(scenario);
              const auto sd = to_seeds(seeds);
              rl::check_information(n.scenario, sc, name);
              py::gil_scoped_release nogil;
              auto p = guarded_network<gp::env>(name, n, hold_with, hold_from, place_with, place_margin);
              p.queue = n.queue;  // under its own queue policy, as in training
              return gp::evaluate<gp::env>(sc, {std::move(p)}, sd, threads);
          }, py::arg("scenario"), py::arg("network"), py::arg("seeds") = 20, py::arg("name") = "ppo", py::arg("threads") = 1,
          py::arg("hold_with") = "", py::arg("hold_from") = 0, py::arg("place_with") = "", py::arg("place_margin") = 0.0,
          "Runs a loaded network through the C++ harness; returns an EvalReport. A hold guard "
          "(include/gpuplace/rl/hold_guard.hpp): hold_with: a heuristic (e.g. \"pack_wait\"): the network holds a job "
          "only where it would; hold_from: a number of GPUs (e.g. 64): only on clusters of at least that many. A "
          "placement margin: place_with, a heuristic (e.g. \"pack\"): the network places a job elsewhere than it only "
          "where its logit is higher by more than place_margin.");

}

}  // namespace gpuplace_py
