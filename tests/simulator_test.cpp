// Tests of include/gpuplace/simulator.hpp: event order, completions before arrivals, the integral
// of jobs in system, busy GPU time and job records, on a hand-computed example.

#include <doctest/doctest.h>

#include <span>
#include <vector>

#include <gpuplace/simulator.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {
gp::TrainingJob sim_job(gp::job_id id, double submit, std::uint32_t gpus) {
    gp::TrainingJob j;
    j.id = id;
    j.submit_time = submit;
    j.num_gpus = gpus;
    j.work = 1;
    return j;
}
}  // namespace

TEST_CASE("simulator: a hand-computed episode") {
    const auto t = tiny_topo::make();  // 4 GPUs
    gp::simulator sim;
    sim.resize(t);
    const std::vector<gp::TrainingJob> jobs = {sim_job(0, 0, 2), sim_job(1, 10, 1), sim_job(2, 10, 4)};
    const std::vector<double> ideal = {100, 50, 30};
    sim.reset(jobs, ideal);
    CHECK(sim.now() == 0.0);
    CHECK(sim.has_events());
    CHECK(sim.next_event_time() == 0.0);
    CHECK(sim.ideal_duration(1) == 50.0);

    std::vector<std::uint32_t> arrivals;
    auto advance = [&] {  // what happened: the arrivals in order, and the integral of jobs in system
        const auto ev = sim.advance();
        for (std::uint32_t j = ev.first_arrival; j < ev.first_arrival + ev.arrivals; ++j) arrivals.push_back(j);
        return ev.area;
    };
    double area = advance();
    CHECK(area == 0.0);
    CHECK(arrivals == std::vector<std::uint32_t>{0});
    CHECK(sim.in_system() == 1);
    CHECK(sim.arrived() == 1);

    const std::vector<gp::gpu_id> g0 = {0, 1};
    sim.start(0, g0, 1.5, 0.25);  // ends at 150
    CHECK(sim.running() == 1);
    CHECK(sim.cluster().holder(1) == 0);
    CHECK(sim.cluster().end_time(0) == 150.0);
    CHECK(sim.next_event_time() == 10.0);

    area += advance();  // both arrivals at t = 10
    CHECK(sim.now() == 10.0);
    CHECK(arrivals == std::vector<std::uint32_t>{0, 1, 2});
    CHECK(area == 10.0);
    CHECK(sim.in_system() == 3);

    const std::vector<gp::gpu_id> g1 = {2};
    sim.start(1, g1, 1.0, 0.0);  // ends at 60
    CHECK(sim.next_event_time() == 60.0);
    area += advance();
    CHECK(area == 10.0 + 3 * 50.0);
    REQUIRE(sim.finished().size() == 1);
    const auto r1 = sim.finished()[0];
    CHECK(r1.id == 1);
    CHECK(r1.submit == 10.0);
    CHECK(r1.start == 10.0);
    CHECK(r1.end == 60.0);
    CHECK(r1.jct() == 50.0);
    CHECK(r1.queueing_delay() == 0.0);
    CHECK(sim.cluster().is_free(2));

    area += advance();  // job 0 ends at 150
    CHECK(sim.now() == 150.0);
    CHECK(area == 10.0 + 150.0 + 2 * 90.0);
    const std::vector<gp::gpu_id> g2 = {0, 1, 2, 3};
    sim.start(2, g2, 1.0, 0.5);  // ends at 180
    area += advance();
    CHECK(sim.all_done());
    CHECK(!sim.has_events());
    CHECK(sim.next_event_time() == gp::simulator::never);
    CHECK(sim.in_system() == 0);
    // the integral of jobs in system is the sum of JCTs: 150 + 50 + 170
    CHECK(area == 370.0);
    double jcts = 0;
    for (const auto& r : sim.finished()) jcts += r.jct();
    CHECK(jcts == 370.0);
    // busy GPU time: 2 GPUs for 150 s, 1 for 50 s, 4 for 30 s
    CHECK(sim.busy_gpu_time() == 470.0);
    // placements, in start order
    CHECK(std::vector<gp::gpu_id>(sim.placements().begin(), sim.placements().end()) ==
          std::vector<gp::gpu_id>{0, 1, 2, 0, 1, 2, 3});
    const auto r0 = sim.finished()[1];
    CHECK(r0.id == 0);
    CHECK(r0.slowdown == 1.5);
    CHECK(r0.comm_cost == 0.25);
    CHECK(r0.ideal_duration == 100.0);
    CHECK(std::vector<gp::gpu_id>(sim.gpus_of(r0).begin(), sim.gpus_of(r0).end()) == g0);
    CHECK(std::vector<gp::gpu_id>(sim.gpus_of(sim.finished()[2]).begin(), sim.gpus_of(sim.finished()[2]).end()) == g2);

    std::vector<double> scratch;
    const auto m = sim.compute(scratch);
    CHECK(m.jobs_done == 3);
    CHECK(m.avg_jct == doctest::Approx(370.0 / 3));
    CHECK(m.makespan == 180.0);
    CHECK(m.utilization == doctest::Approx(470.0 / (4 * 180.0)));
    CHECK(m.total_comm_cost == 0.75);

    // a reset starts over with the same buffers
    sim.reset(jobs, ideal);
    CHECK(sim.now() == 0.0);
    CHECK(sim.finished().empty());
    CHECK(sim.placements().empty());
    CHECK(sim.cluster().free_gpus() == 4);
    CHECK(sim.busy_gpu_time() == 0.0);
}

