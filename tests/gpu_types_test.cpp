// Tests of include/gpuplace/gpu_types.hpp (heterogeneous clusters): the per-type zoo against
// Gavel's measurements, a job's run time on each type and on mixed types, the observation's type
// features, env.confine_type, the type-aware heuristics, the reward identity and determinism on the
// heterogeneous preset, and the JSON errors of GPU types.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gpuplace/evaluate.hpp>
#include <gpuplace/gpu_types.hpp>
#include <gpuplace/json.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

namespace {

/// The zoo's stated calibration error (scripts/make_zoo.py, docs/heterogeneous.md): the largest
/// relative error of a run time on the measurement cluster against the zoo's cleaned throughputs.
constexpr double calibration_error = 0.011;

/// Gavel's raw measurements.
const json& gavel() {
    static const json j = [] {
        std::ifstream in(std::string(GPUPLACE_SOURCE_DIR) + "/data/gavel/simulation_throughputs.json");
        std::stringstream ss;
        ss << in.rdbuf();
        return json::parse(ss.str());
    }();
    return j;
}

/// Gavel's steps/s of `model` at k GPUs on `key` (e.g. "k80_unconsolidated"), or -1 when absent.
double raw(const std::string& key, const std::string& model, int k) {
    const auto& t = gavel().at(key);
    const auto it = t.find("('" + model + "', " + std::to_string(k) + ")");
    if (it == t.end() || !it->contains("null") || !(*it)["null"].is_number()) return -1;
    return (*it)["null"].get<double>();
}

/// The measurement cluster of the zoo, two 8-GPU servers of each type: v100, v100, p100, p100, k80, k80.
json measurement_topology() {
    const auto r = gp::ModelZoo::builtin().reference();
    return {{"preset", "custom"},        {"racks", 1},
            {"nodes_per_rack", 6},       {"gpus_per_node", 8},
            {"node_bandwidth", r.node_bandwidth}, {"rack_bandwidth", r.network_bandwidth},
            {"spine_bandwidth", r.network_bandwidth}, {"node_latency", r.node_latency},
            {"rack_latency", r.network_latency},     {"spine_latency", r.network_latency},
            {"gpu_types", {"v100", "v100", "p100", "p100", "k80", "k80"}}};
}

/// Run time of one job (model m, `work` steps) placed on `gpus` of the measurement cluster.
double run_time(gp::model_id m, const std::vector<gp::gpu_id>& gpus, double work = 1000.0) {
    json j = {{"topology", measurement_topology()},
              {"workload", {{"kind", "jobs"}, {"jobs", {{{"submit_time", 0}, {"num_gpus", gpus.size()}, {"model", m}, {"work", work}}}}}}};
    gp::env e(gp::scenario_from_json(j));
    e.reset(0);
    for (auto g : gpus) e.step(g);
    REQUIRE(e.terminated());
    const auto& r = e.finished().front();
    return r.end - r.start;
}

/// GPUs of one type: k consolidated on the type's first server, or spread over its two servers.
std::vector<gp::gpu_id> on_type(std::size_t type, std::uint32_t k, bool spread) {
    std::vector<gp::gpu_id> v;
    const gp::gpu_id first = gp::gpu_id(type * 16);
    for (std::uint32_t i = 0; i < k; ++i) v.push_back(spread ? first + (i % 2) * 8 + i / 2 : first + i);
    return v;
}

}  // namespace

TEST_CASE("gpu types: the zoo's per-type throughputs are Gavel's measurements") {
    const auto z = gp::ModelZoo::builtin();
    REQUIRE(z.gpu_types() == std::vector<std::string>{"v100", "p100", "k80"});
    std::size_t checked = 0;
    for (std::size_t t = 0; t < z.num_types(); ++t) {
        const auto type = z.gpu_types()[t];
        CHECK(z.of_type(t).gpu_type() == type);
        for (std::size_t m = 0; m < z.size(); ++m) {
            const auto& name = z[gp::model_id(m)].name;
            CHECK(z.of_type(t)[gp::model_id(m)].name == name);
            for (int k : {1, 2, 4, 8}) {
                const double c = raw(type, name, k);
                if (!(c > 0)) continue;  // not measured (or 0: dropped by the cleaning rules)
                CHECK(z.throughput(gp::model_id(m), t, std::uint32_t(k)).consolidated == c);
                CHECK(z.type_speed(gp::model_id(m), t, std::uint32_t(k)) == doctest::Approx(c / raw("v100", name, k)).epsilon(1e-12));
                ++checked;
            }
        }
    }
    CHECK(checked == 3 * 83 - 3);  // every measured point but K80 ResNet-50 (batch size 128) at 2, 4, 8 GPUs (0 steps/s)
    CHECK(z.type_index("k80") == 2);
    CHECK(z.type_index("a100") == z.num_types());
    CHECK_THROWS_WITH_AS((void)z.of_type(3), "model zoo: GPU type index 3 out of range (the zoo has 3 types)", gp::ConfigError);
}

