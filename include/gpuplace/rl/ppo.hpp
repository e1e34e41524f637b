#pragma once
/// \file rl/ppo.hpp
/// Proximal Policy Optimization (clipped surrogate) over a basic_vector_env: GAE(gamma, lambda)
/// with truncation bootstrapped from the final observation, value loss (optionally clipped),
/// entropy bonus, advantage normalisation, minibatch epochs, linear learning-rate annealing,
/// optional observation normalisation and reward scaling. Optionally starts from behaviour cloning
/// of a heuristic (the "teacher"), then trains the value head alone for a few iterations before
/// the policy moves. Deterministic by seed: the same config gives the same parameters whatever the
/// number of env threads.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <chrono>
#include <deque>
#include <functional>
#include <span>
#include <numeric>
#include <string>
#include <vector>

#include "../colocation_policy.hpp"
#include "../json/util.hpp"
#include "../detail/prefetch.hpp"
#include "../detail/rng.hpp"
#include "../evaluate.hpp"
#include "../json.hpp"
#include "../vector_env.hpp"
#include "actor_critic.hpp"
#include "adam.hpp"
#include "categorical.hpp"
#include "state_file.hpp"

namespace gpuplace::rl {

/// Hyperparameters of PPO. Every field is readable from JSON (errors name the path).
struct ppo_config {
    std::size_t total_steps = 300'000;  ///< env steps (summed over envs)
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
    std::string teacher;                ///< heuristic imitated before PPO (behaviour cloning), or
                                        ///< "colocation_packer"; "" = none
    std::size_t imitation_steps = 0;    ///< env steps of teacher rollouts (cloned with `epochs` x `minibatches`)
    double imitation_learning_rate = 1e-3;
    std::size_t value_warmup = 0;       ///< PPO iterations that train only the value head (after imitation)
    /// PPO iterations: weight of the cross-entropy of the teacher's action in the states the policy
    /// visits (a DAgger-style pull towards the teacher; 0 = none). Needs a teacher.
    double teacher_coef = 0;
    network_config network;

    [[nodiscard]] gpuplace::detail::json to_json() const {
        return {{"total_steps", total_steps}, {"num_envs", num_envs}, {"num_steps", num_steps}, {"epochs", epochs},
                {"minibatches", minibatches}, {"learning_rate", learning_rate}, {"anneal_lr", anneal_lr},
                {"gamma", gamma}, {"discount", discount}, {"discount_seconds", discount_seconds}, {"gae_lambda", gae_lambda}, {"clip", clip}, {"clip_value", clip_value},
                {"vf_coef", vf_coef}, {"ent_coef", ent_coef}, {"max_grad_norm", max_grad_norm},
                {"normalize_advantages", normalize_advantages}, {"normalize_rewards", normalize_rewards},
                {"seed", seed}, {"threads", threads}, {"teacher", teacher}, {"imitation_steps", imitation_steps},
                {"imitation_learning_rate", imitation_learning_rate}, {"value_warmup", value_warmup},
                {"teacher_coef", teacher_coef},
                {"network", network.to_json()}};
    }

    /// Reads the keys present in j over the defaults.
    [[nodiscard]] static ppo_config from_json(const gpuplace::detail::json& j, std::string_view path = "/ppo") {
        using namespace gpuplace::detail;
        check_keys(j, path, {"total_steps", "num_envs", "num_steps", "epochs", "minibatches", "learning_rate", "anneal_lr",
                             "gamma", "discount", "discount_seconds", "gae_lambda", "clip", "clip_value", "vf_coef", "ent_coef", "max_grad_norm",
                             "normalize_advantages", "normalize_rewards", "seed", "threads", "teacher", "imitation_steps",
                             "imitation_learning_rate", "value_warmup", "teacher_coef", "network"});
        ppo_config c;
        read_int(j, path, "total_steps", c.total_steps, 1, 1LL << 50);
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
                (void)heuristic<env>(c.teacher);
            } catch (const ConfigError& e) {
                config_fail(join_path(path, "teacher"), e.what());
            }
        }
        read_int(j, path, "imitation_steps", c.imitation_steps, 0, 1LL << 50);
        read_number(j, path, "imitation_learning_rate", c.imitation_learning_rate, 0.0, 10.0);
        read_int(j, path, "value_warmup", c.value_warmup, 0, 1 << 30);
        read_number(j, path, "teacher_coef", c.teacher_coef, 0.0, 1e6);
        if (c.teacher_coef > 0 && c.teacher.empty()) config_fail(join_path(path, "teacher_coef"), "needs a teacher");
        if (auto it = j.find("network"); it != j.end()) c.network = network_config::from_json(*it, join_path(path, "network"));
        if (c.num_envs * c.num_steps < c.minibatches)
            config_fail(join_path(path, "minibatches"), "more minibatches (" + std::to_string(c.minibatches) +
                                                            ") than samples per iteration (" +
                                                            std::to_string(c.num_envs * c.num_steps) + ")");
        return c;
    }
};

