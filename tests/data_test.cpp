// include/gpuplace/data.hpp: the data folder, relative paths in scenario files, full paths in errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

using namespace gpuplace;

namespace {
/// A fresh folder under the system's temporary folder, removed at the end of the test.
struct data_temp_dir {
    std::filesystem::path path;
    explicit data_temp_dir(const std::string& name)
        : path(std::filesystem::temp_directory_path() / ("gpuplace_data_test_" + name)) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~data_temp_dir() { std::filesystem::remove_all(path); }
    void write(const std::string& rel, const std::string& text) const {
        std::filesystem::create_directories((path / rel).parent_path());
        std::ofstream(path / rel) << text;
    }
};
}  // namespace

TEST_CASE("data: $GPUPLACE_DATA paths name the data folder, the build knows it") {
    CHECK(is_data_path("$GPUPLACE_DATA/philly/0e4a51.trace"));
    CHECK_FALSE(is_data_path("philly/0e4a51.trace"));
    CHECK(std::filesystem::exists(resolve_data_path("$GPUPLACE_DATA/philly/0e4a51.trace")));
    CHECK(std::filesystem::equivalent(data_dir(), std::string(GPUPLACE_SOURCE_DIR) + "/data"));
    set_data_dir("/somewhere/else");
    CHECK(resolve_data_path("$GPUPLACE_DATA/x.csv") == "/somewhere/else/x.csv");
    set_data_dir("");
    CHECK(std::filesystem::exists(resolve_data_path("$GPUPLACE_DATA/philly/0e4a51.trace")));
}

TEST_CASE("data: relative paths resolve against a base folder, others stay") {
    CHECK(resolve_data_path("a/b.csv", "/base/dir") == "/base/dir/a/b.csv");
    CHECK(resolve_data_path("../b.csv", "/base/dir") == "/base/b.csv");
    CHECK(resolve_data_path("/abs/b.csv", "/base/dir") == "/abs/b.csv");
    CHECK(resolve_data_path("a/b.csv") == "a/b.csv");
    CHECK(relative_to("$GPUPLACE_DATA/x.csv", "/base") == "$GPUPLACE_DATA/x.csv");
    CHECK(relative_to("x.csv", "/base") == "/base/x.csv");
}

TEST_CASE("data: a scenario file's relative trace path is relative to the file's folder") {
    data_temp_dir d("relative");
    d.write("traces/t.csv", "submit_time,num_gpus,duration\n0,1,60\n5,2,120\n");
    d.write("scenarios/s.json", R"({"workload": {"kind": "trace", "format": "csv", "path": "../traces/t.csv"}})");
    const auto s = load_scenario((d.path / "scenarios/s.json").string());
    CHECK(std::filesystem::equivalent(s.workload.path, d.path / "traces/t.csv"));
    env e(s);  // wherever the working directory is
    e.reset(1);
    CHECK(e.info().jobs_total == 2);
}

TEST_CASE("data: a file that cannot be opened is named with its full path") {
    data_temp_dir d("missing");
    d.write("s.json", R"({"workload": {"kind": "trace", "format": "csv", "path": "nope.csv"}})");
    const auto s = load_scenario((d.path / "s.json").string());
    const std::string want = (d.path / "nope.csv").string() + ": cannot open the trace file";
    CHECK_THROWS_WITH_AS(env{s}, want.c_str(), TraceError);
    auto rel = default_scenario();
    rel.workload = workload_from_json(detail::json{{"kind", "trace"}, {"format", "csv"}, {"path", "no_such_dir/t.csv"}});
    const std::string abs = (std::filesystem::current_path() / "no_such_dir/t.csv").string() + ": cannot open the trace file";
    CHECK_THROWS_WITH_AS(env{rel}, abs.c_str(), TraceError);
}
