#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gpuplace/json.hpp>

#include "bench/result.hpp"
#include "bench/run.hpp"
#include "bench/track.hpp"

using namespace gpuplace;

namespace bench_test {

/// The cheapest track (32 GPUs, 30 jobs per episode).
const bench::track& small() { return bench::find_track("proximity_drl"); }

/// A result's JSON text without its timing (what validate() compares).
std::string without_timing(const bench::run_result& r) { return bench::to_json(r, false).dump(); }

/// A result's JSON with one edit.
json edited(const bench::run_result& r, const std::string& pointer, const json& value) {
    auto j = parse_json(bench::result_text(r), "result");
    j[json::json_pointer(pointer)] = value;
    return j;
}

}  // namespace bench_test

TEST_CASE("bench: the v1 tracks: unique names, scenarios that build, a best heuristic among their variants") {
    std::set<std::string> names;
    for (const auto& t : bench::tracks("v1")) {
        CAPTURE(t.name);
        CHECK(names.insert(t.name).second);
        CHECK(t.version == "v1");
        CHECK(t.episodes > 0);
        CHECK(t.first_seed == 1'000'000);
        const auto s = bench::track_scenario(t);
        CHECK(s.name == t.name);
        const auto variants = heuristic_variants(s);
        CHECK(std::find(variants.begin(), variants.end(), t.best_heuristic) != variants.end());
    }
    for (const auto* n : {"default", "proximity_drl", "heterogeneous", "colocation", "cluster-16", "cluster-256", "cluster-1024",
                          "load-0.5", "load-2.0", "philly-0e4a51", "philly_hidden-e13805"})
        CHECK(names.count(n) == 1);
    CHECK(bench::track_scenario(bench::find_track("cluster-1024")).topology.racks == 8);
    CHECK(bench::track_scenario(bench::find_track("load-1.5")).workload.synthetic.load == 1.5);
    CHECK(bench::track_scenario(bench::find_track("philly_hidden-0e4a51")).durations.mode == duration_info::hidden);
    CHECK_THROWS_WITH_AS((void)bench::find_track("nope"),
                         doctest::Contains("unknown benchmark track \"nope\" (v1 tracks: default, proximity_drl, "), ConfigError);
    CHECK_THROWS_WITH_AS((void)bench::tracks("v0"), "benchmark version \"v0\": unknown (known: v1)", ConfigError);
}

TEST_CASE("bench: action hashes and the actions' text") {
    CHECK(bench::hex64(bench::actions_hash({})) == "cbf29ce484222325");  // FNV-1a 64 of no bytes
    CHECK(bench::actions_hash({1, 2}) != bench::actions_hash({2, 1}));
    const std::vector<std::int64_t> a = {0, 17, 3, 64, 1023};
    CHECK(bench::actions_text(a) == "0 17 3 64 1023");
    CHECK(bench::parse_actions(bench::actions_text(a), "a") == a);
    CHECK(bench::parse_actions("", "a").empty());
    CHECK_THROWS_WITH_AS((void)bench::parse_actions("1 x 2", "episode 3 actions"),
                         "episode 3 actions: \"x\" is not an action (a whole number >= 0)", ConfigError);
    CHECK(bench::result_file_name("default", "fastest_type:pack+sjf") == "default__fastest_type_pack+sjf.json");
}