TEST_CASE("gpu types: a job runs at Gavel's throughput of its GPUs' type, within the calibration error") {
    const auto z = gp::ModelZoo::builtin();
    const double work = 1000.0;
    double worst = 0;
    std::size_t checked = 0;
    for (std::size_t t = 0; t < 3; ++t) {
        const auto type = z.gpu_types()[t];
        for (std::size_t m = 0; m < z.size(); ++m) {
            const auto& name = z[gp::model_id(m)].name;
            for (int k : {1, 2, 4, 8}) {
                const double c = raw(type, name, k);
                if (!(c > 0)) continue;
                // consolidated: Gavel's consolidated throughput
                const double tc = run_time(gp::model_id(m), on_type(t, std::uint32_t(k), false), work);
                worst = std::max(worst, std::abs(work / tc - c) / c);
                ++checked;
                if (k == 1) continue;
                // spread over two servers: Gavel's unconsolidated throughput, as the zoo cleans it
                // (missing: the consolidated one; above the consolidated one: the consolidated one)
                double s = raw(type + "_unconsolidated", name, k);
                if (!(s > 0) || s > c) s = c;
                const double ts = run_time(gp::model_id(m), on_type(t, std::uint32_t(k), true), work);
                worst = std::max(worst, std::abs(work / ts - s) / s);
                ++checked;
            }
        }
    }
    MESSAGE("largest relative error of a run time against Gavel's measurement: " << worst << " over " << checked << " placements");
    CHECK(worst <= calibration_error);
}

TEST_CASE("gpu types: a job on GPUs of several types runs at its slowest type's speed") {
    const auto z = gp::ModelZoo::builtin();
    const auto resnet = z.find("ResNet-50 (batch size 32)");
    const auto rec = z.find("Recommendation (batch size 2048)");
    // ResNet-50 is slowest on K80; one GPU on a V100 server and one on a K80 server (two servers,
    // as in the spread measurement) runs as two spread K80 GPUs
    const double mixed = run_time(resnet, {0, 32});
    CHECK(mixed == run_time(resnet, on_type(2, 2, true)));
    CHECK(mixed > run_time(resnet, on_type(0, 2, true)));
    // Recommendation runs faster on P100 and K80 than on V100 (Gavel's data): V100 is its slowest
    CHECK(z.type_speed(rec, 1, 1) > 1.0);
    CHECK(z.type_speed(rec, 2, 1) > 1.0);
    CHECK(run_time(rec, {0}) > run_time(rec, {32}));
    // the record's slowdown is its run time over the ideal duration (on the reference type)
    gp::gpu_type_map types(gp::TreeTopology::from_config(gp::topology_config_from_json(measurement_topology())), z);
    const std::vector<gp::gpu_id> gpus{0, 32};
    CHECK(types.slowest(z, resnet, gpus) == 2);
    CHECK(types.slowest(z, rec, gpus) == 0);
}

