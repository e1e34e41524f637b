// Tests of basic_env::fork() (env.hpp, env/core.hpp): a forked future keeps the present and
// redraws what the scheduler cannot know; a plain copy keeps the true future.

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/policy.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;

namespace {
/// Plays `e` to the end with pack; the return.
double finish(gp::env& e) {
    gp::pack_policy p;
    double r = 0;
    while (!e.done()) r += e.step(p.act(e)).reward;
    return r;
}
}  // namespace

TEST_CASE("fork: a copy replays the true future bit for bit, a fork keeps the present and redraws the future") {
    for (auto info : {gp::duration_info::oracle, gp::duration_info::hidden})
        for (const char* mode : {"gpu", "placement"}) {
            INFO(std::string(gp::to_string(info)), " ", std::string(mode));
            auto s = gp::default_scenario();
            s.durations.mode = info;
            s.env.mode = gp::parse_action_mode(mode);
            gp::env e(s);
            gp::pack_policy p;
            e.reset(3);
            for (int i = 0; i < 60 && !e.done(); ++i) (void)e.step(p.act(e));
            REQUIRE(!e.done());
            const auto arrived = e.simulator().arrived();
            // hindsight: the copy's episode is the original's
            gp::env a = e, b = e;
            CHECK(finish(a) == finish(b));
            CHECK(gp::test::same_bytes(a.observation(), b.observation()));
            // a fork: the present unchanged (time, the arrived jobs, the cluster, the queue, the mask)
            const auto f = e.fork(7);
            CHECK(f.now() == e.now());
            CHECK(f.simulator().arrived() == arrived);
            for (std::uint32_t j = 0; j < arrived; ++j) CHECK(f.simulator().job(j) == e.simulator().job(j));
            CHECK(std::vector<std::uint32_t>(f.queue().begin(), f.queue().end()) == std::vector<std::uint32_t>(e.queue().begin(), e.queue().end()));
            CHECK(gp::test::same_bytes(f.action_mask(), e.action_mask()));
            for (std::size_t g = 0; g < e.num_gpus(); ++g) CHECK(f.cluster().holder(gp::gpu_id(g)) == e.cluster().holder(gp::gpu_id(g)));
            for (std::uint32_t j = arrived; j < f.simulator().jobs().size(); ++j) CHECK(f.simulator().job(j).submit_time > e.now());
            // the same seed, the same future; another seed, another
            gp::env f1 = e.fork(7), f2 = e.fork(7), f3 = e.fork(8);
            const double r1 = finish(f1), r2 = finish(f2), r3 = finish(f3);
            CHECK(r1 == r2);
            CHECK(r1 != r3);
            // the reward identity over the whole forked episode
            double jct = 0;
            for (const auto& rec : f1.finished()) jct += rec.jct();
            CHECK(gp::test::close_rel(f1.episode_return(), -jct / 3600.0, 1e-9));
            CHECK(f1.terminated());
            if (info == gp::duration_info::hidden) {  // the running jobs' durations were redrawn, what they attained kept
                bool redrawn = false;
                for (std::uint32_t j = 0; j < arrived; ++j) {
                    CHECK(f.simulator().attained(j) == e.simulator().attained(j));
                    redrawn = redrawn || f.simulator().ideal_duration(j) != e.simulator().ideal_duration(j);
                }
                CHECK(redrawn);
            }
        }
    CHECK_THROWS_AS((void)gp::env().fork(1), gp::StateError);
}
