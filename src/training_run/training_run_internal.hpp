#pragma once
// The training run's parts shared by its files (training_run.cpp, compare.cpp, restart_state.cpp,
// restart.cpp, run.cpp): the learning log's header, the restart state files and one restart's
// training. Not part of training_run.hpp's API.

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/input_file.hpp>

#include "training_run.hpp"

namespace gpuplace::rl::run_internal {

inline constexpr std::string_view learning_header =
    "iteration,env_steps,seconds,steps_per_sec,episodes,mean_return,mean_jct,mean_comm_cost,val_jct,val_comm_cost,"
    "policy_loss,value_loss,entropy,approx_kl,clip_frac,explained_variance,learning_rate,phase,teacher_agreement,defer_share\n";

[[nodiscard]] inline std::string hms(double s) {
    char b[32];
    const long t = long(std::max(0.0, s));
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    return b;
}

[[nodiscard]] inline std::string read_text(const std::string& file) {
    return gpuplace::read_input_file<CheckpointError>(file, "");
}

/// A network's parameters and normalisers as a state document (the same layout as save_state()'s).
[[nodiscard]] json network_state(const actor_critic& net);

/// Sets a network (of the right shape) from network_state().
void set_network_state(actor_critic& net, const json& j, const std::string& src, const std::string& path);

/// Reads a restart's state file, falling back to the previous one (state.prev.bin) when the
/// latest cannot be read. Returns null when neither exists.
[[nodiscard]] json read_restart_state(const std::string& dir, std::string& used, const std::function<void(const std::string&)>& print);

/// The file a restart's folder keeps once it saved a state: a resume that finds no state there then
/// refuses (the state was deleted or moved) instead of starting the restart again from nothing.
inline constexpr const char* state_mark = "/state.saved";

/// Writes a restart's state: the last one becomes state.prev.bin, then state.bin is written atomically.
void write_restart_state(const std::string& dir, const json& doc, const write_observer& on_write);

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
restart_result train_restart(const restart_plan& p, const run_options& o, const std::function<void(const std::string&)>& say);
extern template restart_result train_restart<gpuplace::env>(const restart_plan&, const run_options&,
                                                            const std::function<void(const std::string&)>&);

}  // namespace gpuplace::rl::run_internal
