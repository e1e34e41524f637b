#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

using namespace gpuplace;

namespace {
const ModelZoo& zoo() {
    static const ModelZoo z = ModelZoo::gavel_v100();
    return z;
}
trace read_test_trace(trace_format f, const std::string& text, trace_options o = {}, std::size_t gpus = 0) {
    std::istringstream in(text);
    return read_trace(f, in, "t", zoo(), o, gpus);
}
std::string repo(const std::string& rel) { return std::string(GPUPLACE_SOURCE_DIR) + "/" + rel; }
const std::string philly_row = "A3C\tcd %s && python3 main.py\t--max-steps\t0\t1000\t12.5\t2\n";
}  // namespace

TEST_CASE("trace: Gavel Philly-derived rows (data/philly)") {
    const auto t = load_trace(trace_format::philly, repo("data/philly/0e4a51.trace"), zoo());
    CHECK(t.rows == 1181);
    REQUIRE(t.jobs.size() == 1181);
    // first line: Transformer (batch size 128) ... -step 1 95121 0.000000 1
    CHECK(zoo()[t.jobs[0].model].name == "Transformer (batch size 128)");
    CHECK(t.jobs[0].work == 95121);
    CHECK(t.jobs[0].submit_time == 0);
    CHECK(t.jobs[0].num_gpus == 1);
    CHECK(zoo()[t.jobs[1].model].name == "Recommendation (batch size 8192)");
    CHECK(t.jobs[1].submit_time == 6);
    for (std::size_t i = 1; i < t.jobs.size(); ++i) CHECK(t.jobs[i].submit_time >= t.jobs[i - 1].submit_time);
    CHECK(t.jobs.back().submit_time == 7363956);
    // the same file through the data folder
    CHECK(load_trace(trace_format::philly, "$GPUPLACE_DATA/philly/0e4a51.trace", zoo()).jobs.size() == 1181);
}

TEST_CASE("trace: openb pods (examples/data/openb_sample.csv, a file in the openb schema)") {
    const auto t = load_trace(trace_format::openb, repo("examples/data/openb_sample.csv"), zoo());
    CHECK(t.rows == 40);
    CHECK(t.filtered == 8);  // 4 CPU-only pods, 3 never scheduled, 1 that ran for no time
    REQUIRE(t.jobs.size() == 32);
    // fixture-pod-0000: 4 GPUs, gpu_milli 1000, created 2652, scheduled 2701, deleted 8048
    CHECK(t.jobs[0].num_gpus == 4);
    CHECK(t.jobs[0].gpu_fraction == 1.0);
    CHECK(t.jobs[0].submit_time == 0);
    CHECK(t.jobs[0].work / zoo()[t.jobs[0].model].at(4).consolidated == doctest::Approx(8048 - 2701));
    // fixture-pod-0001: 1 GPU, gpu_milli 250, created 6808
    CHECK(t.jobs[1].gpu_fraction == doctest::Approx(0.25));
    CHECK(t.jobs[1].submit_time == 6808 - 2652);
    std::size_t multi = 0, shared = 0;
    for (const auto& j : t.jobs) {
        multi += j.num_gpus > 1;
        shared += j.gpu_fraction < 1.0;
    }
    CHECK(multi == 6);
    CHECK(shared == 12);
}

TEST_CASE("trace: the plain CSV schema") {
    const auto t = read_test_trace(trace_format::csv,
                        "submit_time,num_gpus,duration,model\n"
                        "10,2,3600,ResNet-18 (batch size 64)\n"
                        "# a comment\n"
                        "0,1,60,A3C\n");
    REQUIRE(t.jobs.size() == 2);
    CHECK(zoo()[t.jobs[0].model].name == "A3C");  // sorted by submit time
    CHECK(t.jobs[0].work == doctest::Approx(60 * zoo()[t.jobs[0].model].at(1).consolidated));
    CHECK(t.jobs[1].submit_time == 10);
    CHECK(t.jobs[1].work == doctest::Approx(3600 * 74.13589143268821));
    const auto s = read_test_trace(trace_format::csv, "model,steps,num_gpus,submit_time,gpu_fraction\nA3C,500,1,0,0.5\n");
    CHECK(s.jobs[0].work == 500);
    CHECK(s.jobs[0].gpu_fraction == 0.5);
    trace_options o;
    o.model = "CycleGAN";
    CHECK(zoo()[read_test_trace(trace_format::csv, "submit_time,num_gpus,duration\n0,1,5\n", o).jobs[0].model].name == "CycleGAN");
}

