// gpuplace-train's program (apps/lib/train_program.hpp): trains the reference PPO on a scenario
// (src/training_run/: restarts, validation, the best network kept, a run folder that resumes),
// then (with --compare) evaluates it against every
// heuristic on held-out seeds, prints the table and writes plots (`python3 -m gpuplace plot OUT`,
// from the installed Python package).
//   gpuplace-train --help
// Ctrl-C (SIGINT) or SIGTERM: the current iteration finishes, the state is saved and the program
// exits with 130 / 143; `gpuplace-train --out DIR --resume` continues. A second signal exits at once
// (the files on disk are always whole: every write is atomic).
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <gpuplace/atomic_file.hpp>
#include <gpuplace/input_file.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/rl/rl.hpp>

#include "../cli.hpp"
#include "train_program.hpp"
#include "training_run.hpp"

namespace {
using namespace gpuplace;
using json = nlohmann::json;

std::atomic<int> stop_signal{0};

extern "C" void on_signal(int sig) {
    int none = 0;
    if (!stop_signal.compare_exchange_strong(none, sig)) _exit(128 + sig);  // the second one: at once
    const char msg[] = "\nstopping after the current iteration (again to quit at once)\n";
    (void)!write(2, msg, sizeof msg - 1);
}

std::string read_file(const std::string& f) { return read_input_file<ConfigError>(f, "config file"); }

/// `s` as one word for /bin/sh: in single quotes, each ' written as '\''.
std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

/// One line of the summary over several compare scenarios.
struct compare_row {
    std::string scenario, best;
    double mine = 0, best_mean = 0, pack_fifo = 0;
    paired_stat vs_best, vs_pack_fifo;
};

int compare(const rl::run_config& rc, std::shared_ptr<const rl::actor_critic> net, const std::vector<rl::restart_result>& restarts,
            const std::string& out, std::size_t seeds, bool plot) {
    const auto me = rl::policy_name(rc);
    const auto scenarios = rc.compare_scenarios();
    std::vector<compare_row> rows;
    for (std::size_t k = 0; k < scenarios.size(); ++k) {
        const auto& s = scenarios[k];
        const auto rep = rl::compare_with_heuristics(s, rc, net, held_out_seeds(seeds), 0,
                                                     restarts.size() > 1 ? restarts : std::vector<rl::restart_result>{});
        const auto best = rep.best("avg_jct", {"ppo"});
        std::printf("\nscenario %s, %zu held-out seeds, every heuristic under every queue policy:\n%s", s.name.c_str(), seeds,
                    rep.table().c_str());
        std::printf("the best heuristic: %s\n\n%s", best.c_str(), rep.paired_table(me).c_str());
        if (restarts.size() > 1) std::printf("\n%s", rl::spread_over_seeds(rep, me).text().c_str());
        std::filesystem::create_directories(out);
        const std::string suffix = scenarios.size() > 1 ? "_" + std::to_string(k) : "";
        write_file_atomic(out + "/compare" + suffix + ".csv", rep.csv());
        write_file_atomic(out + "/compare" + suffix + ".json", to_json(rep).dump(2) + "\n");
        compare_row row{s.name, best, 0, 0, 0, {}, {}};
        for (const auto& p : rep.policies) {
            if (p.policy == me) row.mine = p.get("avg_jct").mean;
            if (p.policy == best) row.best_mean = p.get("avg_jct").mean;
            if (p.policy == "pack+fifo") row.pack_fifo = p.get("avg_jct").mean;
        }
        for (const auto& ps : rep.paired(me)) {
            if (ps.other == best) row.vs_best = ps;
            if (ps.other == "pack+fifo") row.vs_pack_fifo = ps;
        }
        rows.push_back(row);
    }
    if (rows.size() > 1) {
        std::printf("\n%s on each scenario (mean JCT, h; paired differences on the same %zu seeds):\n", me.c_str(), seeds);
        std::printf("%-18s %9s  %-24s %9s  %-26s %-26s\n", "scenario", me.c_str(), "best heuristic", "its JCT", "minus the best",
                    "minus pack+fifo");
        for (const auto& r : rows) {
            char a[64], b[64];
            std::snprintf(a, sizeof a, "%+.3f +- %.3f (%zu/%zu)", r.vs_best.diff.mean / 3600, r.vs_best.diff.sem / 3600, r.vs_best.lower,
                          r.vs_best.seeds);
            std::snprintf(b, sizeof b, "%+.3f +- %.3f (%zu/%zu)", r.vs_pack_fifo.diff.mean / 3600, r.vs_pack_fifo.diff.sem / 3600,
                          r.vs_pack_fifo.lower, r.vs_pack_fifo.seeds);
            std::printf("%-18s %9.3f  %-24s %9.3f  %-26s %-26s\n", r.scenario.c_str(), r.mine / 3600, r.best.c_str(), r.best_mean / 3600, a, b);
        }
        std::printf("(x/y: lower on x of y seeds)\n");
    }
    if (plot) {
        // the plots come from the installed Python package (matplotlib), never from a path in the repository
        const std::string cmd = "python3 -m gpuplace plot " + shell_quote(out);
        std::fflush(stdout);
        if (const int st = std::system(cmd.c_str()); st != 0)
            std::printf("plots skipped: '%s' failed (exit status %d); they need the Python package with its plot extra "
                        "(pip install './python[plot]'). The run itself is complete.\n",
                        cmd.c_str(), st > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : st);
    }
    return 0;
}

}  // namespace

