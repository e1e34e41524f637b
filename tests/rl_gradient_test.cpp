// Gradient checks of the PPO reference: analytic gradients of the policy and value losses
// against central finite differences, in double precision.
#include <doctest/doctest.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include <gpuplace/rl/rl.hpp>

namespace {
using namespace gpuplace;
using net_d = rl::basic_actor_critic<double>;

/// A fixed random minibatch for a network of spec sp.
struct batch {
    Eigen::MatrixXf obs;
    std::vector<std::uint8_t> masks;
    std::vector<std::int64_t> actions;
    std::vector<double> old_logp, adv, ret, old_v;
};

batch make_batch(const rl::obs_spec& sp, std::size_t M, std::uint64_t seed) {
    detail::rng r(seed);
    batch b;
    const auto A = sp.num_actions();
    b.obs.resize(Eigen::Index(sp.obs_size()), Eigen::Index(M));
    for (Eigen::Index i = 0; i < b.obs.size(); ++i) b.obs.data()[i] = float(r.uniform());
    b.masks.assign(M * A, 0);
    for (std::size_t j = 0; j < M; ++j) {
        std::vector<std::size_t> valid;
        for (std::size_t a = 0; a < A; ++a)
            if (r.uniform() < 0.6) valid.push_back(a);
        if (valid.empty()) valid.push_back(r.below(A));
        for (auto a : valid) b.masks[j * A + a] = 1;
        b.actions.push_back(std::int64_t(valid[r.below(valid.size())]));
        b.adv.push_back(r.normal());
        b.ret.push_back(r.normal());
        b.old_v.push_back(r.normal() * 0.1);
    }
    return b;
}

double loss(net_d& n, const batch& b, const rl::ppo_config& c, bool backward) {
    net_d::workspace w;
    n.forward(b.obs, w, b.masks.data());
    const auto L = rl::compute_ppo_loss<double>(w.logits, w.values, b.masks, b.actions, b.old_logp, b.adv, b.ret, b.old_v, c);
    if (backward) {
        n.zero_grad();
        n.backward(w, L.dlogits, L.dvalues);
    }
    return L.total;
}

/// Relative error ||fd - g|| / (||fd|| + ||g||) of the analytic gradient over every parameter.
/// Parameters are first randomised (no ReLU sits exactly at its kink, logits are not tiny).
double check(net_d& n, batch& b, const rl::ppo_config& c) {
    detail::rng pr(21);
    for (auto* p : n.parts())
        for (Eigen::Index i = 0; i < p->params().size(); ++i) p->params()(i) = 0.5 * pr.normal();
    // old log-probs slightly off the current ones, so the ratio is inside the clip range (no kink)
    {
        net_d::workspace w;
        n.forward(b.obs, w, b.masks.data());
        detail::rng r(7);
        b.old_logp.clear();
        for (std::size_t j = 0; j < b.actions.size(); ++j) {
            const auto A = n.spec().num_actions();
            rl::basic_masked_categorical<double> d(w.logits.col(Eigen::Index(j)),
                                                    std::span<const std::uint8_t>(b.masks).subspan(j * A, A));
            b.old_logp.push_back(d.log_prob(std::size_t(b.actions[j])) + 0.05 * (r.uniform() - 0.5));
        }
    }
    loss(n, b, c, true);
    double diff = 0, norm_fd = 0, norm_g = 0;
    for (auto* p : n.parts()) {
        const Eigen::VectorXd g = p->grads();
        for (Eigen::Index i = 0; i < p->params().size(); ++i) {
            const double x = p->params()(i), h = 1e-5;
            p->params()(i) = x + h;
            const double lp = loss(n, b, c, false);
            p->params()(i) = x - h;
            const double lm = loss(n, b, c, false);
            p->params()(i) = x;
            const double fd = (lp - lm) / (2 * h);
            diff += (fd - g(i)) * (fd - g(i));
            norm_fd += fd * fd;
            norm_g += g(i) * g(i);
        }
    }
    REQUIRE(norm_g > 1e-6);  // a meaningful gradient
    const double rel = std::sqrt(diff) / (std::sqrt(norm_fd) + std::sqrt(norm_g));
    MESSAGE("relative gradient error " << rel);
    return rel;
}

rl::ppo_config loss_config(bool clip_value) {
    rl::ppo_config c;
    c.vf_coef = 0.7;
    c.ent_coef = 0.05;
    c.clip = 0.2;
    c.clip_value = clip_value;
    return c;
}
}  // namespace

