// Tests of include/gpuplace/trace_registry.hpp: a trace format registered with one call reads as
// the built-in csv reader does on the same jobs (bit for bit, through the trace options), is a
// scenario's trace format by name (written back by name, a declared job field read, defaults
// applied), is listed by the registry under kind "trace_format", and refuses bad names and bad
// readers' jobs by name. Every registration is undone before its test ends.

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>
#include <sstream>
#include <string>

#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy.hpp>
#include <gpuplace/registry.hpp>
#include <gpuplace/trace_registry.hpp>

#include "test_util.hpp"

namespace gp = gpuplace;
using gp::test::json;

namespace {

/// "submit gpus seconds model-name [priority]", space-separated, '#' lines skipped: the test's format.
gp::trace read_ssv(std::istream& in, const std::string&, const gp::ModelZoo& zoo, const gp::trace_options& o) {
    gp::trace t;
    const auto prio = gp::field_index(o.fields, "priority");
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        ++t.rows;
        std::istringstream row(line);
        gp::TrainingJob j;
        double seconds = 0;
        std::string model;
        row >> j.submit_time >> j.num_gpus >> seconds >> model;
        j.model = zoo.find(model);
        j.work = seconds * zoo[j.model].at(j.num_gpus).consolidated;
        t.jobs.push_back(j);
        double p = std::nan("");
        row >> p;
        for (std::size_t f = 0; f < o.fields.size(); ++f) t.field_values.push_back(f == prio ? p : std::nan(""));
    }
    return t;
}

/// Undoes a test's registration when it ends, whatever happens.
struct registered {
    std::string name;
    registered(std::string n, gp::trace_reader r, std::string about = "a test's") : name(std::move(n)) {
        gp::register_trace_format(name, about, std::move(r));
    }
    ~registered() { gp::unregister_trace_format(name); }
    registered(const registered&) = delete;
    registered& operator=(const registered&) = delete;
};

/// A file of the temporary folder holding `text`, removed at the end.
struct temp_file {
    std::string path;
    temp_file(const std::string& name, const std::string& text)
        : path((std::filesystem::temp_directory_path() / ("gpuplace_trace_registry_" + name)).string()) {
        std::ofstream(path) << text;
    }
    ~temp_file() { std::filesystem::remove(path); }
};

const std::string ssv = "# submit gpus seconds model\n100 2 600 A3C 3\n40 1 7200 CycleGAN\n250 4 1800 A3C 9\n";
const std::string csv = "submit_time,num_gpus,duration,model\n100,2,600,A3C\n40,1,7200,CycleGAN\n250,4,1800,A3C\n";

}  // namespace

TEST_CASE("trace registry: a registered reader reads as the csv reader does, through the same options") {
    const registered r("test_ssv", read_ssv);
    const auto zoo = gp::ModelZoo::builtin();
    gp::trace_options o;
    o.time_scale = 0.5;
    o.target_load = 0.8;
    std::istringstream a_in(ssv), b_in(csv);
    const auto a = gp::read_trace(gp::find_trace_format("test_ssv")->reader, a_in, "a.ssv", zoo, o, 16);
    const auto b = gp::read_trace(gp::trace_format::csv, b_in, "b.csv", zoo, o, 16);
    REQUIRE(a.jobs.size() == 3);
    REQUIRE(b.jobs.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(a.jobs[i].submit_time == b.jobs[i].submit_time);
        CHECK(a.jobs[i].num_gpus == b.jobs[i].num_gpus);
        CHECK(a.jobs[i].model == b.jobs[i].model);
        CHECK(a.jobs[i].work == b.jobs[i].work);
    }
    CHECK(a.jobs[0].submit_time == 0);  // sorted and shifted: CycleGAN first
    CHECK(a.rows == 3);
    CHECK(a.arrival_scale == b.arrival_scale);
    CHECK(a.source == "a.ssv");
}

