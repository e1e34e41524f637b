// Tests of include/gpuplace/workload.hpp and workload_source.hpp: the seeded synthetic generator, fixed job lists and traces.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/workload.hpp>
#include <gpuplace/workload_source.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using namespace gpuplace::test;

TEST_CASE("synthetic workload: same seed same jobs, different seed different jobs") {
    const auto zoo = gp::ModelZoo::builtin();
    gp::synthetic_workload w;
    w.num_jobs = 200;
    std::vector<gp::TrainingJob> a, b, c;
    gp::generate_synthetic(w, zoo, 64, 1, a);
    gp::generate_synthetic(w, zoo, 64, 1, b);
    gp::generate_synthetic(w, zoo, 64, 2, c);
    CHECK(a == b);
    CHECK(a != c);
    REQUIRE(a.size() == 200);
    // regenerating into a used vector gives the same jobs
    gp::generate_synthetic(w, zoo, 64, 2, b);
    CHECK(b == c);
}

TEST_CASE("synthetic workload: distributions") {
    const auto zoo = gp::ModelZoo::builtin();
    gp::synthetic_workload w;
    w.num_jobs = 4000;
    w.load = 0.8;
    w.gpu_counts = {{1, 0.5}, {2, 0.0}, {4, 0.25}, {8, 0.25}};
    w.duration_min = 100;
    w.duration_max = 10000;
    std::vector<gp::TrainingJob> jobs;
    gp::generate_synthetic(w, zoo, 64, 7, jobs);
    REQUIRE(jobs.size() == 4000);
    CHECK(jobs.front().submit_time == 0.0);
    double gpu_seconds = 0;
    std::size_t ones = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const auto& j = jobs[i];
        INFO("job ", i);
        REQUIRE(j.id == i);
        if (i > 0) REQUIRE(j.submit_time >= jobs[i - 1].submit_time);
        REQUIRE((j.num_gpus == 1 || j.num_gpus == 4 || j.num_gpus == 8));
        ones += j.num_gpus == 1;
        REQUIRE(j.model < zoo.size());
        // models are measured at the job's GPU count
        REQUIRE(zoo[j.model].max_measured_gpus() >= j.num_gpus);
        // work = duration x consolidated throughput, duration in [min, max]
        const double d = j.work / zoo[j.model].at(j.num_gpus).consolidated;
        REQUIRE(d >= 100 * (1 - 1e-12));
        REQUIRE(d <= 10000 * (1 + 1e-12));
        gpu_seconds += d * j.num_gpus;
    }
    CHECK(std::abs(double(ones) / 4000 - 0.5) < 0.03);
    // offered load = (GPU-seconds / span) / GPUs, close to the target over 4,000 jobs
    const double span = jobs.back().submit_time;
    CHECK(std::abs(gpu_seconds / span / 64 - 0.8) < 0.05);
}

TEST_CASE("synthetic workload: a model mix by name") {
    const auto zoo = gp::ModelZoo::builtin();
    gp::synthetic_workload w;
    w.num_jobs = 300;
    w.models = {{zoo[1].name, 1.0}, {zoo[2].name, 3.0}, {zoo[0].name, 0.0}};
    std::vector<gp::TrainingJob> jobs;
    gp::generate_synthetic(w, zoo, 64, 3, jobs);
    std::size_t n1 = 0, n2 = 0;
    for (const auto& j : jobs) {
        REQUIRE((j.model == 1 || j.model == 2));
        n1 += j.model == 1;
        n2 += j.model == 2;
    }
    CHECK(n2 > 2 * n1);
}

