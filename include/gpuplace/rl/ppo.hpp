#pragma once
/// \file rl/ppo.hpp
/// Proximal Policy Optimization (clipped surrogate) over a basic_vector_env: GAE(gamma, lambda)
/// with truncation bootstrapped from the final observation, value loss (optionally clipped),
/// entropy bonus, advantage normalisation, minibatch epochs, linear learning-rate annealing,
/// optional observation normalisation and reward scaling. Optionally starts from behaviour cloning
/// of a heuristic (the "teacher") and expert iteration (DAgger: the network's own states labelled
/// by any named policy, a rollout planner included, and aggregated), then trains the value head
/// alone for a few iterations before the policy moves. Deterministic by seed: the same config
/// gives the same parameters whatever the number of env threads. The config: rl/ppo_config.hpp;
/// the losses: rl/ppo_loss.hpp; rollouts and updates: rl/impl/ppo_inl.hpp; saving and resuming:
/// rl/impl/ppo_state_inl.hpp.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <chrono>
#include <deque>
#include <functional>
#include <span>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "../colocation_policy.hpp"
#include "../json/util.hpp"
#include "../detail/prefetch.hpp"
#include "../detail/rng.hpp"
#include "../env_concepts.hpp"
#include "../evaluate.hpp"
#include "../json.hpp"
#include "../vector_env.hpp"
#include "actor_critic.hpp"
#include "adam.hpp"
#include "categorical.hpp"
#include "ppo_config.hpp"
#include "ppo_loss.hpp"
#include "state_file.hpp"

namespace gpuplace::rl {

/// What one PPO iteration reports.
struct ppo_stats {
    std::size_t iteration = 0, env_steps = 0, episodes = 0;  ///< episodes finished so far
    bool imitation = false;      ///< a behaviour-cloning iteration (policy_loss is the cross-entropy)
    bool dagger = false;         ///< an expert iteration (policy_loss is the cross-entropy over every demonstration)
    std::size_t demonstrations = 0;  ///< expert iteration: the labelled states gathered so far
    std::size_t moved_demonstrations = 0;  ///< of those, the labels off the teacher's base's action (dagger_moved_weight)
    std::size_t split_demonstrations = 0;  ///< of those, the states whose draws of futures disagree (dagger_draws)
    double teacher_agreement = 0;  ///< imitation, expert iteration: fraction of samples whose argmax equals the teacher's action
    double defer_share = 0;        ///< fraction of the rollout's actions that were DEFER
    double mean_return = 0, mean_jct = 0, mean_comm_cost = 0;  ///< over the last finished episodes (window)
    std::size_t window = 0;                                    ///< episodes in that window (0 = none yet)
    double policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_frac = 0, explained_variance = 0;
    double grad_norm = 0, learning_rate = 0;
    double rollout_seconds = 0, update_seconds = 0;
};

/// The trainer: owns the vector env, the network, the optimiser and the rollout buffers. Env: any
/// VectorEnv (env_concepts.hpp), built from scenarios or by a factory of one's own; the teachers
/// by name need what named_policy() needs of it (heuristics: a HeuristicEnv; planners: a RolloutEnv).
template <VectorEnv Env, std::floating_point S = float>
class basic_ppo {
public:
    using network_type = basic_actor_critic<S>;

    basic_ppo(const scenario& s, ppo_config c) : basic_ppo(std::vector<scenario>{s}, std::move(c)) {}

    /// Training over a mixture of scenarios: env i of the vector env runs mixture[i % size], e.g.
    /// clusters of several sizes, so that one network learns them all. Their observations and
    /// actions must have the same size (so in the placement and job action modes, where they do not
    /// depend on the number of GPUs); ConfigError otherwise.
    basic_ppo(std::vector<scenario> mixture, ppo_config c) : basic_ppo(c, mixture, make_envs(mixture, c)) {}

