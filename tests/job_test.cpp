// Tests of include/gpuplace/job.hpp: the Job concept, and an env over a custom job type.

#include <doctest/doctest.h>

#include <gpuplace/env.hpp>
#include <gpuplace/job.hpp>
#include <gpuplace/policy.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {
/// A job type with an extra field, built from the TrainingJob a workload makes.
struct priority_job {
    gp::job_id id = 0;
    double submit_time = 0;
    std::uint32_t num_gpus = 1;
    gp::model_id model = 0;
    double work = 0;
    int priority = 0;
    priority_job() = default;
    explicit priority_job(const gp::TrainingJob& j)
        : id(j.id), submit_time(j.submit_time), num_gpus(j.num_gpus), model(j.model), work(j.work), priority(int(j.num_gpus)) {}
};
struct not_a_job {
    int id;
};
}  // namespace

static_assert(gp::Job<gp::TrainingJob>);
static_assert(gp::Job<priority_job>);
static_assert(!gp::Job<not_a_job>);

TEST_CASE("job: TrainingJob defaults and equality") {
    gp::TrainingJob a;
    CHECK(a.id == 0);
    CHECK(a.num_gpus == 1);
    CHECK(a.gpu_fraction == 1.0);
    gp::TrainingJob b = a;
    CHECK(a == b);
    b.work = 3;
    CHECK(!(a == b));
}

TEST_CASE("job: an env over a custom job type plays the same episode") {
    const auto s = small_scenario(proximity_drl_topo::config(), {{"1", .5}, {"2", .3}, {"4", .2}}, 15);
    gp::env a(s);
    gp::basic_env<gp::TreeTopology, priority_job, gp::RingAllReduce> b(s);
    a.reset(4);
    b.reset(4);
    gp::detail::rng r(4);
    while (!a.done()) {
        REQUIRE(same_bytes(a.observation(), b.observation()));
        const auto act = random_action(a, r);
        REQUIRE(a.step(act).reward == b.step(act).reward);
        if (b.has_current()) CHECK(b.current_job().priority == int(b.current_job().num_gpus));
    }
    CHECK(b.terminated());
    CHECK(a.episode_return() == b.episode_return());
}
