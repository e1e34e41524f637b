// Checkpoints, the policy adapter, the masked categorical and determinism of the PPO reference.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>
#include <gpuplace/json.hpp>

namespace {
using namespace gpuplace;

scenario tiny_checkpoint_scenario() {
    return parse_scenario(R"({
      "name": "tiny",
      "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 4},
      "workload": {"kind": "synthetic", "num_jobs": 12, "load": 1.0,
                   "gpu_counts": {"1": 0.5, "2": 0.3, "4": 0.2}, "duration_min": 600, "duration_max": 3600},
      "env": {"queue_window": 2, "allow_defer": true}
    })");
}

rl::ppo_config quick(std::size_t threads = 1) {
    rl::ppo_config c;
    c.total_steps = 512;
    c.num_envs = 4;
    c.num_steps = 32;
    c.minibatches = 2;
    c.epochs = 2;
    c.threads = threads;
    c.network.hidden = {8, 8};
    c.network.value_hidden = {8};
    c.network.normalize_obs = true;
    return c;
}

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const CheckpointError& e) {
        return e.what();
    }
    return "no CheckpointError";
}
}  // namespace

TEST_CASE("rl categorical: masked actions are never sampled; log-probs and entropy over valid actions") {
    Eigen::VectorXf logits(4);
    logits << 5.0f, 0.0f, 0.0f, 9.0f;
    const std::vector<std::uint8_t> mask = {0, 1, 1, 0};
    const rl::masked_categorical d(logits, mask);
    CHECK(d.entropy() == doctest::Approx(std::log(2.0)));
    CHECK(d.log_prob(1) == doctest::Approx(std::log(0.5)));
    CHECK(std::isinf(d.log_prob(0)));
    CHECK(d.argmax() == 1);
    detail::rng r(1);
    for (int i = 0; i < 1000; ++i) {
        const auto a = d.sample(r);
        CHECK((a == 1 || a == 2));
    }
    const std::vector<std::uint8_t> none = {0, 0, 0, 0};
    CHECK_THROWS_AS(rl::masked_categorical(logits, none), Error);
}

TEST_CASE("rl categorical: the batch over a matrix's columns agrees with one distribution per column") {
    // 65 actions x 37 samples, random logits and masks (one column with a single valid action,
    // one with a masked logit far above the valid ones); gradients with per-column coefficients
    detail::rng r(8);
    const Eigen::Index A = 65, M = 37;
    Eigen::MatrixXf logits(A, M);
    std::vector<std::uint8_t> masks(static_cast<std::size_t>(A * M));
    std::vector<std::int64_t> actions(static_cast<std::size_t>(M));
    Eigen::VectorXf coef(M);
    for (Eigen::Index j = 0; j < M; ++j) {
        for (Eigen::Index i = 0; i < A; ++i) {
            logits(i, j) = float(3.0 * r.normal());
            masks[std::size_t(j * A + i)] = j == 5 ? 0 : r.uniform() < 0.5;
        }
        const auto k = r.below(std::size_t(A));
        masks[std::size_t(j * A) + k] = 1;
        actions[std::size_t(j)] = std::int64_t(k);
        coef(j) = float(r.normal());
        if (j == 9) {
            for (Eigen::Index i = 0; i < A; ++i)
                if (!masks[std::size_t(j * A + i)]) logits(i, j) = 200.0f;
        }
    }
    const rl::masked_categorical_batch batch(logits, masks);
    Eigen::MatrixXf grad;
    batch.gradient(grad, actions, coef, 0.3f);
    REQUIRE(grad.rows() == A);
    REQUIRE(grad.cols() == M);
    for (Eigen::Index j = 0; j < M; ++j) {
        CAPTURE(j);
        const std::span<const std::uint8_t> m(masks.data() + j * A, std::size_t(A));
        const rl::masked_categorical one(logits.col(j), m);
        const auto a = std::size_t(actions[std::size_t(j)]);
        CHECK(batch.log_prob(a, j) == doctest::Approx(one.log_prob(a)).epsilon(1e-6).scale(1e-6));
        CHECK(batch.entropy(j) == doctest::Approx(one.entropy()).epsilon(1e-5).scale(1e-6));
        CHECK(batch.argmax(j) == one.argmax());
        Eigen::VectorXf g = Eigen::VectorXf::Zero(A);
        one.backward(g, a, coef(j), 0.3f);
        for (Eigen::Index i = 0; i < A; ++i) {
            CAPTURE(i);
            if (!m[std::size_t(i)]) {
                CHECK(batch.probs()(i, j) == 0.0f);
                CHECK(grad(i, j) == 0.0f);  // exactly, also under the overflowing masked logits
            }
            CHECK(batch.probs()(i, j) == doctest::Approx(one.prob(std::size_t(i))).epsilon(1e-4).scale(1e-3));
            CHECK(grad(i, j) == doctest::Approx(g(i)).epsilon(1e-4).scale(1e-3));
        }
    }
    CHECK(batch.entropy(5) == 0.0f);  // a single valid action
    std::vector<std::uint8_t> none = masks;
    for (Eigen::Index i = 0; i < A; ++i) none[std::size_t(3 * A + i)] = 0;
    CHECK_THROWS_WITH_AS(rl::masked_categorical_batch(logits, none), "masked_categorical: every action of sample 3 is masked",
                         Error);
    CHECK_THROWS_WITH_AS(rl::masked_categorical_batch(logits, std::span<const std::uint8_t>(masks).first(10)),
                         "masked_categorical: masks have 10 entries for 65 x 37 logits", Error);
}

