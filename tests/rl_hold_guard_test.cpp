// Tests of include/gpuplace/rl/hold_guard.hpp: a network that holds a job only where a heuristic would.

#include <doctest/doctest.h>

#include <memory>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/idle_waiting.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/rl/hold_guard.hpp>
#include <gpuplace/rl/rl.hpp>

namespace gp = gpuplace;

TEST_CASE("hold guard: DEFER only where the heuristic defers too, the network's own action elsewhere") {
    auto ck = gp::rl::load_model("default");  // a GPU-mode network trained with DEFER on 64 GPUs
    const auto net = std::make_shared<const gp::rl::actor_critic>(std::move(ck.network));
    auto s = gp::default_scenario();  // on 16 GPUs (2 nodes), where its holds do not carry over (docs/ppo.md)
    s.topology = gp::topology_config::of("dgx_a100", 1, 2);
    s.workload.synthetic.num_jobs = 40;
    gp::apply_queue(s, ck.queue);
    const auto guarded = gp::rl::hold_only_with<gp::env>("guarded", net, gp::named_policy<gp::env>("pack_wait"));
    gp::env e(s), raw_env(s);
    const std::uint64_t seed = 1000000;
    auto act = guarded.make(seed);
    auto wait = gp::named_policy<gp::env>("pack_wait").make(seed);
    gp::rl::network_policy alone(net);
    e.reset(seed);
    std::size_t holds = 0, overruled = 0;
    while (!e.done()) {
        const auto a = act(e), n = alone.act(e);
        if (a == e.defer_action()) {
            CHECK(wait(e) == e.defer_action());  // it holds only where pack_wait holds
            ++holds;
        }
        if (n != e.defer_action()) CHECK(a == n);  // where the network places, it places as the network does
        if (n == e.defer_action() && a != n) {
            CHECK(e.action_mask()[std::size_t(a)] != 0);  // overruled: another valid action
            ++overruled;
        }
        e.step(a);
    }
    MESSAGE("holds kept: " << holds << ", holds overruled: " << overruled);
    CHECK(overruled > 0);  // the network holds where pack_wait does not: the guard has work to do
    // the same network unguarded holds more GPU-hours idle while a job would fit
    raw_env.reset(seed);
    while (!raw_env.done()) raw_env.step(alone.act(raw_env));
    CHECK(gp::idle_while_waiting_gpu_hours(e.finished(), 16) < gp::idle_while_waiting_gpu_hours(raw_env.finished(), 16));
}