TEST_CASE("rl gradient: per_gpu actor-critic matches finite differences") {
    const rl::obs_spec sp{5, 3, 4};
    for (auto act : {rl::activation::tanh, rl::activation::relu}) {
        rl::network_config nc;
        nc.hidden = {6, 5};
        nc.value_hidden = {5};
        nc.act = act;
        net_d n(sp, nc, 3);
        auto b = make_batch(sp, 6, 11);
        CHECK(check(n, b, loss_config(false)) < 1e-6);
    }
}

TEST_CASE("rl gradient: flat actor-critic, separate and shared trunk, clipped value loss") {
    const rl::obs_spec sp{4, 2, 3};
    for (bool shared : {false, true}) {
        rl::network_config nc;
        nc.arch = rl::architecture::flat;
        nc.hidden = {7, 6};
        nc.value_hidden = {5};
        nc.shared_trunk = shared;
        net_d n(sp, nc, 5);
        auto b = make_batch(sp, 5, 13);
        CHECK(check(n, b, loss_config(true)) < 1e-6);
    }
}

TEST_CASE("rl gradient: observation normalisation is part of the forward pass") {
    const rl::obs_spec sp{4, 2, 3};
    rl::network_config nc;
    nc.hidden = {6};
    nc.value_hidden = {4};
    nc.normalize_obs = true;
    net_d n(sp, nc, 9);
    auto b = make_batch(sp, 6, 17);
    n.update_normalizers(b.obs);
    CHECK(check(n, b, loss_config(false)) < 1e-6);
}

TEST_CASE("rl gradient: per_gpu with node features (mean and max over each node), with and without normalisation") {
    const rl::obs_spec sp{6, 3, 4, 2};  // 6 GPUs in 3 nodes of 2
    for (bool norm : {false, true}) {
        rl::network_config nc;
        nc.hidden = {6, 5};
        nc.value_hidden = {5};
        nc.node_features = true;
        nc.normalize_obs = norm;
        net_d n(sp, nc, 4);
        CHECK(n.parts()[0]->sizes()[0] == 9);  // own 3 features, their node mean and max
        auto b = make_batch(sp, 5, 19);
        if (norm) n.update_normalizers(b.obs);
        CHECK(check(n, b, loss_config(false)) < 1e-6);
    }
    rl::network_config nc;
    nc.node_features = true;
    CHECK_THROWS_WITH_AS(net_d(rl::obs_spec{6, 3, 4, 4}, nc, 1),
                         "network: node_features needs GPUs numbered node by node (gpus_per_node 4, 6 GPUs)", ConfigError);
}

