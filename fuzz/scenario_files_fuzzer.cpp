// Fuzzes scenarios that name files: the input is a scenario (JSON), then, after each line "---",
// the text of a file. The fuzzer writes the files and points the scenario at them: the first is the
// trace of a "trace" workload (any format), the second a zoo file (when "zoo" is a string), the
// third a co-location profile (.json when it starts with '{', else .csv). Then, as the scenario
// fuzzer does, it builds both env types the scenario allows and steps them through valid actions:
// only a gpuplace error may escape the build (an empty trace, a bad row, a bad zoo are errors, never
// a crash), and a built env never shows an all-zero mask.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>

#include "drive_env.hpp"
#include "fuzz_check.hpp"

namespace gp = gpuplace;

namespace {

/// The folder this process writes its files in (one per process: fuzzers may run in parallel).
const std::filesystem::path& scratch() {
    static const auto dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("gpuplace_fuzz_files_" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

std::string write_file(const std::string& name, std::string_view text) {
    const auto p = (scratch() / name).string();
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(text.data(), std::streamsize(text.size()));
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> parts;
    for (std::size_t b = 0;;) {
        const auto e = input.find("\n---\n", b);
        parts.push_back(input.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
        if (e == std::string_view::npos) break;
        b = e + 5;
    }
    gp::scenario s;
    try {
        s = gp::parse_scenario(parts[0], "fuzz");
    } catch (const gp::ConfigError&) {
        return 0;  // the scenario fuzzer checks these messages
    }
    if (parts.size() > 1 && s.workload.kind == "trace") s.workload.path = write_file("trace", parts[1]);
    if (parts.size() > 2 && !s.zoo.file.empty()) s.zoo.file = write_file("zoo.json", parts[2]);
    if (parts.size() > 3 && !s.colocation.profile.empty())
        s.colocation.profile = write_file(!parts[3].empty() && parts[3][0] == '{' ? "profile.json" : "profile.csv", parts[3]);
    // files the input does not give: a name that does not exist (an error, not a crash)
    if (s.workload.kind == "trace" && parts.size() < 2) s.workload.path = (scratch() / "missing.trace").string();
    if (!s.zoo.file.empty() && parts.size() < 3) s.zoo.file = (scratch() / "missing.json").string();
    if (!s.colocation.profile.empty() && parts.size() < 4) s.colocation.profile = (scratch() / "missing.csv").string();
    std::size_t G = 0;
    try {
        G = gp::TreeTopology::from_config(s.topology).num_gpus();
    } catch (const gp::ConfigError&) {
        return 0;
    }
    if (G > gp::fuzz::max_gpus) return 0;
    if (s.workload.kind == "synthetic" && s.workload.synthetic.num_jobs > gp::fuzz::max_jobs) return 0;
    if (s.workload.kind == "proximity_drl" && s.workload.proximity_drl.num_jobs > gp::fuzz::max_jobs) return 0;
    if (s.workload.kind == "trace" && parts.size() > 1 && parts[1].size() > 64 * 1024) return 0;
    const std::uint64_t seed = size;
    try {
        gp::fuzz::drive<gp::env>(s, seed);
    } catch (const gp::ConfigError&) {
        // a missing or unreadable zoo or profile file, an unknown comm model: errors naming them
    }
    return 0;
}
