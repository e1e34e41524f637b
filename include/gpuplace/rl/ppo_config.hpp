#pragma once
/// \file rl/ppo_config.hpp
/// The reference trainer's hyperparameters (rl/ppo.hpp), readable from JSON (errors name the path):
/// PPO's, behaviour cloning of a heuristic before it, and expert iteration (DAgger) with any named
/// policy as the teacher.

#include <cstdint>
#include <string>
#include <string_view>

#include "../json/util.hpp"
#include "../policy_registry.hpp"
#include "actor_critic.hpp"

namespace gpuplace::rl {

using gpuplace::teacher_policy;  // policy_registry.hpp: a heuristic or the round planner

/// Hyperparameters of PPO. Every field is readable from JSON (errors name the path).
struct ppo_config {
    std::size_t total_steps = 300'000;  ///< PPO env steps (summed over envs); 0: none (imitation, expert iteration alone)
    std::size_t num_envs = 16;
    std::size_t num_steps = 128;        ///< rollout length per env and iteration
    std::size_t epochs = 4;
    std::size_t minibatches = 4;
    double learning_rate = 3e-4;
    bool anneal_lr = true;              ///< linear decay to 0 over total_steps
    double gamma = 0.99;
    /// "step": gamma per decision. "time": gamma per discount_seconds of simulated time (a semi-MDP:
    /// a decision that advances no time, a pick or a DEFER, is not discounted; a step that advances
    /// dt seconds is discounted by gamma^(dt / discount_seconds)).
    std::string discount = "step";
    double discount_seconds = 3600.0;
    double gae_lambda = 0.95;
    double clip = 0.2;
    bool clip_value = false;
    double vf_coef = 0.5;
    double ent_coef = 0.01;
    double max_grad_norm = 0.5;
    bool normalize_advantages = true;
    bool normalize_rewards = true;      ///< divide rewards by the running std of the discounted return
    std::uint64_t seed = 1;
    std::size_t threads = 1;            ///< env stepping threads (results do not depend on it)
    std::string teacher;                ///< heuristic imitated before PPO (behaviour cloning),
                                        ///< "colocation_packer", or in the round action mode the
                                        ///< round planner (teacher_policy()); "" = none
    std::size_t imitation_steps = 0;    ///< env steps of teacher rollouts (cloned with `epochs` x `minibatches`)
    double imitation_learning_rate = 1e-3;
    std::size_t value_warmup = 0;       ///< PPO iterations that train only the value head (after imitation)
    /// PPO iterations: weight of the cross-entropy of the teacher's action in the states the policy
    /// visits (a DAgger-style pull towards the teacher; 0 = none). Needs a teacher.
    double teacher_coef = 0;
    /// Expert iteration (DAgger), after imitation and before PPO: each of `dagger_iterations`
    /// iterations rolls out the network (num_steps x num_envs sampled actions), labels every state
    /// it visits with `dagger_teacher`'s action, adds them to the demonstrations of the earlier
    /// iterations, and trains the policy on all of them (cross-entropy, `epochs` passes,
    /// minibatches of num_steps x num_envs / minibatches samples, imitation_learning_rate).
    /// The teacher is any named policy: a heuristic, or a rollout planner of
    /// policy_registry.hpp ("rollout<F>:<heuristic>", or "hindsight:<heuristic>", which knows the
    /// future and labels with its base's action wherever no other action returns more than
    /// `dagger_min_gain` more; the network never sees the future, only the teacher's labels).
    /// Planners need the placement or job action mode.
    std::string dagger_teacher;
    std::size_t dagger_iterations = 0;
    double dagger_min_gain = 0;  ///< hindsight teacher: the gain in return over its base's action that moves a label
    /// Fair planner teacher (rollout<F>:...): the standard errors of the paired difference by which
    /// an action must beat its base's action to move a label (rollout_options::margin). With many
    /// candidates, the best of them beats the base's by one standard error by chance alone.
    double dagger_margin = 1.0;
    /// "label": the cross-entropy of the teacher's action. "advantage" (a rollout planner teacher):
    /// the planner's mean return of every valid action, all scored on the same futures, minus their
    /// mean (counterfactual advantages, scaled by their standard deviation over the
    /// demonstrations); the loss is minus the policy's expected advantage, so each state pulls by
    /// how much the actions differ, not only towards the best of one noisy sample.
    std::string dagger_loss = "label";
    /// "label" loss with a rollout planner over one base heuristic as the dagger_teacher: the weight
    /// in the cross-entropy of a demonstration whose label is not the base's action in its state (a
    /// label the planner moved); the others weigh 1, and a minibatch's loss is their weighted mean.
    /// The fair planner moves a few percent of its labels (its own holds among them), so at weight 1
    /// the network learns its base's majority first.
    double dagger_moved_weight = 1.0;
    /// "label" loss with a rollout planner as the dagger_teacher: how many draws of futures label
    /// each state (the teacher reset with other seeds; the first draw is the teacher of
    /// dagger_draws 1). The target is every draw's label at once (the mean of their cross-entropies):
    /// where one draw holds a job and the next places it, the network learns the share that hold,
    /// not one draw's verdict. Each draw costs a planner decision per state.
    std::size_t dagger_draws = 1;
    network_config network;

