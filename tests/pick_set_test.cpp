// Tests of include/gpuplace/env/pick_set.hpp: picks and their counts per domain of each level.

#include <doctest/doctest.h>

#include <gpuplace/env/pick_set.hpp>

#include "test_util.hpp"

using namespace gpuplace::test;

TEST_CASE("pick_set: counts per node and rack, cleared in O(picks)") {
    const auto t = dgx_a100_2x4::make();  // 2 racks x 4 nodes x 8 GPUs
    gpuplace::env_detail::pick_set p;
    p.resize(t.hierarchy());
    CHECK(p.empty());
    for (gpuplace::gpu_id g : {3u, 5u, 40u}) p.add(g);
    CHECK(p.size() == 3);
    CHECK(p.picked(5));
    CHECK_FALSE(p.picked(6));
    CHECK(p.in(1, 0) == 2);
    CHECK(p.in(1, 5) == 1);
    CHECK(p.in(2, 0) == 2);
    CHECK(p.in(2, 1) == 1);
    p.clear();
    CHECK(p.empty());
    for (gpuplace::gpu_id g = 0; g < 64; ++g) CHECK_FALSE(p.picked(g));
    for (std::size_t n = 0; n < 8; ++n) CHECK(p.in(1, n) == 0);
    for (std::size_t r = 0; r < 2; ++r) CHECK(p.in(2, r) == 0);
}

TEST_CASE("pick_set: counts on a hierarchy of four levels with domains of different sizes") {
    // GPUs 0-3 | 4-5 | 6-9 in switches, switches 0-1 | 2 in boxes, boxes under the root
    const gpuplace::level_hierarchy h({{"switch", 16, 0}, {"box", 8, 0}, {"rack", 4, 0}, {"spine", 2, 0}}, {{4, 2, 4}, {6, 4}, {10}});
    gpuplace::env_detail::pick_set p;
    p.resize(h);
    for (gpuplace::gpu_id g : {1u, 5u, 7u}) p.add(g);
    CHECK(p.in(1, 0) == 1);
    CHECK(p.in(1, 1) == 1);
    CHECK(p.in(1, 2) == 1);
    CHECK(p.in(2, 0) == 2);
    CHECK(p.in(2, 1) == 1);
    CHECK(p.in(3, 0) == 3);
    p.sort();
    CHECK(std::vector<gpuplace::gpu_id>(p.gpus().begin(), p.gpus().end()) == std::vector<gpuplace::gpu_id>{1, 5, 7});
    p.clear();
    CHECK(p.in(3, 0) == 0);
}