TEST_CASE("simulator: completions at the same time, and before arrivals due then") {
    const auto t = tiny_topo::make();
    gp::simulator sim;
    sim.resize(t);
    const std::vector<gp::TrainingJob> jobs = {sim_job(0, 0, 1), sim_job(1, 0, 1), sim_job(2, 40, 4)};
    const std::vector<double> ideal = {40, 40, 10};
    sim.reset(jobs, ideal);
    std::size_t free_at_arrival = 0;
    auto advance = [&] {  // arrivals are reported once the completions due with them are processed
        if (sim.advance().arrivals > 0) free_at_arrival = sim.cluster().free_gpus();
    };
    advance();
    const std::vector<gp::gpu_id> a = {3}, b = {1};
    sim.start(1, a, 1.0, 0);
    sim.start(0, b, 1.0, 0);
    advance();
    CHECK(sim.now() == 40.0);
    // both completions are processed, by job index, before the arrival sees the cluster
    REQUIRE(sim.finished().size() == 2);
    CHECK(sim.finished()[0].id == 0);
    CHECK(sim.finished()[1].id == 1);
    CHECK(free_at_arrival == 4);
}

TEST_CASE("simulator: a workload that starts late begins at time 0") {
    const auto t = tiny_topo::make();
    gp::simulator sim;
    sim.resize(t);
    const std::vector<gp::TrainingJob> jobs = {sim_job(0, 500, 1)};
    const std::vector<double> ideal = {10};
    sim.reset(jobs, ideal);
    CHECK(sim.now() == 0.0);
    const double area = sim.advance().area;
    CHECK(area == 0.0);  // nobody was in the system before the first arrival
    CHECK(sim.now() == 500.0);
}

TEST_CASE("simulator: advance() says what happened") {
    const auto t = tiny_topo::make();
    gp::simulator sim;
    sim.resize(t);
    const std::vector<gp::TrainingJob> jobs = {sim_job(0, 100, 1), sim_job(1, 100, 2), sim_job(2, 130, 1)};
    // the job list from its source, with the ideal durations computed per job
    sim.reset(std::span<const gp::TrainingJob>(jobs), [](const gp::TrainingJob& j) { return 10.0 * j.num_gpus; },
              [](const gp::TrainingJob&) { return 0.0; });
    CHECK(sim.ideal_duration(1) == 20.0);
    auto ev = sim.advance();  // the first arrivals: time before them counts for no job
    CHECK(sim.now() == 100.0);
    CHECK(ev.elapsed == 100.0);
    CHECK(ev.area == 0.0);
    CHECK(!ev.in_makespan);
    CHECK(ev.finished.empty());
    CHECK(ev.first_arrival == 0);
    CHECK(ev.arrivals == 2);
    const std::vector<gp::gpu_id> a = {0}, b = {2, 3};
    sim.start(0, a, 1.0, 0);  // ends at 110
    sim.start(1, b, 1.0, 0);  // ends at 120
    ev = sim.advance();
    CHECK(ev.elapsed == 10.0);
    CHECK(ev.area == 20.0);
    CHECK(ev.in_makespan);
    REQUIRE(ev.finished.size() == 1);
    CHECK(ev.finished[0].id == 0);
    CHECK(ev.arrivals == 0);
    ev = sim.advance();
    REQUIRE(ev.finished.size() == 1);
    CHECK(ev.finished[0].id == 1);
    CHECK(std::vector<gp::gpu_id>(sim.gpus_of(ev.finished[0]).begin(), sim.gpus_of(ev.finished[0]).end()) == b);
    ev = sim.advance();
    CHECK(sim.now() == 130.0);
    CHECK(ev.first_arrival == 2);
    CHECK(ev.arrivals == 1);
    CHECK(ev.area == 0.0);  // nobody waited between 120 and 130
}
