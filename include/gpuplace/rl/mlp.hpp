#pragma once
/// \file rl/mlp.hpp
/// A multilayer perceptron on Eigen with analytic backpropagation and orthogonal initialisation.
/// Samples are the columns of a matrix (features x batch). Templated on the scalar type: float
/// for training, double for gradient checks.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <Eigen/Dense>

#include "../detail/enum_names.hpp"
#include "../detail/rng.hpp"
#include "../error.hpp"

namespace gpuplace::rl {

/// Hidden-layer nonlinearity.
enum class activation : unsigned char { tanh, relu };

}  // namespace gpuplace::rl
template <>
struct gpuplace::detail::enum_names<gpuplace::rl::activation> {
    static constexpr std::array<std::pair<rl::activation, std::string_view>, 2> values{
        {{rl::activation::tanh, "tanh"}, {rl::activation::relu, "relu"}}};
};
namespace gpuplace::rl {

[[nodiscard]] inline std::string_view to_string(activation a) noexcept { return gpuplace::detail::enum_name(a); }

/// Parses "tanh" or "relu"; throws ConfigError naming `where` otherwise.
[[nodiscard]] inline activation parse_activation(std::string_view s, std::string_view where) {
    if (const auto a = gpuplace::detail::enum_from_name<activation>(s)) return *a;
    throw ConfigError(std::string(where) + ": unknown activation \"" + std::string(s) + "\" (allowed: " +
                      gpuplace::detail::enum_name_list<activation>() + ")");
}

template <std::floating_point S>
using matrix_t = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <std::floating_point S>
using vector_t = Eigen::Matrix<S, Eigen::Dynamic, 1>;

namespace detail {

/// Applies the activation in place.
template <class M>
void activate(M&& x, activation a) {
    using S = typename std::decay_t<M>::Scalar;
    if (a == activation::tanh) x = x.array().tanh();
    else x = x.array().max(S(0));
}

/// Multiplies `d` (gradient w.r.t. the activation's output) by the derivative, given the output `y`.
template <class D, class Y>
void activation_backward(D&& d, const Y& y, activation a) {
    using S = typename std::decay_t<D>::Scalar;
    if (a == activation::tanh) d.array() *= (S(1) - y.array().square());
    else d.array() *= (y.array() > S(0)).template cast<S>();
}

/// A random (rows x cols) matrix with orthonormal rows or columns, scaled by gain (Saxe et al.).
template <std::floating_point S>
[[nodiscard]] matrix_t<S> orthogonal(std::size_t rows, std::size_t cols, double gain, gpuplace::detail::rng& r) {
    const auto big = std::max(rows, cols), small = std::min(rows, cols);
    Eigen::MatrixXd a(big, small);
    for (Eigen::Index j = 0; j < a.cols(); ++j)
        for (Eigen::Index i = 0; i < a.rows(); ++i) a(i, j) = r.normal();
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
    Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(Eigen::Index(big), Eigen::Index(small));
    const Eigen::MatrixXd rr = qr.matrixQR().topLeftCorner(Eigen::Index(small), Eigen::Index(small));
    for (Eigen::Index j = 0; j < q.cols(); ++j)
        if (rr(j, j) < 0) q.col(j) = -q.col(j);  // makes the distribution uniform (Haar)
    Eigen::MatrixXd w = rows >= cols ? q : Eigen::MatrixXd(q.transpose());
    return (w * gain).template cast<S>();
}

}  // namespace detail

/// A fully connected network: sizes = {inputs, hidden..., outputs}. Hidden layers use the
/// activation; the output layer is linear unless `output_activation` is set. Parameters live in
/// one flat vector (layer by layer: W column-major, then b), gradients in another.
template <std::floating_point S>
class basic_mlp {
public:
    using scalar = S;
    using matrix = matrix_t<S>;
    using vector = vector_t<S>;
    using weight_map = Eigen::Map<matrix>;
    using const_weight_map = Eigen::Map<const matrix>;
    using bias_map = Eigen::Map<vector>;
    using const_bias_map = Eigen::Map<const vector>;

    /// Activations kept by forward() for backward(): a[0] = input (unless forward_view() left it
    /// with the caller), a[L] = output.
    struct cache {
        std::vector<matrix> a;
        const matrix* input = nullptr;  ///< forward_view()'s input, which backward() reads (else a[0])
    };

    basic_mlp() = default;

    /// Parameters (weights and biases) of a network with these layer sizes, without building it.
    [[nodiscard]] static std::size_t count_params(const std::vector<std::size_t>& sizes) noexcept {
        std::size_t n = 0;
        for (std::size_t l = 0; l + 1 < sizes.size(); ++l) n += sizes[l] * sizes[l + 1] + sizes[l + 1];
        return n;
    }

    /// A network with zero parameters of the given shape (call init() or set params()).
    basic_mlp(std::vector<std::size_t> sizes, activation act, bool output_activation = false)
        : sizes_(std::move(sizes)), act_(act), out_act_(output_activation) {
        if (sizes_.size() < 2) throw ConfigError("mlp: needs at least an input and an output size");
        for (auto s : sizes_)
            if (s == 0) throw ConfigError("mlp: layer sizes must be >= 1");
        std::size_t n = 0;
        for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
            offsets_.push_back(n);
            n += sizes_[l] * sizes_[l + 1] + sizes_[l + 1];
        }
        params_ = vector::Zero(Eigen::Index(n));
        grads_ = vector::Zero(Eigen::Index(n));
    }

