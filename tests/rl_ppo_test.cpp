// rl/ppo.hpp: the trainer is deterministic by seed, whatever the number of env threads.
#include <doctest/doctest.h>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>

namespace {
using namespace gpuplace;

scenario ppo_test_scenario() {
    return parse_scenario(R"({
      "name": "tiny",
      "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 4},
      "workload": {"kind": "synthetic", "num_jobs": 12, "load": 1.0,
                   "gpu_counts": {"1": 0.5, "2": 0.3, "4": 0.2}, "duration_min": 600, "duration_max": 3600},
      "env": {"queue_window": 2, "allow_defer": true}
    })");
}

rl::ppo_config ppo_test_config(std::size_t threads = 1) {
    rl::ppo_config c;
    c.total_steps = 512;
    c.num_envs = 4;
    c.num_steps = 32;
    c.minibatches = 2;
    c.epochs = 2;
    c.threads = threads;
    c.network.hidden = {8, 8};
    c.network.value_hidden = {8};
    c.network.normalize_obs = true;
    return c;
}
}  // namespace

TEST_CASE("rl ppo: deterministic by seed and independent of the number of env threads") {
    const auto s = ppo_test_scenario();
    rl::ppo a(s, ppo_test_config(1)), b(s, ppo_test_config(1)), c(s, ppo_test_config(3));
    while (!a.done()) a.iterate();
    while (!b.done()) b.iterate();
    while (!c.done()) c.iterate();
    auto pa = a.network().parts(), pb = b.network().parts(), pc = c.network().parts();
    REQUIRE(pa.size() == pc.size());
    for (std::size_t i = 0; i < pa.size(); ++i) {
        CHECK(pa[i]->params() == pb[i]->params());
        CHECK(pa[i]->params() == pc[i]->params());
    }
    rl::ppo_config other = ppo_test_config(1);
    other.seed = 99;
    rl::ppo d(s, other);
    while (!d.done()) d.iterate();
    CHECK(d.network().parts()[0]->params() != pa[0]->params());
}
