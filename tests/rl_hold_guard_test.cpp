// Tests of include/gpuplace/rl/hold_guard.hpp: a network that holds a job only where a heuristic would,
// or only on clusters of at least a number of GPUs, and places a job elsewhere than pack only by a
// margin; and of their names in the benchmark (src/bench/policy.hpp).

#include <doctest/doctest.h>

#include <initializer_list>
#include <limits>
#include <memory>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/idle_waiting.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/rl/hold_guard.hpp>
#include <gpuplace/rl/rl.hpp>

#include "bench/policy.hpp"

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

TEST_CASE("hold_from: no DEFER on a smaller cluster while another action is valid, the network itself on a large enough one") {
    auto ck = gp::rl::load_model("default");
    const auto net = std::make_shared<const gp::rl::actor_critic>(std::move(ck.network));
    auto s = gp::default_scenario();
    s.topology = gp::topology_config::of("dgx_a100", 1, 2);  // 16 GPUs
    s.workload.synthetic.num_jobs = 40;
    gp::apply_queue(s, ck.queue);
    const std::uint64_t seed = 1000000;
    // holds from 64 GPUs: on 16 it never holds a job that fits, so no GPU is idle while a job would fit
    auto never = gp::rl::hold_from<gp::env>("from64", net, 64).make(seed);
    gp::rl::network_policy alone(net);
    gp::env e(s);
    e.reset(seed);
    std::size_t overruled = 0;
    while (!e.done()) {
        const auto a = never(e), n = alone.act(e);
        const auto m = e.action_mask();
        std::size_t valid = 0;
        for (const auto v : m) valid += v != 0;
        if (a == e.defer_action()) CHECK(valid == 1);  // DEFER only when nothing else is valid
        if (n != e.defer_action()) CHECK(a == n);       // where the network places, it places as the network does
        overruled += a != n;
        e.step(a);
    }
    CHECK(overruled > 0);  // this network holds on 16 GPUs (the test above)
    CHECK(gp::idle_while_waiting_gpu_hours(e.finished(), 16) == 0.0);
    // holds from 16 GPUs: on 16 it is the network, action for action
    auto from16 = gp::rl::hold_from<gp::env>("from16", net, 16).make(seed);
    gp::env f(s);
    f.reset(seed);
    while (!f.done()) {
        const auto a = from16(f);
        CHECK(a == alone.act(f));
        f.step(a);
    }
}

namespace {
/// `spec` names a model in the benchmark, acting under sjf; `prefix` followed by each of `bad` is a
/// ConfigError saying that the guard `rule` (e.g. "@hold_from: takes ...") was not met, and by what.
void check_model_spec(const std::string& spec, const std::string& prefix, std::initializer_list<std::string> bad, const std::string& rule) {
    namespace bench = gp::bench;
    CHECK(bench::is_model_name(spec));
    const auto p = bench::policy_named(spec);
    CHECK(p.ref.name == spec);
    CHECK(p.ref.kind == "model");
    CHECK(p.policy.queue == "sjf");  // the queue policy the model was trained under
    for (const auto& b : bad) {
        CAPTURE(b);
        try {
            (void)bench::policy_named(prefix + b);
            FAIL("no error");
        } catch (const gp::ConfigError& err) {
            CHECK(std::string(err.what()) == "policy \"" + prefix + b + "\": " + rule + ", got \"" + b + "\"");
        }
    }
}
}  // namespace

TEST_CASE("benchmark names of guarded models: <model>@hold:<heuristic> and <model>@hold_from:<gpus>") {
    CHECK(gp::bench::is_model_name("default@hold:pack_wait"));
    CHECK_FALSE(gp::bench::is_model_name("pack@hold_from:64"));
    check_model_spec("default@hold_from:64", "default@hold_from:", {"0", "", "64x", "-1", "sixty"},
                     "@hold_from: takes a number of GPUs from 1 up");
}

namespace {
/// The default workload on `nodes` DGX-A100 nodes in the placement action mode, DEFER allowed,
/// under the queue policy of the shipped network `ck` (as experiments/idle_waiting.py runs it).
gp::scenario placement_scenario(const gp::rl::checkpoint& ck, std::size_t racks, std::size_t nodes) {
    auto s = gp::default_scenario();
    s.topology = gp::topology_config::of("dgx_a100", racks, nodes);
    s.workload.synthetic.num_jobs = 8 * racks * nodes * 5 / 2;
    s.env.allow_defer = true;
    s.env.mode = gp::action_mode::placement;
    gp::apply_queue(s, ck.queue);
    return s;
}
}  // namespace