    /// Orthogonal weights (gain `hidden_gain` for hidden layers, `output_gain` for the last), zero biases.
    void init(gpuplace::detail::rng& r, double hidden_gain, double output_gain) {
        for (std::size_t l = 0; l < num_layers(); ++l) {
            const double g = l + 1 == num_layers() ? output_gain : hidden_gain;
            W(l) = detail::orthogonal<S>(sizes_[l + 1], sizes_[l], g, r);
            b(l).setZero();
        }
    }

    [[nodiscard]] const std::vector<std::size_t>& sizes() const noexcept { return sizes_; }
    [[nodiscard]] std::size_t num_layers() const noexcept { return sizes_.empty() ? 0 : sizes_.size() - 1; }
    [[nodiscard]] std::size_t inputs() const noexcept { return sizes_.front(); }
    [[nodiscard]] std::size_t outputs() const noexcept { return sizes_.back(); }
    [[nodiscard]] activation hidden_activation() const noexcept { return act_; }
    [[nodiscard]] bool output_activation() const noexcept { return out_act_; }
    [[nodiscard]] std::size_t num_params() const noexcept { return std::size_t(params_.size()); }

    [[nodiscard]] vector& params() noexcept { return params_; }
    [[nodiscard]] const vector& params() const noexcept { return params_; }
    [[nodiscard]] vector& grads() noexcept { return grads_; }
    [[nodiscard]] const vector& grads() const noexcept { return grads_; }
    void zero_grad() { grads_.setZero(); }

    /// Weight matrix (out x in) and bias of layer l, as views into params().
    [[nodiscard]] weight_map W(std::size_t l) { return {params_.data() + offsets_[l], rows(l), cols(l)}; }
    [[nodiscard]] const_weight_map W(std::size_t l) const { return {params_.data() + offsets_[l], rows(l), cols(l)}; }
    [[nodiscard]] bias_map b(std::size_t l) { return {params_.data() + offsets_[l] + wsize(l), rows(l)}; }
    [[nodiscard]] const_bias_map b(std::size_t l) const { return {params_.data() + offsets_[l] + wsize(l), rows(l)}; }

    /// Forward pass of a batch X (inputs x B); the output is c.a.back() (outputs x B).
    template <class X>
    const matrix& forward(const X& x, cache& c) const {
        c.a.resize(sizes_.size());
        c.a[0] = x;
        c.input = nullptr;
        return run(c.a[0], c);
    }

    /// forward() without copying the input: backward() reads x where it is, so x must stay
    /// alive and unchanged until then (a workspace member, not a temporary).
    const matrix& forward_view(const matrix& x, cache& c) const {
        c.a.resize(sizes_.size());
        c.input = &x;
        return run(x, c);
    }
    const matrix& forward_view(matrix&&, cache&) const = delete;

    /// Backward pass: dy = dLoss/dOutput (outputs x B). Adds the parameter gradients to grads(),
    /// or with `accumulate` false writes them there (no zero_grad() needed); writes dLoss/dInput
    /// into *dx when dx is not null.
    void backward(const cache& c, matrix dy, matrix* dx = nullptr, bool accumulate = true) {
        for (std::size_t l = num_layers(); l-- > 0;) {
            if (l + 1 < num_layers() || out_act_) detail::activation_backward(dy, c.a[l + 1], act_);
            weight_map gW{grads_.data() + offsets_[l], rows(l), cols(l)};
            bias_map gb{grads_.data() + offsets_[l] + wsize(l), rows(l)};
            const matrix& in = l == 0 && c.input ? *c.input : c.a[l];
            if (accumulate) {
                gW.noalias() += dy * in.transpose();
                gb.noalias() += dy.rowwise().sum();
            } else {
                gW.noalias() = dy * in.transpose();
                gb.noalias() = dy.rowwise().sum();
            }
            if (l > 0 || dx) {  // dLoss/d(layer input) = W^T dy
                matrix prev;
                prev.noalias() = W(l).transpose() * dy;
                dy = std::move(prev);
            }
        }
        if (dx) *dx = std::move(dy);
    }

private:
    const matrix& run(const matrix& x, cache& c) const {
        for (std::size_t l = 0; l < num_layers(); ++l) {
            const matrix& in = l == 0 ? x : c.a[l];
            c.a[l + 1].noalias() = W(l) * in;
            c.a[l + 1].colwise() += b(l);
            if (l + 1 < num_layers() || out_act_) detail::activate(c.a[l + 1], act_);
        }
        return c.a.back();
    }

    [[nodiscard]] Eigen::Index rows(std::size_t l) const { return Eigen::Index(sizes_[l + 1]); }
    [[nodiscard]] Eigen::Index cols(std::size_t l) const { return Eigen::Index(sizes_[l]); }
    [[nodiscard]] std::size_t wsize(std::size_t l) const { return sizes_[l] * sizes_[l + 1]; }

    std::vector<std::size_t> sizes_;
    std::vector<std::size_t> offsets_;
    activation act_ = activation::tanh;
    bool out_act_ = false;
    vector params_, grads_;
};

using mlp = basic_mlp<float>;

}  // namespace gpuplace::rl