TEST_CASE("bench: a run is deterministic whatever the thread count, and its JSON round-trips") {
    const auto& t = bench_test::small();
    bench::run_options one, three;
    one.threads = 1;
    three.threads = 3;
    const auto a = bench::run(t, "first_fit+fifo", one), b = bench::run(t, "first_fit+fifo", three);
    CHECK(bench_test::without_timing(a) == bench_test::without_timing(b));
    REQUIRE(a.episodes.size() == t.episodes);
    CHECK(a.best.size() == t.episodes);
    CHECK(a.episodes[0].seed == 1'000'000);
    CHECK(a.decisions() > 0);
    // the text reads back to the same JSON and prints the same text
    const auto text = bench::result_text(a);
    const auto j = parse_json(text, "result");
    CHECK(j == bench::to_json(a));
    CHECK(text.find("\n  {\"actions\":") != std::string::npos);  // an episode a line
    CHECK(j.at("track") == bench::to_json(t));
    CHECK(j.at("policy").at("kind") == "heuristic");
    CHECK(j.at("vs_best_heuristic").at("policy") == t.best_heuristic);
    CHECK(j.at("episodes").size() == t.episodes);
    const auto& e0 = j.at("episodes").at(0);
    CHECK(e0.at("metrics").at("avg_jct").get<double>() == a.episodes[0].m.avg_jct);  // bit for bit
    CHECK(bench::parse_actions(e0.at("actions").get<std::string>(), "e0") == a.episodes[0].actions);
    CHECK(e0.at("actions_fnv1a64") == bench::hex64(bench::actions_hash(a.episodes[0].actions)));
    CHECK(e0.at("steps") == a.episodes[0].actions.size());
    const auto s = a.summary(&metrics::avg_jct);
    CHECK(j.at("summary").at("avg_jct").at("mean").get<double>() == s.mean);
    CHECK(j.at("timing").at("decisions") == a.decisions());
    CHECK_FALSE(bench::to_json(a, false).contains("timing"));
    // hash only
    bench::run_options h;
    h.keep_actions = false;
    const auto c = bench::to_json(bench::run(t, "first_fit+fifo", h));
    CHECK_FALSE(c.at("episodes").at(0).contains("actions"));
    CHECK(c.at("episodes").at(0).at("actions_fnv1a64") == e0.at("actions_fnv1a64"));
}

TEST_CASE("bench: the best heuristic against itself, a policy's actions scored again give the same result") {
    const auto& t = bench_test::small();
    const auto best = bench::run(t, t.best_heuristic);
    CHECK(best.versus_best(&metrics::avg_jct).diff.mean == 0);
    const auto r = bench::run(t, "load_balance+fifo");
    std::vector<std::vector<std::int64_t>> actions;
    for (const auto& e : r.episodes) actions.push_back(e.actions);
    auto replayed = bench::score_actions(t, {"load_balance+fifo", "heuristic", "fifo", {}}, actions, 0);
    CHECK(bench_test::without_timing(replayed) == bench_test::without_timing(r));
    actions[1].pop_back();
    CHECK_THROWS_WITH_AS((void)bench::score_actions(t, {"x", "python", "fifo", {}}, actions, 0),
                         doctest::Contains("seed 1000001: the"), Error);
    actions.pop_back();
    CHECK_THROWS_WITH_AS((void)bench::score_actions(t, {"x", "python", "fifo", {}}, actions, 0),
                         doctest::Contains("track proximity_drl has 50 episodes, given 49 action sequences"), ConfigError);
}

