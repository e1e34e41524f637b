// rl/blocking.hpp: once a program pins the cache sizes Eigen blocks the networks' products for,
// training gives the same numbers whatever cache sizes the CPU reports; the library never changes
// that process-wide setting by itself.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>

namespace {
using namespace gpuplace;

/// Restores Eigen's cache sizes when a test case ends, so that the others see the usual setting.
struct eigen_cache_guard {
    rl::cache_sizes saved = rl::eigen_cache_sizes();
    ~eigen_cache_guard() { Eigen::setCpuCacheSizes(saved.l1, saved.l2, saved.l3); }
};

/// Cache sizes of a small core (16 KiB L1: every vector width splits a 425-input sum) and of a
/// large one (1 MiB L1: no split).
constexpr rl::cache_sizes small_core{16 * 1024, 256 * 1024, 2 * 1024 * 1024};
constexpr rl::cache_sizes large_core{1024 * 1024, 8 * 1024 * 1024, 64 * 1024 * 1024};

void set_eigen(const rl::cache_sizes& s) { Eigen::setCpuCacheSizes(s.l1, s.l2, s.l3); }

/// The default scenario's flat network (425 inputs) with minibatches of 64, for 2 iterations: 64-wide
/// layers, or layers narrower than a SIMD packet (`narrow`).
rl::ppo_config two_iterations(bool narrow = false) {
    rl::ppo_config c;
    c.num_envs = 4;
    c.num_steps = 32;
    c.minibatches = 2;
    c.epochs = 2;
    c.total_steps = 256;
    c.network.arch = rl::architecture::flat;
    c.network.hidden = narrow ? std::vector<std::size_t>{6, 5} : std::vector<std::size_t>{64, 64};
    c.network.value_hidden = narrow ? std::vector<std::size_t>{7, 3} : std::vector<std::size_t>{64, 64};
    c.seed = 5;
    return c;
}

rl::matrix_t<float> random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
    gpuplace::detail::rng r(seed);
    rl::matrix_t<float> m(rows, cols);
    for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = float(r.normal());
    return m;
}
}  // namespace

TEST_CASE("rl blocking: Eigen's blocking changes a product's rounding, which is why it is pinned") {
    eigen_cache_guard guard;
    const auto a = random_matrix(64, 425, 1), b = random_matrix(425, 64, 2);
    set_eigen(small_core);
    const rl::matrix_t<float> p_small = a * b;
    set_eigen(large_core);
    const rl::matrix_t<float> p_large = a * b;
    CHECK(p_small != p_large);                   // not the same bits...
    CHECK(p_small.isApprox(p_large, 1e-5f));     // ...but the same product
    rl::pin_cache_sizes();
    CHECK(rl::eigen_cache_sizes() == rl::pinned_cache_sizes);
    const rl::matrix_t<float> p_pinned = a * b;
    set_eigen(small_core);
    rl::pin_cache_sizes();
    CHECK(rl::matrix_t<float>(a * b) == p_pinned);
}

TEST_CASE("rl blocking: PPO trains to the same bits whatever cache sizes the CPU reports, once the program pins them") {
    eigen_cache_guard guard;
    const auto s = default_scenario();
    for (const bool narrow : {false, true}) {
        CAPTURE(narrow);
        auto train = [&](const rl::cache_sizes& cpu) {
            set_eigen(cpu);         // what Eigen would have read from this CPU
            rl::pin_cache_sizes();  // the program's opt-in (gpuplace-train, python -m gpuplace train)
            rl::ppo p(s, two_iterations(narrow));
            const rl::vector_t<float> initial = p.network().parts()[0]->params();
            while (!p.done()) p.iterate();
            CHECK(p.network().parts()[0]->params() != initial);  // training moved the weights
            CHECK(rl::eigen_cache_sizes() == rl::pinned_cache_sizes);
            std::vector<rl::vector_t<float>> params;
            for (const auto* part : p.network().parts()) params.push_back(part->params());
            return params;
        };
        const auto small = train(small_core), large = train(large_core);
        REQUIRE(small.size() == large.size());
        for (std::size_t i = 0; i < small.size(); ++i) CHECK(small[i] == large[i]);
    }
}

TEST_CASE("rl blocking: the library leaves Eigen's setting to the program, unpinned, other cache sizes take other paths") {
    eigen_cache_guard guard;
    const auto s = default_scenario();
    auto train = [&](const rl::cache_sizes& cpu) {
        set_eigen(cpu);
        rl::ppo p(s, two_iterations());
        while (!p.done()) p.iterate();
        CHECK(rl::eigen_cache_sizes() == cpu);  // neither the network nor the trainer changed it
        return rl::vector_t<float>(p.network().parts()[0]->params());
    };
    CHECK(train(small_core) != train(large_core));
}

TEST_CASE("rl blocking: a size <= 0 is a ConfigError naming it, and Eigen's setting is kept") {
    eigen_cache_guard guard;
    set_eigen(large_core);
    CHECK_THROWS_WITH_AS(rl::pin_cache_sizes({32 * 1024, 0, 1 << 20}),
                         "pin_cache_sizes: cache sizes must be > 0 bytes, got l1 = 32768, l2 = 0, l3 = 1048576",
                         ConfigError);
    CHECK(rl::eigen_cache_sizes() == large_core);
}
