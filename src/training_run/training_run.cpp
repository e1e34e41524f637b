// The training run (training_run.hpp): compiled once for gpuplace-train and the Python package.

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

/// gpuplace-train --compare: the network (under the run's queue policy) and every heuristic under
/// every queue policy, on `seeds` of the run's scenario.
/// `restarts` (optional) adds each restart's own network as "<name>[seed K]", for the spread over
/// training seeds.
namespace {
template <class E>
eval_report compare_on_env(const gpuplace::scenario& s, const run_config& rc, std::shared_ptr<const actor_critic> net,
                           const std::vector<std::uint64_t>& seeds, std::size_t threads, const std::vector<restart_result>& restarts) {
    std::vector<any_policy<E>> ps;
    auto add = [&](std::string name, std::shared_ptr<const actor_critic> n) {
        auto p = as_policy<E>(std::move(name), std::move(n));
        p.queue = rc.queue;
        ps.push_back(std::move(p));
    };
    add(policy_name(rc), std::move(net));
    for (const auto& r : restarts)
        if (r.network) add(policy_name(rc) + "[seed " + std::to_string(r.seed) + "]", r.network);
    for (const auto& n : heuristic_variants(s)) ps.push_back(heuristic<E>(n));
    return evaluate<E>(s, ps, seeds, threads);
}

}  // namespace

eval_report compare_with_heuristics(const gpuplace::scenario& s, const run_config& rc, std::shared_ptr<const actor_critic> net,
                                    const std::vector<std::uint64_t>& seeds, std::size_t threads,
                                    const std::vector<restart_result>& restarts) {
    return compare_on_env<gpuplace::env>(s, rc, std::move(net), seeds, threads, restarts);
}

std::string seed_spread::text(const std::string& metric) const {
        const double f = is_time_metric(metric) ? 1.0 / 3600 : 1.0;
        std::string out = "training seeds, held-out mean " + metric + ":";
        char b[256];
        for (const auto& [n, v] : seeds) {
            std::snprintf(b, sizeof b, " %s %.3f", n.substr(n.find('[')).c_str(), v * f);
            out += b;
        }
        std::snprintf(b, sizeof b, "\nthe median seed %s minus the best heuristic %s: %+.3f +- %.3f (lower on %zu of %zu seeds)\n",
                      median.c_str(), best_heuristic.c_str(), median_vs_best.diff.mean * f, median_vs_best.diff.sem * f,
                      median_vs_best.lower, median_vs_best.seeds);
    return out + b;
}