TEST_CASE("bench: validate accepts a fresh result and names what was edited") {
    const auto& t = bench_test::small();
    const auto r = bench::run(t, "pack+fifo");
    const auto fresh = bench::validate(parse_json(bench::result_text(r), "result"));
    CHECK(fresh.valid);
    CHECK(fresh.how == "re-run");
    CHECK(fresh.message == "50 episodes re-run, every metric equal bit for bit");

    SUBCASE("one metric of one episode") {
        const double jct = r.episodes[4].m.avg_jct;
        const auto v = bench::validate(bench_test::edited(r, "/episodes/4/metrics/avg_jct", jct * (1 + 1e-15)));
        CHECK_FALSE(v.valid);
        CHECK(v.message.find("at /episodes/4/metrics/avg_jct") != std::string::npos);
    }
    SUBCASE("the summary") {
        const auto v = bench::validate(bench_test::edited(r, "/summary/p95_jct/mean", 1.0));
        CHECK_FALSE(v.valid);
        CHECK(v.message.find("/summary/p95_jct/mean") != std::string::npos);
    }
    SUBCASE("the actions: a heuristic is re-run, a Python policy's actions are replayed") {
        auto acts = r.episodes[2].actions;
        std::swap(acts[0], acts[1]);  // the same placement, picked in another order: only the hash tells
        auto j = bench_test::edited(r, "/episodes/2/actions", bench::actions_text(acts));
        auto v = bench::validate(j);
        CHECK_FALSE(v.valid);
        CHECK(v.how == "re-run");
        CHECK(v.message.find("differs from its reproduction (re-run) at /episodes/2/actions from action 0 on: result ") != std::string::npos);
        CHECK(v.message.find("at /episodes/2/actions") != std::string::npos);
        j["policy"]["kind"] = "python";
        v = bench::validate(j);
        CHECK_FALSE(v.valid);
        CHECK(v.how == "replayed");  // another placement (an action the mask refuses later) or another hash
        CHECK(v.message.find("seed 1000002") != std::string::npos);
        // an action the mask refuses
        acts = r.episodes[2].actions;
        acts[0] = 100000;
        j = bench_test::edited(r, "/episodes/2/actions", bench::actions_text(acts));
        j["policy"]["kind"] = "python";
        v = bench::validate(j);
        CHECK_FALSE(v.valid);
        CHECK(v.message.find("seed 1000002, step 0: action 100000 is not valid there") != std::string::npos);
    }
    SUBCASE("a Python policy's result replays") {
        auto j = parse_json(bench::result_text(r), "result");
        j["policy"]["kind"] = "python";
        const auto v = bench::validate(j);
        CHECK(v.valid);
        CHECK(v.how == "replayed");
        CHECK(v.message == "50 episodes replayed, every metric equal bit for bit");
        j["actions_kept"] = false;
        CHECK(bench::validate(j).message.find("cannot be re-run here and the result lists no actions") != std::string::npos);
    }
    SUBCASE("a model whose re-run takes other actions (another CPU variant's rounding) is checked by replaying") {
        auto j = parse_json(bench::result_text(r), "result");
        j["policy"]["kind"] = "model";
        const bench::policy_resolver other = [](const bench::policy_ref&) -> std::optional<any_policy<env>> {
            return heuristic<env>("first_fit+fifo");  // stands for the same network acting on another CPU
        };
        auto v = bench::validate(j, other);
        CHECK(v.valid);
        CHECK(v.how == "replayed");
        CHECK(v.message.find("50 episodes replayed, every metric equal bit for bit (a re-run took other actions here, at "
                             "/episodes/0/actions from action") != std::string::npos);
        const auto unloaded = bench::validate(j);  // no resolver: the model cannot be loaded
        CHECK(unloaded.valid);
        CHECK(unloaded.message.find("(the model cannot be loaded here, or its checkpoint is not the one recorded") != std::string::npos);
        j["episodes"][3]["metrics"]["makespan"] = 1.0;
        v = bench::validate(j, other);
        CHECK_FALSE(v.valid);
        CHECK(v.message.find("differs from its reproduction (replayed) at /episodes/3/metrics/makespan") != std::string::npos);
    }
    SUBCASE("the track's definition, the format") {
        auto v = bench::validate(bench_test::edited(r, "/track/episodes", 10));
        CHECK_FALSE(v.valid);
        CHECK(v.message.find("definition differs from this gpuplace's at /track/episodes") != std::string::npos);
        v = bench::validate(bench_test::edited(r, "/format", "other"));
        CHECK_FALSE(v.valid);
        CHECK(v.message.find("not a gpuplace-bench result") != std::string::npos);
        CHECK_FALSE(bench::validate_text("{\"format\": ", "broken.json").valid);
    }
    SUBCASE("a member missing, of another type, episodes dropped or empty: said in gpuplace's words") {
        auto j = parse_json(bench::result_text(r), "result");
        j.erase("track");
        auto v = bench::validate(j);
        CHECK_FALSE(v.valid);
        CHECK(v.message == "not a complete result: /track: missing (the track's definition, as gpuplace-bench run writes it)");
        j = parse_json(bench::result_text(r), "result");
        j["policy"].erase("kind");
        CHECK(bench::validate(j).message == "not a complete result: /policy/kind: missing (the policy's, as gpuplace-bench run writes it)");
        CHECK(bench::validate(bench_test::edited(r, "/actions_kept", "yes")).message ==
              "not a complete result: /actions_kept: expected true or false (whether the episodes list their actions), got a string \"yes\"");
        CHECK(bench::validate(bench_test::edited(r, "/episodes", json::array())).message ==
              "not a complete result: /episodes: empty (a result lists every episode of its track, as gpuplace-bench run writes it)");
        j = parse_json(bench::result_text(r), "result");
        j["episodes"][7].erase("actions");
        CHECK(bench::validate(j).message ==
              "not a complete result: /episodes/7/actions: missing (its actions, since /actions_kept is true, as gpuplace-bench run writes it)");
        j = parse_json(bench::result_text(r), "result");
        j["episodes"].erase(49);
        j["episodes"].erase(3);
        CHECK(bench::validate(j).message ==
              "/episodes: the result lists 48 episodes, track proximity_drl v1 has 50 (seeds 1000000..1000049): episodes were dropped or added");
        for (const auto& bad : {bench_test::edited(r, "/track", 3), bench_test::edited(r, "/episodes/0", "x")})
            CHECK(bench::validate(bad).message.find("json.exception") == std::string::npos);
        // a member the reproduction has and the result lacks
        j = parse_json(bench::result_text(r), "result");
        j["summary"].erase("avg_jct");
        CHECK(bench::validate(j).message.find("at /summary/avg_jct: missing from the result (reproduced {") != std::string::npos);
    }
    SUBCASE("the timing is not compared") {
        CHECK(bench::validate(bench_test::edited(r, "/timing/seconds", 12345.0)).valid);
    }
}