TEST_CASE("gpu types: an untyped cluster is as before, a single-type cluster runs at that type's speed") {
    const auto z = gp::ModelZoo::builtin();
    auto topo = measurement_topology();
    topo.erase("gpu_types");
    const auto m = z.find("LM (batch size 20)");
    json j = {{"topology", topo},
              {"workload", {{"kind", "jobs"}, {"jobs", {{{"submit_time", 0}, {"num_gpus", 1}, {"model", m}, {"work", 1000}}}}}}};
    gp::env plain(gp::scenario_from_json(j));
    CHECK(!plain.gpu_types().typed());
    plain.reset(0);
    plain.step(0);
    const double untyped = plain.finished().front().end - plain.finished().front().start;
    j["topology"]["gpu_types"] = "v100";
    gp::env v100(gp::scenario_from_json(j));
    CHECK(v100.gpu_types().typed());
    CHECK(!v100.gpu_types().heterogeneous());
    CHECK(v100.observation_size() == plain.observation_size());
    CHECK(v100.observation_layout().size() == plain.observation_layout().size());
    v100.reset(0);
    v100.step(0);
    CHECK(v100.finished().front().end - v100.finished().front().start == untyped);
    j["topology"]["gpu_types"] = "k80";
    gp::env k80(gp::scenario_from_json(j));
    k80.reset(0);
    k80.step(0);
    CHECK(k80.finished().front().end - k80.finished().front().start ==
          doctest::Approx(untyped / z.type_speed(m, 2, 1)).epsilon(1e-12));
}

TEST_CASE("gpu types: the heterogeneous observation describes each GPU's type for the current job") {
    const auto s = gp::preset_scenario("heterogeneous");
    gp::env e(s);
    const auto& lay = e.observation_layout();
    auto seg = [&](const std::string& name) -> const gp::obs_segment& {
        for (const auto& x : lay)
            if (x.name == name) return x;
        FAIL("no segment " << name);
        return lay.front();
    };
    const std::size_t G = e.num_gpus();
    CHECK(G == 72);
    CHECK(seg("gpu_type_speed").offset == 6 * G);
    CHECK(seg("gpu_type").offset == 7 * G);
    CHECK(seg("job").offset == 8 * G);
    CHECK(seg("job_type").offset + 1 == e.observation_size());
    CHECK(seg("job_type").fields == std::vector<std::string>{"best_type_speedup"});
    // the homogeneous default has none of them
    const gp::env plain(gp::default_scenario());  // (a temporary's layout would not outlive the loop's first line)
    for (const auto& x : plain.observation_layout())
        CHECK((x.name != "gpu_type_speed" && x.name != "gpu_type" && x.name != "job_type"));
    gp::detail::rng r(7);
    e.reset(3);
    const auto& z = e.zoo();
    for (int step = 0; step < 400 && !e.done(); ++step) {
        const auto obs = e.observation();
        for (float v : obs) REQUIRE((v >= 0.0f && v <= 1.0f));
        if (e.has_current()) {
            const auto& j = e.current_job();
            double sp[3], fast = 0, slow = 1e9;
            for (std::size_t t = 0; t < 3; ++t) {
                sp[t] = z.type_speed(j.model, z.type_index(e.topology().gpu_types()[t]), j.num_gpus);
                fast = std::max(fast, sp[t]);
                slow = std::min(slow, sp[t]);
            }
            for (std::size_t g = 0; g < G; ++g) {
                const auto t = e.topology().type_of(gp::gpu_id(g));
                REQUIRE(obs[seg("gpu_type_speed").offset + g] == static_cast<float>(sp[t] / fast));
                REQUIRE(obs[seg("gpu_type").offset + g] == float(t) / 2.0f);
            }
            REQUIRE(obs[seg("job_type").offset] == static_cast<float>(1.0 - slow / fast));
        }
        e.step(random_action(e, r, 0.1));
    }
}

