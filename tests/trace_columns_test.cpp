// Traces in their own words (trace.hpp: trace_options::columns, ignore, model_mix): a csv trace's
// header mapped to the reader's columns with units, the ITP-style fixture (examples/data/
// itp_sample.csv) loaded through a mapping, the named model mixes and their counts, errors.

#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

using namespace gpuplace;

namespace {
const ModelZoo& columns_zoo() {
    static const ModelZoo z = ModelZoo::gavel_v100();
    return z;
}
trace read_mapped(const std::string& text, trace_options o) {
    std::istringstream in(text);
    return read_trace(trace_format::csv, in, "t", columns_zoo(), o);
}
trace_options itp_options() {
    trace_options o;
    o.columns = {{"submit_time", "submission_time", time_unit::timestamp}, {"num_gpus", "num_gpu", time_unit::seconds}};
    o.ignore = {"job_id"};
    o.mix.mix = "uniform";
    o.mix.seed = 7;
    return o;
}
}  // namespace

TEST_CASE("trace columns: a header in the trace's own words, with units, reads as the plain schema does") {
    const std::string plain = "submit_time,num_gpus,duration,model\n0,2,600,LM (batch size 20)\n90,1,7200,A3C\n";
    const auto a = read_mapped(plain, {});
    trace_options o;
    o.columns = {{"submit_time", "arrival_min", time_unit::minutes},
                 {"num_gpus", "gpus", time_unit::seconds},
                 {"duration", "runtime_h", time_unit::hours},
                 {"model", "job_type", time_unit::seconds}};
    const auto b = read_mapped("gpus,arrival_min,job_type,runtime_h\n2,0,LM (batch size 20),0.1666666666666667\n1,1.5,A3C,2\n", o);
    REQUIRE(b.jobs.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(b.jobs[i].submit_time == a.jobs[i].submit_time);
        CHECK(b.jobs[i].num_gpus == a.jobs[i].num_gpus);
        CHECK(b.jobs[i].model == a.jobs[i].model);
        CHECK(b.jobs[i].work == doctest::Approx(a.jobs[i].work).epsilon(1e-12));
    }
    CHECK(b.models_assigned == 0);
    // dates and times: UTC, "T" and "Z" allowed, fractions of a second
    trace_options t = o;
    t.columns[0] = {"submit_time", "when", time_unit::timestamp};
    t.columns[2].unit = time_unit::seconds;
    const auto c = read_mapped("when,gpus,job_type,runtime_h\n2020-02-28 23:59:30,1,A3C,60\n2020-02-29T00:00:00.5Z,1,A3C,60\n"
                               "2020-03-01 00:00:00,1,A3C,60\n",
                               t);
    REQUIRE(c.jobs.size() == 3);
    CHECK(c.jobs[1].submit_time == 30.5);
    CHECK(c.jobs[2].submit_time == 30 + 86400);  // 2020 is a leap year
}

TEST_CASE("trace columns: the ITP-style fixture loads through a mapping, its models assigned by a named seeded mix") {
    const std::string file = std::string(GPUPLACE_SOURCE_DIR) + "/examples/data/itp_sample.csv";
    const auto t = load_trace(trace_format::csv, file, columns_zoo(), itp_options());
    CHECK(t.rows == 40);
    REQUIRE(t.jobs.size() == 40);
    CHECK(t.models_assigned == 40);
    CHECK(t.jobs[0].submit_time == 0);
    CHECK(t.jobs[1].submit_time == 256);  // 08:02:46 -> 08:07:02
    CHECK(t.jobs[0].num_gpus == 2);
    // the same seed, the same models; another seed, others; every model measured at the job's GPUs
    const auto again = load_trace(trace_format::csv, file, columns_zoo(), itp_options());
    auto other = itp_options();
    other.mix.seed = 8;
    const auto t8 = load_trace(trace_format::csv, file, columns_zoo(), other);
    std::size_t same = 0, differ = 0;
    for (std::size_t i = 0; i < t.jobs.size(); ++i) {
        same += t.jobs[i].model == again.jobs[i].model;
        differ += t.jobs[i].model != t8.jobs[i].model;
        if (t.jobs[i].num_gpus <= 8) CHECK(columns_zoo()[t.jobs[i].model].max_measured_gpus() >= t.jobs[i].num_gpus);
    }
    CHECK(same == 40);
    CHECK(differ > 10);
    // a weighted mix draws only its models
    auto w = itp_options();
    w.mix = {"weighted", 3, {{"LM (batch size 20)", 1.0}, {"Transformer (batch size 64)", 3.0}}};
    for (const auto& j : load_trace(trace_format::csv, file, columns_zoo(), w).jobs) {
        const auto& n = columns_zoo()[j.model].name;
        CHECK((n == "LM (batch size 20)" || n == "Transformer (batch size 64)"));
    }
}