TEST_CASE("trace registry: a scenario names the format, its declared fields are read, and it is listed") {
    const registered r("test_ssv", read_ssv, "space-separated rows");
    const temp_file f("scenario.ssv", ssv);
    const auto j = json{{"topology", {{"preset", "dgx_a100"}, {"racks", 1}, {"nodes_per_rack", 2}}},
                        {"job_fields", json::array({json{{"name", "priority"}, {"default", 1}}})},
                        {"workload", {{"kind", "trace"}, {"format", "test_ssv"}, {"path", f.path}}}};
    const auto s = gp::scenario_from_json(j);
    CHECK(s.workload.format == gp::trace_format::registered);
    CHECK(s.workload.format_name == "test_ssv");
    CHECK(gp::to_json(s)["workload"]["format"] == "test_ssv");  // written back by name
    CHECK(gp::scenario_from_json(gp::to_json(s)).workload.format_name == "test_ssv");
    gp::env e(s);
    gp::pack_policy pack;
    const auto res = gp::run_episode(e, pack, 1);
    CHECK(res.terminated);
    CHECK(e.finished().size() == 3);
    // the jobs in submit order: CycleGAN (no priority: the default 1), then the A3C jobs (3 and 9)
    const auto pf = gp::field_index(s.job_fields, "priority");
    CHECK(e.field_value(0, pf) == 1);
    CHECK(e.field_value(1, pf) == 3);
    CHECK(e.field_value(2, pf) == 9);
    const auto formats = gp::registry_entries("trace_format");
    CHECK(std::count(formats.begin(), formats.end(), gp::registry_entry{"trace_format", "test_ssv", "space-separated rows"}) == 1);
}

TEST_CASE("trace registry: bad names, unknown formats and a reader's bad jobs are errors naming them") {
    CHECK_THROWS_WITH_AS(gp::register_trace_format("csv", "", read_ssv), "trace format \"csv\" is a built-in format", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_trace_format("", "", read_ssv), "trace format name \"\": empty", gp::ConfigError);
    CHECK_THROWS_WITH_AS(gp::register_trace_format("test_none", "", nullptr), "trace format \"test_none\": no reader", gp::ConfigError);
    const auto scenario_with = [](const std::string& format) {
        return json{{"workload", {{"kind", "trace"}, {"format", format}, {"path", "x"}}}};
    };
    {
        const registered r("test_ssv", read_ssv, "space-separated rows");
        CHECK_THROWS_WITH_AS(gp::register_trace_format("test_ssv", "", read_ssv),
                             "trace format \"test_ssv\" is registered already (space-separated rows)", gp::ConfigError);
        CHECK_THROWS_WITH_AS(gp::scenario_from_json(scenario_with("test_tsv")),
                             "config /workload/format: unknown trace format \"test_tsv\" (allowed: philly, openb, csv, test_ssv)",
                             gp::ConfigError);
        // a scenario read while it was registered, an env built after: refused by name
        auto s = gp::scenario_from_json(scenario_with("test_ssv"));
        gp::unregister_trace_format("test_ssv");
        CHECK_THROWS_WITH_AS(gp::env{s}, "config /workload/format: unknown trace format \"test_ssv\" (allowed: philly, openb, csv)",
                             gp::ConfigError);
    }
    const auto zoo = gp::ModelZoo::builtin();
    const auto with_job = [](gp::TrainingJob j) {
        return [j](std::istream&, const std::string&, const gp::ModelZoo&, const gp::trace_options&) {
            gp::trace t;
            t.jobs.push_back(j);
            return t;
        };
    };
    std::istringstream in("");
    gp::TrainingJob ok;
    ok.work = 100;
    ok.num_gpus = 1;
    auto bad = ok;
    bad.num_gpus = 0;
    CHECK_THROWS_WITH_AS(gp::read_trace(with_job(bad), in, "f.ssv", zoo), doctest::Contains("f.ssv: job 0 of the reader: no GPU requested"), gp::TraceError);
    bad = ok;
    bad.model = 999;
    CHECK_THROWS_WITH_AS(gp::read_trace(with_job(bad), in, "f.ssv", zoo),
                         doctest::Contains("f.ssv: job 0 of the reader: model id 999 is not in the zoo"), gp::TraceError);
    bad = ok;
    bad.work = std::nan("");
    CHECK_THROWS_WITH_AS(gp::read_trace(with_job(bad), in, "f.ssv", zoo),
                         doctest::Contains("f.ssv: job 0 of the reader: work nan steps: expected a finite number > 0"), gp::TraceError);
    bad = ok;
    bad.submit_time = -1;
    CHECK_THROWS_WITH_AS(gp::read_trace(with_job(bad), in, "f.ssv", zoo),
                         doctest::Contains("f.ssv: job 0 of the reader: submit time -1 s: expected a number in [0, 1e+10]"), gp::TraceError);
    gp::trace_options o;
    o.fields.emplace_back().name = "priority";
    CHECK_THROWS_WITH_AS(gp::read_trace(with_job(ok), in, "f.ssv", zoo, o),
                         doctest::Contains("f.ssv: 0 field values for 1 jobs and 1 declared fields (expected 1)"), gp::ConfigError);
    CHECK(gp::read_trace(with_job(ok), in, "f.ssv", zoo).jobs.size() == 1);
    CHECK(gp::registered_trace_formats().empty());
}
