// rl/adam.hpp: Adam's update, bit for bit against the plain formula; bias correction; reset();
// global-norm clipping.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include <Eigen/Core>

#include <gpuplace/detail/rng.hpp>
#include <gpuplace/rl/adam.hpp>

namespace {

/// Adam as the documentation writes it, one element at a time in scalar code (each operation
/// rounded, none fused), with the optimiser's own coefficients.
template <class S>
struct adam_reference {
    std::vector<S> m, v;
    long long t = 0;
    explicit adam_reference(std::size_t n) : m(n, S(0)), v(n, S(0)) {}
    void step(S* p, const S* grad, std::size_t n, double lr, S grad_scale) {
        ++t;
        const double c1 = 1.0 - std::pow(0.9, double(t)), c2 = 1.0 - std::pow(0.999, double(t));
        const S b1 = S(0.9), b2 = S(0.999), step = S(lr / c1), eps = S(1e-5), sc2 = S(1.0 / std::sqrt(c2));
        for (std::size_t i = 0; i < n; ++i) {
            volatile S g = grad[i] * grad_scale;  // volatile: no contraction into a fused multiply-add
            volatile S mm = b1 * m[i];
            mm = mm + (S(1) - b1) * g;
            volatile S gg = g * g;
            volatile S vv = b2 * v[i];
            vv = vv + (S(1) - b2) * gg;
            m[i] = mm;
            v[i] = vv;
            volatile S num = step * m[i];
            volatile S den = std::sqrt(v[i]) * sc2;
            den = den + eps;
            p[i] = p[i] - num / den;
        }
    }
};

template <class S>
Eigen::Matrix<S, Eigen::Dynamic, 1> adam_random_vector(Eigen::Index n, gpuplace::detail::rng& r, double scale) {
    Eigen::Matrix<S, Eigen::Dynamic, 1> x(n);
    for (Eigen::Index i = 0; i < n; ++i) x(i) = S((r.uniform() * 2 - 1) * scale);
    return x;
}

}  // namespace

TEST_CASE_TEMPLATE("adam: every step has the bits of the plain formula, whatever the lengths (packets and tails)", S, float,
                   double) {
    using V = typename gpuplace::rl::basic_adam<S>::vector;
    gpuplace::detail::rng r(5);
    const std::vector<std::size_t> sizes = {1, 7, 16, 17, 33, 1000, 1027};
    std::vector<V> params, grads;
    std::vector<std::vector<S>> ref_params;
    std::vector<adam_reference<S>> ref;
    for (auto n : sizes) {
        params.push_back(adam_random_vector<S>(Eigen::Index(n), r, 1.0));
        grads.push_back(V::Zero(Eigen::Index(n)));
        ref_params.emplace_back(params.back().data(), params.back().data() + n);
        ref.emplace_back(n);
    }
    gpuplace::rl::basic_adam<S> opt(sizes);
    std::vector<V*> ps, gs;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        ps.push_back(&params[i]);
        gs.push_back(&grads[i]);
    }
    for (int t = 0; t < 20; ++t) {
        const S scale = t % 3 == 0 ? S(0.25) : S(1);  // a clipped step now and then
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            grads[i] = adam_random_vector<S>(Eigen::Index(sizes[i]), r, 0.1);
            if (t == 4) grads[i].setZero();  // zero gradients: the moments decay, no division by zero
            ref[i].step(ref_params[i].data(), grads[i].data(), sizes[i], 1e-3, scale);
        }
        opt.step(ps, gs, 1e-3, scale);
    }
    CHECK(opt.steps() == 20);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        CAPTURE(sizes[i]);
        CHECK(std::memcmp(params[i].data(), ref_params[i].data(), sizes[i] * sizeof(S)) == 0);
    }
}

TEST_CASE("adam: bias correction makes the first step lr * sign(gradient), reset() starts over") {
    using V = gpuplace::rl::adam::vector;
    V p = V::Zero(40), g(40);
    for (Eigen::Index i = 0; i < 40; ++i) g(i) = (i % 2 ? 1.0f : -1.0f) * float(i + 1) * 0.01f;
    gpuplace::rl::adam opt({40});
    for (int rep = 0; rep < 2; ++rep) {
        p.setZero();
        opt.step({&p}, {&g}, 0.1);
        for (Eigen::Index i = 0; i < 40; ++i) {
            CAPTURE(i);
            // |g| / (|g| + eps) with eps = 1e-5: within 1e-3 of 1 for |g| >= 0.01
            CHECK(p(i) == doctest::Approx(g(i) > 0 ? -0.1 : 0.1).epsilon(1e-3));
        }
        CHECK(opt.steps() == 1);
        opt.reset();
        CHECK(opt.steps() == 0);
    }
}

TEST_CASE("adam: global norm and clipping") {
    using V = gpuplace::rl::adam::vector;
    V a(2), b(1);
    a << 3.0f, 0.0f;
    b << 4.0f;
    const std::vector<V*> g{&a, &b};
    CHECK(gpuplace::rl::global_norm(g) == doctest::Approx(5.0));
    CHECK(gpuplace::rl::clip_factor<float>(5.0, 10.0) == 1.0f);  // within the limit
    CHECK(gpuplace::rl::clip_factor<float>(5.0, 0.0) == 1.0f);   // clipping off
    CHECK(gpuplace::rl::clip_factor<float>(5.0, 1.0) == doctest::Approx(0.2).epsilon(1e-5));
    CHECK(gpuplace::rl::clip_grad_norm(g, 1.0) == doctest::Approx(5.0));  // returns the norm before
    CHECK(gpuplace::rl::global_norm(g) == doctest::Approx(1.0).epsilon(1e-5));
    CHECK(a(0) == doctest::Approx(0.6).epsilon(1e-5));
    CHECK(b(0) == doctest::Approx(0.8).epsilon(1e-5));
}
