#pragma once
/// \file rl/normalizer.hpp
/// Running mean and variance (parallel Welford, in double) used to normalise observations and to
/// scale rewards.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <Eigen/Dense>

#include "detail/exact_sqrt.hpp"

namespace gpuplace::rl {

/// Running mean / variance of vectors of a fixed size. normalize(x) = clip((x - mean) / sqrt(var + eps)).
class running_norm {
public:
    double eps = 1e-8;
    double clip = 10.0;

    running_norm() = default;
    explicit running_norm(std::size_t dims) : mean_(Eigen::VectorXd::Zero(Eigen::Index(dims))),
                                              var_(Eigen::VectorXd::Ones(Eigen::Index(dims))) {}

    [[nodiscard]] std::size_t dims() const noexcept { return std::size_t(mean_.size()); }
    [[nodiscard]] double count() const noexcept { return count_; }
    [[nodiscard]] const Eigen::VectorXd& mean() const noexcept { return mean_; }
    [[nodiscard]] const Eigen::VectorXd& var() const noexcept { return var_; }
    /// Restores a saved state.
    void set(Eigen::VectorXd mean, Eigen::VectorXd var, double count) {
        mean_ = std::move(mean);
        var_ = std::move(var);
        count_ = count;
    }

    /// Merges the columns of X (dims x n) into the statistics.
    template <class M>
    void update(const M& x) {
        const double n = double(x.cols());
        if (n == 0) return;
        const Eigen::MatrixXd xd = x.template cast<double>();
        const Eigen::VectorXd bm = xd.rowwise().mean();
        const Eigen::VectorXd bv = (xd.colwise() - bm).array().square().rowwise().sum() / n;
        const double tot = count_ + n;
        const Eigen::VectorXd delta = bm - mean_;
        mean_ += delta * (n / tot);
        var_ = (var_ * count_ + bv * n + delta.array().square().matrix() * (count_ * n / tot)) / tot;
        count_ = tot;
    }

    /// Normalises the columns of X in place (X may have fewer rows than dims(): its rows are
    /// normalised with the statistics of the first X.rows() dimensions).
    template <class M>
    void apply(M& x) const {
        using S = typename M::Scalar;
        const auto r = x.rows();
        const Eigen::Matrix<S, Eigen::Dynamic, 1> m = mean_.head(r).template cast<S>();
        // 1 / sqrt, each exactly rounded: Eigen's rsqrt() may start from the CPU's estimate
        const Eigen::Matrix<S, Eigen::Dynamic, 1> inv =
            (var_.head(r).array() + eps).unaryExpr(detail::exact_sqrt_op{}).inverse().matrix().template cast<S>();
        x.colwise() -= m;
        x.array().colwise() *= inv.array();
        x = x.array().min(S(clip)).max(S(-clip));
    }

private:
    Eigen::VectorXd mean_, var_;
    double count_ = 0;
};

}  // namespace gpuplace::rl