TEST_CASE("gpu types: a placement candidate's speed is the job's rate on its GPUs over its best rate on its fastest type") {
    auto s = gp::preset_scenario("heterogeneous");
    s.env.mode = gp::action_mode::placement;
    gp::env e(s);
    std::size_t speed_at = 0;
    for (const auto& x : e.observation_layout())
        if (x.name == "candidate_speed") speed_at = x.offset;
    REQUIRE(speed_at > 0);
    const auto& z = e.zoo();
    const auto& topo = e.topology();
    gp::detail::rng r(11);
    e.reset(5);
    std::size_t one_type = 0, below = 0;
    for (int step = 0; step < 300 && !e.done(); ++step) {
        if (!e.has_current()) {
            e.step(random_action(e, r, 0.0));
            continue;
        }
        const auto obs = e.observation();
        const auto& j = e.current_job();
        // a candidate inside one server of type t: no communication penalty, the rate of type t
        double fast = 0;
        for (std::size_t t = 0; t < 3; ++t) fast = std::max(fast, z.type_speed(j.model, z.type_index(topo.gpu_types()[t]), j.num_gpus));
        for (std::size_t c = 0; c < s.env.slots; ++c) {
            const auto gpus = e.candidate(c);
            if (gpus.empty()) continue;
            const float v = obs[speed_at + c];
            REQUIRE((v > 0.0f && v <= 1.0f));
            if (gpus.front() / 8 != gpus.back() / 8) continue;
            const auto t = topo.type_of(gpus.front());
            const double want = z.type_speed(j.model, z.type_index(topo.gpu_types()[t]), j.num_gpus) / fast;
            REQUIRE(v == doctest::Approx(want).epsilon(1e-5));
            ++one_type;
            below += want < 0.999;
        }
        e.step(random_action(e, r, 0.0));
    }
    CHECK(one_type > 100);
    CHECK(below > 20);  // candidates on slower types are told apart
}

TEST_CASE("gpu types: reward identity, determinism and refresh on the heterogeneous preset, with confine_type too") {
    for (bool confine : {false, true}) {
        CAPTURE(confine);
        auto s = gp::preset_scenario("heterogeneous");
        s.env.confine_type = confine;
        s.workload.synthetic.num_jobs = 60;
        auto run = [&](std::uint64_t seed, bool check) {
            gp::env e(s);
            gp::detail::rng r(seed + 11);
            e.reset(seed);
            std::uint64_t h = 1469598103934665603ULL;
            double sum = 0;
            while (!e.done()) {
                const auto mask = e.action_mask();
                REQUIRE(std::any_of(mask.begin(), mask.end(), [](auto v) { return v != 0; }));
                if (check) {  // the incremental writes equal a whole rewrite
                    std::vector<float> o(e.observation().begin(), e.observation().end());
                    std::vector<std::uint8_t> mk(mask.begin(), mask.end());
                    e.refresh_observation();
                    REQUIRE(std::equal(o.begin(), o.end(), e.observation().begin()));
                    REQUIRE(std::equal(mk.begin(), mk.end(), e.action_mask().begin()));
                }
                const auto res = e.step(random_action(e, r, 0.05));
                sum += res.reward;
                for (float v : e.observation()) {
                    std::uint32_t b;
                    std::memcpy(&b, &v, 4);
                    h = (h ^ b) * 1099511628211ULL;
                }
            }
            REQUIRE(e.terminated());
            double jct = 0;
            for (const auto& rec : e.finished()) {
                jct += rec.jct();
                if (confine) {  // every job on one type
                    std::set<std::size_t> types;
                    for (auto g : e.simulator().gpus_of(rec)) types.insert(e.topology().type_of(g));
                    REQUIRE(types.size() == 1);
                }
            }
            CHECK(sum == doctest::Approx(-jct / s.reward.time_scale).epsilon(1e-9));
            const auto m = e.episode_metrics();
            double busy = 0;
            for (std::size_t t = 0; t < 3; ++t) {
                CHECK(m.type_utilization[t] >= 0.0);
                CHECK(m.type_utilization[t] <= 1.0 + 1e-12);
                busy += m.type_utilization[t] * 24.0;
            }
            CHECK(busy == doctest::Approx(m.utilization * 72.0).epsilon(1e-9));
            return h;
        };
        CHECK(run(5, true) == run(5, false));
        CHECK(run(5, false) != run(6, false));
    }
}