TEST_CASE("bench: the steady-state and placement tracks, a v1 track without a window keeps its definition") {
    for (const auto* n : {"steady-0.5", "steady-0.8", "steady-1.0", "steady-1.2", "steady-1.5", "steady-2.0"}) {
        CAPTURE(n);
        const auto& t = bench::find_track(n);
        CHECK(t.windowed());
        CHECK(t.window_first == 160);
        CHECK(t.window_end == 320);
        CHECK(bench::to_json(t).at("window") == json{{"first_job", 160}, {"end_job", 320}});
        CHECK(bench::track_scenario(t).workload.synthetic.num_jobs == 480);
    }
    CHECK(bench::track_scenario(bench::find_track("steady-1.5")).workload.synthetic.load == 1.5);
    for (const auto* n : {"default", "load-1.5", "philly-0e4a51"}) CHECK_FALSE(bench::to_json(bench::find_track(n)).contains("window"));
    for (const auto* n : {"placement-default", "placement-proximity_drl", "placement-philly-0e4a51", "placement-philly-e13805", "placement-heterogeneous",
                          "placement-colocation"})
        CHECK(bench::track_scenario(bench::find_track(n)).env.mode == action_mode::placement);
    CHECK(bench::track_scenario(bench::find_track("default")).env.mode == action_mode::gpu);
}

