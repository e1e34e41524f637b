#pragma once
/// \file rl/adam.hpp
/// Adam over a set of parameter vectors, and global gradient-norm clipping.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <vector>

#include <Eigen/Dense>

#include "detail/exact_sqrt.hpp"

namespace gpuplace::rl {

/// Global L2 norm of several gradient vectors.
template <class V>
[[nodiscard]] double global_norm(const std::vector<V*>& grads) {
    double s = 0;
    for (const auto* g : grads) s += double(g->squaredNorm());
    return std::sqrt(s);
}

/// The factor that brings gradients of global norm `norm` to at most max_norm (1 when they are
/// within it, or when max_norm <= 0 turns clipping off).
template <std::floating_point S>
[[nodiscard]] S clip_factor(double norm, double max_norm) noexcept {
    return max_norm > 0 && norm > max_norm ? static_cast<S>(max_norm / (norm + 1e-6)) : S(1);
}

/// Scales every gradient so that their global norm is at most max_norm; returns the norm before.
template <class V>
double clip_grad_norm(const std::vector<V*>& grads, double max_norm) {
    const double n = global_norm(grads);
    const auto f = clip_factor<typename V::Scalar>(n, max_norm);
    if (f != 1)
        for (auto* g : grads) *g *= f;
    return n;
}

/// Adam (Kingma & Ba) with bias correction; one moment pair per parameter vector.
template <std::floating_point S>
class basic_adam {
public:
    using vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-5;

    basic_adam() = default;
    /// Sizes the moments for vectors of these sizes.
    explicit basic_adam(const std::vector<std::size_t>& sizes) {
        for (auto n : sizes) {
            m_.push_back(vector::Zero(Eigen::Index(n)));
            v_.push_back(vector::Zero(Eigen::Index(n)));
        }
    }

    /// One step: params[i] -= lr * mhat / (sqrt(vhat) + eps), with the gradients multiplied by
    /// `grad_scale` first (clip_factor(): clipping without a pass that rewrites the gradients).
    /// The square root is exactly rounded (rl/detail/exact_sqrt.hpp), so a step gives the same bits
    /// on every CPU that runs the same instructions.
    void step(const std::vector<vector*>& params, const std::vector<vector*>& grads, double lr, S grad_scale = S(1)) {
        ++t_;
        const double c1 = 1.0 - std::pow(beta1, double(t_)), c2 = 1.0 - std::pow(beta2, double(t_));
        const coefficients k{S(beta1), S(1) - S(beta1), S(beta2), S(1) - S(beta2), S(lr / c1), S(eps),
                             S(1.0 / std::sqrt(c2)), grad_scale};
        for (std::size_t i = 0; i < params.size(); ++i) update(*params[i], *grads[i], m_[i], v_[i], k);
    }
    [[nodiscard]] long long steps() const noexcept { return t_; }
    /// The first and second moments, one vector per parameter vector (to save and restore them).
    [[nodiscard]] std::vector<vector>& first_moments() noexcept { return m_; }
    [[nodiscard]] std::vector<vector>& second_moments() noexcept { return v_; }
    [[nodiscard]] const std::vector<vector>& first_moments() const noexcept { return m_; }
    [[nodiscard]] const std::vector<vector>& second_moments() const noexcept { return v_; }
    /// Sets the step count (restoring a saved optimiser).
    void set_steps(long long t) noexcept { t_ = t; }
    /// Zeroes the moments and the step count (a new phase of training).
    void reset() noexcept {
        for (auto& m : m_) m.setZero();
        for (auto& v : v_) v.setZero();
        t_ = 0;
    }

private:
    struct coefficients {
        S b1, one_minus_b1, b2, one_minus_b2, step, eps, inv_sqrt_c2, grad_scale;
    };

    /// The element-wise update, in this order of operations (each one rounded, none fused):
    /// g = grad * scale; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) (g g);
    /// p = p - (step m) / (sqrt(v) inv_sqrt_c2 + eps).
    static void update(vector& p, const vector& grad, vector& m, vector& v, const coefficients& k) {
        const auto g = grad.array() * k.grad_scale;
        m.array() = k.b1 * m.array() + k.one_minus_b1 * g;
        v.array() = k.b2 * v.array() + k.one_minus_b2 * (g * g);
        p.array() = p.array() - (k.step * m.array()) / (v.array().unaryExpr(detail::exact_sqrt_op{}) * k.inv_sqrt_c2 + k.eps);
    }

    std::vector<vector> m_, v_;
    long long t_ = 0;
};

using adam = basic_adam<float>;

}  // namespace gpuplace::rl
