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

/// Masked categoricals over every column of a logits matrix (A x M) at once: what a minibatch
/// loss needs (log-probabilities of the actions taken, entropies, gradients w.r.t. the logits),
/// in whole-matrix passes (one vectorised exp over the matrix, one log per column) instead of an
/// object per sample. Same conventions as basic_masked_categorical: masked actions have
/// probability exactly 0 and add exactly 0 to the entropy and the gradients. argmax() reads the
/// masks where they are: they must outlive the object.
template <std::floating_point S>
class basic_masked_categorical_batch {
public:
    using matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
    using vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

    /// From logits (A x M) and masks (A x M, column-major); every column needs a valid action.
    basic_masked_categorical_batch(const matrix& logits, std::span<const std::uint8_t> masks)
        : mask_(masks.data()), p_(logits.rows(), logits.cols()), lz_(logits.rows(), logits.cols()), ent_(logits.cols()) {
        const auto A = logits.rows(), M = logits.cols(), n = A * M;
        if (masks.size() != std::size_t(n))
            throw Error("masked_categorical: masks have " + std::to_string(masks.size()) + " entries for " +
                        std::to_string(A) + " x " + std::to_string(M) + " logits");
        constexpr S inf = std::numeric_limits<S>::infinity();
        const std::uint8_t* m = masks.data();
        const S* z = logits.data();
        S* pp = p_.data();
        for (Eigen::Index i = 0; i < n; ++i) pp[i] = m[i] ? z[i] : -inf;  // branch-free: vectorises
        const Eigen::Matrix<S, 1, Eigen::Dynamic> mx = p_.colwise().maxCoeff();
        for (Eigen::Index j = 0; j < M; ++j)
            if (mx(j) == -inf) throw Error("masked_categorical: every action of sample " + std::to_string(j) + " is masked");
        // column by column where a column's scalar is involved, over the whole matrix otherwise
        // (a row vector broadcast over the rows would be evaluated one scalar at a time)
        for (Eigen::Index j = 0; j < M; ++j) p_.col(j).array() = logits.col(j).array() - mx(j);
        p_.array() = p_.array().exp();
        for (Eigen::Index i = 0; i < n; ++i) pp[i] = m[i] ? pp[i] : S(0);  // exactly 0 where masked
        const Eigen::Array<S, 1, Eigen::Dynamic> sum = p_.colwise().sum().array();
        for (Eigen::Index j = 0; j < M; ++j) {
            p_.col(j) *= S(1) / sum(j);
            lz_.col(j).array() = logits.col(j).array() - (mx(j) + std::log(sum(j)));  // finite also where masked
        }
        ent_ = -p_.cwiseProduct(lz_).colwise().sum().transpose();  // masked actions add 0 * (a finite value)
    }

    [[nodiscard]] Eigen::Index rows() const noexcept { return p_.rows(); }
    [[nodiscard]] Eigen::Index cols() const noexcept { return p_.cols(); }
    /// Log-probability of a valid action a in column j.
    [[nodiscard]] S log_prob(std::size_t a, Eigen::Index j) const { return lz_(Eigen::Index(a), j); }
    [[nodiscard]] S entropy(Eigen::Index j) const { return ent_(j); }
    /// Probabilities (A x M; 0 where masked).
    [[nodiscard]] const matrix& probs() const noexcept { return p_; }

    /// The most probable valid action of column j (lowest index on ties).
    [[nodiscard]] std::size_t argmax(Eigen::Index j) const {
        const auto A = rows();
        const std::uint8_t* m = mask_ + j * A;
        Eigen::Index best = -1;
        for (Eigen::Index i = 0; i < A; ++i)
            if (m[i] && (best < 0 || lz_(i, j) > lz_(best, j))) best = i;
        return std::size_t(best);
    }

    /// Writes into d (resized to A x M) the gradient w.r.t. the logits of
    /// sum over columns j of coef_logp[j] * log p_j(actions[j]) + coef_ent * entropy_j.
    template <class V>
    void gradient(matrix& d, std::span<const std::int64_t> actions, const V& coef_logp, S coef_ent) const {
        const auto A = rows(), M = cols();
        d.resize(A, M);
        for (Eigen::Index j = 0; j < M; ++j) {
            // d log p(a) / d l_i = [i == a] - p_i;  d H / d l_i = -p_i (log p_i + H); both 0 where p_i = 0
            const S c = S(coef_logp[std::size_t(j)]), h = ent_(j);
            const S* p = p_.col(j).data();
            const S* lz = lz_.col(j).data();
            S* o = d.col(j).data();
            for (Eigen::Index i = 0; i < A; ++i) o[i] = -c * p[i] - coef_ent * p[i] * (lz[i] + h);
            o[actions[std::size_t(j)]] += c;
        }
    }

private:
    const std::uint8_t* mask_;
    matrix p_, lz_;  ///< probabilities (0 where masked); logit minus log-sum-exp (finite everywhere)
    vector ent_;
};

using masked_categorical = basic_masked_categorical<float>;
using masked_categorical_batch = basic_masked_categorical_batch<float>;

}  // namespace gpuplace::rl
