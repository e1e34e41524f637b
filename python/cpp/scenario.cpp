// gpuplace._core: scenarios (validation, presets, comm models), the data folder and the seeds of
// vector envs and evaluations.

#include <string>

#include "bindings.hpp"
#include "conversions.hpp"

namespace gpuplace_py {

void bind_scenarios(py::module_& m) {
    m.def("comm_model_of", [](py::object s) { return comm_model_of(to_scenario(s)); }, py::arg("scenario"),
          "The scenario's communication model name (ring_allreduce or tree_route); validates the scenario.");
    m.def("normalize_scenario", [](py::object s, const std::string& base_dir) {
              auto sc = to_scenario(s);
              sc.resolve_paths(base_dir);
              return to_py(gp::to_json(sc));
          }, py::arg("scenario"), py::arg("base_dir") = "",
          "Parses and validates a scenario; returns it with every option filled in. With base_dir (a scenario file's "
          "folder), relative file paths in it become paths under that folder.");
    m.def("set_data_dir", &gp::set_data_dir, py::arg("path"),
          "Sets the folder \"$GPUPLACE_DATA/...\" paths name (the package sets it to the data it ships).");
    m.def("data_dir", &gp::data_dir, "The folder \"$GPUPLACE_DATA/...\" paths name.");
    m.def("resolve_data_path", [](const std::string& p) { return gp::resolve_data_path(p); }, py::arg("path"),
          "The file a path names (\"$GPUPLACE_DATA/x\" in data_dir()).");
    m.def("preset_names", &gp::preset_names, "Names of the preset scenarios (\"philly:<file>\" is one too).");
    m.def("is_preset_name", [](const std::string& n) { return gp::is_preset_name(n); }, py::arg("name"),
          "Whether a name is a preset scenario (preset_names(), or \"philly:<file>\").");
    m.def("philly_training_files", &gp::philly_training_files, "The Philly-derived trace files policies are trained on.");
    m.def("philly_heldout_files", &gp::philly_heldout_files, "The Philly-derived trace files held out from training.");
    m.def("preset_scenario", [](const std::string& n) { return to_py(gp::to_json(gp::preset_scenario(n))); }, py::arg("name"),
          "A named preset scenario (default, proximity_drl) as a dict.");
    m.def("episode_seed", &gp::episode_seed, py::arg("seed"), py::arg("index"), py::arg("episode"),
          "Seed of episode `episode` of env `index` in a vector env reset with `seed`.");
    m.def("sampler_seed", &gp::sampler_seed, py::arg("seed"), py::arg("index"),
          "Seed of env `index`'s action sampler (sample_valid_actions, step_random) in a vector env reset with `seed`.");
    m.def("held_out_seeds", [](py::object n) { return gp::held_out_seeds(seed_count(n)); }, py::arg("n"),
          "The held-out evaluation seeds 1000000 + i, i < n.");
}

}  // namespace gpuplace_py
