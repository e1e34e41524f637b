// rl/detail/exact_sqrt.hpp: a vectorised square root with the bits of std::sqrt; the only kind of
// header allowed to name Eigen's internals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <Eigen/Core>

#include <gpuplace/rl/detail/exact_sqrt.hpp>
#include <gpuplace/detail/rng.hpp>

namespace {
/// Values over the whole range: random magnitudes, and the edges (0, -0, the smallest
/// subnormal, the smallest normal, 1, the largest finite value, infinity).
template <class T>
Eigen::Array<T, Eigen::Dynamic, 1> sqrt_inputs(Eigen::Index n) {
    using lim = std::numeric_limits<T>;
    gpuplace::detail::rng r(11);
    Eigen::Array<T, Eigen::Dynamic, 1> x(n);
    for (Eigen::Index i = 0; i < n; ++i) x(i) = T(std::ldexp(1.0 + r.uniform(), int(r.uniform() * 120) - 60));
    const T edges[] = {T(0), T(-0.0), lim::denorm_min(), lim::min(), T(1), T(2), lim::max(), lim::infinity()};
    for (std::size_t i = 0; i < std::size(edges) && Eigen::Index(i) < n; ++i) x(Eigen::Index(i) * 7 % n) = edges[i];
    return x;
}
}  // namespace

TEST_CASE_TEMPLATE("exact_sqrt: the same bits as std::sqrt, whatever the length (packets and tails)", T, float, double) {
    for (Eigen::Index n : {1, 3, 7, 16, 17, 33, 1000, 4099}) {
        CAPTURE(n);
        const auto x = sqrt_inputs<T>(n);
        const Eigen::Array<T, Eigen::Dynamic, 1> y = x.unaryExpr(gpuplace::rl::detail::exact_sqrt_op{});
        for (Eigen::Index i = 0; i < n; ++i) {
            const T want = std::sqrt(x(i));
            if (std::memcmp(&want, &y(i), sizeof(T)) != 0) {
                CAPTURE(x(i));
                CHECK(y(i) == want);
            }
        }
    }
    // Eigen's own sqrt, for comparison (not asserted: it depends on EIGEN_FAST_MATH and the ISA)
    const auto x = sqrt_inputs<T>(4099);
    const Eigen::Array<T, Eigen::Dynamic, 1> e = x.sqrt();
    Eigen::Index differ = 0;
    for (Eigen::Index i = 0; i < x.size(); ++i) differ += e(i) != std::sqrt(x(i));
    MESSAGE("Eigen's .sqrt() differs from std::sqrt on " << differ << " of " << x.size() << " values here");
}

TEST_CASE("exact_sqrt: vectorised wherever Eigen vectorises on x86") {
#if defined(EIGEN_VECTORIZE_SSE2)
    CHECK(gpuplace::rl::detail::exact_sqrt_vectorized);
    CHECK(Eigen::internal::functor_traits<gpuplace::rl::detail::exact_sqrt_op>::PacketAccess);
#else
    CHECK_FALSE(gpuplace::rl::detail::exact_sqrt_vectorized);
#endif
}

TEST_CASE("rl detail: no header outside include/gpuplace/rl/detail names Eigen::internal") {
    // Eigen's internals are not its public API and may change in any release: what needs them (a
    // vectorised functor's traits) lives in rl/detail, and the cases above fail first if a new
    // Eigen changes them
    namespace fs = std::filesystem;
    const fs::path root = fs::path(GPUPLACE_SOURCE_DIR) / "include" / "gpuplace";
    const fs::path allowed = root / "rl" / "detail";
    std::string offenders;
    std::size_t headers = 0;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (!e.is_regular_file() || e.path().extension() != ".hpp") continue;
        ++headers;
        if (e.path().parent_path() == allowed) continue;
        std::ifstream in(e.path());
        std::stringstream text;
        text << in.rdbuf();
        if (text.str().find("Eigen::internal") != std::string::npos)
            offenders += fs::relative(e.path(), root).generic_string() + " ";
    }
    CHECK(headers > 20);  // the walk found the library
    CHECK(offenders == "");
}