TEST_CASE("workload config: JSON round trip and errors") {
    using gp::detail::json;
    const json j = {{"kind", "synthetic"},  {"num_jobs", 12},       {"load", 0.7},
                    {"duration_min", 5.0},  {"duration_max", 50.0}, {"gpu_counts", {{"1", 0.25}, {"3", 0.75}}},
                    {"models", {{"A3C", 1.0}}}};
    const auto c = gp::workload_from_json(j);
    CHECK(c.synthetic.num_jobs == 12);
    CHECK(c.synthetic.gpu_counts == std::vector<std::pair<std::uint32_t, double>>{{1, 0.25}, {3, 0.75}});
    CHECK(to_json(c) == j);
    const json l = {{"kind", "jobs"},
                    {"jobs", json::array({{{"submit_time", 5.0}, {"num_gpus", 2}, {"model", 1}, {"work", 10.0}},
                                          {{"submit_time", 0.0}, {"num_gpus", 1}, {"model", 0}, {"work", 20.0}}})}};
    const auto cl = gp::workload_from_json(l);
    REQUIRE(cl.jobs.size() == 2);
    CHECK(cl.jobs[0].num_gpus == 2);
    CHECK(cl.jobs[1].work == 20.0);
    CHECK(to_json(cl) == l);
    CHECK_THROWS_WITH_AS((void)gp::workload_from_json(json{{"num_jobz", 3}}),
                         doctest::Contains("config /workload/num_jobz: unknown key \"num_jobz\""), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::workload_from_json(json{{"num_jobs", 0}}),
                         "config /workload/num_jobs: value 0 out of range [1, 10000000]", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::workload_from_json(json{{"gpu_counts", {{"1", 0.0}}}}),
                         "config /workload/gpu_counts: probabilities sum to 0", gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::workload_from_json(json{{"models", {{"A3C", "many"}}}}),
                         "config /workload/models/A3C: expected a weight >= 0, got \"many\"", gp::ConfigError);
    CHECK_THROWS_WITH_AS(
        (void)gp::workload_from_json(
            json{{"kind", "jobs"}, {"jobs", json::array({{{"submit_time", 0}, {"num_gpus", 1}, {"model", 0}, {"work", 1}, {"x", 1}}})}}),
        "config /workload/jobs/0/x: unknown field \"x\" (allowed: submit_time, num_gpus, model, work; a field of one's own must be declared in /job_fields)", gp::ConfigError);
}

namespace {
std::vector<gpuplace::TrainingJob> episode_of(const gpuplace::workload_config& w, std::uint64_t seed, std::size_t G = 64) {
    const auto zoo = gpuplace::ModelZoo::builtin();
    gpuplace::workload_source src(w, zoo, G);
    std::vector<gpuplace::TrainingJob> out;
    src.generate(zoo, G, seed, out);
    return out;
}
double offered(const std::vector<gpuplace::TrainingJob>& jobs, std::size_t G) {
    const auto zoo = gpuplace::ModelZoo::builtin();
    double gs = 0;
    for (const auto& j : jobs) gs += double(j.num_gpus) * j.work / zoo[j.model].at(j.num_gpus).consolidated;
    return gs / (double(G) * (jobs.back().submit_time - jobs.front().submit_time));
}
}  // namespace

TEST_CASE("workload: synthetic loads and GPU-count weights drawn per episode from ranges") {
    using gpuplace::detail::json;
    const auto fixed = gpuplace::workload_from_json(json{{"kind", "synthetic"}, {"num_jobs", 300}, {"load", 1.0}});
    const auto ranged = gpuplace::workload_from_json(
        json{{"kind", "synthetic"}, {"num_jobs", 300}, {"load", {0.5, 2.0}}, {"gpu_counts", {{"1", {0.0, 1.0}}, {"8", {0.0, 1.0}}}}});
    CHECK(ranged.synthetic.load == 0.5);
    CHECK(ranged.synthetic.load_max == 2.0);
    CHECK(gpuplace::to_json(gpuplace::workload_from_json(gpuplace::to_json(ranged))) == gpuplace::to_json(ranged));
    // a workload without ranges draws exactly what it always did (its to_json has no ranges either)
    CHECK(fixed.synthetic.gpu_counts_max.empty());
    CHECK(gpuplace::to_json(fixed)["load"] == 1.0);
    std::set<std::size_t> ones;
    double lo = 1e9, hi = 0;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
        const auto a = episode_of(ranged, seed), b = episode_of(ranged, seed);
        REQUIRE(a.size() == b.size());
        CHECK(a.back().submit_time == b.back().submit_time);  // same seed, same episode
        std::size_t n1 = 0;
        for (const auto& j : a) n1 += j.num_gpus == 1;
        ones.insert(n1 / 30);
        const double span = a.back().submit_time;
        lo = std::min(lo, span);
        hi = std::max(hi, span);
    }
    CHECK(ones.size() >= 5);  // the 1-GPU share varies across episodes
    CHECK(hi > 2 * lo);       // and so does the load (arrival span)
    CHECK_THROWS_WITH_AS(gpuplace::workload_from_json(json{{"kind", "synthetic"}, {"load", {2.0, 1.0}}}),
                         "config /workload/load: range [2.0,1.0] is not within [1e-06, 1000000.0] with lo <= hi", gpuplace::ConfigError);
    CHECK_THROWS_AS(gpuplace::workload_from_json(json{{"kind", "synthetic"}, {"gpu_counts", {{"1", {0.0, 0.0}}}}}),
                    gpuplace::ConfigError);
}