int gpuplace::apps::train_main(int argc, char** argv, const train_seams& seams) {
    gpuplace::rl::keep_freed_memory();  // the per_gpu network's matrices change size every minibatch (rl/memory.hpp)
    gpuplace::rl::pin_cache_sizes();    // the same training on every CPU (rl/blocking.hpp)
    CLI::App app{"Trains the reference PPO on a scenario, then (with --compare) evaluates it against every heuristic "
                 "on held-out seeds. Without --config, the embedded default config (--print-config) is used.",
                 "gpuplace-train"};
    app.footer("Example: gpuplace-train --scenario default --steps 200000 --out runs/default --compare\n");
    std::string config_file, scenario_name, out = "out/train", load, action_mode;
    std::size_t steps = 0, seed = 0, restarts = 0, threads = 0, checkpoint_every = 0, seeds = 20;
    bool resume = false, overwrite = false, do_compare = false, no_plot = false, print_config = false;
    app.add_option("--config", config_file,
                   "training config (JSON) merged over the default recipe, or a recipe by name (data/recipes/: " + [] {
                       std::string s;
                       for (const auto& r : rl::run_recipe_names()) s += (s.empty() ? "" : ", ") + r;
                       return s;
                   }() + ")");
    app.add_option("--scenario", scenario_name, "scenario: a preset (" + [] {
        std::string s;
        for (const auto& p : preset_names()) s += (s.empty() ? "" : ", ") + p;
        return s;
    }() + ") or a scenario file (with --load: default the model's own scenario)");
    app.add_option("--action-mode", action_mode, "what an action chooses in every scenario of the run: gpu, placement, job or round "
                                                 "(default: each scenario's env.action_mode; docs/mdp.md)")
        ->check(CLI::IsMember({"gpu", "placement", "job", "round"}));
    app.add_option("--steps", steps, "PPO env steps (after imitation)")->check(apps::whole(1));
    app.add_option("--seed", seed, "first training seed")->check(apps::whole(0));
    app.add_option("--restarts", restarts, "training seeds seed..seed+N-1; the best on validation is kept")->check(apps::whole(1, 64));
    app.add_option("--threads", threads, "env stepping threads per restart (results do not depend on it)")->check(apps::whole(1, 1024));
    app.add_option("--checkpoint-every", checkpoint_every, "iterations between saved training states")->check(apps::whole(1));
    app.add_option("--out", out, "run folder")->capture_default_str();
    auto* resume_flag = app.add_flag("--resume", resume, "continue the run in --out from its last saved state");
    app.add_flag("--overwrite", overwrite, "start a new run in --out even if it holds one (its saved states are removed)")
        ->excludes(resume_flag);
    app.add_flag("--compare", do_compare, "evaluate against every heuristic on held-out seeds");
    app.add_option("--seeds", seeds, "held-out seeds of --compare")->capture_default_str()->check(apps::whole(1, 100000));
    std::vector<std::string> compare_on;
    app.add_option("--load", load, "evaluate this checkpoint (a file, or a shipped model: " + [] {
        std::string names;
        for (const auto& m : rl::model_names()) names += (names.empty() ? "" : ", ") + m;
        return names;
    }() + ") instead of training (implies --compare)");
    std::string compare_on_list;
    app.add_option("--compare-on", compare_on_list, "scenarios --compare evaluates on (default: the run's), separated by commas, "
                                                    "e.g. philly:0e4a51,philly:6c71a0")
        ->type_name("LIST");
    app.add_flag("--no-plot", no_plot, "do not write plots");
    app.add_flag("--print-config", print_config, "print the config the run would use (the embedded default, or --config's "
                                                 "recipe or file, with the flags merged over it) and exit");
    if (const int rc = apps::parse(app, argc, argv); rc >= 0) return rc;
    if (app.count("--compare-on")) {
        std::stringstream items(compare_on_list + ",");
        for (std::string item; std::getline(items, item, ',');) {
            if (item.empty())
                return apps::usage_failure(app, "--compare-on \"" + compare_on_list + "\": item " + std::to_string(compare_on.size() + 1) +
                                                    " is empty (give presets or scenario files, separated by commas)");
            compare_on.push_back(item);
        }
    }
    try {
        // what the user gave, each naming itself in errors: the config file (or recipe), then the flags
        std::vector<rl::run_config::layer> layers;
        std::string base_dir;
        const auto recipes = rl::run_recipe_names();
        if (!config_file.empty() && !std::filesystem::exists(config_file) &&
            std::find(recipes.begin(), recipes.end(), config_file) != recipes.end()) {
            layers.push_back({rl::run_recipe(config_file), "recipe " + config_file});
        } else if (!config_file.empty()) {
            layers.push_back({parse_json(read_file(config_file), config_file), config_file});
            base_dir = std::filesystem::path(display_path(config_file)).parent_path().string();
        }
        auto flag = [&](const char* name, json doc) { layers.push_back({std::move(doc), name}); };
        if (!scenario_name.empty()) flag("--scenario", {{"scenario", scenario_name}});
        if (!action_mode.empty()) flag("--action-mode", {{"action_mode", action_mode}});
        if (steps) flag("--steps", {{"ppo", {{"total_steps", steps}}}});
        if (app.count("--seed")) flag("--seed", {{"ppo", {{"seed", seed}}}});
        if (threads) flag("--threads", {{"ppo", {{"threads", threads}}}});
        if (restarts) flag("--restarts", {{"restarts", restarts}});
        if (checkpoint_every) flag("--checkpoint-every", {{"checkpoint_every", checkpoint_every}});
        if (!compare_on.empty()) flag("--compare-on", {{"compare_on", compare_on}});
        const auto defaults = rl::default_run_config();
        auto rc = resume ? rl::resumed_config(out, layers) : rl::run_config::from_layers(defaults, layers, base_dir);
        if (print_config) {  // what the run would use: the default (or a recipe), the config file and the flags merged
            auto merged = defaults;
            for (const auto& l : layers) merged.merge_patch(l.doc);
            std::printf("%s\n", (resume ? rc.to_json() : merged).dump(2).c_str());
            return 0;
        }
        std::optional<rl::checkpoint> ck;
        if (!load.empty()) {
            ck = rl::load_model(load);
            rc.queue = ck->queue;  // the policy acts under its own queue policy
            // evaluated on its own scenario unless the user names one
            if (std::none_of(layers.begin(), layers.end(), [](const auto& l) { return l.sets("/scenario"); })) rc.scenario = ck->scenario;
            do_compare = true;
        }
        // a trace shorter than the episodes asked of it replays whole: say how many jobs an episode has
        for (const auto& ts : ck ? std::vector<scenario>{rc.eval_scenario()} : rc.train_scenarios())
            if (ts.workload.kind == "trace" && ts.workload.episode_jobs > 0) {
                env probe(ts);
                probe.reset(1);
                if (const auto n = probe.simulator().jobs().size(); n < ts.workload.episode_jobs)
                    apps::warning(app, "scenario " + ts.name + " asks for episodes of " + std::to_string(ts.workload.episode_jobs) +
                                           " jobs (episode_jobs), but its trace gives " + std::to_string(n) +
                                           " (seed 1's episode): an episode replays a whole file when it has fewer jobs");
            }
        // every output is checked before any work starts
        if (const auto why = apps::output_folder_problem("--out", out); !why.empty()) return apps::failure(app, why);
        if (load.empty() && !resume && !overwrite && std::filesystem::exists(out + "/run.json"))
            return apps::failure(app, "--out " + out + " already holds a run (" + out + "/run.json): continue it with --resume, " +
                                          "start it over with --overwrite, or choose another folder with --out");
        const auto s = rc.eval_scenario();
        if (ck) rl::check_information(ck->scenario, s, load);  // e.g. a network trained with true durations on hidden ones
        std::shared_ptr<const rl::actor_critic> net;
        std::vector<rl::restart_result> trained;
        if (ck) {
            net = std::make_shared<const rl::actor_critic>(std::move(ck->network));
            std::printf("loaded %s (scenario %s)\n", load.c_str(), s.name.c_str());
        } else {
            std::signal(SIGINT, on_signal);
            std::signal(SIGTERM, on_signal);
            rl::run_options o;
            o.out = out;
            o.resume = resume;
            o.parallel = std::max(1u, std::thread::hardware_concurrency());
            o.print = [](const std::string& line) {
                std::fputs(line.c_str(), stdout);
                std::fflush(stdout);
            };
            o.stop_requested = [] { return stop_signal.load() != 0; };
            o.on_event = seams.on_event;
            o.on_write = seams.on_write;
            const auto res = rl::train_run(rc, o);
            if (!res.complete) {
                const int sig = stop_signal.load();
                std::printf("stopped by %s; every state is saved. Continue with:\n  gpuplace-train --out %s --resume\n",
                            sig == SIGTERM ? "SIGTERM" : "SIGINT", out.c_str());
                return 128 + (sig ? sig : SIGINT);
            }
            net = res.network;
            trained = res.restarts;
        }
        if (!do_compare) return 0;
        return compare(rc, net, trained, out, seeds, !no_plot);
    } catch (const std::exception& e) {
        return apps::failure(app, e.what());
    }
}
