#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

using namespace gpuplace;

TEST_CASE("evaluate: heuristics by name, with a queue policy") {
    CHECK(heuristic_names() == std::vector<std::string>{"random", "first_fit", "pack", "load_balance", "topology_greedy", "pack_wait"});
    const auto p = heuristic("pack+sjf");
    CHECK(p.name == "pack+sjf");
    CHECK(p.queue == "sjf");
    CHECK(heuristic("first_fit").queue.empty());
    CHECK_THROWS_WITH_AS(heuristic("best"), "unknown policy \"best\" (known: random, first_fit, pack, load_balance, topology_greedy, pack_wait, avoid_failed, coloc_packer)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(heuristic("pack+lifo"),
                         "unknown queue policy \"lifo\" (known: fifo, backfill, sjf, fewest_gpus, las, 2d_las, gittins, capacity, drf, themis, edf, edf_ac, sjf_oracle, "
                         "srtf_oracle, max_min_fairness_perf, max_min_fairness, fifo_perf, finish_time_fairness_perf, "
                         "finish_time_fairness, min_total_duration_perf, min_total_duration, max_sum_throughput_perf, afs_l, greedy_gain, class_gittins)",
                         ConfigError);
    auto s = default_scenario();
    apply_queue(s, "fifo");
    CHECK(s.env.order == queue_order::fifo);
    CHECK_FALSE(s.env.backfill);
    apply_queue(s, "fewest_gpus");
    CHECK(s.env.order == queue_order::fewest_gpus);
    CHECK(s.env.backfill);
}

TEST_CASE("evaluate: results do not depend on the thread count, the queue policy changes them") {
    const auto s = default_scenario();
    std::vector<any_policy<env>> ps = {heuristic("pack"), heuristic("pack+fifo"), heuristic("random+sjf")};
    const auto seeds = held_out_seeds(3);
    const auto a = evaluate(s, ps, seeds, 1);
    const auto b = evaluate(s, ps, seeds, 2);
    CHECK(a.csv() == b.csv());
    CHECK(a.policies[0].get("avg_jct").mean != a.policies[1].get("avg_jct").mean);  // backfill vs strict FIFO
    const auto csv = a.summary_csv();
    CHECK(csv.rfind("policy,seeds,avg_jct_mean,avg_jct_sem,p95_jct_mean,", 0) == 0);
    CHECK(to_json(a)["policies"]["pack+fifo"]["summary"]["avg_jct"]["mean"].get<double>() ==
          a.policies[1].get("avg_jct").mean);
    CHECK(a.table().find("pack+fifo") != std::string::npos);
}

TEST_CASE("evaluate: a Philly-derived trace scenario") {
    const std::string file = "$GPUPLACE_DATA/philly/2869ce.trace";
    auto s = default_scenario();
    s.workload = workload_from_json(
        detail::json{{"kind", "trace"}, {"format", "philly"}, {"path", file}, {"max_jobs", 30}, {"target_load", 1.0}});
    const auto r = evaluate(s, {heuristic("first_fit"), heuristic("pack")}, held_out_seeds(3), 2);
    for (const auto& p : r.policies) {
        CHECK(p.per_seed[0].jobs_done == 30);
        CHECK(p.get("avg_jct").sem == 0);  // a replayed trace and a deterministic policy: same every seed
    }
}

TEST_CASE("evaluate: paired differences against one policy, on the same seeds") {
    eval_report rep;
    rep.scenario = "hand-made";
    rep.seeds = {1, 2, 3, 4};
    auto with_jct = [](std::string name, std::vector<double> jct) {
        policy_eval p{std::move(name), {}, std::vector<double>(jct.size())};
        for (double x : jct) {
            metrics m;
            m.avg_jct = x;
            m.avg_comm_cost = x / 100;
            p.per_seed.push_back(m);
        }
        return p;
    };
    // the seeds differ a lot (a heavy seed is heavy for everyone); "a" is 10 s better on 3 of 4
    rep.policies = {with_jct("a", {1000, 2000, 5000, 9010}), with_jct("b", {1010, 2010, 5010, 9000}),
                    with_jct("c", {1000, 2000, 5000, 9010})};
    const auto ps = rep.paired("a");
    REQUIRE(ps.size() == 2);
    CHECK(ps[0].other == "b");
    CHECK(ps[0].diff.mean == doctest::Approx(-5.0));                            // (-10 -10 -10 +10) / 4
    CHECK(ps[0].diff.sem == doctest::Approx(5.0));  // sample sd sqrt(300 / 3) = 10, over sqrt(4)
    CHECK(ps[0].lower == 3);
    CHECK(ps[0].seeds == 4);
    CHECK(ps[1].other == "c");
    CHECK(ps[1].diff.mean == 0.0);
    CHECK(ps[1].diff.sem == 0.0);
    CHECK(ps[1].lower == 0);
    CHECK(rep.paired("a", "avg_comm_cost")[0].diff.mean == doctest::Approx(-0.05));
    const auto t = rep.paired_table("a");
    CHECK(t.find("avg_jct (h), a minus the other") != std::string::npos);
    CHECK(t.find("b                      -0.001 +- 0.001   a lower on 3 of 4 seeds") != std::string::npos);
    CHECK(rep.paired_table("a", "avg_comm_cost").find("avg_comm_cost, a minus the other") != std::string::npos);
    CHECK(is_time_metric("makespan"));
    CHECK_FALSE(is_time_metric("avg_slowdown"));
    CHECK_THROWS_WITH_AS((void)rep.paired("ppo"), "eval_report: no policy \"ppo\" (evaluated: a, b, c)", Error);
    CHECK_THROWS_WITH_AS((void)rep.paired("a", "speed"), "unknown metric \"speed\"", Error);
}

TEST_CASE("evaluate: preemptive queue policies add the preemption metrics to the table, JSON and metric_value") {
    auto s = preset_scenario("philly_hidden:e13805");
    s.workload.episode_jobs = 60;
    const auto rep = evaluate(s, {heuristic<env>("pack+fifo"), heuristic<env>("pack+las")}, held_out_seeds(3), 1);
    const auto& las = rep.policies[1];
    double preemptions = 0;
    for (const auto& m : las.per_seed) preemptions += m.avg_preemptions;
    REQUIRE(preemptions > 0);  // LAS suspends the long jobs for newcomers on this trace
    for (const auto& n : preemption_metric_names()) {
        CHECK(rep.table().find(n) != std::string::npos);
        CHECK(las.get(n).mean == doctest::Approx(las.get(n).mean));  // every name is a metric
    }
    CHECK(metric_value(las.per_seed[0], "avg_preemptions") == las.per_seed[0].avg_preemptions);
    CHECK(metric_value(las.per_seed[0], "max_fairness") == las.per_seed[0].max_fairness);
    CHECK(to_json(rep)["policies"]["pack+las"]["per_seed"][0]["lost_gpu_hours"].get<double>() == las.per_seed[0].lost_gpu_hours);
    CHECK_FALSE(is_time_metric("avg_preemptions"));
    CHECK(is_time_metric("p99_queueing_delay"));
    // without preemption the table keeps its columns
    const auto fifo = evaluate(s, {heuristic<env>("pack+fifo")}, held_out_seeds(1), 1);
    CHECK(fifo.table().find("avg_preemptions") == std::string::npos);
}
