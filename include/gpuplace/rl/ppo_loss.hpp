#pragma once
/// \file rl/ppo_loss.hpp
/// The reference trainer's losses over a minibatch and their gradients with respect to the logits
/// and values: PPO's clipped objective, and behaviour cloning's cross-entropy. Exposed for the
/// gradient check.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <span>

#include "categorical.hpp"
#include "ppo_config.hpp"

namespace gpuplace::rl {

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

/// Behaviour cloning's loss: the cross-entropy of the teacher's `actions` under the masked policy
/// (no value or entropy term; `policy` holds the cross-entropy, `entropy` the policy's). Adds the
/// fraction of the minibatch whose argmax is the teacher's action to `agreement`. With `weights`
/// (one per sample, positive), the cross-entropy is their weighted mean.
template <std::floating_point S>
[[nodiscard]] ppo_loss<S> imitation_loss(const matrix_t<S>& logits, std::span<const std::uint8_t> masks,
                                         std::span<const std::int64_t> actions, double& agreement,
                                         std::span<const S> weights = {}) {
    const auto M = std::size_t(logits.cols());
    ppo_loss<S> L;
    L.dvalues = vector_t<S>::Zero(Eigen::Index(M));
    const S inv = S(1) / S(M);
    vector_t<S> coef = vector_t<S>::Constant(Eigen::Index(M), -inv);
    double total = 0;
    if (!weights.empty()) {
        for (const S x : weights) total += double(x);
        for (std::size_t i = 0; i < M; ++i) coef(Eigen::Index(i)) = -S(double(weights[i]) / total);
    }
    const basic_masked_categorical_batch<S> d(logits, masks);
    double agree = 0;
    for (std::size_t i = 0; i < M; ++i) {
        const auto k = Eigen::Index(i);
        const auto a = std::size_t(actions[i]);
        const double lp = double(d.log_prob(a, k));
        L.policy -= weights.empty() ? lp / double(M) : lp * double(weights[i]) / total;
        L.entropy += double(d.entropy(k)) / double(M);
        agree += d.argmax(k) == a ? 1.0 : 0.0;
    }
    d.gradient(L.dlogits, actions, coef, S(0));
    L.total = L.policy;
    agreement += agree / double(M);
    return L;
}


/// Expert iteration's counterfactual loss: minus the policy's expected advantage,
/// -(1/M) sum_j sum_a p_j(a) adv(a, j), with adv (A x M, column-major; anything where masked) the
/// teacher's score of every action on the same futures, centred and scaled. `policy` holds that
/// loss, `entropy` the policy's; adds the fraction of the minibatch whose argmax is `actions` (the
/// teacher's choice) to `agreement`.
template <std::floating_point S>
[[nodiscard]] ppo_loss<S> advantage_loss(const matrix_t<S>& logits, std::span<const std::uint8_t> masks, std::span<const float> adv,
                                         std::span<const std::int64_t> actions, double& agreement) {
    const auto A = std::size_t(logits.rows()), M = std::size_t(logits.cols());
    ppo_loss<S> L;
    L.dvalues = vector_t<S>::Zero(Eigen::Index(M));
    L.dlogits.resize(logits.rows(), logits.cols());
    const basic_masked_categorical_batch<S> d(logits, masks);
    const auto& p = d.probs();
    double agree = 0;
    for (std::size_t j = 0; j < M; ++j) {
        const auto k = Eigen::Index(j);
        S expected = 0;  // sum_a p(a) adv(a); masked actions have p = 0
        for (std::size_t a = 0; a < A; ++a)
            if (masks[j * A + a]) expected += p(Eigen::Index(a), k) * S(adv[j * A + a]);
        for (std::size_t a = 0; a < A; ++a) {  // d/dl_a of sum_b p_b adv_b = p_a (adv_a - expected)
            const S g = masks[j * A + a] ? p(Eigen::Index(a), k) * (S(adv[j * A + a]) - expected) : S(0);
            L.dlogits(Eigen::Index(a), k) = -g / S(M);
        }
        L.policy -= double(expected) / double(M);
        L.entropy += double(d.entropy(k)) / double(M);
        agree += d.argmax(k) == std::size_t(actions[j]) ? 1.0 : 0.0;
    }
    L.total = L.policy;
    agreement += agree / double(M);
    return L;
}

}  // namespace gpuplace::rl
