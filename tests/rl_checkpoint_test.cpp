// rl/checkpoint.hpp: checkpoints and the policy adapter.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/rl/rl.hpp>
#include <gpuplace/json.hpp>

#include "rl_test_util.hpp"

namespace gp = gpuplace;

namespace {
using namespace gpuplace;

using test::tiny_ppo_scenario;
using test::tiny_ppo_config;

/// Whether two networks act the same greedily over a whole episode of `s` (seed 5); the first's
/// episode must end with every job done.
bool same_episode(const rl::actor_critic& a, rl::actor_critic b, const scenario& s) {
    rl::network_policy p1(std::make_shared<const rl::actor_critic>(a)), p2(std::make_shared<const rl::actor_critic>(std::move(b)));
    env e1(s), e2(s);
    const auto r1 = run_episode(e1, p1, 5), r2 = run_episode(e2, p2, 5);
    return r1.terminated && r1.m.jobs_done == e1.simulator().jobs().size() && r1.episode_return == r2.episode_return;
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
    const auto s = tiny_ppo_scenario();
    rl::ppo p(s, tiny_ppo_config());
    while (!p.done()) p.iterate();
    const auto text = rl::checkpoint_json(p.network(), p.config(), s).dump();
    auto ck = rl::parse_checkpoint(text, "mem");
    CHECK(ck.ppo.num_envs == 4);
    CHECK(ck.scenario["name"] == "tiny");
    auto a = p.network().parts(), b = ck.network.parts();
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i]->params() == b[i]->params());
    CHECK(ck.network.normalizers()[0].mean() == p.network().normalizers()[0].mean());
    CHECK(same_episode(p.network(), std::move(ck.network), s));  // the same greedy actions over a whole episode
}

