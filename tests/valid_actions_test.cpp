// Tests of include/gpuplace/detail/valid_actions.hpp: counting and selecting the valid entries of
// a mask row eight at a time gives what a scan entry by entry gives, and the vector env's sampler
// draws only valid actions, uniformly.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <gpuplace/detail/rng.hpp>
#include <gpuplace/detail/valid_actions.hpp>

namespace gp = gpuplace;

TEST_CASE("valid actions: count_valid() counts and select_valid() finds the k-th valid entry of any row, sample_valid() draws only valid ones") {
    gp::detail::rng r(5);
    std::size_t checked = 0;
    // rows of every length up to 300 (partial words, groups of 64, the DEFER entry after 64 GPUs),
    // with densities from empty to full
    for (std::size_t A = 1; A <= 300; ++A)
        for (int rep = 0; rep < 12; ++rep) {
            const double density = rep == 0 ? 0.0 : rep == 1 ? 1.0 : r.uniform();
            std::vector<std::uint8_t> m(A);
            for (auto& x : m) x = r.uniform() < density ? 1 : 0;
            std::vector<std::size_t> valid;
            for (std::size_t a = 0; a < A; ++a)
                if (m[a]) valid.push_back(a);
            REQUIRE(gp::detail::count_valid(m.data(), A) == valid.size());
            for (std::uint32_t k = 0; k < valid.size(); ++k) {
                INFO("A ", A, " k ", k);
                REQUIRE(gp::detail::select_valid(m.data(), A, k) == valid[k]);
                ++checked;
            }
            for (int t = 0; t < 8; ++t) {
                const auto a = gp::detail::sample_valid(m.data(), A, r);
                INFO("A ", A, " drew ", a);
                if (valid.empty()) REQUIRE(a == -1);
                else REQUIRE((a >= 0 && std::size_t(a) < A && m[std::size_t(a)] == 1));
            }
        }
    CHECK(checked > 100000);
}

TEST_CASE("valid actions: sample_valid() is uniform over the valid entries of long rows too") {
    // a row of 520 entries (512 GPUs and DEFER) takes the rejection-then-count path
    const std::size_t A = 520;
    std::vector<std::uint8_t> m(A, 0);
    for (std::size_t a = 3; a < A; a += 37) m[a] = 1;
    m[A - 1] = 1;
    std::size_t valid = 0;
    for (auto x : m) valid += x;
    gp::detail::rng r(9);
    std::vector<std::size_t> count(A, 0);
    const int draws = 30000;
    for (int t = 0; t < draws; ++t) ++count[std::size_t(gp::detail::sample_valid(m.data(), A, r))];
    const double expected = double(draws) / double(valid);
    for (std::size_t a = 0; a < A; ++a) {
        INFO("action ", a);
        if (!m[a]) CHECK(count[a] == 0);
        else CHECK(std::abs(double(count[a]) - expected) < 0.1 * expected);
    }
}