TEST_CASE("rl gradient: backward() writing the gradients equals zero_grad() then backward() adding them") {
    // every architecture; layers wide enough for the unpacked products and narrow ones for Eigen's
    const rl::obs_spec sp{12, 3, 5, 4};
    for (int arch = 0; arch < 3; ++arch) {
        CAPTURE(arch);
        rl::network_config nc;
        nc.arch = arch == 0 ? rl::architecture::per_gpu : rl::architecture::flat;
        nc.shared_trunk = arch == 2;
        nc.hidden = {24, 3};
        nc.value_hidden = {17};
        net_d n(sp, nc, 9);
        auto b = make_batch(sp, 21, 23);
        net_d::workspace w;
        n.forward(b.obs, w, b.masks.data());
        Eigen::MatrixXd dl(Eigen::Index(sp.num_actions()), 21);
        Eigen::VectorXd dv(21);
        detail::rng r(2);
        for (Eigen::Index i = 0; i < dl.size(); ++i) dl.data()[i] = b.masks[std::size_t(i)] ? r.normal() : 0.0;
        for (Eigen::Index i = 0; i < dv.size(); ++i) dv(i) = r.normal();
        n.zero_grad();
        n.backward(w, dl, dv);
        std::vector<Eigen::VectorXd> added;
        for (auto* p : n.parts()) {
            added.push_back(p->grads());
            p->grads().setConstant(7.0);  // stale values that writing must replace
        }
        n.backward(w, dl, dv, false);
        for (std::size_t k = 0; k < added.size(); ++k) CHECK(n.parts()[k]->grads() == added[k]);
    }
}

TEST_CASE_TEMPLATE("rl mlp: the unpacked product equals Eigen's (B plain or transposed, written or added)", T, float,
                   double) {
    // row counts around the packet tiles (1 to 70: scalar rows, one or two packets, an overlapping
    // last packet), depths from 1, and every width up to several column tiles (full tiles and
    // each remainder); B read as a matrix with a leading dimension larger than its depth, or as
    // the transpose of one with a leading dimension larger than the width
    detail::rng r(3);
    using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    for (Eigen::Index rows : {1, 3, 8, 15, 16, 17, 31, 32, 33, 47, 64, 65, 70})
        for (Eigen::Index depth : {1, 2, 7, 64, 425})
            for (Eigen::Index cols = 1; cols <= 2 * rl::detail::direct_batch + 1; ++cols)
                for (int mode = 0; mode < 3; ++mode) {  // 0: B, written; 1: B^T's transpose, written; 2: B, added
                    CAPTURE(rows);
                    CAPTURE(depth);
                    CAPTURE(cols);
                    CAPTURE(mode);
                    M a(rows, depth), b(depth + 3, cols), bt(cols + 2, depth), out(rows, cols);
                    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = T(r.normal());
                    for (Eigen::Index i = 0; i < b.size(); ++i) b.data()[i] = T(r.normal());
                    for (Eigen::Index i = 0; i < bt.size(); ++i) bt.data()[i] = T(r.normal());
                    out.setConstant(T(12345));
                    M want;
                    if (mode == 1) {
                        rl::detail::direct_product(a.data(), rows, depth, bt.data(), Eigen::Index(1), cols + 2, cols,
                                                   out.data());
                        want = a * bt.topRows(cols).transpose();
                    } else if (mode == 2) {
                        rl::detail::direct_product(a.data(), rows, depth, b.data(), depth + 3, Eigen::Index(1), cols,
                                                   out.data(), true);
                        want = (a * b.topRows(depth)).array() + T(12345);
                    } else {
                        rl::detail::direct_product(a.data(), rows, depth, b.data(), depth + 3, cols, out.data());
                        want = a * b.topRows(depth);
                    }
                    const double tol = (std::is_same_v<T, float> ? 1e-4 : 1e-12) * std::sqrt(double(depth)) *
                                       (1.0 + want.cwiseAbs().maxCoeff());
                    CHECK((out - want).cwiseAbs().maxCoeff() <= tol);
                }
}

TEST_CASE("rl mlp: a product's outputs do not depend on the tile that computes them") {
    // the last rows of a 65-row product are computed by a packet overlapping the rows before:
    // each output must have the bits of the same output in a product with more rows
    detail::rng r(6);
    Eigen::MatrixXf a(70, 64), b(64, 9);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = float(r.normal());
    for (Eigen::Index i = 0; i < b.size(); ++i) b.data()[i] = float(r.normal());
    Eigen::MatrixXf full(70, 9);
    rl::detail::direct_product(a.data(), 70, 64, b.data(), 64, 9, full.data());
    for (Eigen::Index rows : {17, 33, 47, 65}) {
        CAPTURE(rows);
        const Eigen::MatrixXf part_a = a.topRows(rows);
        Eigen::MatrixXf part(rows, 9);
        rl::detail::direct_product(part_a.data(), rows, 64, b.data(), 64, 9, part.data());
        CHECK(part == full.topRows(rows));
    }
}

