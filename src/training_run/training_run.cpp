// The training run (training_run.hpp): compiled once for gpuplace-train and the Python package.
// This file: the recipes and the run's config (reading, layers, validation, its scenarios); the
// comparison with the heuristics is compare.cpp, a restart's state files restart_state.cpp, a
// restart's training restart.cpp, the run itself (folders, resume, restarts) run.cpp.

#include "training_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gpuplace/json.hpp>
#include <gpuplace/input_file.hpp>
#include <gpuplace/detail/number_format.hpp>
#include <gpuplace/rl/checkpoint.hpp>
#include <gpuplace/rl/state_file.hpp>
#include <gpuplace/version.hpp>

namespace gpuplace::rl {

namespace {

/// The training recipes, data/recipes/*.json embedded at build time (cmake/embed_recipes.cmake):
/// {name, JSON text}, in name order. A recipe is a training config, or with "extends" a patch
/// (RFC 7386, nlohmann's merge_patch) over another recipe; "about" says what it is for.
struct recipe_text {
    std::string_view name, text;
};
constexpr recipe_text recipe_texts[] = {
#include "gpuplace_recipes.inc"
};

/// Recipe `name` resolved: its "extends" chain merged, "about" and "extends" dropped; a null json
/// when there is no such recipe.
json resolve_recipe(std::string_view name, int depth = 0) {
    for (const auto& r : recipe_texts) {
        if (r.name != name) continue;
        auto j = parse_json(r.text, "training recipe data/recipes/" + std::string(name) + ".json");
        j.erase("about");
        if (auto it = j.find("extends"); it != j.end()) {
            const std::string base = it->get<std::string>();
            j.erase("extends");
            auto b = depth < 8 ? resolve_recipe(base, depth + 1) : json();
            if (b.is_null())
                throw ConfigError("training recipe data/recipes/" + std::string(name) + ".json: /extends: unknown or circular recipe "" + base + """);
            b.merge_patch(j);
            return b;
        }
        return j;
    }
    return json();
}

}  // namespace

json default_run_config() { return resolve_recipe("default"); }

std::vector<std::string> run_recipe_names() {
    std::vector<std::string> v;
    for (const auto& r : recipe_texts) v.emplace_back(r.name);
    return v;
}

json run_recipe(std::string_view name) {
    auto j = resolve_recipe(name);
    if (j.is_null()) {
        std::string known;
        for (const auto& n : run_recipe_names()) known += (known.empty() ? "" : ", ") + n;
        throw ConfigError("unknown training recipe \"" + std::string(name) + "\" (allowed: " + known + ")");
    }
    return j;
}

std::vector<std::uint64_t> validation_seeds(std::size_t n) {
    std::vector<std::uint64_t> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(2'000'000 + i);
    return v;
}

bool run_config::layer::sets(const std::string& path) const {
    try {
        return doc.contains(json::json_pointer(path));
    } catch (const json::exception&) {
        return false;
    }
}

run_config run_config::from_json(const json& j, std::string base_dir) {
    using namespace gpuplace::detail;
    check_keys(j, "", {"scenario", "train_reward", "validation_seeds", "validate_every", "restarts", "checkpoint_every",
                       "queue", "compare_on", "train_on", "action_mode", "ppo"});
    run_config c;
    c.base_dir = std::move(base_dir);
    if (auto it = j.find("scenario"); it != j.end()) {
        if (!it->is_string() && !it->is_object())
            config_fail("/scenario", "expected a preset name, a scenario file or an object, got " + short_dump(*it));
        c.scenario = *it;
    }
    if (auto it = j.find("train_reward"); it != j.end()) {
        if (!it->is_object() && !it->is_null()) config_fail("/train_reward", "expected an object of reward weights, got " + short_dump(*it));
        c.train_reward = *it;
    }
    read_int(j, "", "validation_seeds", c.validation_seeds, 1, 100000);
    read_int(j, "", "validate_every", c.validate_every, 1, 1 << 30);
    read_int(j, "", "restarts", c.restarts, 1, 64);
    read_int(j, "", "checkpoint_every", c.checkpoint_every, 1, 1 << 30);
    read_string(j, "", "queue", c.queue);
    if (!c.queue.empty()) {
        gpuplace::scenario probe;
        try {
            apply_queue(probe, c.queue);
        } catch (const ConfigError& e) {
            config_fail("/queue", e.what());
        }
    }
    for (const auto& [key, list] : {std::pair{"compare_on", &c.compare_on}, std::pair{"train_on", &c.train_on}}) {
        const auto it = j.find(key);
        if (it == j.end()) continue;
        const std::string at = std::string("/") + key;
        if (!it->is_array()) config_fail(at, "expected a list of scenarios, got " + short_dump(*it));
        for (std::size_t i = 0; i < it->size(); ++i) {
            if (!(*it)[i].is_string() && !(*it)[i].is_object())
                config_fail(at + "/" + std::to_string(i), "expected a preset name, a scenario file or an object, got " + short_dump((*it)[i]));
            list->push_back((*it)[i]);
        }
    }
    read_string(j, "", "action_mode", c.action_mode);
    if (!c.action_mode.empty()) (void)parse_action_mode(c.action_mode, "/action_mode");
    c.ppo = ppo_config::from_json(j.value("ppo", json::object()), "/ppo");
    // the scenario and the reward weights are checked here, not at the first use; an error inside
    // a scenario object names its path in the config
    auto within = [](const json& sc, const std::string& at, const std::function<void()>& f) {
        try {
            f();
        } catch (const ConfigError& e) {
            const std::string what = e.what();
            if (!sc.is_object() || what.rfind("config /", 0) != 0 || what.rfind("config /train_reward", 0) == 0) throw;
            throw ConfigError("config " + at + what.substr(7));
        }
    };
    within(c.scenario, "/scenario", [&] { (void)c.train_scenario(); });
    for (std::size_t i = 0; i < c.compare_on.size(); ++i)
        within(c.compare_on[i], "/compare_on/" + std::to_string(i), [&] { (void)c.load(c.compare_on[i]); });
    for (std::size_t i = 0; i < c.train_on.size(); ++i)
        within(c.train_on[i], "/train_on/" + std::to_string(i), [&] { (void)c.train_scenario(c.load(c.train_on[i])); });
    return c;
}

void run_config::check_layer(const layer& l) {
    auto fail = [&](const std::string& path, const std::string& what) {
        throw ConfigError(l.source + ": config " + (path.empty() ? "/" : path) + ": " + what);
    };
    if (!l.doc.is_object()) fail("", "a training config must be an object {\"scenario\": ..., \"ppo\": {...}}, got " +
                                     gpuplace::detail::short_dump(l.doc));
    for (const char* p : {"/ppo", "/ppo/network"})
        if (const json::json_pointer ptr(p); l.doc.contains(ptr) && !l.doc.at(ptr).is_object())
            fail(p, "expected an object, got " + gpuplace::detail::short_dump(l.doc.at(ptr)));
    const std::function<void(const json&, const std::string&)> no_null = [&](const json& v, const std::string& path) {
        if (v.is_null() && path != "/train_reward") fail(path, "null is not a value here (leave the key out for its default)");
        if (v.is_object())
            for (auto it = v.begin(); it != v.end(); ++it) no_null(*it, gpuplace::detail::join_path(path, it.key()));
    };
    no_null(l.doc, "");
}

run_config run_config::from_layers(json base, const std::vector<layer>& layers, std::string base_dir) {
    for (const auto& l : layers) {
        check_layer(l);
        base.merge_patch(l.doc);
    }
    try {
        return from_json(base, std::move(base_dir));
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        if (what.rfind("config /", 0) != 0) throw;
        const auto path = what.substr(7, what.find(':', 7) - 7);
        for (auto l = layers.rbegin(); l != layers.rend(); ++l)
            if (l->sets(path)) throw ConfigError(l->source + ": " + what);
        throw;
    }
}

run_config run_config::defaults() {
    return from_json(default_run_config());
}

json run_config::to_json() const {
    json j = {{"scenario", scenario},
                                {"validation_seeds", validation_seeds},
                                {"validate_every", validate_every},
                                {"restarts", restarts},
                                {"checkpoint_every", checkpoint_every},
                                {"ppo", ppo.to_json()}};
    if (!train_reward.is_null()) j["train_reward"] = train_reward;
    if (!queue.empty()) j["queue"] = queue;
    if (!compare_on.empty()) j["compare_on"] = compare_on;
    if (!train_on.empty()) j["train_on"] = train_on;
    if (!action_mode.empty()) j["action_mode"] = action_mode;
    return j;
}

gpuplace::scenario run_config::load(const json& sc) const {
    gpuplace::scenario s;
    if (sc.is_string()) {
        const auto n = sc.get<std::string>();
        const auto file = relative_to(n, base_dir);
        if (!is_preset_name(n) && !is_data_path(n) && !std::filesystem::exists(file)) {
            std::string presets;
            for (const auto& p : preset_names()) presets += p + ", ";
            throw ConfigError("cannot open scenario file \"" + display_path(file) + "\" (nor is \"" + n + "\" a preset: " + presets +
                              "philly:<file>, philly_hidden:<file>)");
        }
        s = is_preset_name(n) ? preset_scenario(n) : gpuplace::load_scenario(file);
    } else {
        s = gpuplace::scenario_from_json(sc);
        s.resolve_paths(base_dir);
    }
    if (!action_mode.empty()) s.env.mode = parse_action_mode(action_mode, "/action_mode");
    return s;
}

std::vector<gpuplace::scenario> run_config::compare_scenarios() const {
    std::vector<gpuplace::scenario> v;
    for (const auto& sc : compare_on) v.push_back(load(sc));
    if (v.empty()) v.push_back(eval_scenario());
    return v;
}

gpuplace::scenario run_config::policy_scenario() const {
    auto s = eval_scenario();
    apply_queue(s, queue);
    return s;
}

gpuplace::scenario run_config::train_scenario() const { return train_scenario(eval_scenario()); }

std::vector<gpuplace::scenario> run_config::train_scenarios() const {
    std::vector<gpuplace::scenario> v;
    for (const auto& sc : train_on) v.push_back(train_scenario(load(sc)));
    if (v.empty()) v.push_back(train_scenario());
    return v;
}

gpuplace::scenario run_config::train_scenario(gpuplace::scenario s) const {
    apply_queue(s, queue);
    if (train_reward.is_null()) return s;
    auto j = gpuplace::to_json(s);
    j["reward"].merge_patch(train_reward);
    try {
        return gpuplace::scenario_from_json(j);
    } catch (const ConfigError& e) {
        throw ConfigError(std::string("config /train_reward: ") + e.what());
    }
}

}  // namespace gpuplace::rl