TEST_CASE("workload: a trace workload of several files at a load drawn per episode") {
    using gpuplace::detail::json;
    const std::string a = "$GPUPLACE_DATA/philly/2869ce.trace", b = "$GPUPLACE_DATA/philly/e13805.trace";
    const auto w = gpuplace::workload_from_json(
        json{{"kind", "trace"}, {"format", "philly"}, {"path", {a, b}}, {"target_load", {0.5, 1.5}}, {"episode_jobs", 100}});
    CHECK(w.trace_paths() == std::vector<std::string>{a, b});
    CHECK(w.target_load_max == 1.5);
    CHECK(gpuplace::to_json(gpuplace::workload_from_json(gpuplace::to_json(w))) == gpuplace::to_json(w));
    const auto single_a = gpuplace::workload_from_json(json{{"kind", "trace"}, {"format", "philly"}, {"path", a}});
    std::set<std::uint32_t> first_models;
    double lo = 1e9, hi = 0;
    for (std::uint64_t seed = 0; seed < 30; ++seed) {
        const auto e = episode_of(w, seed);
        REQUIRE(e.size() == 100);
        CHECK(e.front().submit_time == 0);
        CHECK(episode_of(w, seed).back().submit_time == e.back().submit_time);
        first_models.insert(e.front().model);
        const double l = offered(e, 64);
        lo = std::min(lo, l);
        hi = std::max(hi, l);
    }
    CHECK(first_models.size() > 3);  // windows from both files
    CHECK(hi > 1.5 * lo);
    // one file and a fixed load: exactly as before (the whole file compressed once, at load time)
    const auto fixed = gpuplace::workload_from_json(json{{"kind", "trace"}, {"format", "philly"}, {"path", a}, {"target_load", 1.0}});
    CHECK(fixed.target_load_max == 0);
    CHECK(gpuplace::to_json(fixed)["path"] == a);
    (void)single_a;
}

TEST_CASE("workload: a mixture draws one of its workloads per episode, by weight") {
    using gpuplace::detail::json;
    const auto w = gpuplace::workload_from_json(json{
        {"kind", "mixture"},
        {"components", {{{"weight", 3}, {"workload", {{"kind", "synthetic"}, {"num_jobs", 10}}}},
                        {{"weight", 1}, {"workload", {{"kind", "trace"}, {"format", "philly"}, {"path", "$GPUPLACE_DATA/philly/2869ce.trace"},
                                                       {"episode_jobs", 25}}}}}}});
    CHECK(gpuplace::to_json(gpuplace::workload_from_json(gpuplace::to_json(w))) == gpuplace::to_json(w));
    std::size_t synthetic = 0, trace = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        const auto e = episode_of(w, seed);
        (e.size() == 10 ? synthetic : trace) += 1;
        CHECK((e.size() == 10 || e.size() == 25));
    }
    CHECK(synthetic > 2 * trace);
    CHECK(trace > 20);
    auto s = gpuplace::default_scenario();
    s.workload = w;
    gpuplace::env e(s);  // bounds and validation through the components
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
        e.reset(seed);
        while (!e.done()) e.step(gpuplace::pack_policy{}.act(e));
        CHECK(e.terminated());
    }
    CHECK_THROWS_WITH_AS(gpuplace::workload_from_json(json{{"kind", "mixture"}, {"components", json::array()}}),
                         doctest::Contains("config /workload/components: kind \"mixture\" needs a non-empty list"), gpuplace::ConfigError);
    auto bad = s;
    bad.workload = gpuplace::workload_from_json(json{
        {"kind", "mixture"}, {"components", {{{"workload", {{"kind", "synthetic"}, {"gpu_counts", {{"128", 1}}}}}}}}});
    CHECK_THROWS_WITH_AS(gpuplace::env{bad}, doctest::Contains("config /workload/components/0/workload/gpu_counts/128"), gpuplace::ConfigError);
}

