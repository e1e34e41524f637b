// rl/checkpoint.hpp: checkpoints and the policy adapter.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>

namespace {
using namespace gpuplace;

scenario tiny_checkpoint_scenario() {
    return scenario::parse(R"({
      "name": "tiny",
      "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 4},
      "workload": {"kind": "synthetic", "num_jobs": 12, "load": 1.0,
                   "gpu_counts": {"1": 0.5, "2": 0.3, "4": 0.2}, "duration_min": 600, "duration_max": 3600},
      "env": {"queue_window": 2, "allow_defer": true}
    })");
}

rl::ppo_config quick(std::size_t threads = 1) {
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

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const CheckpointError& e) {
        return e.what();
    }
    return "no CheckpointError";
}
}  // namespace

TEST_CASE("rl checkpoint: round trip keeps weights, normalisers and actions") {
    const auto s = tiny_checkpoint_scenario();
    rl::ppo p(s, quick());
    while (!p.done()) p.iterate();
    const auto text = rl::checkpoint_json(p.network(), p.config(), s).dump();
    auto ck = rl::parse_checkpoint(text, "mem");
    CHECK(ck.ppo.num_envs == 4);
    CHECK(ck.scenario["name"] == "tiny");
    auto a = p.network().parts(), b = ck.network.parts();
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i]->params() == b[i]->params());
    CHECK(ck.network.normalizers()[0].mean() == p.network().normalizers()[0].mean());
    // the same greedy actions over a whole episode
    auto n1 = std::make_shared<const rl::actor_critic>(p.network());
    auto n2 = std::make_shared<const rl::actor_critic>(std::move(ck.network));
    rl::network_policy p1(n1), p2(n2);
    env e1(s), e2(s);
    const auto r1 = run_episode(e1, p1, 5), r2 = run_episode(e2, p2, 5);
    CHECK(r1.terminated);
    CHECK(r1.episode_return == r2.episode_return);
}

TEST_CASE("rl checkpoint: truncated, corrupted or foreign checkpoints are clear CheckpointErrors") {
    const auto s = tiny_checkpoint_scenario();
    rl::actor_critic net(rl::obs_spec::of(env(s)), rl::network_config{}, 1);
    const auto j = rl::checkpoint_json(net, rl::ppo_config{}, s);
    const auto text = j.dump();
    CHECK(error_of([&] { (void)rl::parse_checkpoint(text.substr(0, text.size() / 2), "half.json"); })
              .find("half.json: invalid or truncated JSON at byte") != std::string::npos);
    auto v2 = j;
    v2["version"] = 2;
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(v2, "v2.json"); }).find("/version: unsupported version 2") != std::string::npos);
    auto missing = j;
    missing["parts"].erase("tail");
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(missing, "m.json"); }).find("/parts/tail: missing") != std::string::npos);
    auto short_params = j;
    short_params["parts"]["value"]["params"].erase(0);
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(short_params, "s.json"); }).find("/parts/value/params: has") != std::string::npos);
    auto bad = j;
    bad["parts"]["defer"]["params"][3] = "x";
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(bad, "b.json"); }).find("/parts/defer/params/3: not a number") != std::string::npos);
    auto fmt = j;
    fmt["format"] = "something-else";
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(fmt, "f.json"); }).find("/format") != std::string::npos);
    CHECK(error_of([] { (void)rl::load_checkpoint("/nonexistent/ppo.json"); }).find("cannot open") != std::string::npos);
}

// A corrupted network config or observation shape is checked against the document before the
// network is allocated: four layers of 65536 units would need 17 GB of float parameters.
TEST_CASE("rl checkpoint: huge sizes in a corrupted checkpoint fail before anything is allocated") {
    const auto s = tiny_checkpoint_scenario();
    rl::actor_critic net(rl::obs_spec::of(env(s)), rl::network_config{}, 1);
    const auto j = rl::checkpoint_json(net, rl::ppo_config{}, s);
    auto big = j;
    big["network"]["hidden"] = {65536, 65536, 65536, 65536};
    const auto e = error_of([&] { (void)rl::checkpoint_from_json(big, "big.json"); });
    CHECK(e.rfind("checkpoint big.json: /parts/gpu_in/sizes: layer sizes [", 0) == 0);
    CHECK(e.find("do not match the network config [") != std::string::npos);
    auto wide = j;
    wide["obs_spec"]["num_gpus"] = 1000000000000ULL;
    CHECK(error_of([&] { (void)rl::checkpoint_from_json(wide, "w.json"); }) ==
          "checkpoint w.json: /obs_spec/num_gpus: value 1000000000000 out of range [0, 1048576]");
}

TEST_CASE("rl policy adapter: a network acts next to the heuristics in the evaluation harness") {
    const auto s = tiny_checkpoint_scenario();
    auto net = std::make_shared<const rl::actor_critic>(rl::obs_spec::of(env(s)), rl::network_config{}, 2);
    std::vector<any_policy<env>> ps{rl::as_policy<env>("ppo", net)};
    for (const auto& n : heuristic_names()) ps.push_back(heuristic<env>(n));
    const auto rep = evaluate<env>(s, ps, held_out_seeds(3), 2);
    REQUIRE(rep.policies.size() == heuristic_names().size() + 1);
    for (const auto& m : rep.policies[0].per_seed) CHECK(m.jobs_done == m.jobs_total);
    // a network for another cluster size is refused with a clear error
    const auto big = default_scenario();
    env e(big);
    e.reset(1);
    rl::network_policy pol(net);
    CHECK_THROWS_AS((void)pol.act(e), Error);
}
