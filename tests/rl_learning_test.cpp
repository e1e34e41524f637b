// Learning tests of the PPO reference: on tiny crafted scenarios whose best placement is known
// (found here by exhaustive search), a few seconds of PPO reach the optimum.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>

namespace {
using namespace gpuplace;

/// 2 nodes x 4 GPUs. A 2-GPU job, then a 1-GPU job, then a 4-GPU job arrive; all run a
/// communication-heavy model (LM, about 3x slower when spread over nodes) for a long time. Only
/// packing the first two jobs on one node leaves a whole node for the third. First-fit packs them
/// (GPUs 0-2) but then spreads the 4-GPU job over GPUs 3-6.
scenario consolidation_scenario() {
    return scenario::parse(R"({
      "name": "consolidation",
      "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 4},
      "workload": {"kind": "jobs", "jobs": [
        {"submit_time": 0, "num_gpus": 2, "model": 17, "work": 400000},
        {"submit_time": 1, "num_gpus": 1, "model": 17, "work": 400000},
        {"submit_time": 2, "num_gpus": 4, "model": 17, "work": 400000}]},
      "env": {"queue_window": 2},
      "reward": {"jct": 1.0, "time_scale": 3600}
    })");
}

/// The best episode return over every action sequence (exhaustive search).
double best_return(const env& e) {
    if (e.done()) return e.episode_return();
    double best = -1e300;
    const auto mask = e.action_mask();
    for (std::size_t a = 0; a < mask.size(); ++a) {
        if (!mask[a]) continue;
        env c = e;
        c.step(std::int64_t(a));
        best = std::max(best, best_return(c));
    }
    return best;
}

rl::ppo_config small_config() {
    rl::ppo_config c;
    c.total_steps = 12'000;
    c.num_envs = 8;
    c.num_steps = 16;
    c.minibatches = 2;
    c.epochs = 4;
    c.learning_rate = 3e-3;
    c.gamma = 1.0;
    c.gae_lambda = 0.95;
    c.ent_coef = 0.0;
    c.network.hidden = {16, 16};
    c.network.value_hidden = {16};
    c.seed = 3;
    return c;
}
}  // namespace

TEST_CASE("rl learning: PPO learns to consolidate and reaches the known optimum") {
    const auto s = consolidation_scenario();
    env e(s);
    e.reset(0);
    const double opt = best_return(e);
    // the optimum is clearly better than spreading the first job, and than first-fit
    env spread(s);
    spread.reset(0);
    spread.step(0);
    spread.step(4);
    CHECK(best_return(spread) < opt - 0.1);
    first_fit_policy ff;
    CHECK(run_episode(spread, ff, 0).episode_return < opt - 0.1);

    rl::ppo p(s, small_config());
    while (!p.done()) p.iterate();
    auto net = std::make_shared<const rl::actor_critic>(p.network());
    rl::network_policy pol(net);
    const auto r = run_episode(e, pol, 0);
    CHECK(r.terminated);
    CHECK(r.episode_return == doctest::Approx(opt).epsilon(1e-9));
}