/// Losses of a minibatch and their gradients w.r.t. logits and values (the PPO objective,
/// averaged over the minibatch). Exposed for the gradient check.
template <std::floating_point S>
struct ppo_loss {
    double policy = 0, value = 0, entropy = 0, total = 0, approx_kl = 0, clip_frac = 0;
    matrix_t<S> dlogits;
    vector_t<S> dvalues;
};

/// Computes the PPO loss of a minibatch given the network outputs (logits (A x M), values (M)),
/// masks (A x M, column-major), actions, old log-probs, advantages, returns and old values.
template <std::floating_point S>
[[nodiscard]] ppo_loss<S> compute_ppo_loss(const matrix_t<S>& logits, const vector_t<S>& values,
                                           std::span<const std::uint8_t> masks, std::span<const std::int64_t> actions,
                                           std::span<const S> old_logp, std::span<const S> adv,
                                           std::span<const S> returns, std::span<const S> old_values,
                                           const ppo_config& c) {
    const auto M = std::size_t(logits.cols());
    ppo_loss<S> L;
    L.dvalues.resize(values.size());
    const S inv = S(1) / S(M);
    const S eps = S(c.clip);
    const basic_masked_categorical_batch<S> d(logits, masks);
    const auto Mi = static_cast<Eigen::Index>(M);
    vector_t<S> lp(Mi), ratio(Mi), coef(Mi);
    for (std::size_t i = 0; i < M; ++i) {
        lp(Eigen::Index(i)) = d.log_prob(std::size_t(actions[i]), Eigen::Index(i));
        ratio(Eigen::Index(i)) = lp(Eigen::Index(i)) - old_logp[i];
    }
    ratio = ratio.array().exp();
    for (std::size_t i = 0; i < M; ++i) {
        const auto k = Eigen::Index(i);
        const S r = ratio(k);
        const S s1 = r * adv[i], s2 = std::clamp(r, S(1) - eps, S(1) + eps) * adv[i];
        L.policy -= double(std::min(s1, s2)) / double(M);
        const S dsurr = s1 <= s2 ? adv[i] * r : S(0);  // d min(.)/d logp
        L.entropy += double(d.entropy(k)) / double(M);
        L.approx_kl += double((r - S(1)) - (lp(k) - old_logp[i])) / double(M);
        L.clip_frac += (std::abs(r - S(1)) > eps ? 1.0 : 0.0) / double(M);
        coef(k) = -dsurr * inv;  // total = policy + vf * value - ent * entropy
        const S v = values(k), R = returns[i];
        S dv = v - R;
        double vl = 0.5 * double(dv * dv);
        if (c.clip_value) {
            const S vc = old_values[i] + std::clamp(v - old_values[i], -eps, eps);
            const S dvc = vc - R;
            const double vlc = 0.5 * double(dvc * dvc);
            if (vlc > vl) {
                vl = vlc;
                dv = std::abs(v - old_values[i]) < eps ? dvc : S(0);
            }
        }
        L.value += vl / double(M);
        L.dvalues(k) = S(c.vf_coef) * dv * inv;
    }
    d.gradient(L.dlogits, actions, coef, -S(c.ent_coef) * inv);
    L.total = L.policy + c.vf_coef * L.value - c.ent_coef * L.entropy;
    return L;
}

