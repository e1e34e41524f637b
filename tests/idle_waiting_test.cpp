#include <doctest/doctest.h>

#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/idle_waiting.hpp>

using namespace gpuplace;

namespace {
job_record run(std::uint32_t id, std::uint32_t k, double submit, double start, double end) {
    job_record r;
    r.id = id;
    r.num_gpus = k;
    r.submit = submit;
    r.start = start;
    r.end = end;
    return r;
}

/// One episode of the scenario `s` under the named heuristic: the finished jobs' records.
std::vector<job_record> records(scenario s, const std::string& policy, std::uint64_t seed) {
    const auto p = heuristic(policy);
    apply_queue(s, p.queue);
    env e(s);
    auto act = p.make(seed);
    e.reset(seed);
    while (!e.done()) e.step(act(e));
    return {e.finished().begin(), e.finished().end()};
}
}  // namespace

TEST_CASE("idle_waiting: a hand-checked schedule") {
    // 8 GPUs. A (8 GPUs) runs 0-100 while B (4) waits: nothing is idle. B runs 100-300; C (2),
    // submitted at 100, waits until 200 while 4 GPUs are idle: 2 GPUs x 100 s held. D (8, from
    // 150) never fits beside B, so it is not held; after C starts, 2 idle GPUs fit nobody.
    const std::vector<job_record> v = {run(0, 8, 0, 0, 100), run(1, 4, 0, 100, 300), run(2, 2, 100, 200, 260), run(3, 8, 150, 300, 400)};
    CHECK(idle_while_waiting_gpu_hours(v, 8) == doctest::Approx(200.0 / 3600.0).epsilon(1e-12));
    // the same with C started on submission: work-conserving, nothing held
    auto w = v;
    w[2].start = 100;
    w[2].end = 160;
    CHECK(idle_while_waiting_gpu_hours(w, 8) == 0.0);
    // smallest request first: two 1-GPU jobs and a 4-GPU job wait on 5 idle GPUs for 10 s; the
    // 1-GPU ones are taken first and the 4-GPU one no longer fits: 2 GPUs x 10 s
    const std::vector<job_record> u = {run(0, 3, 0, 0, 10), run(1, 1, 0, 10, 20), run(2, 1, 0, 10, 20), run(3, 4, 0, 10, 20)};
    CHECK(idle_while_waiting_gpu_hours(u, 8) == doctest::Approx(2.0 * 10 / 3600.0).epsilon(1e-12));
    CHECK(idle_while_waiting_gpu_hours(std::vector<job_record>{}, 8) == 0.0);
}

TEST_CASE("idle_waiting: a preempted job's record is refused, naming it") {
    auto r = run(7, 2, 0, 0, 10);
    r.preemptions = 1;
    const std::vector<job_record> v = {r};
    CHECK_THROWS_WITH_AS((void)idle_while_waiting_gpu_hours(v, 8),
                         "idle_while_waiting_gpu_hours: job 7 was preempted; its record does not give its runs (an episode without "
                         "preemption, failures or co-location is needed)",
                         Error);
}

TEST_CASE("idle_waiting: pack+sjf holds nothing on the default scenario, pack_wait+sjf holds GPUs") {
    const auto s = default_scenario();
    double pack = 0, wait = 0;
    for (std::uint64_t seed : {1000000ULL, 1000001ULL, 1000002ULL}) {
        pack += idle_while_waiting_gpu_hours(records(s, "pack+sjf", seed), 64);
        wait += idle_while_waiting_gpu_hours(records(s, "pack_wait+sjf", seed), 64);
    }
    CHECK(pack == 0.0);  // one GPU type, backfill, no DEFER: a job that fits starts
    CHECK(wait > 0.0);   // waits for a compact placement
}
