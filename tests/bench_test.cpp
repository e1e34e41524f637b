#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gpuplace/bench/result.hpp>
#include <gpuplace/bench/run.hpp>
#include <gpuplace/bench/track.hpp>
#include <gpuplace/json.hpp>

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

TEST_CASE("bench: the best heuristic against itself; a policy's actions scored again give the same result") {
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
    SUBCASE("the timing is not compared") {
        CHECK(bench::validate(bench_test::edited(r, "/timing/seconds", 12345.0)).valid);
    }
}