TEST_CASE("rl checkpoint: truncated, corrupted or foreign checkpoints are clear CheckpointErrors") {
    const auto s = tiny_ppo_scenario();
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
    const auto s = tiny_ppo_scenario();
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
    const auto s = tiny_ppo_scenario();
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

TEST_CASE("rl size-free: a per_gpu network acts on clusters of other sizes, checkpoints refuse only what differs") {
    using namespace gpuplace;
    auto sized = [](std::size_t racks, std::size_t nodes) {
        auto s = default_scenario();
        s.topology = topology_config::of("dgx_a100", racks, nodes);
        s.workload.synthetic.num_jobs = 30;
        return s;
    };
    env small(sized(1, 2)), big(sized(2, 4)), huge(sized(4, 8));
    rl::network_config cfg;
    cfg.node_features = true;
    const auto net = std::make_shared<const rl::actor_critic>(rl::obs_spec::of(big), cfg, 7);
    // the same scores for the same per-GPU inputs: GPU g of the small cluster and of the big one
    const auto s16 = rl::obs_spec::of(small), s64 = rl::obs_spec::of(big);
    CHECK(net->incompatibility(s16).empty());
    const auto n16 = net->for_spec(s16);
    Eigen::MatrixXf o16 = Eigen::MatrixXf::Zero(Eigen::Index(s16.obs_size()), 1), o64 = Eigen::MatrixXf::Zero(Eigen::Index(s64.obs_size()), 1);
    gpuplace::detail::rng r(3);
    for (std::size_t f = 0; f < s16.gpu_features; ++f)
        for (std::size_t g = 0; g < 16; ++g) o16(Eigen::Index(f * 16 + g), 0) = o64(Eigen::Index(f * 64 + g), 0) = float(r.uniform());
    for (std::size_t c = 0; c < s16.context; ++c)
        o16(Eigen::Index(16 * s16.gpu_features + c), 0) = o64(Eigen::Index(64 * s64.gpu_features + c), 0) = float(r.uniform());
    rl::actor_critic::workspace w16, w64;
    n16.forward(o16, w16);
    net->forward(o64, w64);
    // (to rounding: the products take other paths for 16 and 64 columns)
    for (Eigen::Index g = 0; g < 16; ++g) CHECK(w16.logits(g, 0) == doctest::Approx(w64.logits(g, 0)).epsilon(1e-5));
    CHECK(w16.logits(16, 0) == doctest::Approx(w64.logits(64, 0)).epsilon(1e-5));  // DEFER
    // acting through the harness on 16, 64 and 256 GPUs
    for (auto* e : {&small, &big, &huge}) {
        const auto rep = evaluate(e->config(), {rl::as_policy<env>("ppo", net)}, {1, 2}, 1);
        CHECK(rep.policies[0].per_seed[0].jobs_done == 30);
    }
    // what truly differs is refused, naming it
    auto window = sized(1, 2);
    window.env.queue_window = 4;
    CHECK(net->incompatibility(rl::obs_spec::of(env(window))).find("context values (job, queue window, global), this env has 25 (the network "
                                                                  "reads queue.4.present") != std::string::npos);
    auto coloc = preset_scenario("colocation");
    CHECK(net->incompatibility(rl::obs_spec::of(env(coloc))).find("features per GPU, this env has 9 (this env observes gpu_occupancy, "
                                                                 "gpu_memory_headroom, gpu_interference") != std::string::npos);
    CHECK_THROWS_WITH_AS(evaluate(window, {rl::as_policy<env>("ppo", net)}, {1}, 1), doctest::Contains("network policy: the network reads"),
                         Error);
    rl::network_config flat;
    flat.arch = rl::architecture::flat;
    const rl::actor_critic fnet(s64, flat, 1);
    CHECK(fnet.incompatibility(s16).find("a flat network acts only on the observation it was trained on") == 0);
}

TEST_CASE("rl checkpoint: the queue policy a network acts under round trips, unknown ones are refused") {
    using namespace gpuplace;
    const auto s = default_scenario();
    const rl::actor_critic net(rl::obs_spec::of(env(s)), rl::network_config{}, 2);
    auto j = rl::checkpoint_json(net, rl::ppo_config{}, s, "sjf");
    CHECK(rl::checkpoint_from_json(j, "c").queue == "sjf");
    CHECK(rl::checkpoint_from_json(rl::checkpoint_json(net, rl::ppo_config{}, s), "c").queue.empty());
    j["queue"] = "lifo";
    CHECK_THROWS_WITH_AS(rl::checkpoint_from_json(j, "c"), "checkpoint c: /queue: unknown queue policy \"lifo\"", CheckpointError);
    CHECK(rl::model_path("default") == "$GPUPLACE_DATA/models/default.json");
    CHECK(rl::model_path("my/ppo.json") == "my/ppo.json");
}

TEST_CASE("rl reference policies: every shipped model loads by name, records its inputs and schedules every job of its scenario") {
    for (const auto& name : rl::model_names()) {
        CAPTURE(name);
        const auto ck = rl::load_model(name);
        CHECK(rl::model_path(name) == "$GPUPLACE_DATA/models/" + name + ".json");
        auto s = scenario_from_json(ck.scenario);
        if (!ck.queue.empty()) apply_queue(s, ck.queue);
        // it records the name of every input, and they are its scenario's
        CHECK(ck.network.spec().names.size() == ck.network.spec().gpu_features + ck.network.spec().context);
        CHECK(ck.network.spec() == rl::obs_spec::of(env(s)));
        const auto net = std::make_shared<const rl::actor_critic>(ck.network);
        const auto rep = evaluate<env>(s, {rl::as_policy<env>("ppo", net)}, held_out_seeds(2), 1);
        for (const auto& m : rep.policies[0].per_seed) CHECK(m.jobs_done == m.jobs_total);
    }
    CHECK(rl::model_path("my_run/ppo.json") == "my_run/ppo.json");  // any other name is a path
}

TEST_CASE("rl action modes: PPO trains in the placement and job modes, checkpoints keep the mode's items") {
    for (const auto mode : {action_mode::placement, action_mode::job}) {
        INFO(to_string(mode));
        auto s = tiny_ppo_scenario();
        s.env.mode = mode;
        s.env.slots = 3;
        auto cfg = tiny_ppo_config();
        cfg.teacher = "pack_wait";  // cloning through the mode's heuristic actions
        cfg.imitation_steps = 256;
        cfg.network.node_features = true;  // nothing to pool over: it does nothing here
        rl::ppo p(s, cfg);
        CHECK(p.network().spec().items == (mode == action_mode::placement ? "candidate" : "slot"));
        CHECK(p.network().spec().num_gpus == 3);
        CHECK(p.network().spec().num_actions() == 4);
        while (!p.done()) p.iterate();
        const auto text = rl::checkpoint_json(p.network(), p.config(), s).dump();
        CHECK(text.find(mode == action_mode::placement ? "\"items\":\"candidate\"" : "\"items\":\"slot\"") != std::string::npos);
        auto ck = rl::parse_checkpoint(text, "mem");
        CHECK(ck.network.spec() == p.network().spec());
        CHECK(same_episode(p.network(), std::move(ck.network), s));
        // a network of one mode refuses the env of another, naming both
        CHECK(p.network().incompatibility(rl::obs_spec::of(env(tiny_ppo_scenario()))).find("trained in that action mode") != std::string::npos);
    }
    // a GPU-mode checkpoint carries no "items" (its JSON is as before the action modes)
    const auto s = tiny_ppo_scenario();
    rl::ppo p(s, tiny_ppo_config());
    CHECK(rl::checkpoint_json(p.network(), p.config(), s)["obs_spec"].contains("items") == false);
    auto bad = rl::checkpoint_json(p.network(), p.config(), s);
    bad["obs_spec"]["items"] = "rack";
    CHECK(error_of([&] { (void)rl::parse_checkpoint(bad.dump(), "bad.json"); }).find("/obs_spec/items") != std::string::npos);
}

TEST_CASE("rl action modes: PPO trains in the round mode, its checkpoint acts there and nowhere else") {
    auto s = tiny_ppo_scenario();
    s.env.mode = action_mode::round;
    s.env.slots = 3;
    auto cfg = tiny_ppo_config();
    cfg.teacher = "pack";  // the first valid slot: a greedy LAS fill of each round
    cfg.imitation_steps = 256;
    rl::ppo p(s, cfg);
    CHECK(p.network().spec().items == "slot");
    CHECK(p.network().spec().num_actions() == 4);
    while (!p.done()) p.iterate();
    auto ck = rl::parse_checkpoint(rl::checkpoint_json(p.network(), p.config(), s).dump(), "mem");
    CHECK(ck.network.spec() == p.network().spec());
    CHECK(same_episode(p.network(), std::move(ck.network), s));
    const auto net = std::make_shared<const rl::actor_critic>(p.network());
    const auto rep = evaluate<env>(s, {rl::as_policy<env>("ppo", net)}, held_out_seeds(2), 1);
    for (const auto& m : rep.policies[0].per_seed) CHECK(m.jobs_done == m.jobs_total);
    auto job = s;
    job.env.mode = action_mode::job;
    CHECK(!p.network().incompatibility(rl::obs_spec::of(env(job))).empty());  // a job-mode env: other slot features
}

TEST_CASE("rl checkpoint: a network acts only in the information setting it was trained in") {
    auto oracle = gp::preset_scenario("default");
    auto hidden = oracle;
    hidden.durations.mode = gp::duration_info::hidden;
    const auto trained_oracle = gp::to_json(oracle), trained_hidden = gp::to_json(hidden);
    CHECK(trained_oracle.find("durations") == trained_oracle.end());  // the default is not written: old checkpoints are oracle
    CHECK(gp::rl::information_mismatch(trained_oracle, oracle).empty());
    CHECK(gp::rl::information_mismatch(trained_hidden, hidden).empty());
    CHECK(gp::rl::information_mismatch(trained_oracle, hidden) ==
          "the network was trained with durations oracle and the scenario \"default\" has durations hidden: a network acts "
          "only in the information setting it was trained in (set durations.mode to oracle, or train one for hidden)");
    CHECK_THROWS_WITH_AS(gp::rl::check_information(trained_hidden, oracle, "run/ppo.json"),
                         doctest::Contains("checkpoint run/ppo.json: the network was trained with durations hidden"), gp::Error);
}