TEST_CASE("trace: malformed rows name file:line:column") {
    auto philly = [](const std::string& row) { return read_test_trace(trace_format::philly, philly_row + row); };
    CHECK_THROWS_WITH_AS(philly("A3C\tcmd\t-n\t1\t100\t5\n"),
                         "t:2:19: missing field 7 (GPU count): the row has 6 of 7 fields", TraceError);
    CHECK_THROWS_WITH_AS(philly("A3C\tcmd\t-n\t1\tmany\t5\t1\n"), "t:2:14: total steps: expected a number, got \"many\"",
                         TraceError);
    CHECK_THROWS_WITH_AS(philly("A3C\tcmd\t-n\t1\t100\t-5\t1\n"), "t:2:18: arrival time: negative time -5", TraceError);
    CHECK_THROWS_WITH_AS(philly("A3C\tcmd\t-n\t1\t100\t5\t0\n"), "t:2:20: GPU count: zero GPUs", TraceError);
    CHECK_THROWS_WITH_AS(philly("BERT\tcmd\t-n\t1\t100\t5\t1\n"),
                         "t:2:1: job type: unknown model \"BERT\" (not in the v100 zoo of 26 models)", TraceError);
    const std::string h = "submit_time,num_gpus,duration\n";
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::csv, h + "0,1,5\n0,2\n"), "t:3:4: missing field 3 (duration): the row has 2 fields",
                         TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::csv, h + "0,x,5\n"), "t:2:3: num_gpus: expected a number, got \"x\"", TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::csv, h + "-1,1,5\n"), "t:2:1: submit_time: negative time -1", TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::csv, h + "0,0,5\n"), "t:2:3: num_gpus: zero GPUs", TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::csv, h + "0,1.5,5\n"),
                         "t:2:3: num_gpus: expected a whole number of GPUs, got \"1.5\"", TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::csv, "submit_time,gpus,duration\n"),
                         "t:1:13: unknown column \"gpus\" (allowed: submit_time, num_gpus, duration, steps, model, gpu_fraction)",
                         TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::csv, "submit_time,num_gpus\n0,1\n"),
                         "t:1:1: the header needs exactly one of the columns \"duration\" and \"steps\"", TraceError);
    const std::string oh = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::openb, oh + "p,1,1,1,1000,,LS,Running,abc,10,0\n"),
                         "t:2:26: creation_time: expected a number, got \"abc\"", TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::openb, oh + "p,1,1,1,1000,,LS,Running,0,10\n"),
                         "t:2:30: missing field 11 (scheduled_time): the row has 10 fields", TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::openb, oh + "p,1,1,1,1000,,LS,Running,0,5,10\n"),
                         "t:2:28: deletion_time: 5 is before scheduled_time 10", TraceError);
    CHECK_THROWS_WITH_AS(load_trace(trace_format::csv, "/nonexistent/x.csv", zoo()),
                         "/nonexistent/x.csv: cannot open the trace file", TraceError);
}

TEST_CASE("trace: skip_bad_rows skips and counts bad rows") {
    trace_options o;
    o.skip_bad_rows = true;
    const auto t = read_test_trace(trace_format::csv, "submit_time,num_gpus,duration\n0,1,5\n0,0,5\nx,1,5\n3,2,5\n0,1\n", o);
    CHECK(t.rows == 5);
    CHECK(t.jobs.size() == 2);
    CHECK(t.skipped_bad == 3);
    REQUIRE(t.bad_rows.size() == 3);
    CHECK(t.bad_rows[0] == "t:3:3: num_gpus: zero GPUs");
    // header errors are never skipped
    CHECK_THROWS_AS(read_test_trace(trace_format::csv, "when,num_gpus,duration\n0,1,5\n", o), TraceError);
}