TEST_CASE("bench: window_metrics: the window's jobs, its span, and the whole cluster's busy GPU-time over that span") {
    // 4 GPUs; job 0 warms up, jobs 1 and 2 are the window, job 3 cools down
    std::vector<job_record> done(4);
    const double submit[] = {0, 10, 20, 30}, start[] = {0, 10, 40, 50}, end[] = {100, 60, 80, 200};
    const std::uint32_t gpus[] = {2, 1, 2, 4};
    for (std::uint32_t i = 0; i < 4; ++i) {
        done[i].id = i;
        done[i].submit = submit[i];
        done[i].start = start[i];
        done[i].end = end[i];
        done[i].run_time = end[i] - start[i];
        done[i].num_gpus = gpus[i];
        done[i].ideal_duration = end[i] - start[i];
    }
    const auto m = bench::window_metrics(done, 4, 1, 3);
    CHECK(m.jobs_done == 2);
    CHECK(m.jobs_total == 2);
    CHECK(m.avg_jct == 55.0);             // (50 + 60) / 2
    CHECK(m.avg_queueing_delay == 10.0);  // (0 + 20) / 2
    CHECK(m.makespan == 70.0);            // from job 1's submission (10) to job 2's end (80)
    // over [10, 80]: job 0 2 GPUs x 70, job 1 1 x 50, job 2 2 x 40, job 3 4 x 30 = 390 GPU-s of 4 x 70
    CHECK(m.utilization == doctest::Approx(390.0 / 280.0).epsilon(1e-12));
    // a window none of whose jobs finished
    const auto none = bench::window_metrics(std::span<const job_record>(done).first(1), 4, 1, 3);
    CHECK(none.jobs_done == 0);
    CHECK(none.jobs_total == 2);
    CHECK(none.avg_jct == 0);
}

TEST_CASE("bench: a windowed track scores its window's jobs, a window of every job scores as no window") {
    auto t = bench_test::small();  // 30 jobs an episode
    t.window_first = 5;
    t.window_end = 25;
    t.episodes = 6;
    bench::run_options o;
    o.threads = 2;
    const auto w = bench::run(t, "pack+fifo", o);
    t.window_first = 0;
    t.window_end = 0;
    const auto all = bench::run(t, "pack+fifo", o);
    REQUIRE(w.episodes.size() == 6);
    for (std::size_t i = 0; i < w.episodes.size(); ++i) {
        CAPTURE(i);
        CHECK(w.episodes[i].m.jobs_total == 20);
        CHECK(w.episodes[i].m.jobs_done == 20);
        CHECK(w.episodes[i].actions == all.episodes[i].actions);  // the same play, other metrics
        CHECK(w.episodes[i].episode_return == all.episodes[i].episode_return);
        CHECK(w.best[i].m.jobs_total == 20);
    }
    CHECK(w.summary(&metrics::avg_jct).mean != all.summary(&metrics::avg_jct).mean);
    t.window_end = 30;  // every job: the per-job metrics as without a window, bit for bit
    const auto every = bench::run(t, "pack+fifo", o);
    for (std::size_t i = 0; i < every.episodes.size(); ++i) {
        CAPTURE(i);
        for (const auto f : {&metrics::avg_jct, &metrics::p50_jct, &metrics::p95_jct, &metrics::p99_jct, &metrics::avg_queueing_delay,
                             &metrics::p99_queueing_delay, &metrics::makespan, &metrics::avg_comm_cost, &metrics::avg_fairness})
            CHECK(every.episodes[i].m.*f == all.episodes[i].m.*f);
        CHECK(every.episodes[i].m.utilization == doctest::Approx(all.episodes[i].m.utilization).epsilon(1e-12));
    }
}

