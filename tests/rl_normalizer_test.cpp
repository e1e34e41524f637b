// rl/normalizer.hpp: running mean and variance merged batch by batch equal those of all the data
// at once; apply() has the bits of the scalar formula, clipped.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

#include <gpuplace/detail/rng.hpp>
#include <gpuplace/rl/normalizer.hpp>

TEST_CASE("rl normalizer: batches of any sizes merge into the mean and variance of all the data") {
    gpuplace::detail::rng r(3);
    const Eigen::Index dims = 5, n = 1000;
    Eigen::MatrixXf x(dims, n);
    for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = 0; i < dims; ++i) x(i, j) = float(r.normal() * double(i + 1) + 10.0 * double(i));
    const Eigen::MatrixXd xd = x.cast<double>();
    const Eigen::VectorXd mean = xd.rowwise().mean();
    const Eigen::VectorXd var = (xd.colwise() - mean).array().square().rowwise().sum() / double(n);
    gpuplace::rl::running_norm norm{std::size_t(dims)};
    CHECK(norm.count() == 0);
    Eigen::Index j = 0;
    for (Eigen::Index size : {1, 0, 2, 7, 190, 800}) {
        norm.update(x.middleCols(j, size));
        j += size;
    }
    REQUIRE(j == n);
    CHECK(norm.count() == double(n));
    for (Eigen::Index i = 0; i < dims; ++i) {
        CAPTURE(i);
        CHECK(norm.mean()(i) == doctest::Approx(mean(i)).epsilon(1e-12));
        CHECK(norm.var()(i) == doctest::Approx(var(i)).epsilon(1e-10));
    }
}

TEST_CASE_TEMPLATE("rl normalizer: apply() is (x - mean) / sqrt(var + eps), clipped, with the bits of the scalar formula", T,
                   float, double) {
    gpuplace::detail::rng r(4);
    const Eigen::Index dims = 19, n = 23;  // a packet's multiple and a tail per column
    gpuplace::rl::running_norm norm{std::size_t(dims)};
    Eigen::MatrixXd data(dims, 50);
    for (Eigen::Index i = 0; i < data.size(); ++i) data.data()[i] = r.normal() * 3.0;
    norm.update(data);
    norm.clip = 2.5;
    using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    for (const Eigen::Index rows : {dims, Eigen::Index(7)}) {  // fewer rows: the first dimensions' statistics
        CAPTURE(rows);
        M x(rows, n);
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = T(r.normal() * 4.0);
        M y = x;
        norm.apply(y);
        bool clipped = false;
        for (Eigen::Index j = 0; j < n; ++j)
            for (Eigen::Index i = 0; i < rows; ++i) {
                const T inv = T(1.0 / std::sqrt(norm.var()(i) + norm.eps));
                volatile T centred = x(i, j) - T(norm.mean()(i));  // volatile: no contraction
                const T want = std::clamp(T(centred * inv), T(-2.5), T(2.5));
                clipped = clipped || std::abs(want) == T(2.5);
                CHECK(y(i, j) == want);
            }
        CHECK(clipped);  // the data reach the clip
    }
}