TEST_CASE("trace: window, first N, time scale, GPU cap and target load") {
    std::string text = "submit_time,num_gpus,duration,model\n";
    for (int i = 0; i < 10; ++i)
        text += std::to_string(100 + 10 * i) + "," + std::to_string(i % 2 ? 16 : 2) + ",100,ResNet-18 (batch size 64)\n";
    trace_options o;
    o.window_start = 120;
    o.window_end = 170;
    auto t = read_test_trace(trace_format::csv, text, o);
    REQUIRE(t.jobs.size() == 5);  // submitted at 120 .. 160
    CHECK(t.jobs[0].submit_time == 0);
    CHECK(t.jobs[4].submit_time == 40);
    CHECK(t.outside == 5);
    o = {};
    o.max_jobs = 3;
    o.time_scale = 2;
    t = read_test_trace(trace_format::csv, text, o);
    REQUIRE(t.jobs.size() == 3);
    CHECK(t.jobs[2].submit_time == 40);
    CHECK(t.jobs[0].work == doctest::Approx(200 * 74.13589143268821));
    o = {};
    t = read_test_trace(trace_format::csv, text, o, 8);  // cap = cluster size: clamp 16 -> 8
    CHECK(t.capped == 5);
    CHECK(t.jobs[1].num_gpus == 8);
    o.drop_oversized = true;
    t = read_test_trace(trace_format::csv, text, o, 8);
    CHECK(t.dropped == 5);
    CHECK(t.jobs.size() == 5);
    o = {};
    o.target_load = 0.5;
    t = read_test_trace(trace_format::csv, text, o, 64);
    CHECK(t.offered_load(zoo(), 64) == doctest::Approx(0.5));
    CHECK(t.arrival_scale > 1);
}

TEST_CASE("trace: a trace workload is read once and replayed, same seed same episode") {
    const auto file = repo("data/philly/2869ce.trace");
    auto s = default_scenario();
    s.workload = workload_from_json(
        detail::json{{"kind", "trace"}, {"format", "philly"}, {"path", file}, {"max_jobs", 40}, {"target_load", 1.0}});
    CHECK(to_json(workload_from_json(to_json(s.workload))) == to_json(s.workload));
    env e(s);
    first_fit_policy p;
    const auto a = run_episode(e, p, 7);
    CHECK(a.terminated);
    CHECK(a.m.jobs_done == 40);
    const auto b = run_episode(e, p, 7);
    CHECK(a.m.avg_jct == b.m.avg_jct);
    CHECK(a.episode_return == b.episode_return);
    // episode_jobs: a seed-chosen run of consecutive jobs
    s.workload.episode_jobs = 10;
    env w(s);
    CHECK(run_episode(w, p, 1).m.jobs_total == 10);
    CHECK(run_episode(w, p, 1).m.avg_jct == run_episode(w, p, 1).m.avg_jct);
}

TEST_CASE("trace: workload JSON errors name the path") {
    using detail::json;
    CHECK_THROWS_WITH_AS(workload_from_json(json{{"kind", "trace"}, {"format", "swf"}, {"path", "x"}}),
                         "config /workload/format: unknown trace format \"swf\" (allowed: philly, openb, csv)", ConfigError);
    CHECK_THROWS_WITH_AS(workload_from_json(json{{"kind", "trace"}, {"format", "csv"}}),
                         "config /workload/path: kind \"trace\" needs the trace file's path", ConfigError);
    CHECK_THROWS_WITH_AS(workload_from_json(json{{"kind", "trace"}, {"format", "csv"}, {"path", "x"}, {"window", {5, 1}}}),
                         "config /workload/window: the window [5,1] is empty", ConfigError);
    auto s = default_scenario();
    s.workload = workload_from_json(json{{"kind", "trace"}, {"format", "csv"}, {"path", "/nonexistent.csv"}});
    CHECK_THROWS_WITH_AS(env{s}, "/nonexistent.csv: cannot open the trace file", TraceError);
}