TEST_CASE_TEMPLATE("rl mlp: each output of a product is its sum in order, whatever the depth blocks", T, float, double) {
    // depths around direct_depth_block (one, two and three passes, where the tiles' partial sums
    // wait in `out`), B plain or a transpose, written or added to `out`, one row (a lane per
    // column) or more, full column packets and the rest: each output has the bits of the sum over k in
    // order, one multiply-add per term (fused where Eigen's packets use FMA; the rows below a
    // packet take plain multiplies and adds)
    detail::rng r(10);
    using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    constexpr Eigen::Index ps = rl::detail::packet_rows<T>;
#if defined(EIGEN_VECTORIZE_FMA) || defined(EIGEN_VECTORIZE_AVX512)
    constexpr bool fused = ps > 1;
#else
    constexpr bool fused = false;
#endif
    const Eigen::Index kb = rl::detail::direct_depth_block;
    // (2 ps + 1, 2 ps + 2 and 65 rows: the last rows take a lane per column when there is at least a
    // packet of columns, a packet tile overlapping the rows before otherwise)
    for (Eigen::Index rows : {Eigen::Index(1), Eigen::Index(3), ps, 2 * ps + 1, 2 * ps + 2, Eigen::Index(64), Eigen::Index(65)})
        for (Eigen::Index depth : {kb - 1, kb, kb + 1, 2 * kb + 77})
            for (Eigen::Index cols : {Eigen::Index(1), Eigen::Index(3), Eigen::Index(4), Eigen::Index(9), ps, Eigen::Index(17), 4 * ps + 5})
                for (int mode = 0; mode < 4; ++mode) {
                    const bool add = mode % 2 == 1, transposed = mode >= 2;
                    CAPTURE(rows);
                    CAPTURE(depth);
                    CAPTURE(cols);
                    CAPTURE(add);
                    CAPTURE(transposed);
                    M a(rows, depth), bt(cols, depth), out(rows, cols);
                    for (auto* m : {&a, &bt, &out})
                        for (Eigen::Index i = 0; i < m->size(); ++i) m->data()[i] = T(r.normal());
                    const M before = out;
                    if (transposed)  // B read as the transpose of bt (a weight gradient's layout)
                        rl::detail::direct_product(a.data(), rows, depth, bt.data(), Eigen::Index(1), cols, cols, out.data(), add);
                    else {  // B column-major (a forward pass's layout)
                        const M b = bt.transpose();
                        rl::detail::direct_product(a.data(), rows, depth, b.data(), depth, Eigen::Index(1), cols, out.data(), add);
                    }
                    bool same = true;
                    for (Eigen::Index j = 0; j < cols; ++j)
                        for (Eigen::Index i = 0; i < rows; ++i) {
                            T s = 0;
                            for (Eigen::Index k = 0; k < depth; ++k) {
                                if (fused && rows >= ps) {
                                    s = std::fma(a(i, k), bt(j, k), s);
                                } else {
                                    volatile T m = a(i, k) * bt(j, k);  // volatile: no contraction
                                    s = s + m;
                                }
                            }
                            if (add) s = before(i, j) + s;
                            same = same && s == out(i, j);
                        }
                    CHECK(same);
                }
}

