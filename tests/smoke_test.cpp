#include <doctest/doctest.h>

#include <gpuplace/gpuplace.hpp>

TEST_CASE("smoke: first-fit finishes the default scenario") {
    gpuplace::env e;
    gpuplace::first_fit_policy p;
    auto r = gpuplace::run_episode(e, p, 1);
    CHECK(r.terminated);
    CHECK(r.m.jobs_done == r.m.jobs_total);
}