TEST_CASE("presets: philly (the training files) and philly:<file> (one file at load 1)") {
    const auto p = gpuplace::preset_scenario("philly");
    CHECK(p.workload.kind == "trace");
    CHECK(p.workload.trace_paths().size() == gpuplace::philly_training_files().size());
    CHECK(p.workload.episode_jobs == 200);
    for (const auto& f : gpuplace::philly_heldout_files())
        for (const auto& t : p.workload.trace_paths()) CHECK(t.find(f) == std::string::npos);  // held-out files never in training
    gpuplace::env e(p);
    e.reset(3);
    CHECK(e.info().jobs_total == 200);
    const auto h = gpuplace::preset_scenario("philly:0e4a51");
    CHECK(h.name == "philly:0e4a51");
    CHECK(h.workload.path == "$GPUPLACE_DATA/philly/0e4a51.trace");
    CHECK(h.workload.trace_opts.target_load == 1.0);
    CHECK(gpuplace::is_preset_name("philly:0e4a51"));
    CHECK_FALSE(gpuplace::is_preset_name("nope"));
    CHECK_THROWS_AS(gpuplace::preset_scenario("philly:../x"), gpuplace::ConfigError);
    CHECK_THROWS_AS(gpuplace::env{gpuplace::preset_scenario("philly:nope")}, gpuplace::TraceError);
}

TEST_CASE("workload: merge_as replays several trace files as one, each job's field its file") {
    using gpuplace::detail::json;
    const auto dir = std::filesystem::temp_directory_path() / "gpuplace_workload_test_merge";
    std::filesystem::create_directories(dir);
    const auto write = [&](const char* name, const char* text) {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    };
    const auto a = write("a.csv", "submit_time,num_gpus,duration\n0,1,60\n100,2,60\n");
    const auto b = write("b.csv", "submit_time,num_gpus,duration\n5,4,60\n55,1,60\n");  // shifted to 0 and 50
    auto j = gp::to_json(gp::default_scenario());
    j["job_fields"] = json::array({{{"name", "tenant"}, {"type", "category"}}});
    j["workload"] = {{"kind", "trace"}, {"format", "csv"}, {"path", {a, b}}, {"merge_as", "tenant"}};
    const auto s = gp::scenario_from_json(j);
    CHECK(gp::to_json(s.workload)["merge_as"] == "tenant");
    for (std::uint64_t seed : {1ULL, 2ULL}) {  // every episode replays both files
        gp::env e(s);
        e.reset(seed);
        const auto& jobs = e.simulator().jobs();
        REQUIRE(jobs.size() == 4);
        std::vector<double> submit, gpus, tenant;
        for (std::uint32_t i = 0; i < 4; ++i) {
            submit.push_back(double(jobs[i].submit_time));
            gpus.push_back(double(jobs[i].num_gpus));
            tenant.push_back(e.field_value(i, 0));
        }
        CHECK(submit == std::vector<double>{0, 0, 50, 100});  // by submit time, the first file first at a tie
        CHECK(gpus == std::vector<double>{1, 4, 1, 2});
        CHECK(tenant == std::vector<double>{0, 1, 1, 0});
        CHECK(e.field_categories(0) == std::vector<std::string>{"a", "b"});
    }
    j["workload"]["merge_as"] = "team";
    CHECK_THROWS_WITH_AS(gp::env(gp::scenario_from_json(j)), "config /workload/merge_as: job field \"team\" is not declared (add it to /job_fields)",
                         gp::ConfigError);
    j["workload"]["merge_as"] = "tenant";
    j["job_fields"][0]["categories"] = {"a"};
    CHECK_THROWS_WITH_AS(gp::env(gp::scenario_from_json(j)),
                         ("config /workload/merge_as: the file " + gp::display_path(b) +
                          " would be category \"b\" of field \"tenant\", which is not among its categories (a)")
                             .c_str(),
                         gp::ConfigError);
    std::filesystem::remove_all(dir);
}

TEST_CASE("presets: philly_tenants, Philly's virtual clusters as tenants") {
    gp::env e(gp::preset_scenario("philly_tenants"));
    for (std::uint64_t seed : {1000000ULL, 1000001ULL, 1000002ULL}) {
        e.reset(seed);
        const auto& jobs = e.simulator().jobs();
        REQUIRE(jobs.size() == 200);
        std::set<double> tenants;
        for (std::uint32_t i = 0; i < jobs.size(); ++i) {
            tenants.insert(e.field_value(i, 0));
            if (i > 0) CHECK(jobs[i - 1].submit_time <= jobs[i].submit_time);
        }
        CHECK(tenants.size() >= 2);  // windows of the merged files hold jobs of several virtual clusters
        CHECK(tenants.count(0.0) + tenants.count(1.0) + tenants.count(2.0) == tenants.size());
    }
}
