// rl/mlp.hpp: the layers' forward and backward passes against plain Eigen expressions.
#include <doctest/doctest.h>

#include <cmath>

#include <Eigen/Core>

#include <gpuplace/detail/rng.hpp>
#include <gpuplace/rl/mlp.hpp>

namespace {
using namespace gpuplace;
}  // namespace

TEST_CASE("rl mlp: forward and backward compute what Eigen's expressions do") {
    // hidden layers of 64 (whole SIMD packets) and 20 (a tail): outputs and input gradients against
    // the same network in Eigen expressions
    for (const auto act : {rl::activation::tanh, rl::activation::relu}) {
        CAPTURE(int(act));
        detail::rng r(9);
        rl::mlp net({30, 64, 20, 7}, act);
        net.init(r, std::sqrt(2.0), 0.5);
        for (Eigen::Index i = 0; i < net.params().size(); ++i) net.params()(i) += float(0.01 * r.normal());
        Eigen::MatrixXf x(30, 24), dy(7, 24);
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = float(r.normal());
        for (Eigen::Index i = 0; i < dy.size(); ++i) dy.data()[i] = float(r.normal());
        rl::mlp::cache c;
        const Eigen::MatrixXf out = net.forward(x, c);
        Eigen::MatrixXf dx;
        net.backward(c, dy, &dx, false);
        // the same layers by Eigen's expressions
        Eigen::MatrixXf h = x, hs[3];
        for (std::size_t l = 0; l < 3; ++l) {
            hs[l] = h;
            Eigen::MatrixXf z = net.W(l) * h;
            z.colwise() += net.b(l);
            if (l < 2) rl::detail::activate(z, act);
            h = z;
        }
        CHECK((out - h).cwiseAbs().maxCoeff() <= 1e-5f * (1 + h.cwiseAbs().maxCoeff()));
        Eigen::MatrixXf d = dy;
        for (std::size_t l = 3; l-- > 0;) {
            if (l < 2) rl::detail::activation_backward(d, l == 1 ? Eigen::MatrixXf(hs[2]) : Eigen::MatrixXf(hs[1]), act);
            d = Eigen::MatrixXf(net.W(l).transpose() * d);
        }
        CHECK((dx - d).cwiseAbs().maxCoeff() <= 1e-5f * (1 + d.cwiseAbs().maxCoeff()));
    }
}
