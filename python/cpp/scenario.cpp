// gpuplace._core: scenarios (gpuplace.Scenario: read once, validated, handed to envs without being
// parsed again; presets; the rule for preset / file / JSON text), the data folder and the seeds of
// vector envs and evaluations.

#include <string>

#include <gpuplace/json/registry.hpp>

#include "bindings.hpp"
#include "conversions.hpp"

namespace gpuplace_py {

namespace {

/// `over` merged into `base`: objects key by key, any other value replaced.
void merge_into(json& base, const json& over) {
    for (auto it = over.begin(); it != over.end(); ++it) {
        const auto b = base.find(it.key());
        if (it->is_object() && b != base.end() && b->is_object()) merge_into(*b, *it);
        else base[it.key()] = *it;
    }
}

/// The scenario `source` names (to_scenario()), with `overrides` (a nested dict) merged into its
/// JSON, every option filled in, and `action_mode` ("gpu", "placement", "job", "round") set last.
gp::scenario make_scenario(py::handle source, py::handle overrides, py::handle action_mode) {
    auto sc = to_scenario(source);
    if (overrides.is_none() && action_mode.is_none()) return sc;
    json over = json::object();
    if (!overrides.is_none()) {
        if (!py::isinstance<py::dict>(overrides))
            throw gp::ConfigError("scenario overrides: expected a dict of options, got " + type_name(overrides) + " " +
                                  py::repr(overrides).cast<std::string>());
        over = py_to_json(overrides, "");
    }
    if (!action_mode.is_none()) {  // with the overrides: a GPU-mode scenario's JSON has no slots to keep
        if (!py::isinstance<py::str>(action_mode))
            throw py::type_error("action_mode must be a string (gpu, placement, job or round), got " + type_name(action_mode));
        merge_into(over, json{{"env", {{"action_mode", action_mode.cast<std::string>()}}}});
    }
    auto j = gp::to_json(sc);
    // a topology given as levels (or as a preset written as levels), or one replacing levels, is a
    // whole topology: merged key by key into the other form it would mix a tree's keys with levels
    if (const auto t = over.find("topology"); t != over.end() && t->is_object()) {
        const auto p = t->find("preset");
        const bool levels_preset = p != t->end() && p->is_string() &&
                                   p->get<std::string>() != "custom" && !gp::TreeTopology::is_preset(p->get<std::string>());
        if (t->contains("levels") || levels_preset || (j["topology"].contains("levels") && p != t->end())) j["topology"] = *t;
    }
    merge_into(j, over);
    try {
        return gp::scenario_from_json(j);
    } catch (const gp::ConfigError& e) {
        throw gp::ConfigError(std::string("scenario overrides: ") + e.what());
    }
}

}  // namespace

void bind_scenarios(py::module_& m) {
    py::class_<gp::scenario>(m, "Scenario",
                             "A scenario read and validated once (by the C++ core), with every option filled in. Envs, "
                             "vector envs and the evaluation harness take it as it is: it is not parsed again.")
        .def(py::init([](py::object source, py::object overrides, py::object action_mode) {
                 return make_scenario(source, overrides, action_mode);
             }),
             py::arg("source") = "default", py::arg("overrides") = py::none(), py::arg("action_mode") = py::none(),
             "source: a preset name, a path to a JSON file or JSON text (JSON text when it starts with '{', else a "
             "preset when it names one, else a file that must exist), a path object (a file), a dict or a Scenario. "
             "overrides: a nested dict merged into it, e.g. {\"env\": {\"max_steps\": 100}}. action_mode: \"gpu\", "
             "\"placement\", \"job\" or \"round\", set last. Unknown keys and bad values raise ConfigError naming the JSON path.")
        .def("to_dict", [](const gp::scenario& s) { return to_py(gp::to_json(s)); },
             "The scenario as a dict, every option filled in (Scenario(d) gives it back).")
        .def_property_readonly("name", [](const gp::scenario& s) { return s.name; })
        .def_property_readonly("comm_model", [](const gp::scenario& s) { return comm_model_of(s); },
                               "The communication model: ring_allreduce or tree_route.")
        .def("__eq__", [](const gp::scenario& a, const gp::scenario& b) { return gp::to_json(a) == gp::to_json(b); },
             py::is_operator())
        .def("__repr__", [](const gp::scenario& s) { return "<gpuplace.Scenario " + s.name + ">"; })
        .def(py::pickle([](const gp::scenario& s) { return py::make_tuple(gp::to_json(s).dump()); },
                        [](const py::tuple& t) {
                            if (t.size() != 1 || !py::isinstance<py::str>(t[0]))
                                throw gp::Error("Scenario: bad pickled state");
                            return gp::parse_scenario(t[0].cast<std::string>(), "pickled scenario");
                        }));
    m.def("scenario_source", [](const std::string& s) { return std::string(gp::to_string(gp::scenario_source_of(s))); },
          py::arg("source"),
          "How a scenario string is read: \"json_text\" (it starts with '{'), \"preset\" (a preset name) or \"file\" "
          "(an existing file); ConfigError naming what was tried otherwise.");
    m.def("set_data_dir", &gp::set_data_dir, py::arg("path"),
          "Sets the folder \"$GPUPLACE_DATA/...\" paths name (the package sets it to the data it ships).");
    m.def("data_dir", &gp::data_dir, "The folder \"$GPUPLACE_DATA/...\" paths name.");
    m.def("resolve_data_path", [](const std::string& p) { return gp::resolve_data_path(p); }, py::arg("path"),
          "The file a path names (\"$GPUPLACE_DATA/x\" in data_dir()).");
    m.def("preset_names", &gp::preset_names, "Names of the preset scenarios (\"philly:<file>\" is one too).");
    m.def("is_preset_name", [](const std::string& n) { return gp::is_preset_name(n); }, py::arg("name"),
          "Whether a name is a preset scenario (preset_names(), or \"philly:<file>\").");
    m.def("topology_preset_names", &gp::topology_preset_names,
          "Names of the topology presets written as levels (gpuplace/data/topologies.hpp): a scenario's "
          "{\"topology\": {\"preset\": name}}.");
    m.def("topology_preset", [](const std::string& n) { return to_py(gp::to_json(gp::topology_preset(n))); }, py::arg("name"),
          "A topology preset as levels: {\"name\": ..., \"levels\": [...]}, what a scenario's \"topology\" may hold.");
    m.def("topology_preset_about", [](const std::string& n) { return gp::topology_preset_about(n); }, py::arg("name"),
          "What a topology preset is, and the parameters a scenario may set beside its name.");
    m.def("registry", [] {
              py::list l;
              for (const auto& e : gp::all_registry_entries()) l.append(py::make_tuple(e.kind, e.name, e.about));
              return l;
          },
          "Everything that can be named, by kind: (kind, name, about) for every placer, queue policy, planner, "
          "topology preset, scenario preset, workload kind, trace format, model mix, comm model, reward term, "
          "observation feature and job field (gpuplace/registry.hpp).");
    m.def("philly_training_files", &gp::philly_training_files, "The Philly-derived trace files policies are trained on.");
    m.def("philly_heldout_files", &gp::philly_heldout_files, "The Philly-derived trace files held out from training.");
    m.def("episode_seed", &gp::episode_seed, py::arg("seed"), py::arg("index"), py::arg("episode"),
          "Seed of episode `episode` of env `index` in a vector env reset with `seed`.");
    m.def("sampler_seed", &gp::sampler_seed, py::arg("seed"), py::arg("index"),
          "Seed of env `index`'s action sampler (sample_valid_actions, step_random) in a vector env reset with `seed`.");
    m.def("held_out_seeds", [](py::object n) { return gp::held_out_seeds(seed_count(n)); }, py::arg("n"),
          "The held-out evaluation seeds 1000000 + i, i < n.");
}

}  // namespace gpuplace_py