TEST_CASE_TEMPLATE("rl mlp: the blocked transpose equals Eigen's", T, float, double) {
    // sizes around the packet squares: full blocks, edge rows, edge columns, both, and none
    detail::rng r(4);
    using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    for (Eigen::Index rows : {0, 1, 3, 4, 7, 8, 9, 16, 17, 64, 425})
        for (Eigen::Index cols : {0, 1, 2, 5, 8, 9, 15, 16, 64, 65}) {
            M x(rows, cols), xt;
            for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = T(r.normal());
            rl::detail::transpose_into(x, xt);
            REQUIRE(xt.rows() == cols);
            REQUIRE(xt.cols() == rows);
            CHECK(xt == x.transpose());
        }
}

TEST_CASE_TEMPLATE("rl mlp: a product's epilogue gives the bits of the passes after it (bias, activation, derivative)", T,
                   float, double) {
    // bias_activation = colwise() += b, then activate(); activation_derivative = the product,
    // then activation_backward(); for both activations, every width (full column tiles and each
    // remainder), and rows that are whole packets
    detail::rng r(8);
    using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    using V = Eigen::Matrix<T, Eigen::Dynamic, 1>;
    constexpr Eigen::Index ps = rl::detail::packet_rows<T>;
    for (const auto act : {rl::activation::tanh, rl::activation::relu}) {
        for (Eigen::Index rows : {ps, 2 * ps, 4 * ps, 5 * ps}) {
            if (!rl::detail::fuses_activation<T>(rows, act)) continue;  // not vectorised here
            for (Eigen::Index cols = 1; cols <= 19; ++cols)
                for (Eigen::Index depth : {1, 7, 64}) {
                    CAPTURE(rows);
                    CAPTURE(cols);
                    CAPTURE(depth);
                    M a(rows, depth), b(depth, cols), y(rows + 3, cols);
                    V bias(rows);
                    for (auto* m : {&a, &b, &y})
                        for (Eigen::Index i = 0; i < m->size(); ++i) m->data()[i] = T(r.normal());
                    for (Eigen::Index i = 0; i < rows; ++i) bias(i) = T(r.normal());
                    y = y.array().tanh();
                    M plain(rows, cols);
                    rl::detail::direct_product(a.data(), rows, depth, b.data(), depth, cols, plain.data());
                    for (const bool apply : {true, false}) {
                        M want = plain;
                        want.colwise() += bias;
                        if (apply) rl::detail::activate(want, act);
                        M got(rows, cols);
                        rl::detail::direct_product(a.data(), rows, depth, b.data(), depth, Eigen::Index(1), cols, got.data(),
                                                   false, rl::detail::bias_activation<T>{bias.data(), act, apply});
                        CHECK(got == want);
                    }
                    M want = plain;
                    rl::detail::activation_backward(want, y.topRows(rows), act);
                    M got(rows, cols);
                    rl::detail::direct_product(a.data(), rows, depth, b.data(), depth, Eigen::Index(1), cols, got.data(), false,
                                               rl::detail::activation_derivative<T>{y.data(), y.rows(), act});
                    CHECK(got == want);
                }
        }
    }
}

TEST_CASE("rl mlp: an epilogue needs whole packets of rows") {
    constexpr Eigen::Index ps = rl::detail::packet_rows<float>;
    if (ps == 1) return;  // no SIMD packets here: the networks never fuse
    Eigen::MatrixXf a(ps + 1, 4), b(4, 3), out(ps + 1, 3);
    a.setOnes();
    b.setOnes();
    Eigen::VectorXf bias = Eigen::VectorXf::Zero(ps + 1);
    CHECK_THROWS_WITH_AS(rl::detail::direct_product(a.data(), ps + 1, 4, b.data(), 4, Eigen::Index(1), 3, out.data(), false,
                                                    rl::detail::bias_activation<float>{bias.data(), rl::activation::tanh, true}),
                         doctest::Contains("whole packets of rows"), Error);
}

TEST_CASE("rl mlp: layers with and without fused epilogues compute what Eigen's expressions do") {
    // a 64-wide hidden layer takes the fused bias, activation and derivative, a 20-wide one the
    // separate passes: outputs and input gradients against the same network in Eigen expressions
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