    /// Training on envs of one's own type (env_concepts.hpp): `make()` makes each of the num_envs
    /// envs (the same env at every call; their episodes differ by reset(seed)). scenario_config() is
    /// then a scenario named "env factory" that describes none of them (save_state() records it).
    template <EnvFactory<Env> F>
    basic_ppo(F make, ppo_config c) : basic_ppo(c, {factory_scenario()}, make_envs_by(make, c)) {}

private:
    basic_ppo(const ppo_config& c, std::vector<scenario> mixture, std::vector<Env> envs)
        : cfg_(c), scen_(mixture.at(0)), mixture_(std::move(mixture)), venv_(std::move(envs), cfg_.threads),
          rng_(gpuplace::detail::mix_seed(cfg_.seed, 0x70706fULL)) {
        spec_ = obs_spec::of(venv_.env(0));
        net_ = network_type(spec_, cfg_.network, gpuplace::detail::mix_seed(cfg_.seed, 0x6e6574ULL));
        std::vector<std::size_t> sizes;
        for (auto* p : net_.parts()) sizes.push_back(p->num_params());
        opt_ = basic_adam<S>(sizes);
        const auto T = cfg_.num_steps, N = cfg_.num_envs;
        obs_.resize(Eigen::Index(spec_.obs_size()), Eigen::Index(T * N));
        masks_.assign(T * N * spec_.num_actions(), 0);
        actions_.assign(T * N, 0);
        logp_.assign(T * N, 0);
        values_.assign(T * N, 0);
        rewards_.assign(T * N, 0);
        gammas_.assign(T * N, 0);
        if (cfg_.teacher_coef > 0 || cfg_.dagger_iterations > 0) teacher_act_.assign(T * N, 0);
        dones_.assign(T * N, 0);
        adv_.assign(T * N, 0);
        ret_.assign(T * N, 0);
        ep_ret_.assign(N, 0.0);
        if (!cfg_.teacher.empty() && (cfg_.imitation_steps > 0 || cfg_.teacher_coef > 0)) {
            if constexpr (HeuristicEnv<Env>)
                teacher_ = cfg_.teacher == "colocation_packer" ? wrap_policy<Env, colocation_packer_policy>(cfg_.teacher)
                                                               : teacher_policy<Env>(cfg_.teacher);
            else
                teacher_ = teacher_policy<Env>(cfg_.teacher);  // a registered policy, or a ConfigError saying what Env lacks
            if (teacher_.check) teacher_.check(venv_.env(0));  // the round planner: an env it can act in, before any step
        }
        if (cfg_.dagger_iterations > 0) {
            rollout_options o;  // a teacher's labels: its base's action unless another is clearly better
            o.threads = cfg_.threads;
            o.ties_to_base = true;
            o.min_gain = cfg_.dagger_min_gain;
            o.margin = cfg_.dagger_margin;
            dagger_teacher_ = named_policy<Env>(cfg_.dagger_teacher, o);
            if (dagger_teacher_.check) dagger_teacher_.check(venv_.env(0));
            if (std::string base; cfg_.dagger_loss == "advantage" && parse_planner_name(cfg_.dagger_teacher, o, base)) {
                if (base.find('/') != std::string::npos)  // as ppo_config::from_json says, for a config made in code
                    throw ConfigError("ppo: dagger_loss \"advantage\" reads the scores of a planner over one base heuristic, and \"" +
                                      cfg_.dagger_teacher + "\" has several");
                planner_.emplace(heuristic<Env>(base).make, o);  // its scores of every action, not only its choice
                q_.assign(T * N * spec_.num_actions(), 0.0f);
            }
            if (const auto why = cfg_.moved_weight_problem(); !why.empty()) throw ConfigError("ppo: dagger_moved_weight " + why);
            if (std::string base; cfg_.dagger_moved_weight != 1.0 && parse_planner_name(cfg_.dagger_teacher, o, base)) {
                dagger_base_ = heuristic<Env>(base);  // which labels the planner moved
                moved_.assign(T * N, 0);
            }
            if (const auto why = cfg_.draws_problem(); !why.empty()) throw ConfigError("ppo: dagger_draws " + why);
            if (cfg_.dagger_draws > 1) draw_act_.assign(T * N * (cfg_.dagger_draws - 1), 0);
            if (gpu_mode(venv_.env(0)) && cfg_.dagger_teacher.find(':') != std::string::npos)
                throw ConfigError("ppo: dagger_teacher \"" + cfg_.dagger_teacher +
                                  "\" is a rollout planner, which chooses among the candidates of the placement or job action mode; "
                                  "the scenario's action_mode is gpu");
            demo_obs_.resize(Eigen::Index(spec_.obs_size()), 0);
        }
        ep_actions_.resize(N);
        venv_.reset(gpuplace::detail::mix_seed(cfg_.seed, 0x656e76ULL));
    }

public:
    [[nodiscard]] const ppo_config& config() const noexcept { return cfg_; }
    [[nodiscard]] const scenario& scenario_config() const noexcept { return scen_; }
    /// The scenarios the envs train on (one: scenario_config()).
    [[nodiscard]] const std::vector<scenario>& mixture() const noexcept { return mixture_; }
    [[nodiscard]] network_type& network() noexcept { return net_; }
    [[nodiscard]] const network_type& network() const noexcept { return net_; }
    [[nodiscard]] basic_vector_env<Env>& vector_env() noexcept { return venv_; }
    [[nodiscard]] std::size_t env_steps() const noexcept { return steps_; }
    [[nodiscard]] std::size_t iterations() const noexcept { return iter_; }
    /// Behaviour-cloning iterations (teacher rollouts of num_steps x num_envs), before PPO's.
    [[nodiscard]] std::size_t imitation_iterations() const noexcept {
        const auto per = cfg_.num_envs * cfg_.num_steps;
        return teacher_.make ? (cfg_.imitation_steps + per - 1) / per : 0;  // 0 steps: 0 iterations
    }
    /// Expert iterations (rollouts of the network labelled by the dagger_teacher), after imitation.
    [[nodiscard]] std::size_t dagger_iterations() const noexcept { return cfg_.dagger_iterations; }
    /// The labelled states expert iteration has gathered so far.
    [[nodiscard]] std::size_t demonstrations() const noexcept { return demo_labels_.size(); }
    /// Of those, the labels off the teacher's base's action (with a dagger_moved_weight other than 1; 0 otherwise).
    [[nodiscard]] std::size_t moved_demonstrations() const noexcept {
        return std::size_t(std::count(demo_moved_.begin(), demo_moved_.end(), std::uint8_t{1}));
    }
    /// Of those, the states whose draws of futures label them differently (with dagger_draws above 1; 0 otherwise).
    [[nodiscard]] std::size_t split_demonstrations() const noexcept {
        const auto K = cfg_.dagger_draws - 1;
        std::size_t n = 0;
        for (std::size_t k = 0; K > 0 && k < demo_labels_.size(); ++k)
            n += std::any_of(demo_draws_.begin() + std::ptrdiff_t(k * K), demo_draws_.begin() + std::ptrdiff_t((k + 1) * K),
                             [&](std::int64_t a) { return a != demo_labels_[k]; });
        return n;
    }
    /// PPO iterations (total_steps / (num_envs x num_steps), rounded up).
    [[nodiscard]] std::size_t ppo_iterations() const noexcept {
        const auto per = cfg_.num_envs * cfg_.num_steps;
        return (cfg_.total_steps + per - 1) / per;
    }
    [[nodiscard]] std::size_t total_iterations() const noexcept { return imitation_iterations() + dagger_iterations() + ppo_iterations(); }
    [[nodiscard]] bool done() const noexcept { return iter_ >= total_iterations(); }