TEST_CASE("gpu types: the type-aware heuristics keep a job on one type and choose it by their rule") {
    const auto s = gp::preset_scenario("heterogeneous");
    const auto names = gp::type_aware_heuristic_names();
    CHECK(names.size() == 12);
    CHECK(names.front() == "fastest_type:random");
    CHECK(names.back() == "throughput_greedy:pack_wait");
    CHECK(gp::heuristic_variants(s).size() == 24 + 48);
    CHECK(gp::heuristic_variants(gp::default_scenario()) == gp::heuristic_variants());
    // a scenario's default table (gpuplace-eval without --policies): on GPUs of several types, the
    // type-aware heuristics too
    const auto table = gp::applicable_heuristic_names(s);
    CHECK(table.size() == 6 + 12);
    CHECK(std::find(table.begin(), table.end(), "fastest_type:pack") != table.end());
    CHECK(std::find(table.begin(), table.end(), "throughput_greedy:topology_greedy") != table.end());
    CHECK(gp::applicable_heuristic_names(gp::default_scenario()) == gp::heuristic_names());
    CHECK_THROWS_WITH_AS(gp::heuristic("slowest_type:pack"),
                         "unknown policy \"slowest_type:pack\" (known: <rule>:<heuristic> with rule fastest_type or "
                         "throughput_greedy and heuristic random, first_fit, pack, load_balance, topology_greedy, pack_wait, avoid_failed, coloc_packer)",
                         gp::ConfigError);
    // fastest_type: the first job of an empty cluster goes to its model's fastest type
    {
        gp::env e(s);
        gp::typed_policy<gp::type_rule::fastest_type, gp::pack_policy> p;
        e.reset(1);
        const auto& j = e.current_job();
        const auto& z = e.zoo();
        std::size_t best = 0;
        for (std::size_t t = 1; t < 3; ++t)
            if (e.gpu_types().speed(z, j.model, t, j.num_gpus) > e.gpu_types().speed(z, j.model, best, j.num_gpus)) best = t;
        const auto a = p.act(e);
        CHECK(e.gpu_types().type_of(gp::gpu_id(a)) == best);
    }
    // every type-aware heuristic: a job whose first pick was made while one type had room for it
    // all stays on that type
    for (const auto& n : names) {
        CAPTURE(n);
        gp::env e(s);
        auto p = gp::heuristic<gp::env>(n);
        auto act = p.make(2);
        e.reset(2);
        bool confined = false;
        std::size_t first_type = 0, kept = 0;
        while (!e.done()) {
            const auto a = act(e);
            if (a < std::int64_t(e.num_gpus())) {
                const auto t = e.topology().type_of(gp::gpu_id(a));
                if (e.picked().empty()) {
                    std::size_t avail[3] = {0, 0, 0};
                    for (std::size_t g = 0; g < e.num_gpus(); ++g) avail[e.topology().type_of(gp::gpu_id(g))] += e.action_mask()[g];
                    confined = std::max({avail[0], avail[1], avail[2]}) >= e.current_job().num_gpus;
                    first_type = t;
                    if (confined) REQUIRE(avail[t] >= e.current_job().num_gpus);
                    kept += confined;
                } else if (confined) {
                    REQUIRE(t == first_type);
                }
            }
            e.step(a);
        }
        CHECK(kept > 0);
    }
}

