// Tests of include/gpuplace/env/room_index.hpp: has_room() and interference_on() on a
// hand-made co-location example, and the room classes: grouping, and sync() against has_room()
// after every change (replaying the cluster's change log, or rescanning when it was cleared).

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <gpuplace/env/room_index.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

/// 4 GPUs shared by up to 2 jobs; model 0 slows to 0.5 next to itself and 0.8 next to model 1;
/// model 1 cannot sit next to model 0.
struct room_fixture {
    gp::TreeTopology topo = tiny_topo::make();
    gp::simulator sim;
    std::vector<gp::TrainingJob> jobs;
    std::vector<double> memory = {10, 10, 10, 20, 10, 10};
    static constexpr double cap = 32;

    room_fixture() {
        auto t = std::make_shared<gp::interference_table>(2);
        t->set(0, 0, 0.5);
        t->set(0, 1, 0.8);
        t->set(1, 0, 0.0);
        t->set(1, 1, 0.9);
        sim.set_colocation(t, 2);
        sim.resize(topo);
        for (gp::model_id m : {0, 0, 1, 1, 0, 1}) {
            gp::TrainingJob j;
            j.id = static_cast<gp::job_id>(jobs.size());
            j.model = m;
            j.work = 1;
            jobs.push_back(j);
        }
        sim.reset(jobs, std::vector<double>(jobs.size(), 100.0), memory);
        (void)sim.advance();  // every job arrives at time 0
    }
};

}  // namespace

TEST_CASE("room_index: has_room and interference_on") {
    room_fixture f;
    CHECK(gp::env_detail::has_room(f.sim, 0, 0, f.cap));  // free
    CHECK(gp::env_detail::interference_on(f.sim, 0, 0) == 1.0);
    const std::vector<gp::gpu_id> g0 = {0};
    f.sim.start(0, g0, 1.0, 0.0);
    CHECK(gp::env_detail::has_room(f.sim, 0, 1, f.cap));    // model 0 next to model 0
    CHECK(gp::env_detail::interference_on(f.sim, 0, 1) == 0.5);
    CHECK(!gp::env_detail::has_room(f.sim, 0, 2, f.cap));   // model 1 cannot sit next to model 0
    CHECK(!gp::env_detail::has_room(f.sim, 0, 1, 15.0));    // 10 + 10 GB > 15 GB
    f.sim.start(1, g0, 1.0, 0.0);
    CHECK(!gp::env_detail::has_room(f.sim, 0, 4, f.cap));   // two jobs already
}

TEST_CASE("room_index: classes, and sync() agrees with has_room() after every change") {
    room_fixture f;
    gp::env_detail::room_index idx;
    idx.reserve(4, f.topo.num_gpus());
    idx.build(f.sim);
    CHECK(idx.class_of(0) == idx.class_of(1));
    CHECK(idx.class_of(0) == idx.class_of(4));
    CHECK(idx.class_of(2) == idx.class_of(5));
    CHECK(idx.class_of(3) != idx.class_of(2));  // more memory
    CHECK(idx.class_of(0) != idx.class_of(2));
    auto check_all = [&] {
        for (std::uint32_t j = 0; j < f.jobs.size(); ++j) {
            const auto c = idx.class_of(j);
            const auto n = idx.sync(c, f.sim, f.cap);
            std::uint32_t want = 0;
            for (gp::gpu_id g = 0; g < 4; ++g) {
                const bool r = gp::env_detail::has_room(f.sim, g, j, f.cap);
                want += r;
                CHECK(idx.room(c)[g] == r);
            }
            CHECK(n == want);
        }
    };
    check_all();
    const std::vector<gp::gpu_id> a = {0}, b = {1, 2}, c = {0, 3};
    f.sim.start(0, a, 1.0, 0.0);
    check_all();  // replays GPU 0's change
    f.sim.start(2, b, 1.0, 0.0);
    f.sim.start(1, c, 1.0, 0.0);
    check_all();
    (void)f.sim.advance();  // completions free GPUs
    check_all();
}