    /// One iteration: a rollout of num_steps x num_envs steps, then epochs of minibatch updates.
    /// The first imitation_iterations() roll out the teacher and clone its actions; the next
    /// dagger_iterations() roll out the network, label its states with the dagger_teacher and
    /// clone every label gathered so far; then PPO.
    ppo_stats iterate() {
        ppo_stats st;
        const auto t0 = clock::now();
        st.imitation = iter_ < imitation_iterations();
        st.dagger = !st.imitation && iter_ < imitation_iterations() + dagger_iterations();
        // afresh each iteration: a saved state needs none of the teachers'
        const bool by_planner = st.dagger && planner_;  // dagger_loss "advantage": the planner's scores too
        const auto& teacher = st.dagger ? dagger_teacher_ : teacher_;
        if (by_planner) {
            planner_->reset(gpuplace::detail::mix_seed(gpuplace::detail::mix_seed(cfg_.seed, 0x7465ULL), iter_));
        } else if (teacher.make && (st.imitation || st.dagger || cfg_.teacher_coef > 0)) {
            teachers_.clear();
            bases_.clear();
            for (std::size_t i = 0; i < cfg_.num_envs; ++i) {
                const auto seed = gpuplace::detail::mix_seed(gpuplace::detail::mix_seed(cfg_.seed, 0x7465ULL + i), iter_);
                teachers_.push_back(teacher.make(seed));
                if (st.dagger && dagger_base_.make) bases_.push_back(dagger_base_.make(seed));
            }
            for (std::size_t d = 1; st.dagger && d < cfg_.dagger_draws; ++d)  // other futures: the teacher with other seeds
                for (std::size_t i = 0; i < cfg_.num_envs; ++i)
                    teachers_.push_back(teacher.make(gpuplace::detail::mix_seed(
                        gpuplace::detail::mix_seed(gpuplace::detail::mix_seed(cfg_.seed, 0x7465ULL + i), iter_), 0x64726177ULL + d)));
        }
        rollout(st.imitation, !(st.dagger || cfg_.teacher_coef > 0) ? labels::none : by_planner ? labels::planner : labels::teacher);
        if (st.dagger) {  // aggregate: this rollout's states with the teacher's labels
            const auto n = demo_labels_.size(), TN = actions_.size();
            demo_obs_.conservativeResize(Eigen::NoChange, Eigen::Index(n + TN));
            demo_obs_.middleCols(Eigen::Index(n), Eigen::Index(TN)) = obs_;
            demo_masks_.insert(demo_masks_.end(), masks_.begin(), masks_.end());
            demo_labels_.insert(demo_labels_.end(), teacher_act_.begin(), teacher_act_.end());
            demo_adv_.insert(demo_adv_.end(), q_.begin(), q_.end());
            demo_moved_.insert(demo_moved_.end(), moved_.begin(), moved_.end());
            demo_draws_.insert(demo_draws_.end(), draw_act_.begin(), draw_act_.end());
        }
        st.demonstrations = demo_labels_.size();
        st.moved_demonstrations = moved_demonstrations();
        st.split_demonstrations = split_demonstrations();
        {
            const auto defer = std::int64_t(spec_.num_gpus);
            std::size_t n = 0;
            for (const auto a : actions_) n += a == defer;
            st.defer_share = double(n) / double(actions_.size());
        }
        const auto t1 = clock::now();
        if (st.imitation || st.dagger) {
            st.learning_rate = cfg_.imitation_learning_rate;
        } else {
            const auto k = iter_ - imitation_iterations() - dagger_iterations();
            const double frac = cfg_.anneal_lr ? 1.0 - double(k) / double(ppo_iterations()) : 1.0;
            st.learning_rate = cfg_.learning_rate * frac;
            if (k == 0 && imitation_iterations() + dagger_iterations() > 0) opt_.reset();  // PPO starts with fresh Adam moments
        }
        update(st);
        ++iter_;
        st.iteration = iter_;
        st.env_steps = steps_;
        st.episodes = episodes_;
        st.window = recent_.size();
        for (const auto& e : recent_) {
            st.mean_return += e.ret / double(recent_.size());
            st.mean_jct += e.jct / double(recent_.size());
            st.mean_comm_cost += e.comm / double(recent_.size());
        }
        st.rollout_seconds = std::chrono::duration<double>(t1 - t0).count();
        st.update_seconds = std::chrono::duration<double>(clock::now() - t1).count();
        return st;
    }