TEST_CASE("gpu types: JSON errors name the path") {
    auto fails = [](const json& topo) {
        try {
            (void)gp::env(gp::scenario_from_json(json{{"topology", topo}}));
        } catch (const gp::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    json t = {{"preset", "custom"}, {"racks", 3}, {"nodes_per_rack", 2}};
    t["gpu_types"] = {"v100", "k80"};
    CHECK(fails(t) == "config /topology/gpu_types: 2 types: expected 1 (every node), 3 (one per rack) or 6 (one per node)");
    t["gpu_types"] = {"v100", 5, "k80"};
    CHECK(fails(t) == "config /topology/gpu_types/1: expected a GPU type name, got 5");
    t["gpu_types"] = json::array();
    CHECK(fails(t) == "config /topology/gpu_types: expected a GPU type name or a non-empty array of them (one per rack or per node), got []");
    t["gpu_types"] = {"v100", "a100", "k80"};
    CHECK(fails(t) == "config /topology/gpu_types: GPU type \"a100\" is not in the model zoo (its types: v100, p100, k80)");
    t["gpu_types"] = {"v100", "", "k80"};
    CHECK(fails(t) == "config /topology/gpu_types/1: empty GPU type name");
    auto s = gp::preset_scenario("heterogeneous");
    s.env.mode = gp::action_mode::placement;
    s.env.confine_type = true;
    CHECK_THROWS_WITH_AS(gp::env{s}, "config /env/confine_type: supported in the gpu action mode without co-location only", gp::ConfigError);
    // a zoo's types
    auto zj = gp::to_json(gp::ModelZoo::builtin());
    auto bad = zj;
    bad["types"][0]["models"][1]["name"] = "ResNet-99";
    CHECK_THROWS_WITH_AS(gp::zoo_from_json(bad), "config /zoo/types/0/models/1/name: \"ResNet-99\": expected \"ResNet-18 (batch size 32)\" "
                                                "(a type lists the reference type's models, in order)",
                         gp::ConfigError);
    bad = zj;
    bad["types"][0]["gpu_type"] = "v100";
    CHECK_THROWS_WITH_AS(gp::zoo_from_json(bad), "config /zoo/types/0/gpu_type: the reference type \"v100\" is not listed under types", gp::ConfigError);
    bad = zj;
    bad["types"][1]["gpu_type"] = "p100";
    CHECK_THROWS_WITH_AS(gp::zoo_from_json(bad), "config /zoo/types/p100: type \"p100\" twice", gp::ConfigError);
    bad = zj;
    bad["types"][1]["models"][0]["throughput"]["2"] = {0, 1};
    CHECK_THROWS_WITH_AS(gp::zoo_from_json(bad), "config /zoo/types/1/models/0/throughput/2: throughputs must be > 0, got [0,1]",
                         gp::ConfigError);
}

TEST_CASE("gpu types: the zoo's JSON form and the topology's keep the types") {
    const auto z = gp::ModelZoo::builtin();
    const auto back = gp::zoo_from_json(gp::to_json(z));
    REQUIRE(back.gpu_types() == z.gpu_types());
    for (std::size_t t = 0; t < z.num_types(); ++t)
        for (std::size_t m = 0; m < z.size(); ++m)
            for (std::uint32_t k : {1u, 2u, 3u, 4u, 8u}) {
                CHECK(back.throughput(gp::model_id(m), t, k).consolidated == z.throughput(gp::model_id(m), t, k).consolidated);
                CHECK(back.throughput(gp::model_id(m), t, k).spread == z.throughput(gp::model_id(m), t, k).spread);
                CHECK(back.of_type(t).colocation(gp::model_id(m), 0) == z.of_type(t).colocation(gp::model_id(m), 0));
            }
    const auto f = gp::ModelZoo::load(std::string(GPUPLACE_SOURCE_DIR) + "/data/model_zoo_v100.json");
    CHECK(gp::to_json(f) == gp::to_json(z));
    const auto s = gp::preset_scenario("heterogeneous");
    const auto topo = gp::TreeTopology::from_config(s.topology);
    CHECK(topo.gpu_types() == std::vector<std::string>{"v100", "p100", "k80"});
    CHECK(topo.type_of(0) == 0);
    CHECK(topo.type_of(24) == 1);
    CHECK(topo.type_of(71) == 2);
    const auto again = gp::topology_from_json(gp::to_json(topo));
    CHECK(again.params().node_types == topo.params().node_types);
    CHECK(gp::scenario_from_json(gp::to_json(s)).topology == s.topology);
}

TEST_CASE("gpu types: co-location on a heterogeneous cluster (the reference type's interference factors on every type)") {
    auto s = gp::preset_scenario("colocation");
    s.topology.gpu_types = std::vector<std::string>{"v100", "k80"};
    s.workload.synthetic.num_jobs = 80;
    auto run = [&](std::uint64_t seed) {
        gp::env e(s);
        REQUIRE(e.gpu_types().heterogeneous());
        gp::detail::rng r(seed);
        e.reset(seed);
        double sum = 0;
        while (!e.done()) sum += e.step(random_action(e, r, 0.05)).reward;
        REQUIRE(e.terminated());
        double jct = 0, k80_time = 0, k80_ideal = 0;
        for (const auto& rec : e.finished()) {
            jct += rec.jct();
            // a job alone on a K80 GPU runs at the K80 speed; next to another, slower still
            if (e.topology().type_of(e.simulator().gpus_of(rec)[0]) == 1) {
                k80_time += rec.end - rec.start;
                k80_ideal += rec.ideal_duration / e.zoo().type_speed(rec.model, 2, 1);
            }
        }
        CHECK(k80_time >= k80_ideal * (1 - 1e-9));
        CHECK(sum == doctest::Approx(-jct / s.reward.time_scale).epsilon(1e-9));
        return e.episode_return();
    };
    CHECK(run(3) == run(3));
}
