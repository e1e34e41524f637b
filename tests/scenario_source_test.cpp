// Tests of include/gpuplace/scenario_source.hpp: one rule for a string that names a scenario
// (JSON text, then a preset name, then a file), and errors that say what was tried.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gpuplace/scenario_source.hpp>

namespace gp = gpuplace;

namespace {

/// A scratch folder under the temporary directory, removed at the end of the test.
struct source_test_dir {
    std::filesystem::path path;
    explicit source_test_dir(const std::string& name)
        : path(std::filesystem::temp_directory_path() / ("gpuplace_scenario_source_test_" + name)) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~source_test_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name) << text;
        return (path / name).string();
    }
};

/// Whether two scenarios are the same (their JSON, every option filled in).
bool same_scenario(const gp::scenario& a, const gp::scenario& b) { return gp::to_json(a) == gp::to_json(b); }

constexpr const char* small_text = R"({"name": "s", "topology": {"preset": "dgx1", "racks": 1, "nodes_per_rack": 2}})";

}  // namespace

TEST_CASE("scenario source: JSON text, then a preset name, then a file") {
    using k = gp::scenario_source_kind;
    CHECK(gp::scenario_source_of(small_text) == k::json_text);
    CHECK(gp::scenario_source_of("  \n {}") == k::json_text);
    CHECK(gp::scenario_source_of("default") == k::preset);
    CHECK(gp::scenario_source_of(" proximity_drl\n") == k::preset);
    CHECK(gp::scenario_source_of("philly:0e4a51") == k::preset);
    CHECK(gp::to_string(k::json_text) == "json_text");
    CHECK(gp::to_string(k::file) == "file");

    const source_test_dir dir("kinds");
    const auto file = dir.write("small.json", small_text);
    CHECK(gp::scenario_source_of(file) == k::file);
    CHECK(same_scenario(gp::read_scenario(file), gp::parse_scenario(small_text)));
    CHECK(same_scenario(gp::read_scenario(small_text), gp::parse_scenario(small_text)));
    CHECK(same_scenario(gp::read_scenario(" default "), gp::preset_scenario("default")));
    // with a base folder, a relative file name is under it
    CHECK(gp::scenario_source_of("small.json", dir.path.string()) == k::file);
    CHECK(same_scenario(gp::read_scenario("small.json", dir.path.string()), gp::parse_scenario(small_text)));

    // a preset wins over a file of the same name; a path to that file reads the file
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir.path);
    dir.write("default", small_text);
    CHECK(gp::scenario_source_of("default") == k::preset);
    CHECK(gp::scenario_source_of("./default") == k::file);
    CHECK(same_scenario(gp::read_scenario("./default"), gp::parse_scenario(small_text)));
    std::filesystem::current_path(cwd);
}

TEST_CASE("scenario source: a file's relative paths are under its folder") {
    const source_test_dir dir("paths");
    std::filesystem::create_directories(dir.path / "sub");
    dir.write("sub/jobs.csv", "submit_time,num_gpus,duration\n0,1,60\n");
    const auto file = dir.write("sub/trace.json", R"({"workload": {"kind": "trace", "format": "csv", "path": "jobs.csv"}})");
    const auto s = gp::read_scenario(file);
    CHECK(s.workload.path == (dir.path / "sub" / "jobs.csv").lexically_normal().string());
}

TEST_CASE("scenario source: errors say what was tried") {
    const auto missing = std::filesystem::absolute("no_such_scenario.json").lexically_normal().string();
    CHECK_THROWS_WITH_AS((void)gp::read_scenario("no_such_scenario.json"),
                         ("scenario \"no_such_scenario.json\": not JSON text (it does not start with '{'), not a preset "
                          "(default, proximity_drl, colocation, philly, heterogeneous, philly_hidden, nvl72, heterogeneous_gavel, elastic, failures, tenants, philly_tenants, spot, deadlines, philly:<file>, philly_hidden:<file>) and not a file (no file \"" +
                          missing + "\")")
                             .c_str(),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::scenario_source_of(" \n"),
                         "scenario \" \n\": empty (expected a preset name, a scenario file or JSON text)", gp::ConfigError);
    // JSON text and files: the reader's own errors, naming the source
    CHECK_THROWS_WITH_AS((void)gp::read_scenario(R"({"workload": {"num_jobz": 3}})"),
                         doctest::Contains("config /workload/num_jobz: unknown key \"num_jobz\""), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::read_scenario("{\"name\": "), doctest::Contains("scenario JSON text"), gp::ConfigError);
    const source_test_dir dir("errors");
    const auto bad = dir.write("bad.json", "{\"env\": {\"max_steps\": -1}}");
    CHECK_THROWS_WITH_AS((void)gp::read_scenario(bad), doctest::Contains("config /env/max_steps"), gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::read_scenario(dir.path.string()), doctest::Contains("is a directory, not a file"),
                         gp::ConfigError);
    CHECK_THROWS_WITH_AS((void)gp::read_scenario("philly:a/b"), doctest::Contains("expected philly:<file>"), gp::ConfigError);
}
