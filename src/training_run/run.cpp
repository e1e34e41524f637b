// The training run (training_run.hpp): the run (its folder and run file, resume, the restarts, the kept network).

#include "training_run.hpp"
#include "training_run_internal.hpp"

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

/// The run file (run.json) of the run in the folder `out`, checked to be one this build resumes;
/// CheckpointError otherwise.
json read_run_file(const std::string& out) {
    const std::string run_file = out + "/run.json";
    if (!std::filesystem::exists(run_file))
        throw CheckpointError("resume: " + out + " holds no run to resume (" + run_file + " does not exist)");
    const json stored = parse_json(run_internal::read_text(run_file), run_file);
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
namespace run_internal {

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

}  // namespace run_internal

run_result train_run(const run_config& rc, const run_options& o) {
    return run_internal::train_run_on<gpuplace::env>(rc, o);
}

}  // namespace gpuplace::rl
