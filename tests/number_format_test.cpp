// Tests of include/gpuplace/detail/number_format.hpp: numbers laid out as JSON writes them.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <gpuplace/detail/number_format.hpp>
#include <gpuplace/json/util.hpp>

TEST_CASE("number_format: the layout of nlohmann::json's dump()") {
    using gpuplace::detail::format_number;
    for (const double v : {0.0, -0.0, 1.0, -1.5, 60.0, 3600.0, 0.1, 0.001, 0.0001, 1e-5, 1.5e-5, 123456789012345.0, 1e15, 1e16,
                           2.5e16, 1e300, 1.7e308, -1e-300, 5e-324, 14400.0, 0.4, 1e12, 1e-12})
        CHECK(format_number(v) == gpuplace::detail::json(v).dump());
    CHECK(format_number(1e300) == "1e+300");
    CHECK(format_number(0.0) == "0.0");
    CHECK(format_number(1e-5) == "1e-05");
    CHECK(format_number(std::numeric_limits<double>::infinity()) == "null");
    CHECK(format_number(std::nan("")) == "null");
}

TEST_CASE("number_format: distinguishing_digits shows where two numbers differ") {
    using gpuplace::detail::distinguishing_digits;
    CHECK(distinguishing_digits(1.2996, 1.3004) == 4);  // 1.300 vs 1.300 -> 1.2996 vs 1.3004
    CHECK(distinguishing_digits(1.25, 1.5) == 3);        // already differ at 3
    CHECK(distinguishing_digits(2.0, 2.0) == 9);         // equal: the most digits
    CHECK(distinguishing_digits(2.0, 2.0, 1, 4) == 4);
    CHECK(distinguishing_digits(1.0000001, 1.0000002) == 7);
}
