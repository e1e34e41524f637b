// The training run (training_run.hpp): one restart trained (a training seed in its folder, validated, its state
// saved and resumed).

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

namespace run_internal {

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
            else if (st.dagger) {
                std::string of;  // what the demonstrations are made of, with the options that say so
                if (pc.dagger_moved_weight != 1.0) of = " (" + std::to_string(st.moved_demonstrations) + " moved off its base)";
                if (pc.dagger_draws > 1)
                    of = " (" + std::to_string(pc.dagger_draws) + " draws of futures each; they disagree on " +
                         std::to_string(st.split_demonstrations) + ")";
                std::snprintf(b, sizeof b, "%s[%s] it %4zu/%zu  steps %8zu  %6.0f steps/s  expert iteration (%s): %zu demonstrations%s, "
                              "%s %.3f, agreement %.3f  JCT %.3f h  val JCT %.3f h  ETA %s\n",
                              tag.c_str(), hms(el).c_str(), st.iteration, ppo.total_iterations(), st.env_steps, sps, pc.dagger_teacher.c_str(),
                              st.demonstrations, of.c_str(),
                              pc.dagger_loss == "advantage" ? "minus expected advantage" : "cross-entropy", st.policy_loss, st.teacher_agreement, st.mean_jct / 3600, vj / 3600, hms(eta).c_str());
            } else
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

template restart_result train_restart<gpuplace::env>(const restart_plan&, const run_options&,
                                                    const std::function<void(const std::string&)>&);

}  // namespace run_internal

}  // namespace gpuplace::rl
