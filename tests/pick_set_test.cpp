// Tests of include/gpuplace/detail/pick_set.hpp: picks and their counts per node and rack.

#include <doctest/doctest.h>

#include <gpuplace/detail/pick_set.hpp>

#include "test_util.hpp"

using namespace gpuplace::test;

TEST_CASE("pick_set: counts per node and rack, cleared in O(picks)") {
    const auto t = dgx_a100_2x4::make();  // 2 racks x 4 nodes x 8 GPUs
    gpuplace::detail::pick_set p;
    p.resize(t);
    CHECK(p.empty());
    CHECK(p.gpus.capacity() == 64);
    for (gpuplace::gpu_id g : {3u, 5u, 40u}) p.add(g, t.node_of(g), t.rack_of(g));
    CHECK(p.size() == 3);
    CHECK(p.picked[5] == 1);
    CHECK(p.picked[6] == 0);
    CHECK(p.node[0] == 2);
    CHECK(p.node[5] == 1);
    CHECK(p.rack[0] == 2);
    CHECK(p.rack[1] == 1);
    p.clear(t);
    CHECK(p.empty());
    for (auto v : p.picked) CHECK(v == 0);
    for (auto v : p.node) CHECK(v == 0);
    for (auto v : p.rack) CHECK(v == 0);
}