TEST_CASE("rl categorical: probabilities, entropy and logit gradient against a plain double computation") {
    // 65 actions (a vectorised column plus a scalar tail), random logits and masks, including a
    // masked logit far above the valid ones (its exp overflows, yet its probability is exactly 0)
    detail::rng r(5);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t n = 1 + r.below(70);
        Eigen::VectorXf logits(static_cast<Eigen::Index>(n));
        std::vector<std::uint8_t> mask(n);
        for (std::size_t i = 0; i < n; ++i) {
            logits(Eigen::Index(i)) = float(3.0 * r.normal());
            mask[i] = r.uniform() < 0.5;
        }
        mask[r.below(n)] = 1;
        if (trial % 5 == 0) {
            const auto k = r.below(n);
            if (!mask[k]) logits(Eigen::Index(k)) = 200.0f;
        }
        const rl::masked_categorical d(logits, mask);
        double mx = -1e300, sum = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (mask[i]) mx = std::max(mx, double(logits(Eigen::Index(i))));
        for (std::size_t i = 0; i < n; ++i)
            if (mask[i]) sum += std::exp(double(logits(Eigen::Index(i))) - mx);
        double h = 0, psum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (!mask[i]) {
                CHECK(d.prob(i) == 0.0f);
                CHECK(std::isinf(d.log_prob(i)));
                continue;
            }
            const double lp = double(logits(Eigen::Index(i))) - mx - std::log(sum);
            CHECK(d.log_prob(i) == doctest::Approx(lp).epsilon(1e-5).scale(1.0));
            CHECK(d.prob(i) == doctest::Approx(std::exp(lp)).epsilon(1e-5).scale(1e-6));
            h -= std::exp(lp) * lp;
            psum += double(d.prob(i));
        }
        CHECK(psum == doctest::Approx(1.0).epsilon(1e-5));
        CHECK(d.entropy() == doctest::Approx(h).epsilon(1e-4).scale(1e-4));
        // d/dl (0.7 log p(a) + 0.3 H): masked entries get exactly 0
        const auto a = std::size_t(d.sample(r));
        CHECK(mask[a] == 1);
        Eigen::VectorXf g = Eigen::VectorXf::Zero(static_cast<Eigen::Index>(n));
        d.backward(g, a, 0.7f, 0.3f);
        for (std::size_t i = 0; i < n; ++i) {
            if (!mask[i]) {
                CHECK(g(Eigen::Index(i)) == 0.0f);
                continue;
            }
            const double p = std::exp(double(logits(Eigen::Index(i))) - mx) / sum;
            const double want = 0.7 * ((i == a ? 1.0 : 0.0) - p) + 0.3 * (-p * (std::log(p) + h));
            CHECK(std::abs(double(g(Eigen::Index(i))) - want) <= 1e-6 + 1e-4 * std::abs(want));
        }
    }
}

TEST_CASE("rl ppo: deterministic by seed and independent of the number of env threads") {
    const auto s = tiny_checkpoint_scenario();
    rl::ppo a(s, quick(1)), b(s, quick(1)), c(s, quick(3));
    while (!a.done()) a.iterate();
    while (!b.done()) b.iterate();
    while (!c.done()) c.iterate();
    auto pa = a.network().parts(), pb = b.network().parts(), pc = c.network().parts();
    REQUIRE(pa.size() == pc.size());
    for (std::size_t i = 0; i < pa.size(); ++i) {
        CHECK(pa[i]->params() == pb[i]->params());
        CHECK(pa[i]->params() == pc[i]->params());
    }
    rl::ppo_config other = quick(1);
    other.seed = 99;
    rl::ppo d(s, other);
    while (!d.done()) d.iterate();
    CHECK(d.network().parts()[0]->params() != pa[0]->params());
}

