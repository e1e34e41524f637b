// Learning tests of the PPO reference: on tiny crafted scenarios whose best placement is known
// (found here by exhaustive search), a few seconds of PPO reach the optimum.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>
#include <gpuplace/json.hpp>

namespace {
using namespace gpuplace;

/// 2 nodes x 4 GPUs. A 2-GPU job, then a 1-GPU job, then a 4-GPU job arrive; all run a
/// communication-heavy model (LM, about 3x slower when spread over nodes) for a long time. Only
/// packing the first two jobs on one node leaves a whole node for the third. First-fit packs them
/// (GPUs 0-2) but then spreads the 4-GPU job over GPUs 3-6.
scenario consolidation_scenario() {
    return parse_scenario(R"({
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

namespace {
/// 2 nodes x 4 GPUs, 24 jobs of 1, 2 or 4 GPUs at load 1.5: placement decisions in every state.
scenario small_synthetic() {
    return parse_scenario(R"({
      "name": "small",
      "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 4},
      "workload": {"kind": "synthetic", "num_jobs": 24, "load": 1.5, "gpu_counts": {"1": 0.4, "2": 0.3, "4": 0.3},
                   "duration_min": 600, "duration_max": 7200},
      "env": {"queue_window": 2}
    })");
}
}  // namespace

// The clone is not exact (its network sees only the observation), so it is held to pack's level.
TEST_CASE("rl imitation: behaviour cloning of pack plays like pack on unseen seeds") {
    const auto s = small_synthetic();
    auto c = small_config();
    c.teacher = "pack";
    c.imitation_steps = 8 * 16 * 40;
    c.imitation_learning_rate = 3e-3;
    c.total_steps = 1;  // one PPO iteration after cloning, value only
    c.value_warmup = 1;
    rl::ppo p(s, c);
    CHECK(p.imitation_iterations() == 40);
    CHECK(p.total_iterations() == 41);
    rl::ppo_stats last;
    while (p.iterations() < p.imitation_iterations()) last = p.iterate();
    CHECK(last.imitation);
    CHECK(last.teacher_agreement > 0.95);
    const auto before = p.network().parts()[0]->params();
    const auto st = p.iterate();  // the value warm-up iteration leaves the policy as cloned
    CHECK_FALSE(st.imitation);
    CHECK(p.done());
    CHECK(p.network().parts()[0]->params() == before);
    auto net = std::make_shared<const rl::actor_critic>(p.network());
    double clone = 0, pack = 0, random = 0;
    for (std::uint64_t seed : {101, 102, 103, 104}) {
        env e1(s), e2(s), e3(s);
        rl::network_policy pol(net);
        pack_policy pk;
        random_policy rnd;
        clone += run_episode(e1, pol, seed).episode_return;
        pack += run_episode(e2, pk, seed).episode_return;
        random += run_episode(e3, rnd, seed).episode_return;
    }
    MESSAGE("episode return summed over 4 seeds: clone ", clone, ", pack ", pack, ", random ", random);
    CHECK(clone >= 1.05 * pack);  // returns are negative: within 5% of pack's
    CHECK(clone > random);
}

TEST_CASE("rl imitation: an unknown teacher is a ConfigError naming the path") {
    CHECK_THROWS_WITH_AS((void)rl::ppo_config::from_json(nlohmann::json::parse(R"({"teacher": "best"})")),
                         "config /ppo/teacher: unknown policy \"best\" (known: random, first_fit, pack, load_balance, topology_greedy, pack_wait, avoid_failed, coloc_packer)",
                         ConfigError);
}