/// What one PPO iteration reports.
struct ppo_stats {
    std::size_t iteration = 0, env_steps = 0, episodes = 0;  ///< episodes finished so far
    bool imitation = false;      ///< a behaviour-cloning iteration (policy_loss is the cross-entropy)
    double teacher_agreement = 0;  ///< imitation: fraction of samples whose argmax equals the teacher's action
    double defer_share = 0;        ///< fraction of the rollout's actions that were DEFER
    double mean_return = 0, mean_jct = 0, mean_comm_cost = 0;  ///< over the last finished episodes (window)
    std::size_t window = 0;                                    ///< episodes in that window (0 = none yet)
    double policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_frac = 0, explained_variance = 0;
    double grad_norm = 0, learning_rate = 0;
    double rollout_seconds = 0, update_seconds = 0;
};

/// The trainer: owns the vector env, the network, the optimiser and the rollout buffers.
template <class Env, std::floating_point S = float>
class basic_ppo {
public:
    using network_type = basic_actor_critic<S>;

    basic_ppo(const scenario& s, ppo_config c)
        : cfg_(std::move(c)), scen_(s), venv_(s, cfg_.num_envs, cfg_.threads), rng_(gpuplace::detail::mix_seed(cfg_.seed, 0x70706fULL)) {
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
        if (cfg_.teacher_coef > 0) teacher_act_.assign(T * N, 0);
        dones_.assign(T * N, 0);
        adv_.assign(T * N, 0);
        ret_.assign(T * N, 0);
        ep_ret_.assign(N, 0.0);
        if (!cfg_.teacher.empty() && (cfg_.imitation_steps > 0 || cfg_.teacher_coef > 0))
            teacher_ = cfg_.teacher == "colocation_packer" ? wrap_policy<Env, colocation_packer_policy>(cfg_.teacher)
                                                           : heuristic<Env>(cfg_.teacher);
        ep_actions_.resize(N);
        venv_.reset(gpuplace::detail::mix_seed(cfg_.seed, 0x656e76ULL));
    }

    [[nodiscard]] const ppo_config& config() const noexcept { return cfg_; }
    [[nodiscard]] const scenario& scenario_config() const noexcept { return scen_; }
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
    /// PPO iterations (total_steps / (num_envs x num_steps), rounded up).
    [[nodiscard]] std::size_t ppo_iterations() const noexcept {
        const auto per = cfg_.num_envs * cfg_.num_steps;
        return (cfg_.total_steps + per - 1) / per;
    }
    [[nodiscard]] std::size_t total_iterations() const noexcept { return imitation_iterations() + ppo_iterations(); }
    [[nodiscard]] bool done() const noexcept { return iter_ >= total_iterations(); }

