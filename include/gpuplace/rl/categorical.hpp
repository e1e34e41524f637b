#pragma once
/// \file rl/categorical.hpp
/// A categorical distribution over the valid actions of a mask: invalid actions have probability
/// exactly 0 (never sampled, never the argmax), and log-probabilities and entropy are taken over
/// the valid actions only. Gradients w.r.t. the logits are analytic.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <span>

#include <Eigen/Dense>

#include "../detail/rng.hpp"
#include "../error.hpp"

namespace gpuplace::rl {

/// A masked categorical distribution over logits[i] for mask[i] != 0. Holds the probabilities
/// (exactly 0 for invalid actions) and log-probabilities (-inf for invalid actions), each exp
/// computed once.
template <std::floating_point S>
class basic_masked_categorical {
public:
    using vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

    /// From a column of logits and a mask of the same length (at least one valid action).
    template <class L>
    basic_masked_categorical(const L& logits, std::span<const std::uint8_t> mask) : lp_(logits.size(), 3) {
        const auto n = Eigen::Index(logits.size());
        if (mask.size() != std::size_t(n))
            throw Error("masked_categorical: mask has " + std::to_string(mask.size()) + " entries for " +
                        std::to_string(n) + " logits");
        constexpr S inf = std::numeric_limits<S>::infinity();
        auto logp = lp_.col(0), p = lp_.col(1), z = lp_.col(2);
        // whole columns at once, and loops over the mask without a branch (both vectorise)
        const std::uint8_t* m = mask.data();
        S* lp = logp.data();
        S* pp = p.data();
        const S* zz = z.data();
        z = logits.template cast<S>();
        for (Eigen::Index i = 0; i < n; ++i) lp[i] = m[i] ? zz[i] : -inf;
        const S mx = logp.maxCoeff();
        if (mx == -inf) throw Error("masked_categorical: every action is masked");
        p = (z.array() - mx).exp();
        for (Eigen::Index i = 0; i < n; ++i) pp[i] = m[i] ? pp[i] : S(0);  // exactly 0 where masked
        const S sum = p.sum();
        p *= S(1) / sum;
        const S lse = mx + std::log(sum);
        z.array() -= lse;  // log-probabilities, finite also where masked
        logp.array() -= lse;  // -inf stays -inf
        entropy_ = -p.dot(z);  // masked actions add 0 * (a finite value)
    }

    [[nodiscard]] std::size_t size() const noexcept { return std::size_t(lp_.rows()); }
    [[nodiscard]] S log_prob(std::size_t a) const { return lp_(Eigen::Index(a), 0); }
    [[nodiscard]] S prob(std::size_t a) const { return lp_(Eigen::Index(a), 1); }
    [[nodiscard]] S entropy() const noexcept { return entropy_; }
    /// Log-probabilities of every action (-inf where masked).
    [[nodiscard]] auto log_probs() const noexcept { return lp_.col(0); }
    /// Probabilities of every action (0 where masked).
    [[nodiscard]] auto probs() const noexcept { return lp_.col(1); }

    /// The most probable valid action (lowest index on ties).
    [[nodiscard]] std::size_t argmax() const {
        Eigen::Index best = 0;
        lp_.col(0).maxCoeff(&best);
        return std::size_t(best);
    }

    /// Samples a valid action by inverting the CDF with one uniform draw.
    [[nodiscard]] std::size_t sample(gpuplace::detail::rng& r) const {
        double u = r.uniform();
        std::size_t last = 0;
        for (std::size_t i = 0; i < size(); ++i) {
            const double p = double(lp_(Eigen::Index(i), 1));
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
        // d log p(a) / d l_i = [i == a] - p_i;  d H / d l_i = -p_i (log p_i + H); both 0 where p_i = 0
        // column 2 is finite also where p_i = 0, so that those terms are exactly 0
        const auto p = lp_.col(1).array();
        d.array() += -coef_logp * p - coef_ent * p * (lp_.col(2).array() + entropy_);
        d(Eigen::Index(a)) += coef_logp;
    }

private:
    /// column 0: log-probabilities (-inf where masked), 1: probabilities (0 where masked),
    /// 2: logit minus log-sum-exp (the log-probability, but finite where masked)
    Eigen::Matrix<S, Eigen::Dynamic, 3> lp_;
    S entropy_ = 0;
};

using masked_categorical = basic_masked_categorical<float>;

}  // namespace gpuplace::rl
