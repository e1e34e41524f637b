// rl/ppo.hpp: the trainer is deterministic by seed, whatever the number of env threads.
#include <doctest/doctest.h>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>

#include "rl_test_util.hpp"

namespace {
using namespace gpuplace;

using test::tiny_ppo_scenario;
using test::tiny_ppo_config;
}  // namespace

TEST_CASE("rl ppo: deterministic by seed and independent of the number of env threads") {
    const auto s = tiny_ppo_scenario();
    rl::ppo a(s, tiny_ppo_config(1)), b(s, tiny_ppo_config(1)), c(s, tiny_ppo_config(3));
    while (!a.done()) a.iterate();
    while (!b.done()) b.iterate();
    while (!c.done()) c.iterate();
    auto pa = a.network().parts(), pb = b.network().parts(), pc = c.network().parts();
    REQUIRE(pa.size() == pc.size());
    for (std::size_t i = 0; i < pa.size(); ++i) {
        CHECK(pa[i]->params() == pb[i]->params());
        CHECK(pa[i]->params() == pc[i]->params());
    }
    rl::ppo_config other = tiny_ppo_config(1);
    other.seed = 99;
    rl::ppo d(s, other);
    while (!d.done()) d.iterate();
    CHECK(d.network().parts()[0]->params() != pa[0]->params());
}