    /// One iteration: a rollout of num_steps x num_envs steps, then epochs of minibatch updates.
    /// The first imitation_iterations() roll out the teacher and clone its actions; then PPO.
    ppo_stats iterate() {
        ppo_stats st;
        const auto t0 = clock::now();
        st.imitation = iter_ < imitation_iterations();
        if (teacher_.make && (st.imitation || cfg_.teacher_coef > 0)) {  // afresh each iteration: a saved state needs none of theirs
            teachers_.clear();
            for (std::size_t i = 0; i < cfg_.num_envs; ++i)
                teachers_.push_back(teacher_.make(gpuplace::detail::mix_seed(gpuplace::detail::mix_seed(cfg_.seed, 0x7465ULL + i), iter_)));
        }
        rollout(st.imitation);
        {
            const auto defer = std::int64_t(spec_.num_gpus);
            std::size_t n = 0;
            for (const auto a : actions_) n += a == defer;
            st.defer_share = double(n) / double(actions_.size());
        }
        const auto t1 = clock::now();
        if (st.imitation) {
            st.learning_rate = cfg_.imitation_learning_rate;
        } else {
            const auto k = iter_ - imitation_iterations();
            const double frac = cfg_.anneal_lr ? 1.0 - double(k) / double(ppo_iterations()) : 1.0;
            st.learning_rate = cfg_.learning_rate * frac;
            if (k == 0 && imitation_iterations() > 0) opt_.reset();  // PPO starts with fresh Adam moments
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
    [[nodiscard]] gpuplace::detail::json save_state() const {
        using gpuplace::detail::json;
        using detail::to_bytes;
        json j;
        j["ppo"] = cfg_.to_json();
        j["scenario"] = gpuplace::to_json(scen_);
        j["iteration"] = iter_;
        j["env_steps"] = steps_;
        j["episodes"] = episodes_;
        const auto rs = rng_.state();
        j["rng"] = to_bytes<std::uint64_t>(rs);
        json parts = json::array(), norms = json::array(), m = json::array(), v = json::array();
        for (const auto& [name, n] : net_.named()) parts.push_back(to_bytes<S>({n->params().data(), std::size_t(n->params().size())}));
        for (const auto& r : net_.normalizers()) norms.push_back(norm_json(r));
        for (const auto& x : opt_.first_moments()) m.push_back(to_bytes<S>({x.data(), std::size_t(x.size())}));
        for (const auto& x : opt_.second_moments()) v.push_back(to_bytes<S>({x.data(), std::size_t(x.size())}));
        j["network"] = {{"parts", std::move(parts)}, {"normalizers", std::move(norms)}};
        j["adam"] = {{"steps", opt_.steps()}, {"m", std::move(m)}, {"v", std::move(v)}};
        j["return_normalizer"] = norm_json(ret_norm_);
        j["episode_returns"] = to_bytes<double>(ep_ret_);
        std::vector<double> recent;
        for (const auto& e : recent_) recent.insert(recent.end(), {e.ret, e.jct, e.comm});
        j["recent"] = to_bytes<double>(recent);
        const auto N = cfg_.num_envs;
        std::vector<std::uint64_t> episode(N), sampler;
        json actions = json::array();
        for (std::size_t i = 0; i < N; ++i) {
            episode[i] = venv_.episode(i);
            const auto st = venv_.sampler(i).state();
            sampler.insert(sampler.end(), st.begin(), st.end());
            actions.push_back(to_bytes<std::int64_t>(ep_actions_[i]));
        }
        j["envs"] = {{"seed", venv_.seed()}, {"episode", to_bytes<std::uint64_t>(episode)},
                     {"sampler", to_bytes<std::uint64_t>(sampler)}, {"actions", std::move(actions)}};
        return j;
    }

    /// Continues from a save_state() document of a trainer with the same scenario and config
    /// (threads aside). CheckpointError naming `source` and what differs or is malformed; the
    /// trainer is unusable after a failed load (build a new one).
    void load_state(const gpuplace::detail::json& j, std::string_view source) {
        using gpuplace::detail::json;
        using detail::from_bytes;
        using detail::state_get;
        using detail::state_uint;
        const std::string src(source);
        auto fail = [&](const std::string& what) { throw CheckpointError("state " + src + ": " + what); };
        auto without_threads = [](json c) {
            c.erase("threads");
            return c;
        };
        const auto& pj = state_get(j, source, "", "ppo");
        if (without_threads(pj) != without_threads(cfg_.to_json()))
            fail("made with another PPO config: " + detail::differences(without_threads(pj), without_threads(cfg_.to_json())));
        const auto& sj = state_get(j, source, "", "scenario");
        if (sj != gpuplace::to_json(scen_)) fail("made for another scenario: " + detail::differences(sj, gpuplace::to_json(scen_)));
        const auto iter = state_uint(j, source, "", "iteration");
        if (iter > total_iterations()) fail("/iteration: " + std::to_string(iter) + " is past the run's " + std::to_string(total_iterations()));
        const auto r = from_bytes<std::uint64_t>(state_get(j, source, "", "rng"), source, "/rng", 4);
        // network
        const auto& nj = state_get(j, source, "", "network");
        const auto& parts = state_get(nj, source, "/network", "parts");
        auto named = net_.named();
        if (!parts.is_array() || parts.size() != named.size()) fail("/network/parts: expected " + std::to_string(named.size()) + " parts");
        std::vector<std::vector<S>> params;
        for (std::size_t k = 0; k < named.size(); ++k)
            params.push_back(from_bytes<S>(parts[k], source, "/network/parts/" + std::to_string(k), named[k].second->num_params()));
        const auto& norms = state_get(nj, source, "/network", "normalizers");
        if (!norms.is_array() || norms.size() != net_.normalizers().size()) fail("/network/normalizers: wrong number of normalizers");
        // optimiser
        const auto& aj = state_get(j, source, "", "adam");
        const auto& mj = state_get(aj, source, "/adam", "m");
        const auto& vj = state_get(aj, source, "/adam", "v");
        if (!mj.is_array() || !vj.is_array() || mj.size() != named.size() || vj.size() != named.size())
            fail("/adam: expected moments for " + std::to_string(named.size()) + " parts");
        std::vector<std::vector<S>> m, v;
        for (std::size_t k = 0; k < named.size(); ++k) {
            m.push_back(from_bytes<S>(mj[k], source, "/adam/m/" + std::to_string(k), named[k].second->num_params()));
            v.push_back(from_bytes<S>(vj[k], source, "/adam/v/" + std::to_string(k), named[k].second->num_params()));
        }
        const auto N = cfg_.num_envs;
        const auto ep_ret = from_bytes<double>(state_get(j, source, "", "episode_returns"), source, "/episode_returns", N);
        const auto recent = from_bytes<double>(state_get(j, source, "", "recent"), source, "/recent");
        if (recent.size() % 3 != 0 || recent.size() / 3 > window_) fail("/recent: malformed statistics window");
        const auto& ej = state_get(j, source, "", "envs");
        const auto episode = from_bytes<std::uint64_t>(state_get(ej, source, "/envs", "episode"), source, "/envs/episode", N);
        const auto sampler = from_bytes<std::uint64_t>(state_get(ej, source, "/envs", "sampler"), source, "/envs/sampler", 4 * N);
        const auto& acts = state_get(ej, source, "/envs", "actions");
        if (!acts.is_array() || acts.size() != N) fail("/envs/actions: expected " + std::to_string(N) + " lists");
        // everything read: apply
        for (std::size_t k = 0; k < named.size(); ++k)
            std::copy(params[k].begin(), params[k].end(), named[k].second->params().data());
        for (std::size_t k = 0; k < norms.size(); ++k) set_norm(net_.normalizers()[k], norms[k], src, "/network/normalizers/" + std::to_string(k));
        for (std::size_t k = 0; k < named.size(); ++k) {
            std::copy(m[k].begin(), m[k].end(), opt_.first_moments()[k].data());
            std::copy(v[k].begin(), v[k].end(), opt_.second_moments()[k].data());
        }
        const auto& adam_steps = state_get(aj, source, "/adam", "steps");
        if (!adam_steps.is_number_integer()) fail("/adam/steps: expected an integer");
        opt_.set_steps(adam_steps.template get<long long>());
        set_norm(ret_norm_, state_get(j, source, "", "return_normalizer"), src, "/return_normalizer");
        ep_ret_ = ep_ret;
        recent_.clear();
        for (std::size_t k = 0; k < recent.size(); k += 3) recent_.push_back({recent[k], recent[k + 1], recent[k + 2]});
        rng_.set_state({r[0], r[1], r[2], r[3]});
        iter_ = iter;
        steps_ = state_uint(j, source, "", "env_steps");
        episodes_ = state_uint(j, source, "", "episodes");
        venv_.reset(state_uint(ej, source, "/envs", "seed"));
        for (std::size_t i = 0; i < N; ++i) {
            ep_actions_[i] = from_bytes<std::int64_t>(acts[i], source, "/envs/actions/" + std::to_string(i));
            gpuplace::detail::rng smp;
            smp.set_state({sampler[4 * i], sampler[4 * i + 1], sampler[4 * i + 2], sampler[4 * i + 3]});
            try {
                venv_.restore(i, episode[i], ep_actions_[i], smp);
            } catch (const Error& e) {
                fail("/envs/actions/" + std::to_string(i) + ": the env's episode cannot be replayed: " + e.what());
            }
        }
    }

private:
    using clock = std::chrono::steady_clock;

    static gpuplace::detail::json norm_json(const running_norm& r) {
        using detail::to_bytes;
        const double c = r.count();
        return {{"mean", to_bytes<double>({r.mean().data(), std::size_t(r.mean().size())})},
                {"var", to_bytes<double>({r.var().data(), std::size_t(r.var().size())})},
                {"count", to_bytes<double>({&c, 1})}};
    }
    static void set_norm(running_norm& r, const gpuplace::detail::json& j, const std::string& src, const std::string& path) {
        using detail::from_bytes;
        using detail::state_get;
        const auto n = std::size_t(r.mean().size());
        const auto mean = from_bytes<double>(state_get(j, src, path, "mean"), src, path + "/mean", n);
        const auto var = from_bytes<double>(state_get(j, src, path, "var"), src, path + "/var", n);
        const auto count = from_bytes<double>(state_get(j, src, path, "count"), src, path + "/count", 1);
        r.set(Eigen::Map<const Eigen::VectorXd>(mean.data(), Eigen::Index(n)),
              Eigen::Map<const Eigen::VectorXd>(var.data(), Eigen::Index(n)), count[0]);
    }
    struct episode_summary {
        double ret = 0, jct = 0, comm = 0;
    };

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

    /// num_steps x num_envs steps; actions sampled from the network, or the teacher's.
    void rollout(bool teacher) {
        const auto N = cfg_.num_envs, T = cfg_.num_steps, A = spec_.num_actions(), O = spec_.obs_size();
        std::vector<std::int64_t> act(N);
        typename network_type::workspace w, wf;
        for (std::size_t t = 0; t < T; ++t) {
            const Eigen::Map<const Eigen::MatrixXf> o(venv_.observations().data(), Eigen::Index(O), Eigen::Index(N));
            net_.update_normalizers(o);
            const auto base = t * N;
            obs_.middleCols(Eigen::Index(base), Eigen::Index(N)) = o;
            std::copy(venv_.action_masks().begin(), venv_.action_masks().end(), masks_.begin() + std::ptrdiff_t(base * A));
            if (teacher) {  // cloning needs only the teacher's actions: no network pass
                for (std::size_t i = 0; i < N; ++i) act[i] = actions_[base + i] = teachers_[i](venv_.env(i));
            } else {
                if (cfg_.teacher_coef > 0)  // what the teacher would do in the states the policy visits
                    for (std::size_t i = 0; i < N; ++i) teacher_act_[base + i] = teachers_[i](venv_.env(i));
                net_.forward(o, w, venv_.action_masks().data());
                for (std::size_t i = 0; i < N; ++i) {
                    const basic_masked_categorical<S> d(w.logits.col(Eigen::Index(i)), venv_.action_masks().subspan(i * A, A));
                    const auto a = d.sample(rng_);
                    act[i] = actions_[base + i] = std::int64_t(a);
                    logp_[base + i] = d.log_prob(a);
                    values_[base + i] = w.values(Eigen::Index(i));
                }
            }
            venv_.step(act);
            steps_ += N;
            for (std::size_t i = 0; i < N; ++i) {  // the episode so far (a saved state replays it)
                if (venv_.dones()[i]) ep_actions_[i].clear();
                else ep_actions_[i].push_back(act[i]);
            }
            // bootstrap truncated episodes from their final observation
            std::vector<std::size_t> trunc;
            for (std::size_t i = 0; i < N; ++i)
                if (venv_.truncated()[i] && !venv_.terminated()[i]) trunc.push_back(i);
            std::vector<S> boot(N, S(0));
            if (!teacher && !trunc.empty()) {
                Eigen::MatrixXf fo(Eigen::Index(O), Eigen::Index(trunc.size()));
                for (std::size_t k = 0; k < trunc.size(); ++k)
                    fo.col(Eigen::Index(k)) = Eigen::Map<const Eigen::VectorXf>(venv_.final_observations().data() + trunc[k] * O, Eigen::Index(O));
                net_.forward(fo, wf);
                for (std::size_t k = 0; k < trunc.size(); ++k) boot[trunc[k]] = wf.values(Eigen::Index(k));
            }
            for (std::size_t i = 0; i < N; ++i) {
                const bool done = venv_.terminated()[i] || venv_.truncated()[i];
                const double g = discount_of(venv_.elapsed()[i]);
                gammas_[base + i] = S(g);
                rewards_[base + i] = S(scale_reward(i, venv_.rewards()[i], done, g)) + S(g) * boot[i];
                dones_[base + i] = done;
                if (done) {
                    const auto& f = venv_.final(i);
                    recent_.push_back({f.episode_return, f.m.avg_jct, f.m.avg_comm_cost});
                    if (recent_.size() > window_) recent_.pop_front();
                    ++episodes_;
                }
            }
        }
        if (teacher) return;  // no advantages for cloning
        // value of the state after the rollout
        const Eigen::Map<const Eigen::MatrixXf> o(venv_.observations().data(), Eigen::Index(O), Eigen::Index(N));
        net_.forward(o, w, venv_.action_masks().data());
        std::vector<S> last(N);
        for (std::size_t i = 0; i < N; ++i) last[i] = w.values(Eigen::Index(i));
        // GAE
        std::vector<S> gae(N, S(0));
        const S lam = S(cfg_.gae_lambda);
        for (std::size_t t = T; t-- > 0;) {
            for (std::size_t i = 0; i < N; ++i) {
                const auto k = t * N + i;
                const S g = gammas_[k];
                const S nonterm = dones_[k] ? S(0) : S(1);
                const S next_v = t + 1 == T ? last[i] : values_[k + N];
                const S delta = rewards_[k] + g * next_v * nonterm - values_[k];
                gae[i] = delta + g * lam * nonterm * gae[i];
                adv_[k] = gae[i];
                ret_[k] = gae[i] + values_[k];
            }
        }
    }

    void update(ppo_stats& st) {
        const auto TN = cfg_.num_steps * cfg_.num_envs, A = spec_.num_actions();
        const auto MB = TN / cfg_.minibatches;
        std::vector<std::size_t> idx(TN);
        std::iota(idx.begin(), idx.end(), std::size_t{0});
        typename network_type::workspace w;
        Eigen::MatrixXf mo(Eigen::Index(spec_.obs_size()), Eigen::Index(MB));
        std::vector<std::uint8_t> mm(MB * A);
        std::vector<std::int64_t> ma(MB), mt(cfg_.teacher_coef > 0 && !st.imitation ? MB : 0);
        std::vector<S> mlp_(MB), madv(MB), mret(MB), mval(MB);
        std::vector<vector_t<S>*> params, grads;
        for (auto* p : net_.parts()) {
            params.push_back(&p->params());
            grads.push_back(&p->grads());
        }
        double n_mb = 0;
        for (std::size_t ep = 0; ep < cfg_.epochs; ++ep) {
            for (std::size_t i = TN; i > 1; --i) std::swap(idx[i - 1], idx[rng_.below(i)]);
            for (std::size_t b = 0; b + MB <= TN; b += MB) {
                double mean = 0, sq = 0;
                for (std::size_t j = 0; j < MB; ++j) {
                    const auto k = idx[b + j];
                    // the rollout's observations are larger than the L2: fetch a later column
                    // while this one is copied
                    if (j + 2 < MB)
                        gpuplace::detail::prefetch_range(obs_.col(Eigen::Index(idx[b + j + 2])).data(),
                                                         std::size_t(obs_.rows()) * sizeof(float));
                    mo.col(Eigen::Index(j)) = obs_.col(Eigen::Index(k));
                    std::copy_n(masks_.begin() + std::ptrdiff_t(k * A), A, mm.begin() + std::ptrdiff_t(j * A));
                    ma[j] = actions_[k];
                    if (!mt.empty()) mt[j] = teacher_act_[k];
                    mlp_[j] = logp_[k];
                    madv[j] = adv_[k];
                    mret[j] = ret_[k];
                    mval[j] = values_[k];
                    mean += double(madv[j]);
                }
                if (cfg_.normalize_advantages && MB > 1) {
                    mean /= double(MB);
                    for (auto a : madv) sq += (double(a) - mean) * (double(a) - mean);
                    const double sd = std::sqrt(sq / double(MB - 1));
                    for (auto& a : madv) a = S((double(a) - mean) / (sd + 1e-8));
                }
                net_.forward(mo, w, mm.data());
                auto L = st.imitation ? imitation_loss(w.logits, mm, ma, st)
                                      : compute_ppo_loss<S>(w.logits, w.values, mm, ma, mlp_, madv, mret, mval, cfg_);
                if (!st.imitation && cfg_.teacher_coef > 0) {  // the pull towards the teacher's actions
                    const basic_masked_categorical_batch<S> d(w.logits, mm);
                    matrix_t<S> g;
                    d.gradient(g, mt, vector_t<S>::Constant(Eigen::Index(MB), -S(cfg_.teacher_coef) / S(MB)), S(0));
                    L.dlogits += g;
                    double agree = 0;
                    for (std::size_t j = 0; j < MB; ++j) agree += d.argmax(Eigen::Index(j)) == std::size_t(mt[j]) ? 1.0 : 0.0;
                    st.teacher_agreement += agree / double(MB);
                }
                // value warm-up: the policy keeps what it has (e.g. the cloned teacher) until the value is fit
                if (!st.imitation && iter_ - imitation_iterations() < cfg_.value_warmup) L.dlogits.setZero();
                net_.backward(w, L.dlogits, L.dvalues, false);  // writes every gradient: no zeroing pass
                const double norm = global_norm(grads);
                st.grad_norm += norm;
                opt_.step(params, grads, st.learning_rate, clip_factor<S>(norm, cfg_.max_grad_norm));
                st.policy_loss += L.policy;
                st.value_loss += L.value;
                st.entropy += L.entropy;
                st.approx_kl += L.approx_kl;
                st.clip_frac += L.clip_frac;
                n_mb += 1;
            }
        }
        if (n_mb > 0)
            for (double* x : {&st.policy_loss, &st.value_loss, &st.entropy, &st.approx_kl, &st.clip_frac, &st.grad_norm,
                              &st.teacher_agreement})
                *x /= n_mb;
        if (st.imitation) return;  // no values were estimated in the teacher's rollout
        // explained variance of the rollout values
        double mr = 0, mv = 0;
        for (std::size_t k = 0; k < TN; ++k) mr += double(ret_[k]) / double(TN);
        double vr = 0, ve = 0;
        for (std::size_t k = 0; k < TN; ++k) {
            vr += (double(ret_[k]) - mr) * (double(ret_[k]) - mr);
            const double e = double(ret_[k]) - double(values_[k]);
            mv += e / double(TN);
        }
        for (std::size_t k = 0; k < TN; ++k) {
            const double e = double(ret_[k]) - double(values_[k]) - mv;
            ve += e * e;
        }
        st.explained_variance = vr > 0 ? 1.0 - ve / vr : 0.0;
    }

    /// Behaviour cloning: cross-entropy of the teacher's actions under the masked policy (no value
    /// or entropy term); adds the minibatch's argmax agreement with the teacher to st.
    ppo_loss<S> imitation_loss(const matrix_t<S>& logits, std::span<const std::uint8_t> masks,
                               std::span<const std::int64_t> actions, ppo_stats& st) const {
        const auto M = std::size_t(logits.cols());
        ppo_loss<S> L;
        L.dvalues = vector_t<S>::Zero(Eigen::Index(M));
        const S inv = S(1) / S(M);
        const basic_masked_categorical_batch<S> d(logits, masks);
        double agree = 0;
        for (std::size_t i = 0; i < M; ++i) {
            const auto k = Eigen::Index(i);
            const auto a = std::size_t(actions[i]);
            L.policy -= double(d.log_prob(a, k)) / double(M);
            L.entropy += double(d.entropy(k)) / double(M);
            agree += d.argmax(k) == a ? 1.0 : 0.0;
        }
        d.gradient(L.dlogits, actions, vector_t<S>::Constant(Eigen::Index(M), -inv), S(0));
        L.total = L.policy;
        st.teacher_agreement += agree / double(M);
        return L;
    }

    ppo_config cfg_;
    scenario scen_;
    any_policy<Env> teacher_;  ///< empty without imitation
    std::vector<std::function<std::int64_t(const Env&)>> teachers_;  ///< per env, made afresh each imitation iteration
    std::vector<std::vector<std::int64_t>> ep_actions_;  ///< per env: the actions of its current episode
    basic_vector_env<Env> venv_;
    gpuplace::detail::rng rng_;
    obs_spec spec_;
    network_type net_;
    basic_adam<S> opt_;
    Eigen::MatrixXf obs_;
    std::vector<std::uint8_t> masks_, dones_;
    std::vector<std::int64_t> actions_, teacher_act_;
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