seed_spread spread_over_seeds(const eval_report& rep, const std::string& name, const std::string& metric) {
    seed_spread s;
    for (const auto& p : rep.policies)
        if (p.policy.rfind(name + "[seed ", 0) == 0) s.seeds.emplace_back(p.policy, p.get(metric).mean);
    if (s.seeds.empty()) throw Error("spread_over_seeds(): no \"" + name + "[seed K]\" in the report");
    std::sort(s.seeds.begin(), s.seeds.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    s.median = s.seeds[(s.seeds.size() - 1) / 2].first;
    s.best_heuristic = rep.best(metric, {name});
    for (const auto& ps : rep.paired(s.median, metric))
        if (ps.other == s.best_heuristic) s.median_vs_best = ps;
    return s;
}

namespace {

constexpr std::string_view learning_header =
    "iteration,env_steps,seconds,steps_per_sec,episodes,mean_return,mean_jct,mean_comm_cost,val_jct,val_comm_cost,"
    "policy_loss,value_loss,entropy,approx_kl,clip_frac,explained_variance,learning_rate,phase,teacher_agreement,defer_share\n";

[[nodiscard]] std::string hms(double s) {
    char b[32];
    const long t = long(std::max(0.0, s));
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    return b;
}

[[nodiscard]] std::string read_text(const std::string& file) {
    return gpuplace::read_input_file<CheckpointError>(file, "");
}

/// A network's parameters and normalisers as a state document (the same layout as save_state()'s).
[[nodiscard]] json network_state(const actor_critic& net) {
    json parts = json::array(), norms = json::array();
    for (const auto& [name, n] : net.named()) parts.push_back(detail::to_bytes<float>({n->params().data(), std::size_t(n->params().size())}));
    for (const auto& r : net.normalizers()) {
        const double c = r.count();
        norms.push_back({{"mean", detail::to_bytes<double>({r.mean().data(), std::size_t(r.mean().size())})},
                         {"var", detail::to_bytes<double>({r.var().data(), std::size_t(r.var().size())})},
                         {"count", detail::to_bytes<double>({&c, 1})}});
    }
    return {{"parts", std::move(parts)}, {"normalizers", std::move(norms)}};
}

/// Sets a network (of the right shape) from network_state().
void set_network_state(actor_critic& net, const json& j, const std::string& src, const std::string& path) {
    const auto& parts = detail::state_get(j, src, path, "parts");
    auto named = net.named();
    if (!parts.is_array() || parts.size() != named.size())
        throw CheckpointError("state " + src + ": " + path + "/parts: expected " + std::to_string(named.size()) + " parts");
    std::vector<std::vector<float>> values;
    for (std::size_t k = 0; k < named.size(); ++k)
        values.push_back(detail::from_bytes<float>(parts[k], src, path + "/parts/" + std::to_string(k), named[k].second->num_params()));
    const auto& norms = detail::state_get(j, src, path, "normalizers");
    if (!norms.is_array() || norms.size() != net.normalizers().size())
        throw CheckpointError("state " + src + ": " + path + "/normalizers: wrong number of normalizers");
    for (std::size_t k = 0; k < named.size(); ++k) std::copy(values[k].begin(), values[k].end(), named[k].second->params().data());
    for (std::size_t k = 0; k < norms.size(); ++k) {
        auto& r = net.normalizers()[k];
        const auto n = std::size_t(r.mean().size());
        const std::string p = path + "/normalizers/" + std::to_string(k);
        const auto mean = detail::from_bytes<double>(detail::state_get(norms[k], src, p, "mean"), src, p + "/mean", n);
        const auto var = detail::from_bytes<double>(detail::state_get(norms[k], src, p, "var"), src, p + "/var", n);
        const auto count = detail::from_bytes<double>(detail::state_get(norms[k], src, p, "count"), src, p + "/count", 1);
        r.set(Eigen::Map<const Eigen::VectorXd>(mean.data(), Eigen::Index(n)),
              Eigen::Map<const Eigen::VectorXd>(var.data(), Eigen::Index(n)), count[0]);
    }
}

/// Reads a restart's state file, falling back to the previous one (state.prev.bin) when the
/// latest cannot be read. Returns null when neither exists.
[[nodiscard]] json read_restart_state(const std::string& dir, std::string& used,
                                                               const std::function<void(const std::string&)>& print) {
    namespace fs = std::filesystem;
    const std::string cur = dir + "/state.bin", prev = dir + "/state.prev.bin";
    if (!fs::exists(cur) && !fs::exists(prev)) return nullptr;
    std::string why;
    if (fs::exists(cur)) {
        try {
            used = cur;
            return read_state_file(cur);
        } catch (const CheckpointError& e) {
            if (!fs::exists(prev)) throw;
            why = e.what();
        }
    }
    used = prev;
    try {
        auto j = read_state_file(prev);
        if (print && !why.empty()) print(why + "; using the previous state " + prev + "\n");
        return j;
    } catch (const CheckpointError& e) {
        if (why.empty()) throw;
        throw CheckpointError(why + "; the previous state cannot be used either: " + e.what());
    }
}

/// The file a restart's folder keeps once it saved a state: a resume that finds no state there then
/// refuses (the state was deleted or moved) instead of starting the restart again from nothing.
constexpr const char* state_mark = "/state.saved";

/// Writes a restart's state: the last one becomes state.prev.bin, then state.bin is written atomically.
void write_restart_state(const std::string& dir, const json& doc, const write_observer& on_write) {
    namespace fs = std::filesystem;
    const std::string cur = dir + "/state.bin", prev = dir + "/state.prev.bin";
    std::error_code ec;
    if (fs::exists(cur)) fs::rename(cur, prev, ec);
    write_state_file(cur, doc, on_write);
    if (!fs::exists(dir + state_mark, ec))
        write_file_atomic(dir + state_mark, "this restart saved its training state in state.bin (gpuplace-train --resume reads it)\n");
}

/// What one restart of a run trains and where (train_restart()).
struct restart_plan {
    const std::vector<gpuplace::scenario>& train_s;  ///< the scenarios it trains on (run_config::train_scenarios())
    const gpuplace::scenario& eval_s;   ///< the scenario its checkpoints name (run_config::eval_scenario())
    ppo_config pc;                      ///< the run's PPO config with this restart's training seed
    const run_config& rc;
    const std::vector<std::uint64_t>& vseeds;  ///< validation seeds
    double yardstick = -1;              ///< the best heuristic's validation JCT (time to quality)
    std::string dir;                    ///< its folder (the run folder when it is the only restart)
    std::string tag;                    ///< what its printed lines start with ("seed K " or "")
    bool announce = false;              ///< print the training plan first
    std::size_t index = 0;              ///< which restart (on_event's "restart" count)
};

/// Trains one restart (training seed p.pc.seed) in p.dir; resumes from its state when asked and
/// there is one. `say` prints a line (serialised over the restarts' threads).
template <class E>
restart_result train_restart(const restart_plan& p, const run_options& o, const std::function<void(const std::string&)>& say) {
    namespace fs = std::filesystem;
    const auto& [train_s, eval_s, pc, rc, vseeds, yardstick, dir, tag, announce, index] = p;
    fs::create_directories(dir);
    restart_result res;
    res.seed = pc.seed;
    basic_ppo<E> ppo(train_s, pc);
    actor_critic best_net = ppo.network();
    double elapsed0 = 0;
    std::string rows;
    if (o.resume) {
        std::string used;
        const auto st = read_restart_state(dir, used, o.print);
        if (st.is_null() && fs::exists(dir + state_mark))
            throw CheckpointError("resume: " + dir + "/state.bin does not exist (nor state.prev.bin), but the run saved its state there (" +
                                  dir + state_mark + "): put the state back, or start the run over with --overwrite");
        if (st.is_null()) say(tag + "no saved state in " + dir + " (stopped before its first save): starting from the beginning\n");
        if (!st.is_null()) {
            const auto& fmt = detail::state_get(st, used, "", "format");
            if (fmt != "gpuplace-restart-state") throw CheckpointError("state " + used + ": /format: not a restart state");
            if (detail::state_uint(st, used, "", "version") != run_state_version)
                throw CheckpointError("state " + used + ": /version: made by another version of gpuplace's run state (this build resumes version " +
                                      std::to_string(run_state_version) + ")");
            if (detail::state_uint(st, used, "", "seed") != pc.seed)
                throw CheckpointError("state " + used + ": /seed: a state of training seed " + std::to_string(detail::state_uint(st, used, "", "seed")) +
                                      ", expected " + std::to_string(pc.seed));
            const auto& lj = detail::state_get(st, used, "", "log");
            if (!lj.is_string()) throw CheckpointError("state " + used + ": /log: expected the learning log's rows");
            rows = lj.get<std::string>();
            res.best_val = detail::from_bytes<double>(detail::state_get(st, used, "", "best_val"), used, "/best_val", 1)[0];
            set_network_state(best_net, detail::state_get(st, used, "", "best_network"), used, "/best_network");
            elapsed0 = detail::from_bytes<double>(detail::state_get(st, used, "", "seconds"), used, "/seconds", 1)[0];
            res.beat_iteration = detail::state_uint(st, used, "", "beat_iteration");
            res.beat_env_steps = detail::state_uint(st, used, "", "beat_env_steps");
            res.beat_seconds = detail::from_bytes<double>(detail::state_get(st, used, "", "beat_seconds"), used, "/beat_seconds", 1)[0];
            const auto& fin = detail::state_get(st, used, "", "finished");
            if (fin.is_boolean() && fin.get<bool>()) {
                res.finished = true;
                res.env_steps = detail::state_uint(st, used, "", "env_steps");
                res.seconds = elapsed0;
                res.network = std::make_shared<const actor_critic>(std::move(best_net));
                write_file_atomic(dir + "/learning.csv", std::string(learning_header) + rows, o.on_write);
                if (dir != o.out) save_checkpoint(dir + "/ppo.json", *res.network, pc, eval_s, rc.queue, o.on_write);
                say(tag + "already trained (" + used + ")\n");
                return res;
            }
            ppo.load_state(detail::state_get(st, used, "", "trainer"), used);
            say(tag + "resuming at iteration " + std::to_string(ppo.iterations()) + " of " + std::to_string(ppo.total_iterations()) +
                " (" + used + ")\n");
        }
    }
    if (announce) {
        char b[512];
        std::snprintf(b, sizeof b, "training PPO on scenario %s: %zu parameters, %zu env steps (%zu iterations of %zu x %zu)\n",
                      eval_s.name.c_str(), ppo.network().num_params(), pc.total_steps, ppo.ppo_iterations(), pc.num_envs,
                      pc.num_steps);
        say(b);
        if (train_s.size() > 1) {
            std::string names;
            for (const auto& m : train_s) names += (names.empty() ? "" : ", ") + m.name + " (" + std::to_string(E(m).num_gpus()) + " GPUs)";
            say("the envs train on " + std::to_string(train_s.size()) + " scenarios in turn: " + names + "\n");
        }
        if (ppo.imitation_iterations() > 0) {
            std::snprintf(b, sizeof b, "first cloning %s: %zu env steps of its rollouts (%zu iterations), then %zu value-only iterations\n",
                          pc.teacher.c_str(), pc.imitation_steps, ppo.imitation_iterations(), pc.value_warmup);
            say(b);
        }
        if (ppo.dagger_iterations() > 0) {
            std::snprintf(b, sizeof b, "then expert iteration: %zu iterations of the network's rollouts labelled by %s%s, aggregated and cloned\n",
                          ppo.dagger_iterations(), pc.dagger_teacher.c_str(),
                          is_hindsight_policy(pc.dagger_teacher) ? " (a teacher that knows the future: the network acts without it)" : "");
            say(b);
        }
    }
    const std::string log_file = dir + "/learning.csv";
    write_file_atomic(log_file, std::string(learning_header) + rows, o.on_write);
    std::ofstream log(log_file, std::ios::app);
    auto save = [&](bool finished) {
        json st = {{"format", "gpuplace-restart-state"}, {"version", run_state_version}, {"gpuplace", version_string},
                   {"seed", pc.seed}, {"finished", finished}, {"log", rows}, {"env_steps", ppo.env_steps()}};
        st["best_val"] = detail::to_bytes<double>({&res.best_val, 1});
        st["best_network"] = network_state(best_net);
        const double secs = elapsed0 + res.seconds;
        st["seconds"] = detail::to_bytes<double>({&secs, 1});
        st["beat_iteration"] = res.beat_iteration;
        st["beat_env_steps"] = res.beat_env_steps;
        st["beat_seconds"] = detail::to_bytes<double>({&res.beat_seconds, 1});
        if (!finished) st["trainer"] = ppo.save_state();
        log.close();
        write_restart_state(dir, st, o.on_write);
        write_file_atomic(log_file, std::string(learning_header) + rows, o.on_write);  // the log's form that matches the state
        log.open(log_file, std::ios::app);
    };
    const std::size_t nval = vseeds.size();
    const auto t0 = std::chrono::steady_clock::now();
    auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    const std::size_t run_steps0 = ppo.env_steps(), start_iter = ppo.iterations();
    while (!ppo.done()) {
        const auto st = ppo.iterate();
        res.seconds = since();
        const double el = elapsed0 + res.seconds;
        const double sps = double(st.env_steps - run_steps0) / std::max(res.seconds, 1e-9);
        double vj = NAN, vc = NAN;
        // validation: every validate_every PPO iterations, the clone once (at the end of imitation),
        // and the last network
        const bool last_clone = st.imitation && st.iteration == ppo.imitation_iterations();
        if (nval > 0 && ((!st.imitation && st.iteration % rc.validate_every == 0) || last_clone || ppo.done())) {
            auto cur = std::make_shared<const actor_critic>(ppo.network());
            const auto rep = evaluate<E>(rc.policy_scenario(), {as_policy<E>("ppo", cur)}, vseeds, 1);
            vj = rep.policies[0].get("avg_jct").mean;
            vc = rep.policies[0].get("avg_comm_cost").mean;
            if (vj < res.best_val) {
                res.best_val = vj;
                best_net = ppo.network();
            }
            if (res.beat_iteration == 0 && vj < yardstick) {  // time to quality
                res.beat_iteration = st.iteration;
                res.beat_env_steps = st.env_steps;
                res.beat_seconds = el;
                const int digits = gpuplace::detail::distinguishing_digits(vj / 3600, yardstick / 3600);
                char b[256];
                std::snprintf(b, sizeof b, "%svalidation beats the best heuristic (%.*f h < %.*f h) at iteration %zu, %zu env steps, %s\n",
                              tag.c_str(), digits, vj / 3600, digits, yardstick / 3600, st.iteration, st.env_steps, hms(el).c_str());
                say(b);
            }
        }
        char line[512];
        std::snprintf(line, sizeof line, "%zu,%zu,%.3f,%.1f,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%.4g,%.4g\n",
                      st.iteration, st.env_steps, el, sps, st.episodes, st.mean_return, st.mean_jct, st.mean_comm_cost,
                      vj, vc, st.policy_loss, st.value_loss, st.entropy, st.approx_kl, st.clip_frac,
                      st.explained_variance, st.learning_rate, st.imitation ? "imitation" : st.dagger ? "dagger" : "ppo", st.teacher_agreement,
                      st.defer_share);
        rows += line;
        log << line << std::flush;
        if (o.on_event) o.on_event("iteration", st.iteration);
        if (!std::isnan(vj) || ppo.done()) {
            const double eta = res.seconds / double(st.iteration - start_iter) * double(ppo.total_iterations() - st.iteration);
            char b[512];
            if (st.imitation)
                std::snprintf(b, sizeof b, "%s[%s] it %4zu/%zu  steps %8zu  %6.0f steps/s  imitating %s: cross-entropy %.3f, agreement %.3f  "
                              "val JCT %.3f h  ETA %s\n",
                              tag.c_str(), hms(el).c_str(), st.iteration, ppo.total_iterations(), st.env_steps, sps, pc.teacher.c_str(),
                              st.policy_loss, st.teacher_agreement, vj / 3600, hms(eta).c_str());
            else if (st.dagger)
                std::snprintf(b, sizeof b, "%s[%s] it %4zu/%zu  steps %8zu  %6.0f steps/s  expert iteration (%s): %zu demonstrations, "
                              "%s %.3f, agreement %.3f  JCT %.3f h  val JCT %.3f h  ETA %s\n",
                              tag.c_str(), hms(el).c_str(), st.iteration, ppo.total_iterations(), st.env_steps, sps, pc.dagger_teacher.c_str(),
                              st.demonstrations, pc.dagger_loss == "advantage" ? "minus expected advantage" : "cross-entropy", st.policy_loss, st.teacher_agreement, st.mean_jct / 3600, vj / 3600, hms(eta).c_str());
            else
                std::snprintf(b, sizeof b, "%s[%s] it %4zu/%zu  steps %8zu  %6.0f steps/s  return %8.2f  JCT %.3f h  val JCT %.3f h  "
                              "entropy %.3f  DEFER %.2f  ETA %s\n",
                              tag.c_str(), hms(el).c_str(), st.iteration, ppo.total_iterations(), st.env_steps, sps, st.mean_return,
                              st.mean_jct / 3600, vj / 3600, st.entropy, st.defer_share, hms(eta).c_str());
            say(b);
        }
        const bool stop = !ppo.done() && o.stop_requested && o.stop_requested();
        if (stop || (!ppo.done() && st.iteration % rc.checkpoint_every == 0)) save(false);
        if (stop) {
            say(tag + "stopped after iteration " + std::to_string(st.iteration) + "; state saved in " + dir + "/state.bin\n");
            res.env_steps = ppo.env_steps();
            return res;
        }
    }
    if (nval == 0) best_net = ppo.network();  // nothing to select on: the last network
    res.finished = true;
    res.env_steps = ppo.env_steps();
    save(true);
    res.seconds += elapsed0;
    res.network = std::make_shared<const actor_critic>(std::move(best_net));
    if (dir != o.out) save_checkpoint(dir + "/ppo.json", *res.network, pc, eval_s, rc.queue, o.on_write);  // each restart's own best
    if (o.on_event) o.on_event("restart", index);
    return res;
}

}  // namespace

/// The run file (run.json) of the run in the folder `out`, checked to be one this build resumes;
/// CheckpointError otherwise.
json read_run_file(const std::string& out) {
    const std::string run_file = out + "/run.json";
    if (!std::filesystem::exists(run_file))
        throw CheckpointError("resume: " + out + " holds no run to resume (" + run_file + " does not exist)");
    const json stored = parse_json(read_text(run_file), run_file);
    if (!stored.is_object() || stored.value("format", "") != "gpuplace-run" || !stored.contains("config") ||
        !stored["config"].is_object())
        throw CheckpointError("resume: " + run_file + " is not a gpuplace run file");
    if (stored.value("version", 0) != run_state_version || stored.value("gpuplace", "") != version_string)
        throw CheckpointError("resume: " + run_file + " was written by gpuplace " + stored.value("gpuplace", "?") +
                              " (run state version " + gpuplace::detail::short_dump(stored.value("version", json())) +
                              "); this is gpuplace " + version_string + " (version " + std::to_string(run_state_version) + ")");
    return stored;
}

/// The config of a resumed run: the run's own (its run.json), with `layers` (what the user gave:
/// a config file, flags) merged over it. A resumed run keeps its config, so a layer that changes a
/// value is a CheckpointError naming each changed key, its stored and its new value and the layer.
run_config resumed_config(const std::string& out, const std::vector<run_config::layer>& layers) {
    const json stored = read_run_file(out);
    const std::string base_dir = stored.value("base_dir", "");
    const auto own = run_config::from_json(stored["config"], base_dir);
    auto rc = run_config::from_layers(stored["config"], layers, base_dir);
    const json a = own.to_json(), b = rc.to_json();
    if (a == b) return rc;
    std::string what;
    for (const auto& op : json::diff(a, b)) {
        const std::string path = op.value("path", "");
        std::string from;
        for (auto l = layers.rbegin(); l != layers.rend() && from.empty(); ++l)
            for (auto p = path; !p.empty() && from.empty(); p = p.substr(0, p.rfind('/')))
                if (l->sets(p)) from = l->source;
        const json* was = a.contains(json::json_pointer(path)) ? &a.at(json::json_pointer(path)) : nullptr;
        what += (what.empty() ? "" : ", ") + path + " (the run's " + (was ? gpuplace::detail::short_dump(*was) : std::string("absent")) +
                ", " + (from.empty() ? std::string("now") : from) + " " +
                (op.contains("value") ? gpuplace::detail::short_dump(op["value"]) : std::string("absent")) + ")";
    }
    throw CheckpointError("resume: the run in " + out + " was made with another config: " + what +
                          "; a resumed run keeps its config (drop these, or start a new run in another folder)");
}

/// Runs (or with o.resume continues) the training run of `rc` in o.out on env type E (gpuplace::env
/// picks it for the scenario). Throws ConfigError / CheckpointError on bad input, naming files and
/// what differs; a stopped run (o.stop_requested) returns complete = false with every state saved.
namespace {

template <class E>
run_result train_run_on(const run_config& rc, const run_options& o) {
    namespace fs = std::filesystem;
    const auto t0 = std::chrono::steady_clock::now();
    std::mutex print_lock;
    auto say = [&](const std::string& s) {
        if (!o.print) return;
        const std::lock_guard lock(print_lock);
        o.print(s);
    };
    const auto eval_s = rc.eval_scenario();
    const auto train_s = rc.train_scenarios();
    fs::create_directories(o.out);
    const json ident = {{"format", "gpuplace-run"}, {"version", run_state_version}, {"gpuplace", version_string},
                        {"config", rc.to_json()}, {"scenario", gpuplace::to_json(eval_s)}};
    const std::string run_file = o.out + "/run.json";
    if (o.resume) {
        const json stored = read_run_file(o.out);
        for (const char* k : {"config", "scenario"})
            if (stored.value(k, json()) != ident[k])
                throw CheckpointError("resume: the run in " + o.out + " was made with another " + k + ": " +
                                      detail::differences(stored.value(k, json()), ident[k]));
    } else {
        // a new run: the states of an earlier run in this folder must not be resumed by mistake later
        std::error_code ec;
        for (const auto& d : {fs::path(o.out)}) {
            fs::remove(d / "state.bin", ec);
            fs::remove(d / "state.prev.bin", ec);
            fs::remove(d / "state.saved", ec);
        }
        for (std::size_t r = 0; r < 64; ++r) {
            const auto d = fs::path(o.out) / ("seed_" + std::to_string(rc.ppo.seed + r));
            fs::remove(d / "state.bin", ec);
            fs::remove(d / "state.prev.bin", ec);
            fs::remove(d / "state.saved", ec);
        }
        auto stored = ident;
        stored["base_dir"] = rc.base_dir;  // where the config's relative file names are (not compared)
        write_file_atomic(run_file, stored.dump(2) + "\n", o.on_write);
    }
    const auto vseeds = validation_seeds(rc.validation_seeds);
    run_result out;
    double yardstick = -1;  // no validation: nothing to beat
    if (!vseeds.empty()) {  // the yardstick: every heuristic under every queue policy, on the validation seeds
        std::vector<any_policy<E>> hs;
        for (const auto& n : heuristic_variants(eval_s)) hs.push_back(heuristic<E>(n));
        const auto rep = evaluate<E>(eval_s, hs, vseeds, 1);
        std::string csv = "policy,avg_jct\n";
        for (const auto& p : rep.policies) {
            std::ostringstream v;
            v.precision(17);
            v << p.policy << "," << p.get("avg_jct").mean << "\n";
            csv += v.str();
        }
        out.best_heuristic = rep.best("avg_jct");
        yardstick = out.best_heuristic_val = rep.policies[0].get("avg_jct").mean;
        for (const auto& p : rep.policies)
            if (p.policy == out.best_heuristic) yardstick = out.best_heuristic_val = p.get("avg_jct").mean;
        char b[256];
        std::snprintf(b, sizeof b, "validation seeds (%zu): the best of %zu heuristic variants is %s, mean JCT %.3f h\n", vseeds.size(),
                      rep.policies.size(), out.best_heuristic.c_str(), yardstick / 3600);
        say(b);
        write_file_atomic(o.out + "/validation_heuristics.csv", csv, o.on_write);
    }
    const std::size_t R = rc.restarts;
    const std::size_t par = std::clamp<std::size_t>(o.parallel, 1, R);
    if (R > 1) {
        char b[256];
        std::snprintf(b, sizeof b, "%zu restarts (training seeds %llu..%llu), %zu at a time; the best on validation is kept\n", R,
                      static_cast<unsigned long long>(rc.ppo.seed), static_cast<unsigned long long>(rc.ppo.seed + R - 1), par);
        say(b);
    }
    out.restarts.resize(R);
    std::vector<std::exception_ptr> errs(R);
    auto one = [&](std::size_t r) {
        try {
            auto c = rc.ppo;
            c.seed = rc.ppo.seed + r;
            const std::string dir = R > 1 ? o.out + "/seed_" + std::to_string(c.seed) : o.out;
            const std::string tag = R > 1 ? "seed " + std::to_string(c.seed) + " " : "";
            out.restarts[r] = train_restart<E>({train_s, eval_s, c, rc, vseeds, yardstick, dir, tag, r == 0, r}, o, say);
        } catch (...) {
            errs[r] = std::current_exception();
        }
    };
    for (std::size_t r0 = 0; r0 < R; r0 += par) {
        if (r0 > 0 && o.stop_requested && o.stop_requested()) break;  // later restarts have not started: nothing to save
        std::vector<std::thread> ts;
        for (std::size_t r = r0; r < std::min(R, r0 + par); ++r) ts.emplace_back(one, r);
        for (auto& t : ts) t.join();
    }
    for (auto& e : errs)
        if (e) std::rethrow_exception(e);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& r : out.restarts) out.env_steps += r.env_steps;
    out.complete = std::all_of(out.restarts.begin(), out.restarts.end(), [](const restart_result& r) { return r.finished; });
    if (!out.complete) return out;
    std::size_t win = 0;
    for (std::size_t r = 0; r < R; ++r)
        if (out.restarts[r].best_val < out.restarts[win].best_val) win = r;
    out.kept = win;
    out.network = out.restarts[win].network;
    out.ppo = rc.ppo;
    out.ppo.seed = rc.ppo.seed + win;
    {
        // per restart: its best validation JCT and its time to quality (first validation below the
        // best heuristic's; 0 = never)
        std::ostringstream rs;
        rs.precision(17);
        rs << "seed,best_val_jct,env_steps,seconds,beat_iteration,beat_env_steps,beat_seconds\n";
        for (std::size_t r = 0; r < R; ++r) {
            const auto& x = out.restarts[r];
            rs << x.seed << "," << x.best_val << "," << x.env_steps << "," << x.seconds << "," << x.beat_iteration << ","
               << x.beat_env_steps << "," << x.beat_seconds << "\n";
            if (R == 1) continue;
            char b[256];
            std::snprintf(b, sizeof b, "seed %llu: best validation JCT %.3f h (%s)%s\n", static_cast<unsigned long long>(x.seed),
                          x.best_val / 3600, hms(x.seconds).c_str(), r == win ? "  <- kept" : "");
            say(b);
        }
        write_file_atomic(o.out + "/restarts.csv", rs.str(), o.on_write);
    }
    if (R > 1)  // the kept run's learning log is the one plotted
        write_file_atomic(o.out + "/learning.csv", read_text(o.out + "/seed_" + std::to_string(out.restarts[win].seed) + "/learning.csv"),
                          o.on_write);
    double train_secs = 0;
    for (const auto& r : out.restarts) train_secs = std::max(train_secs, r.seconds);
    char b[256];
    std::snprintf(b, sizeof b, "trained in %s (%zu env steps over %zu run(s)); best validation JCT %.3f h\n", hms(out.seconds).c_str(),
                  out.env_steps, R, out.restarts[win].best_val / 3600);
    say(b);
    save_checkpoint(o.out + "/ppo.json", *out.network, out.ppo, eval_s, rc.queue, o.on_write);
    say("checkpoint " + o.out + "/ppo.json (the network with the best validation JCT)\n");
    return out;
}

}  // namespace

run_result train_run(const run_config& rc, const run_options& o) {
    return train_run_on<gpuplace::env>(rc, o);
}

}  // namespace gpuplace::rl