TEST_CASE("place margin: the network's placement where its logit beats pack's by more than the margin, pack's otherwise") {
    auto ck = gp::rl::load_model("philly_distilled");  // a placement-mode network with DEFER
    const auto net = std::make_shared<const gp::rl::actor_critic>(std::move(ck.network));
    const auto s = placement_scenario(ck, 4, 8);  // 256 GPUs, where it departs from pack 16 times in this episode
    const std::uint64_t seed = 2000001;
    for (const double margin : {0.0, 1.0}) {
        CAPTURE(margin);
        auto act = gp::rl::with_place_margin<gp::env>("m", net, {gp::named_policy<gp::env>("pack"), margin}).make(seed);
        auto pack = gp::named_policy<gp::env>("pack").make(seed);
        gp::rl::network_policy alone(net);
        gp::env e(s);
        e.reset(seed);
        std::size_t kept = 0, packed = 0;
        while (!e.done()) {
            const auto a = act(e), n = alone.act(e);
            if (n == e.defer_action()) {
                CHECK(a == n);  // holds are the network's
            } else {
                const auto b = pack(e);
                REQUIRE(e.action_mask()[std::size_t(b)] != 0);
                if (b == n) {
                    CHECK(a == n);
                } else {
                    const double lead = double(alone.logit(n)) - double(alone.logit(b));
                    CHECK(lead >= 0);  // n is the argmax
                    CHECK(a == (lead > margin ? n : b));
                    ++(a == n ? kept : packed);
                }
            }
            e.step(a);
        }
        MESSAGE("margin " << margin << ": departures from pack kept " << kept << ", overruled " << packed);
        if (margin == 0) CHECK(kept > 0);  // the network departs from pack: the rule has work to do
        else CHECK(packed > 0);            // by less than a logit somewhere
    }
}

TEST_CASE("place margin: an infinite margin places as pack, holds as the network, and a bad margin is a ConfigError") {
    auto ck = gp::rl::load_model("philly_distilled");
    const auto net = std::make_shared<const gp::rl::actor_critic>(std::move(ck.network));
    const auto s = placement_scenario(ck, 2, 4);
    const std::uint64_t seed = 2000001;
    auto act = gp::rl::with_place_margin<gp::env>("inf", net, {gp::named_policy<gp::env>("pack"), std::numeric_limits<double>::infinity()}).make(seed);
    auto pack = gp::named_policy<gp::env>("pack").make(seed);
    gp::rl::network_policy alone(net);
    gp::env e(s);
    e.reset(seed);
    std::size_t holds = 0;
    while (!e.done()) {
        const auto a = act(e), n = alone.act(e);
        if (n == e.defer_action()) {
            CHECK(a == n);
            ++holds;
        } else {
            CHECK(a == pack(e));
        }
        e.step(a);
    }
    CHECK(holds > 0);
    for (const double bad : {-0.5, std::numeric_limits<double>::quiet_NaN()}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS((void)gp::rl::with_place_margin<gp::env>("bad", net, {gp::named_policy<gp::env>("pack"), bad}),
                             doctest::Contains("place margin: a number of logits from 0 up, got "), gp::ConfigError);
    }
}

TEST_CASE("benchmark names of models with a placement margin: <model>[@hold...]@place:<heuristic>:<margin>") {
    CHECK(gp::bench::is_model_name("philly_distilled@place:pack:0.5"));
    CHECK_FALSE(gp::bench::is_model_name("pack@place:pack:1"));
    check_model_spec("philly_distilled@hold_from:24@place:pack:1", "philly_distilled@hold_from:24@place:",
                     {"pack", "pack:", "pack:-1", "pack:one", ":1", "pack:1x", "pack:nan", "pack,1"},
                     "@place: takes <heuristic>:<margin> (a number of logits from 0 up)");
    CHECK_THROWS_AS((void)gp::bench::policy_named("philly_distilled@place:nosuch:1"), gp::ConfigError);  // the registry names the known ones
}
