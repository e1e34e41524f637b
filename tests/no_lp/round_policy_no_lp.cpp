// include/gpuplace/round_policy_registry.hpp compiled without the LP component (no
// GPUPLACE_WITH_LP, as a program that does not link gpuplace::lp): the LP round policies are still
// named, and making one is a ConfigError that says which package and option are missing; fifo_perf
// needs no solver. (tests/gavel_lp_test.cpp tests the policies with the solver.)

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>

#include <gpuplace/round_policy_registry.hpp>

#if defined(GPUPLACE_WITH_LP)
#error "this test must be compiled without GPUPLACE_WITH_LP"
#endif

namespace gp = gpuplace;

TEST_CASE("round policies without the LP component: named, and refused with what is missing") {
    CHECK_FALSE(gp::have_lp_solver());
    const gp::scenario s;
    for (const auto& name : gp::round_policy_names()) {
        CAPTURE(name);
        if (!gp::round_policy_needs_lp(name)) {  // fifo_perf, the elastic baselines and class_gittins
            CHECK((name == "fifo_perf" || name == "afs_l" || name == "greedy_gain" || name == "class_gittins"));
            CHECK(gp::round_policy(name, s).name == name);
            continue;
        }
        CHECK_THROWS_WITH_AS((void)gp::round_policy(name, s),
                             ("round policy " + name +
                              " solves an LP, and this build has no LP solver: install the Debian package coinor-libclp-dev (COIN-OR "
                              "CLP) and configure with -DGPUPLACE_WITH_LP=ON (the target gpuplace::lp); fifo_perf needs none")
                                 .c_str(),
                             gp::ConfigError);
    }
}