    // ---- saving and resuming -----------------------------------------------------------------

    /// The trainer's whole state between iterations, as a state document (rl/state_file.hpp): the
    /// network and its normalisers, Adam's moments and step count, every random stream (the
    /// sampler and minibatch shuffles, the envs' action samplers), each env's episode (its index
    /// and the actions taken so far: an env is deterministic, so they are replayed), the reward
    /// scaler, the statistics window and the counters. A trainer built with the same scenario and
    /// config that load_state()s it continues bit for bit as this one would.
    [[nodiscard]] gpuplace::detail::json save_state() const;

    /// Continues from a save_state() document of a trainer with the same scenario and config
    /// (threads aside). CheckpointError naming `source` and what differs or is malformed; the
    /// trainer is unusable after a failed load (build a new one).
    void load_state(const gpuplace::detail::json& j, std::string_view source);

private:
    using clock = std::chrono::steady_clock;

    static gpuplace::detail::json norm_json(const running_norm& r);
    static void set_norm(running_norm& r, const gpuplace::detail::json& j, const std::string& src, const std::string& path);
    struct episode_summary {
        double ret = 0, jct = 0, comm = 0;
    };

    [[nodiscard]] static bool gpu_mode(const Env& e) {
        if constexpr (requires { e.mode() == action_mode::gpu; }) return e.mode() == action_mode::gpu;
        else return false;
    }