    /// Why dagger_draws cannot apply ("" where it can, or where it is 1): it needs the "label" loss,
    /// no dagger_moved_weight, and a rollout planner as the dagger_teacher.
    [[nodiscard]] std::string draws_problem() const {
        if (dagger_draws == 1) return "";
        const auto k = std::to_string(dagger_draws);
        if (dagger_draws == 0 || dagger_draws > 64) return k + " is out of range [1, 64]";
        if (dagger_loss != "label") return k + " draws label the \"label\" loss's demonstrations, and dagger_loss is \"" + dagger_loss + "\"";
        if (dagger_moved_weight != 1.0) return k + " draws and a dagger_moved_weight other than 1: give one of them";
        rollout_options o;
        std::string base;
        if (dagger_teacher.empty() || !parse_planner_name(dagger_teacher, o, base) || o.hindsight)
            return k + " draws of futures need a rollout planner that draws them (rollout<F>:...) as the dagger_teacher, and it "
                       "is \"" + dagger_teacher + "\"";
        return "";
    }

    /// Why dagger_moved_weight cannot apply ("" where it can, or where it is 1): it needs the "label"
    /// loss and a rollout planner over one base heuristic as the dagger_teacher.
    [[nodiscard]] std::string moved_weight_problem() const {
        if (dagger_moved_weight == 1.0) return "";
        const auto w = gpuplace::detail::json(dagger_moved_weight).dump();
        if (!(dagger_moved_weight >= 1e-3 && dagger_moved_weight <= 1e3)) return w + " is out of range [0.001, 1000.0]";
        if (dagger_loss != "label") return w + " weighs the \"label\" loss's demonstrations, and dagger_loss is \"" + dagger_loss + "\"";
        rollout_options o;
        std::string base;
        if (dagger_teacher.empty() || !parse_planner_name(dagger_teacher, o, base) || base.find('/') != std::string::npos)
            return w + " weighs the labels a rollout planner over one base heuristic moves off its base's action, and the "
                       "dagger_teacher is \"" + dagger_teacher + "\"";
        return "";
    }

    /// Every field; the expert iteration keys only where set (a config without them keeps the
    /// document it always had).
    [[nodiscard]] gpuplace::detail::json to_json() const {
        gpuplace::detail::json j = {{"total_steps", total_steps}, {"num_envs", num_envs}, {"num_steps", num_steps}, {"epochs", epochs},
                {"minibatches", minibatches}, {"learning_rate", learning_rate}, {"anneal_lr", anneal_lr},
                {"gamma", gamma}, {"discount", discount}, {"discount_seconds", discount_seconds}, {"gae_lambda", gae_lambda}, {"clip", clip}, {"clip_value", clip_value},
                {"vf_coef", vf_coef}, {"ent_coef", ent_coef}, {"max_grad_norm", max_grad_norm},
                {"normalize_advantages", normalize_advantages}, {"normalize_rewards", normalize_rewards},
                {"seed", seed}, {"threads", threads}, {"teacher", teacher}, {"imitation_steps", imitation_steps},
                {"imitation_learning_rate", imitation_learning_rate}, {"value_warmup", value_warmup},
                {"teacher_coef", teacher_coef},
                {"network", network.to_json()}};
        if (!dagger_teacher.empty()) j["dagger_teacher"] = dagger_teacher;
        if (dagger_iterations > 0) j["dagger_iterations"] = dagger_iterations;
        if (dagger_min_gain > 0) j["dagger_min_gain"] = dagger_min_gain;
        if (dagger_margin != 1.0) j["dagger_margin"] = dagger_margin;
        if (dagger_loss != "label") j["dagger_loss"] = dagger_loss;
        if (dagger_moved_weight != 1.0) j["dagger_moved_weight"] = dagger_moved_weight;
        if (dagger_draws != 1) j["dagger_draws"] = dagger_draws;
        return j;
    }

