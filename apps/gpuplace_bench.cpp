// gpuplace-bench: the benchmark (docs/bench.md). Lists the tracks, scores a policy (a heuristic
// variant, a rollout planner or a C++ checkpoint / shipped model) on a track or the whole suite into result JSON
// files, validates result files bit for bit, and finds a track's best heuristic (yardstick).
// Run with --help for the commands and their options.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gpuplace/atomic_file.hpp>
#include <gpuplace/input_file.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/progress.hpp>
#include <gpuplace/rl/checkpoint.hpp>
#include <gpuplace/scenario_source.hpp>

#include "bench/policy.hpp"
#include "bench/run.hpp"
#include "bench/track.hpp"

#include "cli.hpp"

namespace {

namespace bench = gpuplace::bench;

std::string read_text(const std::string& file) { return gpuplace::read_input_file(file, "result file"); }

int cmd_tracks(const std::string& version) {
    for (const auto& t : bench::tracks(version))
        std::printf("%-22s %s  %3zu episodes (seeds %llu..)  best heuristic %-32s %s\n", t.name.c_str(), t.version.c_str(),
                    t.episodes, static_cast<unsigned long long>(t.first_seed), t.best_heuristic.c_str(), t.about.c_str());
    return 0;
}

struct run_args {
    std::vector<std::string> tracks, policies;
    std::string scenario, best = "pack";
    std::size_t episodes = 10;
    bool suite = false, hash_only = false, overwrite = false, quiet = false;
    std::string out, out_dir, commit, version = std::string(bench::current_version);
    std::size_t threads = 0;
};

int cmd_run(const CLI::App& app, const run_args& a) {
    std::vector<const bench::track*> ts;
    std::optional<bench::track> own;  // --scenario: a track of one's own
    if (!a.scenario.empty()) {
        const auto s = gpuplace::read_scenario(a.scenario);
        own = bench::scenario_track(s, a.episodes, a.best);
        (void)gpuplace::heuristic<gpuplace::env>(own->best_heuristic);  // a known name, now
        if (s.workload.kind == "trace" || s.workload.kind == "mixture")  // a trace that cannot fill the episodes asked
            if (const auto why = gpuplace::env(s).short_episodes(); !why.empty())
                gpuplace::apps::warning(app, "--scenario " + a.scenario + ": " + why);
        ts.push_back(&*own);
    }
    if (a.suite)
        for (const auto& t : bench::tracks(a.version)) ts.push_back(&t);
    for (const auto& n : a.tracks) ts.push_back(&bench::find_track(n, a.version));
    // every policy name is checked (and every model loaded) before any episode runs
    std::vector<std::string> names;
    for (const auto& p : a.policies)
        if (p != "heuristics") names.push_back(p);
    for (const auto& n : names) (void)bench::policy_named(n);
    const bool all_heuristics = std::find(a.policies.begin(), a.policies.end(), "heuristics") != a.policies.end();
    std::size_t runs = 0;
    for (const auto* t : ts) runs += names.size() + (all_heuristics ? gpuplace::heuristic_variants(bench::track_scenario(*t)).size() : 0);
    if (!a.out.empty() && runs != 1)
        return gpuplace::apps::usage_failure(app, "--out writes one result (" + std::to_string(runs) + " runs asked for): give --out-dir");
    if (!a.out.empty())
        if (const auto why = gpuplace::apps::output_file_problem("--out", a.out); !why.empty()) return gpuplace::apps::failure(app, why);
    if (!a.out_dir.empty()) {
        if (const auto why = gpuplace::apps::output_folder_problem("--out-dir", a.out_dir); !why.empty())
            return gpuplace::apps::failure(app, why);
        if (std::error_code ec; std::filesystem::create_directories(a.out_dir, ec), ec)
            return gpuplace::apps::failure(app, "--out-dir " + a.out_dir + ": cannot make the folder (" + ec.message() +
                                                    "): expected a folder on a writable filesystem");
    }
    const char* env_commit = std::getenv("GPUPLACE_COMMIT");
    bench::run_options o;
    o.threads = a.threads;
    o.keep_actions = !a.hash_only;
    o.commit = !a.commit.empty() ? a.commit : env_commit ? env_commit : "";
    std::printf("%s\n", bench::result_row_header().c_str());
    std::fflush(stdout);
    double total_seconds = 0;
    std::size_t skipped = 0;
    for (const auto* t : ts) {
        auto pols = names;
        if (all_heuristics)
            for (const auto& h : gpuplace::heuristic_variants(bench::track_scenario(*t))) pols.push_back(h);
        for (const auto& pn : pols) {
            std::string file = a.out;
            if (!a.out_dir.empty()) file = (std::filesystem::path(a.out_dir) / bench::result_file_name(t->name, pn)).string();
            if (!file.empty() && !a.out_dir.empty() && !a.overwrite && std::filesystem::exists(file)) {
                std::fprintf(stderr, "gpuplace-bench: %s exists, kept (--overwrite runs it again)\n", file.c_str());
                continue;
            }
            auto np = bench::policy_named(pn);
            gpuplace::progress_line line(stderr, "gpuplace-bench: " + t->name + " " + pn + ": episodes");
            if (!a.quiet) o.progress = std::ref(line);
            bench::run_result r;
            try {
                r = bench::run(*t, np.policy, np.ref, o);
            } catch (const gpuplace::Error& e) {  // e.g. a queue policy the track refuses, a network for other features
                if (ts.size() == 1) throw;
                std::fprintf(stderr, "gpuplace-bench: track %s: %s cannot run there, skipped: %s\n", t->name.c_str(), pn.c_str(), e.what());
                ++skipped;
                continue;
            }
            total_seconds += r.seconds;
            std::printf("%s\n", bench::result_row(r).c_str());
            std::fflush(stdout);
            if (!file.empty()) gpuplace::write_file_atomic(file, bench::result_text(r));
        }
    }
    if (!a.quiet) std::fprintf(stderr, "gpuplace-bench: the policies' episodes took %.2f s\n", total_seconds);
    if (skipped) std::fprintf(stderr, "gpuplace-bench: %zu runs skipped (above)\n", skipped);
    return skipped ? 1 : 0;
}

int cmd_validate(const std::vector<std::string>& files, std::size_t threads, bool quiet, bool rerun_planners) {
    int bad = 0;
    for (const auto& f : files) {
        bench::validation v;
        try {
            gpuplace::progress_line line(stderr, "gpuplace-bench: validating " + f);
            gpuplace::eval_progress progress;
            if (!quiet) progress = std::ref(line);
            const auto resolve = rerun_planners ? bench::rerunning_planners(bench::model_resolver()) : bench::model_resolver();
            v = bench::validate_text(read_text(f), f, resolve, threads, progress);
        } catch (const std::exception& e) {
            v = {false, "", e.what()};
        }
        std::printf("%s: %s: %s\n", f.c_str(), v.valid ? "valid" : "INVALID", v.message.c_str());
        std::fflush(stdout);
        bad += !v.valid;
    }
    if (bad) std::fprintf(stderr, "gpuplace-bench: %d of %zu results invalid\n", bad, files.size());
    return bad ? 1 : 0;
}

/// submit: a result validated, copied into <repo>/bench/results (a Python policy's command added to
/// bench/commands.json) and the leaderboard regenerated by <repo>/scripts/leaderboard.py.
struct submit_args {
    std::string file, repo = ".", command;
    bool overwrite = false, quiet = false;
    std::size_t threads = 0;
};

int cmd_submit(const CLI::App& app, const submit_args& a) {
    namespace fs = std::filesystem;
    const auto results = fs::path(a.repo) / "bench" / "results", script = fs::path(a.repo) / "scripts" / "leaderboard.py";
    if (!fs::is_directory(results))
        return gpuplace::apps::failure(app, "submit: " + results.string() + " is not a folder (--repo names the gpuplace repository)");
    const std::string text = read_text(a.file);
    gpuplace::progress_line line(stderr, "gpuplace-bench: validating " + a.file);
    gpuplace::eval_progress progress;
    if (!a.quiet) progress = std::ref(line);
    const auto v = bench::validate_text(text, a.file, bench::model_resolver(), a.threads, progress);
    if (!v.valid) return gpuplace::apps::failure(app, "submit: " + a.file + " is not valid, nothing submitted: " + v.message);
    const auto j = gpuplace::parse_json(text, a.file);
    const auto kind = j.at("policy").at("kind").get<std::string>();
    const std::string name = bench::result_file_name(j.at("track").at("name").get<std::string>(), j.at("policy").at("name").get<std::string>());
    const auto dest = results / name;
    if (fs::exists(dest) && !a.overwrite)
        return gpuplace::apps::failure(app, "submit: " + dest.string() + " exists (--overwrite replaces it)");
    const bool named = kind == "heuristic" || kind == "planner" || kind == "model";  // gpuplace-bench run reproduces these by name
    if (!named && a.command.empty())
        return gpuplace::apps::failure(app, "submit: a " + kind + " policy's result needs the commands that reproduce it (training "
                                            "included): give --command \"...\"");
    if (!a.command.empty()) {  // bench/commands.json: result file name -> its commands
        const auto commands = fs::path(a.repo) / "bench" / "commands.json";
        auto c = fs::exists(commands) ? gpuplace::parse_json(gpuplace::read_input_file(commands.string(), "commands file"), commands.string())
                                      : gpuplace::json::object();
        c[name] = a.command;
        gpuplace::write_file_atomic(commands.string(), c.dump(1) + "\n");
    }
    gpuplace::write_file_atomic(dest.string(), text);
    std::printf("%s: valid (%s); submitted as %s\n", a.file.c_str(), v.message.c_str(), dest.string().c_str());
    std::fflush(stdout);
    if (!fs::exists(script)) {
        gpuplace::apps::warning(app, "no " + script.string() + ": regenerate the leaderboard with python3 scripts/leaderboard.py");
        return 0;
    }
    const auto quote = [](const std::string& s) {
        std::string q = "'";
        for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
        return q + "'";
    };
    if (const int rc = std::system(("python3 " + quote(script.string())).c_str()); rc != 0)
        return gpuplace::apps::failure(app, "submit: the result is in " + dest.string() + ", but python3 " + script.string() +
                                            " failed (exit status " + std::to_string(rc) + "): run it again to regenerate the leaderboard");
    return 0;
}

int cmd_yardstick(const std::string& track, const std::string& version, std::size_t threads, bool check) {
    const auto& t = bench::find_track(track, version);
    gpuplace::progress_line line(stderr, "gpuplace-bench: " + t.name + " yardstick: episodes");
    const auto by_jct = bench::yardstick(t, threads, std::ref(line));
    for (const auto& [jct, name] : by_jct)
        std::printf("%-36s %10.4f h%s\n", name.c_str(), jct / 3600, name == t.best_heuristic ? "  <- the track's best heuristic" : "");
    std::printf("best: %s (%s %s records %s)\n", by_jct.front().second.c_str(), t.name.c_str(), t.version.c_str(),
                t.best_heuristic.c_str());
    if (check && by_jct.front().second != t.best_heuristic) {
        std::fprintf(stderr, "gpuplace-bench: track %s %s: the best heuristic is %s, the track records %s\n", t.name.c_str(),
                     t.version.c_str(), by_jct.front().second.c_str(), t.best_heuristic.c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"The gpuplace benchmark (docs/bench.md): fixed tracks with held-out seeds; scores a policy on a track or "
                 "the whole suite into result JSON, validates results bit for bit.",
                 "gpuplace-bench"};
    app.footer("Example: gpuplace-bench run --track default --policy pack+sjf --out result.json && gpuplace-bench validate result.json\n");
    std::string version(bench::current_version);
    std::size_t threads = 0;
    auto* tracks = app.add_subcommand("tracks", "list the tracks");
    tracks->footer("Example: gpuplace-bench tracks\n");
    tracks->add_option("--version", version, "track version")->capture_default_str();

    run_args ra;
    auto* run = app.add_subcommand("run", "score policies on tracks (or the whole suite) and write result JSON");
    run->footer("Example: gpuplace-bench run --track default --policy pack+sjf --out result.json\n");
    auto* track_opt = run->add_option("--track", ra.tracks, "track(s) to run (gpuplace-bench tracks lists them)")->delimiter(',');
    auto* suite_opt = run->add_flag("--suite", ra.suite, "every track of the version");
    track_opt->excludes(suite_opt);
    auto* scen_opt = run->add_option("--scenario", ra.scenario,
                                     "a track of one's own: a scenario file or preset (not versioned; its results hold the "
                                     "whole scenario and validate against it)");
    scen_opt->excludes(suite_opt);
    run->add_option("--episodes", ra.episodes, "--scenario: held-out seeds 1000000..")->capture_default_str()
        ->check(gpuplace::apps::whole(1, 1000000))->needs(scen_opt);
    run->add_option("--best", ra.best, "--scenario: the heuristic variant of the paired differences")->capture_default_str()->needs(scen_opt);
    run->add_option("--policy", ra.policies,
                    "policies: a heuristic variant (e.g. pack+sjf), a rollout planner (rollout:<h>, rollout<F>:<h>, "
                    "hindsight:<h>, not causal; placement-mode tracks only), a shipped model (e.g. default, philly_distilled), "
                    "a C++ checkpoint (file.json or model:<file>), or 'heuristics' for every heuristic variant of the track; a model "
                    "optionally with a hold guard (@hold:<heuristic> or @hold_from:<gpus>) and then a placement margin "
                    "(@place:<heuristic>:<logits>), e.g. philly_distilled@hold_from:24@place:pack:1 (docs/ppo.md)")
        ->delimiter(',')->required();
    auto* out_opt = run->add_option("--out", ra.out, "write the result here (one track and one policy)");
    run->add_option("--out-dir", ra.out_dir, "write each result as <track>__<policy>.json here (existing ones are kept)")->excludes(out_opt);
    run->add_flag("--overwrite", ra.overwrite, "with --out-dir: run again results that exist");
    run->add_flag("--hash-only", ra.hash_only, "record each episode's action hash only, not the actions");
    run->add_option("--commit", ra.commit, "the source's commit to record (default: $GPUPLACE_COMMIT, else none)");
    run->add_option("--version", ra.version, "track version")->capture_default_str();
    run->add_option("--threads", ra.threads, "worker threads over episodes (0 = all cores)")->capture_default_str()
        ->check(gpuplace::apps::whole(0, 4096));
    run->add_flag("--quiet", ra.quiet, "no progress line");

    std::vector<std::string> files;
    bool quiet = false, rerun_planners = false;
    auto* val = app.add_subcommand("validate", "re-run (or replay) result files and check them bit for bit");
    val->footer("Example: gpuplace-bench validate result.json\n");
    val->add_option("files", files, "result JSON files")->required()->check(CLI::ExistingFile);
    val->add_option("--threads", threads, "worker threads (0 = all cores)")->capture_default_str()->check(gpuplace::apps::whole(0, 4096));
    val->add_flag("--quiet", quiet, "no progress line");
    val->add_flag("--rerun-planners", rerun_planners,
                  "play a rollout planner's futures again (slow) instead of replaying its recorded actions");

    std::string ytrack;
    bool check = false;
    auto* yard = app.add_subcommand("yardstick", "run every heuristic variant on a track and print them by mean JCT");
    yard->footer("Example: gpuplace-bench yardstick --track proximity_drl --check\n");
    yard->add_option("--track", ytrack, "the track")->required();
    yard->add_flag("--check", check, "exit 1 when the best is not the heuristic the track records");
    yard->add_option("--version", version, "track version")->capture_default_str();
    yard->add_option("--threads", threads, "worker threads (0 = all cores)")->capture_default_str()->check(gpuplace::apps::whole(0, 4096));

    submit_args sa;
    auto* sub = app.add_subcommand("submit", "validate a result, add it to bench/results and regenerate the leaderboard");
    sub->footer("Example: gpuplace-bench submit result.json\n");
    sub->add_option("file", sa.file, "the result JSON file")->required();
    sub->add_option("--repo", sa.repo, "the gpuplace repository (its bench/results, bench/commands.json and scripts/leaderboard.py)")
        ->capture_default_str();
    sub->add_option("--command", sa.command, "a Python policy's commands that reproduce the result, training included (into bench/commands.json)");
    sub->add_flag("--overwrite", sa.overwrite, "replace a result of the same track and policy");
    sub->add_option("--threads", sa.threads, "worker threads (0 = all cores)")->capture_default_str()->check(gpuplace::apps::whole(0, 4096));
    sub->add_flag("--quiet", sa.quiet, "no progress line");

    if (const int rc = gpuplace::apps::parse(app, argc, argv); rc >= 0) return rc;
    if (app.get_subcommands().empty()) return gpuplace::apps::usage_failure(app, "give a command: tracks, run, validate, yardstick or submit");
    try {
        if (*tracks) return cmd_tracks(version);
        if (*run) {
            if (!ra.suite && ra.tracks.empty() && ra.scenario.empty()) return gpuplace::apps::usage_failure(app, "run: give --track T, --suite or --scenario FILE");
            return cmd_run(app, ra);
        }
        if (*val) return cmd_validate(files, threads, quiet, rerun_planners);
        if (*yard) return cmd_yardstick(ytrack, version, threads, check);
        if (*sub) return cmd_submit(app, sa);
    } catch (const std::exception& e) {
        return gpuplace::apps::failure(app, e.what());
    }
    return 0;
}