TEST_CASE("bench: the rollout planners by name: kind planner, hindsight NOT causal, replayed or re-run by validate") {
    const auto& t = bench::find_track("placement-proximity_drl");
    bench::run_options o;
    o.threads = 2;
    const auto h = bench::run(t, "hindsight:pack+sjf", o);
    CHECK(h.policy.kind == "planner");
    CHECK_FALSE(h.policy.causal());
    const auto j = parse_json(bench::result_text(h), "result");
    CHECK(j.at("policy").at("causal") == false);
    CHECK(bench::result_row(h).find("| hindsight:pack+sjf (NOT causal) |") != std::string::npos);
    CHECK(h.versus_best(&metrics::avg_jct).diff.mean < 0);  // it sees the future

    const auto r = bench::run(t, "rollout1:pack+sjf", o);
    CHECK(r.policy.kind == "planner");
    CHECK(r.policy.causal());
    const auto rj = parse_json(bench::result_text(r), "result");
    CHECK_FALSE(rj.at("policy").contains("causal"));
    CHECK(bench::result_row(r).find("NOT causal") == std::string::npos);

    auto v = bench::validate(j);
    CHECK(v.valid);
    CHECK(v.how == "replayed");
    CHECK(v.message.find("(a planner's recorded actions; validate --rerun-planners plays its futures again)") != std::string::npos);
    v = bench::validate(rj, bench::rerunning_planners());
    CHECK(v.valid);
    CHECK(v.how == "re-run");
    auto edited = rj;
    edited["episodes"][2]["metrics"]["avg_jct"] = 1.0;
    CHECK_FALSE(bench::validate(edited, bench::rerunning_planners()).valid);
    CHECK_FALSE(bench::validate(edited).valid);

    // the GPU action mode has no candidates to plan over
    CHECK_THROWS_WITH_AS((void)bench::run(bench_test::small(), "rollout:pack+sjf", o),
                         doctest::Contains("rollout: plans over the candidates of the placement or job action mode"), ConfigError);
}

TEST_CASE("bench: yardstick ranks a track's heuristic variants by mean JCT, the first is the best heuristic it records") {
    for (const auto* n : {"placement-proximity_drl", "proximity_drl"}) {
        CAPTURE(n);
        const auto& t = bench::find_track(n);
        const auto ranked = bench::yardstick(t, 2);
        REQUIRE(ranked.size() == heuristic_variants(bench::track_scenario(t)).size());
        CHECK(ranked.front().second == t.best_heuristic);
        CHECK(std::is_sorted(ranked.begin(), ranked.end()));
    }
}

TEST_CASE("bench: the failures track: its best heuristic is the yardstick's first, its results add the failure metrics, others do not") {
    const auto& t = bench::find_track("failures");
    CHECK(bench::yardstick(t, 2).front().second == t.best_heuristic);
    const auto j = bench::to_json(bench::run(t, "pack+sjf"));
    for (const char* k : {"goodput", "wasted_gpu_hours", "avg_interruptions", "hardware_failures", "avg_jct_completed"}) {
        CAPTURE(k);
        CHECK(j.at("summary").contains(k));
        CHECK(j.at("episodes").at(0).at("metrics").contains(k));
    }
    CHECK(j.at("summary").at("goodput").at("mean").get<double>() < 1.0);
    CHECK(j.at("summary").at("hardware_failures").at("mean").get<double>() > 0.0);
    CHECK(bench::validate(j).valid);
    const auto other = bench::to_json(bench::run(bench::find_track("proximity_drl"), "pack+sjf"));
    CHECK_FALSE(other.at("summary").contains("goodput"));
}

TEST_CASE("bench: the tenants track: its best heuristic is the yardstick's first, its results add Jain's index, the worst tenant rho and the hours below a guarantee") {
    const auto& t = bench::find_track("tenants");
    CHECK(bench::yardstick(t, 2).front().second == t.best_heuristic);
    const auto r = bench::run(t, "pack+capacity");
    const auto j = bench::to_json(r);
    for (const char* k : {"jain_index", "worst_tenant_rho", "below_guarantee_hours"}) {
        CAPTURE(k);
        CHECK(j.at("summary").contains(k));
        CHECK(j.at("episodes").at(0).at("metrics").at(k).get<double>() == r.episodes.at(0).m.groups.*(k == std::string("jain_index") ? &group_metrics::jain_index : k == std::string("worst_tenant_rho") ? &group_metrics::worst_tenant_rho : &group_metrics::below_guarantee_hours));
    }
    CHECK(j.at("summary").at("jain_index").at("mean").get<double>() > 0.5);
    CHECK(bench::validate(j).valid);
}
