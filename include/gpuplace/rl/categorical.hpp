#pragma once
/// \file rl/categorical.hpp
/// A categorical distribution over the valid actions of a mask: invalid actions have probability
/// exactly 0 (never sampled, never the argmax), and log-probabilities and entropy are taken over
/// the valid actions only. Gradients w.r.t. the logits are analytic.

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <span>

#include <Eigen/Dense>

#include "../detail/rng.hpp"
#include "../error.hpp"

namespace gpuplace::rl {

/// A masked categorical distribution over logits[i] for mask[i] != 0. Holds log-probabilities
/// (-inf for invalid actions).
template <std::floating_point S>
class basic_masked_categorical {
public:
    using vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

    /// From a column of logits and a mask of the same length (at least one valid action).
    template <class L>
    basic_masked_categorical(const L& logits, std::span<const std::uint8_t> mask) : logp_(logits.size()) {
        const auto n = std::size_t(logits.size());
        if (mask.size() != n) throw Error("masked_categorical: mask has " + std::to_string(mask.size()) +
                                          " entries for " + std::to_string(n) + " logits");
        S mx = -std::numeric_limits<S>::infinity();
        for (std::size_t i = 0; i < n; ++i)
            if (mask[i] && logits(Eigen::Index(i)) > mx) mx = logits(Eigen::Index(i));
        if (mx == -std::numeric_limits<S>::infinity()) throw Error("masked_categorical: every action is masked");
        S sum = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (mask[i]) sum += std::exp(logits(Eigen::Index(i)) - mx);
        const S lse = mx + std::log(sum);
        entropy_ = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const auto k = Eigen::Index(i);
            if (mask[i]) {
                logp_(k) = logits(k) - lse;
                entropy_ -= std::exp(logp_(k)) * logp_(k);
            } else
                logp_(k) = -std::numeric_limits<S>::infinity();
        }
    }

    [[nodiscard]] std::size_t size() const noexcept { return std::size_t(logp_.size()); }
    [[nodiscard]] S log_prob(std::size_t a) const { return logp_(Eigen::Index(a)); }
    [[nodiscard]] S prob(std::size_t a) const { return std::exp(logp_(Eigen::Index(a))); }
    [[nodiscard]] S entropy() const noexcept { return entropy_; }
    [[nodiscard]] const vector& log_probs() const noexcept { return logp_; }

    /// The most probable valid action (lowest index on ties).
    [[nodiscard]] std::size_t argmax() const {
        Eigen::Index best = 0;
        logp_.maxCoeff(&best);
        return std::size_t(best);
    }

    /// Samples a valid action by inverting the CDF with one uniform draw.
    [[nodiscard]] std::size_t sample(gpuplace::detail::rng& r) const {
        double u = r.uniform();
        std::size_t last = 0;
        for (std::size_t i = 0; i < size(); ++i) {
            const double p = std::exp(double(logp_(Eigen::Index(i))));
            if (p <= 0) continue;
            last = i;
            if (u < p) return i;
            u -= p;
        }
        return last;  // rounding: the last valid action
    }

    /// Adds to `d` (dLoss/dlogits) the gradient of coef_logp * log p(a) + coef_ent * entropy.
    template <class D>
    void backward(D&& d, std::size_t a, S coef_logp, S coef_ent) const {
        for (Eigen::Index i = 0; i < logp_.size(); ++i) {
            if (logp_(i) == -std::numeric_limits<S>::infinity()) continue;
            const S p = std::exp(logp_(i));
            S g = -coef_logp * p;  // d log p(a) / d l_i = [i == a] - p_i
            if (std::size_t(i) == a) g += coef_logp;
            g += coef_ent * (-p * (logp_(i) + entropy_));  // d H / d l_i = -p_i (log p_i + H)
            d(i) += g;
        }
    }

private:
    vector logp_;
    S entropy_ = 0;
};

using masked_categorical = basic_masked_categorical<float>;

}  // namespace gpuplace::rl
