// rl/actor_critic.hpp: analytic gradients of the policy and value losses against central finite
// differences, in double precision, for every architecture; backward() writing or adding.
#include <doctest/doctest.h>

#include <cmath>
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
    // every architecture; layers wider than a SIMD packet and narrower ones
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