    /// Reads the keys present in j over the defaults.
    [[nodiscard]] static ppo_config from_json(const gpuplace::detail::json& j, std::string_view path = "/ppo") {
        using namespace gpuplace::detail;
        check_keys(j, path, {"total_steps", "num_envs", "num_steps", "epochs", "minibatches", "learning_rate", "anneal_lr",
                             "gamma", "discount", "discount_seconds", "gae_lambda", "clip", "clip_value", "vf_coef", "ent_coef", "max_grad_norm",
                             "normalize_advantages", "normalize_rewards", "seed", "threads", "teacher", "imitation_steps",
                             "imitation_learning_rate", "value_warmup", "teacher_coef", "dagger_teacher",
                             "dagger_iterations", "dagger_min_gain", "dagger_margin", "dagger_loss", "dagger_moved_weight", "dagger_draws",
                             "network"});
        ppo_config c;
        read_int(j, path, "total_steps", c.total_steps, 0, 1LL << 50);
        read_int(j, path, "num_envs", c.num_envs, 1, 1 << 16);
        read_int(j, path, "num_steps", c.num_steps, 1, 1 << 20);
        read_int(j, path, "epochs", c.epochs, 1, 1000);
        read_int(j, path, "minibatches", c.minibatches, 1, 1 << 20);
        read_number(j, path, "learning_rate", c.learning_rate, 0.0, 10.0);
        read_bool(j, path, "anneal_lr", c.anneal_lr);
        read_number(j, path, "gamma", c.gamma, 0.0, 1.0);
        read_string(j, path, "discount", c.discount);
        if (c.discount != "step" && c.discount != "time")
            config_fail(join_path(path, "discount"), "unknown discount \"" + c.discount + "\" (allowed: step, time)");
        read_number(j, path, "discount_seconds", c.discount_seconds, 1e-9, 1e12);
        read_number(j, path, "gae_lambda", c.gae_lambda, 0.0, 1.0);
        read_number(j, path, "clip", c.clip, 0.0, 10.0);
        read_bool(j, path, "clip_value", c.clip_value);
        read_number(j, path, "vf_coef", c.vf_coef, 0.0, 1e6);
        read_number(j, path, "ent_coef", c.ent_coef, 0.0, 1e6);
        read_number(j, path, "max_grad_norm", c.max_grad_norm, 0.0, 1e12);
        read_bool(j, path, "normalize_advantages", c.normalize_advantages);
        read_bool(j, path, "normalize_rewards", c.normalize_rewards);
        read_int(j, path, "seed", c.seed, 0, (1LL << 62));
        read_int(j, path, "threads", c.threads, 1, 1024);
        read_string(j, path, "teacher", c.teacher);
        if (!c.teacher.empty() && c.teacher != "colocation_packer") {
            try {
                (void)teacher_policy<env>(c.teacher);
            } catch (const ConfigError& e) {
                config_fail(join_path(path, "teacher"), e.what());
            }
        }
        read_int(j, path, "imitation_steps", c.imitation_steps, 0, 1LL << 50);
        read_number(j, path, "imitation_learning_rate", c.imitation_learning_rate, 0.0, 10.0);
        read_int(j, path, "value_warmup", c.value_warmup, 0, 1 << 30);
        read_number(j, path, "teacher_coef", c.teacher_coef, 0.0, 1e6);
        if (c.teacher_coef > 0 && c.teacher.empty()) config_fail(join_path(path, "teacher_coef"), "needs a teacher");
        read_string(j, path, "dagger_teacher", c.dagger_teacher);
        if (!c.dagger_teacher.empty()) {
            try {
                (void)named_policy<env>(c.dagger_teacher);
            } catch (const ConfigError& e) {
                config_fail(join_path(path, "dagger_teacher"), e.what());
            }
        }
        read_int(j, path, "dagger_iterations", c.dagger_iterations, 0, 1 << 20);
        if (c.dagger_iterations > 0 && c.dagger_teacher.empty())
            config_fail(join_path(path, "dagger_iterations"), "needs a dagger_teacher");
        read_number(j, path, "dagger_min_gain", c.dagger_min_gain, 0.0, 1e12);
        read_number(j, path, "dagger_margin", c.dagger_margin, 0.0, 1e6);
        read_string(j, path, "dagger_loss", c.dagger_loss);
        if (c.dagger_loss != "label" && c.dagger_loss != "advantage")
            config_fail(join_path(path, "dagger_loss"), "unknown loss \"" + c.dagger_loss + "\" (allowed: label, advantage)");
        if (c.dagger_loss == "advantage") {
            rollout_options o;
            std::string base;
            if (!parse_planner_name(c.dagger_teacher, o, base))
                config_fail(join_path(path, "dagger_loss"), "\"advantage\" needs a rollout planner as the dagger_teacher "
                                                             "(rollout<F>:... or hindsight:...), got \"" + c.dagger_teacher + "\"");
            if (base.find('/') != std::string::npos)
                config_fail(join_path(path, "dagger_loss"), "\"advantage\" reads the scores of a planner over one base heuristic, and \"" +
                                                             c.dagger_teacher + "\" has several");
        }
        read_number(j, path, "dagger_moved_weight", c.dagger_moved_weight, 1e-3, 1e3);
        if (const auto why = c.moved_weight_problem(); !why.empty()) config_fail(join_path(path, "dagger_moved_weight"), why);
        read_int(j, path, "dagger_draws", c.dagger_draws, 1, 64);
        if (const auto why = c.draws_problem(); !why.empty()) config_fail(join_path(path, "dagger_draws"), why);
        if (auto it = j.find("network"); it != j.end()) c.network = network_config::from_json(*it, join_path(path, "network"));
        if (c.num_envs * c.num_steps < c.minibatches)
            config_fail(join_path(path, "minibatches"), "more minibatches (" + std::to_string(c.minibatches) +
                                                            ") than samples per iteration (" +
                                                            std::to_string(c.num_envs * c.num_steps) + ")");
        return c;
    }
};

}  // namespace gpuplace::rl
