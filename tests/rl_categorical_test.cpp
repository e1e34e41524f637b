// rl/categorical.hpp: the masked categorical, one distribution and a minibatch's columns at once.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include <gpuplace/detail/rng.hpp>
#include <gpuplace/error.hpp>
#include <gpuplace/rl/categorical.hpp>

namespace {
using namespace gpuplace;
}  // namespace

TEST_CASE("rl categorical: masked actions are never sampled, log-probs and entropy over valid actions") {
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