TEST_CASE("trace columns: the scenario file examples/scenarios/itp_trace.json plays, and the episode says how many models were assigned") {
    const auto s = load_scenario(std::string(GPUPLACE_SOURCE_DIR) + "/examples/scenarios/itp_trace.json");
    env e(s);
    e.reset(1);
    CHECK(e.info().jobs_total == 40);
    CHECK(e.info().models_assigned == 40);
    // a window of the trace: only its rows count
    auto w = s;
    w.workload.episode_jobs = 10;
    env ew(w);
    ew.reset(3);
    CHECK(ew.info().jobs_total == 10);
    CHECK(ew.info().models_assigned == 10);
    // a trace with a model column assigns none
    const auto philly = preset_scenario("philly:0e4a51");
    env ep(philly);
    ep.reset(0);
    CHECK(ep.info().models_assigned == 0);
    // the mapping's JSON reads back to the same scenario
    CHECK(to_json(scenario_from_json(to_json(s))) == to_json(s));
}

TEST_CASE("trace columns: errors name the column, the file's line and the JSON path") {
    auto o = itp_options();
    CHECK_THROWS_WITH_AS(read_mapped("job_id,submission_time,duration,num_gpu,user\nx,2020-01-01 00:00:00,60,1,u\n", o),
                         "t:1:41: unknown column \"user\" (allowed: submit_time, num_gpus, duration, steps, model, gpu_fraction); map it "
                         "in the workload's \"columns\", or list it in \"ignore_columns\"",
                         TraceError);
    CHECK_THROWS_WITH_AS(read_mapped("job_id,duration,num_gpu\n", o),
                         "t:1:1: the header has no column \"submission_time\" (the columns mapping's submit_time)", TraceError);
    CHECK_THROWS_WITH_AS(read_mapped("job_id,submission_time,duration,num_gpu\nx,2020-13-01 00:00:00,60,1\n", o),
                         "t:2:3: submission_time: expected a date and time like 2017-10-03 04:40:25, got \"2020-13-01 00:00:00\"", TraceError);
    o.mix = {};
    CHECK_THROWS_WITH_AS(read_mapped("job_id,submission_time,duration,num_gpu\n", o),
                         "t:1:1: no model column: say how rows get a model, with the workload's \"model\" (one zoo model for every row) or "
                         "\"model_mix\" (by_row, uniform or weighted; docs/workloads.md)",
                         TraceError);
    const auto bad = [](const char* workload) {
        try {
            (void)scenario_from_json(json{{"workload", parse_json(workload, "test")}});
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(bad(R"({"kind": "trace", "format": "csv", "path": "x.csv", "columns": {"submit": "s"}})") ==
          "config /workload/columns/submit: unknown column \"submit\" (allowed: submit_time, num_gpus (or gpus), duration, steps, model, "
          "gpu_fraction; a field of one's own must be declared in /job_fields)");
    CHECK(bad(R"({"kind": "trace", "format": "csv", "path": "x.csv", "columns": {"duration": {"column": "d", "unit": "days"}}})") ==
          "config /workload/columns/duration/unit: unknown unit \"days\" (allowed: seconds, milliseconds, minutes, hours, timestamp)");
    CHECK(bad(R"({"kind": "trace", "format": "csv", "path": "x.csv", "columns": {"duration": {"column": "d", "unit": "timestamp"}}})") ==
          "config /workload/columns/duration/unit: \"timestamp\" (a date and time) applies to submit_time only");
    CHECK(bad(R"({"kind": "trace", "format": "philly", "path": "x.trace", "columns": {"duration": "d"}})") ==
          "config /workload/columns: maps a csv trace's header; format \"philly\" has its own columns");
    CHECK(bad(R"({"kind": "trace", "format": "csv", "path": "x.csv", "model_mix": {"mix": "weighted", "seed": 1}})") ==
          "config /workload/model_mix: mix \"weighted\" needs \"weights\": {\"<model name>\": weight}");
    CHECK(bad(R"({"kind": "trace", "format": "csv", "path": "x.csv", "model": "A3C", "model_mix": "uniform"})") ==
          "config /workload/model_mix: \"model\" (one model for every row) and \"model_mix\" exclude each other");
}