TEST_CASE("rl checkpoint: round trip keeps weights, normalisers and actions") {
    const auto s = tiny_checkpoint_scenario();
    rl::ppo p(s, quick());
    while (!p.done()) p.iterate();
    const auto text = rl::checkpoint_json(p.network(), p.config(), s).dump();
    auto ck = rl::parse_checkpoint(text, "mem");
    CHECK(ck.ppo.num_envs == 4);
    CHECK(ck.scenario["name"] == "tiny");
    auto a = p.network().parts(), b = ck.network.parts();
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i]->params() == b[i]->params());
    CHECK(ck.network.normalizers()[0].mean() == p.network().normalizers()[0].mean());
    // the same greedy actions over a whole episode
    auto n1 = std::make_shared<const rl::actor_critic>(p.network());
    auto n2 = std::make_shared<const rl::actor_critic>(std::move(ck.network));
    rl::network_policy p1(n1), p2(n2);
    env e1(s), e2(s);
    const auto r1 = run_episode(e1, p1, 5), r2 = run_episode(e2, p2, 5);
    CHECK(r1.terminated);
    CHECK(r1.episode_return == r2.episode_return);
}

TEST_CASE("rl checkpoint: truncated, corrupted or foreign checkpoints are clear CheckpointErrors") {
    const auto s = tiny_checkpoint_scenario();
    rl::actor_critic net(rl::obs_spec::of(env(s)), rl::network_config{}, 1);
    const auto j = rl::checkpoint_json(net, rl::ppo_config{}, s);
    const auto text = j.dump();
    CHECK(error_of([&] { (void)rl::parse_checkpoint(text.substr(0, text.size() / 2), "half.json"); })
              .find("half.json: invalid or truncated JSON at byte") != std::string::npos);
    auto v2 = j;
    v2["version"] = 2;
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(v2, "v2.json"); }).find("/version: unsupported version 2") != std::string::npos);
    auto missing = j;
    missing["parts"].erase("tail");
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(missing, "m.json"); }).find("/parts/tail: missing") != std::string::npos);
    auto short_params = j;
    short_params["parts"]["value"]["params"].erase(0);
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(short_params, "s.json"); }).find("/parts/value/params: has") != std::string::npos);
    auto bad = j;
    bad["parts"]["defer"]["params"][3] = "x";
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(bad, "b.json"); }).find("/parts/defer/params/3: not a number") != std::string::npos);
    auto fmt = j;
    fmt["format"] = "something-else";
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(fmt, "f.json"); }).find("/format") != std::string::npos);
    CHECK(error_of([] { (void)rl::load_checkpoint("/nonexistent/ppo.json"); }).find("cannot open") != std::string::npos);
}

// A corrupted network config or observation shape is checked against the document before the
// network is allocated: four layers of 65536 units would need 17 GB of float parameters.
TEST_CASE("rl checkpoint: huge sizes in a corrupted checkpoint fail before anything is allocated") {
    const auto s = tiny_checkpoint_scenario();
    rl::actor_critic net(rl::obs_spec::of(env(s)), rl::network_config{}, 1);
    const auto j = rl::checkpoint_json(net, rl::ppo_config{}, s);
    auto big = j;
    big["network"]["hidden"] = {65536, 65536, 65536, 65536};
    const auto e = error_of([&] { (void)rl::checkpoint_from_json(big, "big.json"); });
    CHECK(e.rfind("checkpoint big.json: /parts/gpu_in/sizes: layer sizes [", 0) == 0);
    CHECK(e.find("do not match the network config [") != std::string::npos);
    auto wide = j;
    wide["obs_spec"]["num_gpus"] = 1000000000000ULL;
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(wide, "w.json"); }) ==
          "checkpoint w.json: /obs_spec/num_gpus: value 1000000000000 out of range [0, 1048576]");
}

TEST_CASE("rl policy adapter: a network acts next to the heuristics in the evaluation harness") {
    const auto s = tiny_checkpoint_scenario();
    auto net = std::make_shared<const rl::actor_critic>(rl::obs_spec::of(env(s)), rl::network_config{}, 2);
    std::vector<any_policy<env>> ps{rl::as_policy<env>("ppo", net)};
    for (const auto& n : heuristic_names()) ps.push_back(heuristic<env>(n));
    const auto rep = evaluate<env>(s, ps, held_out_seeds(3), 2);
    REQUIRE(rep.policies.size() == heuristic_names().size() + 1);
    for (const auto& m : rep.policies[0].per_seed) CHECK(m.jobs_done == m.jobs_total);
    // a network for another cluster size is refused with a clear error
    const auto big = default_scenario();
    env e(big);
    e.reset(1);
    rl::network_policy pol(net);
    CHECK_THROWS_AS((void)pol.act(e), Error);
}