TEST_CASE("trace: a row with more fields than its header or format is an error") {
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::csv, "submit_time,num_gpus,duration\n0,1,60,7\n"),
                         "t:2:8: extra field 4: the row has 4 fields, the header has 3", TraceError);
    CHECK_THROWS_WITH_AS(read_test_trace(trace_format::philly, "A3C\tcmd\t--max-steps\t0\t1000\t12.5\t2\textra\n"),
                         "t:1:35: extra field 8: the row has 8 fields, the philly format has 7", TraceError);
    const std::string oh = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
    CHECK_THROWS_AS(read_test_trace(trace_format::openb, oh + "p,1,1,1,1000,,LS,Running,0,10,0,9\n"), TraceError);
    // skippable like any bad row
    trace_options o;
    o.skip_bad_rows = true;
    const auto t = read_test_trace(trace_format::csv, "submit_time,num_gpus,duration\n0,1,60,7\n1,1,60\n", o);
    CHECK(t.jobs.size() == 1);
    CHECK(t.skipped_bad == 1);
}

namespace {
/// A scenario replaying `text` (written to a file) with the trace options of `opts`.
gpuplace::scenario empty_trace_scenario(const std::string& file, const std::string& text, const std::string& format,
                                        gpuplace::detail::json opts = gpuplace::detail::json::object()) {
    std::ofstream(file) << text;
    opts["kind"] = "trace";
    opts["format"] = format;
    opts["path"] = file;
    auto s = default_scenario();
    s.workload = workload_from_json(opts);
    return s;
}
}  // namespace

TEST_CASE("trace: a workload that leaves no job is an error when the env is built, saying why") {
    const auto dir = std::filesystem::temp_directory_path() / "gpuplace_trace_test_empty";
    std::filesystem::create_directories(dir);
    const std::string f = (dir / "t").string();
    auto fails = [&](const gpuplace::scenario& s, const std::string& why) {
        CHECK_THROWS_WITH_AS(env{s}, (f + ": no jobs to replay: " + why).c_str(), TraceError);
        auto t = s;
        t.comm.model = "tree_route";
        CHECK_THROWS_AS(tree_route_env{t}, TraceError);
    };
    fails(empty_trace_scenario(f, "submit_time,num_gpus,duration\n", "csv"), "0 data rows (an empty file, or a header alone)");
    fails(empty_trace_scenario(f, "", "philly"), "0 data rows (an empty file, or a header alone)");
    const std::string rows = "submit_time,num_gpus,duration\n0,1,60\n10,16,60\n";
    fails(empty_trace_scenario(f, rows, "csv", {{"window", {100, nullptr}}}),
          "2 data rows, of which 2 outside the time window or beyond max_jobs");
    fails(empty_trace_scenario(f, "submit_time,num_gpus,duration\n0,0,60\nx,1,60\n", "csv", {{"skip_bad_rows", true}}),
          "2 data rows, of which 2 bad (skip_bad_rows)");
    fails(empty_trace_scenario(f, "submit_time,num_gpus,duration\n0,99,60\n", "csv", {{"drop_oversized", true}}),
          "1 data row, of which 1 larger than the GPU cap (drop_oversized)");
    std::filesystem::remove_all(dir);
}

TEST_CASE("env: without a current job, the accessors and step() raise instead of reading a job") {
    auto s = default_scenario();
    s.workload.synthetic.num_jobs = 2;
    env e(s);
    CHECK_THROWS_WITH_AS((void)e.current_job(), "current_job(): reset() has not been called", StateError);
    e.reset(3);
    while (!e.done()) e.step(first_fit_policy{}.act(e));
    CHECK(e.terminated());
    CHECK_THROWS_WITH_AS((void)e.current_job(), "current_job(): the episode is over", StateError);
    CHECK(e.why_invalid(0) == "the episode is over");
    CHECK_THROWS_AS(e.step(0), StateError);
}