    [[nodiscard]] static scenario factory_scenario() {
        scenario s;
        s.name = "env factory";
        return s;
    }

    template <class F>
    static std::vector<Env> make_envs_by(F& make, const ppo_config& c) {
        std::vector<Env> envs;
        envs.reserve(c.num_envs);
        for (std::size_t i = 0; i < c.num_envs; ++i) envs.push_back(Env(make()));
        return envs;
    }

    static std::vector<Env> make_envs(const std::vector<scenario>& mixture, const ppo_config& c) {
        std::vector<Env> envs;
        envs.reserve(c.num_envs);
        for (std::size_t i = 0; i < c.num_envs; ++i) envs.emplace_back(mixture[i % mixture.size()]);
        for (std::size_t i = 1; i < envs.size(); ++i)
            if (envs[i].observation_size() != envs[0].observation_size() || envs[i].num_actions() != envs[0].num_actions())
                throw ConfigError("ppo: the scenarios of a mixture need observations and actions of one size; \"" +
                                  mixture[i % mixture.size()].name + "\" has " + std::to_string(envs[i].observation_size()) + " and " +
                                  std::to_string(envs[i].num_actions()) + ", \"" + mixture[0].name + "\" " +
                                  std::to_string(envs[0].observation_size()) + " and " + std::to_string(envs[0].num_actions()) +
                                  " (in the placement and job action modes they do not depend on the cluster size)");
        return envs;
    }

    /// The discount of a step that advanced `elapsed` simulated seconds (ppo_config::discount).
    [[nodiscard]] double discount_of(double elapsed) const noexcept {
        return cfg_.discount == "time" ? std::pow(cfg_.gamma, elapsed / cfg_.discount_seconds) : cfg_.gamma;
    }

    double scale_reward(std::size_t i, double r, bool done, double g) {
        if (!cfg_.normalize_rewards) return r;
        ep_ret_[i] = ep_ret_[i] * g + r;
        Eigen::MatrixXd one(1, 1);
        one(0, 0) = ep_ret_[i];
        ret_norm_.update(one);
        if (done) ep_ret_[i] = 0;
        return r / std::sqrt(ret_norm_.var()(0) + 1e-8);
    }

    /// What a rollout of the network records of the teacher in each state it visits: nothing, the
    /// teacher's action (teacher_act_), or the planner teacher's action and its scores (q_ too).
    enum class labels { none, teacher, planner };

    /// num_steps x num_envs steps; actions sampled from the network, or the teacher's.
    void rollout(bool teacher, labels label);

    /// The planner teacher's action in `e`; its score of every valid action, minus their mean, in
    /// column k of q_ (0 where masked).
    std::int64_t planner_label(const Env& e, std::size_t k) {
        const auto a = planner_->act(e);
        const auto acts = planner_->last_actions();
        const auto sc = planner_->last_scores();
        const auto A = spec_.num_actions();
        std::fill_n(q_.begin() + std::ptrdiff_t(k * A), A, 0.0f);
        double mean = 0;
        for (const double x : sc) mean += x / double(sc.size());
        for (std::size_t j = 0; j < acts.size(); ++j) q_[k * A + std::size_t(acts[j])] = float(sc[j] - mean);
        return a;
    }

    /// The standard deviation of the demonstrations' counterfactual advantages over valid actions.
    [[nodiscard]] double advantage_scale() const {
        double ss = 0, n = 0;
        for (std::size_t k = 0; k < demo_adv_.size(); ++k)
            if (demo_masks_[k]) ss += double(demo_adv_[k]) * double(demo_adv_[k]), n += 1;
        return n > 0 && ss > 0 ? std::sqrt(ss / n) : 1.0;
    }

    void update(ppo_stats& st);

    ppo_config cfg_;
    scenario scen_;
    std::vector<scenario> mixture_;
    any_policy<Env> teacher_;  ///< empty without imitation
    any_policy<Env> dagger_teacher_;  ///< empty without expert iteration
    any_policy<Env> dagger_base_;  ///< dagger_moved_weight: the planner teacher's base heuristic
    /// per env, made afresh each iteration; with dagger_draws, draw d's teacher of env i at d x num_envs + i
    std::vector<std::function<std::int64_t(const Env&)>> teachers_, bases_;
    std::vector<std::vector<std::int64_t>> ep_actions_;  ///< per env: the actions of its current episode
    basic_vector_env<Env> venv_;
    gpuplace::detail::rng rng_;
    obs_spec spec_;
    network_type net_;
    basic_adam<S> opt_;
    Eigen::MatrixXf obs_;
    std::vector<std::uint8_t> masks_, dones_;
    std::vector<std::int64_t> actions_, teacher_act_;
    Eigen::MatrixXf demo_obs_;  ///< expert iteration's demonstrations: observations (columns), masks, labels
    std::vector<std::uint8_t> demo_masks_;
    std::vector<std::int64_t> demo_labels_;
    std::vector<float> demo_adv_;  ///< dagger_loss "advantage": the teacher's centred scores (A per demonstration)
    std::vector<float> q_;         ///< the same for the rollout's states
    std::vector<std::uint8_t> demo_moved_, moved_;  ///< dagger_moved_weight: whether each label is off its base's action
    /// dagger_draws above 1: the labels of the other draws, dagger_draws - 1 per state (state-major)
    std::vector<std::int64_t> demo_draws_, draw_act_;
    std::optional<rollout_policy<Env>> planner_;  ///< dagger_loss "advantage": the planner teacher
    std::vector<S> logp_, values_, rewards_, gammas_, adv_, ret_;
    std::vector<double> ep_ret_;
    running_norm ret_norm_{1};
    std::deque<episode_summary> recent_;
    std::size_t window_ = 20;
    std::size_t steps_ = 0, iter_ = 0, episodes_ = 0;
};

/// PPO with float networks on the default env.
using ppo = basic_ppo<env, float>;

}  // namespace gpuplace::rl

#include "impl/ppo_inl.hpp"
#include "impl/ppo_state_inl.hpp"
