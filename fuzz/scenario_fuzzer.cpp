// Fuzzes the JSON scenario reader (gpuplace::parse_scenario) and what is built from it: a
// scenario that parses must survive a to_json() round trip unchanged, and an env built from it
// must reset and step through valid actions without any error but gpuplace::Error.
//
// Inputs above the size caps in fuzz_check.hpp (GPUs, jobs), and inputs that name files (a trace
// workload, a zoo file, a co-location profile), are parsed but not built: the scenario_files fuzzer
// builds scenarios with the files they name.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <gpuplace/env.hpp>
#include <gpuplace/json.hpp>

#include "drive_env.hpp"
#include "fuzz_check.hpp"

namespace gp = gpuplace;

namespace {

bool too_big(const gp::scenario& s, std::size_t G) {
    const auto& w = s.workload;
    if (G > gp::fuzz::max_gpus) return true;
    if (w.kind == "trace") return true;  // reads a file
    if (w.kind == "synthetic" && w.synthetic.num_jobs > gp::fuzz::max_jobs) return true;
    if (w.kind == "proximity_drl" && w.proximity_drl.num_jobs > gp::fuzz::max_jobs) return true;
    if (!s.zoo.file.empty() || !s.colocation.profile.empty()) return true;  // reads a file
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    gp::scenario s;
    try {
        s = gp::parse_scenario(text, "fuzz");
    } catch (const gp::ConfigError& e) {
        FUZZ_CHECK(std::string_view(e.what()).rfind("config /", 0) == 0 ||
                       std::string_view(e.what()).rfind("fuzz: invalid JSON at byte ", 0) == 0 ||
                       std::string_view(e.what()).rfind("fuzz: not a JSON text file: byte ", 0) == 0 ||  // binary input
                       std::string_view(e.what()).rfind("fuzz: config /", 0) == 0 ||                     // a duplicate key
                       std::string_view(e.what()).rfind("model zoo", 0) == 0 ||
                       std::string_view(e.what()).rfind("/zoo", 0) == 0,
                   "config error without a JSON path: %s", e.what());
        return 0;
    }
    // to_json() reads back to the same scenario
    const auto j1 = gp::to_json(s);
    gp::scenario s2;
    try {
        s2 = gp::scenario_from_json(j1);
    } catch (const gp::Error& e) {
        FUZZ_CHECK(false, "to_json() does not read back: %s\n%s", e.what(), j1.dump().c_str());
    }
    FUZZ_CHECK(gp::to_json(s2) == j1, "round trip changed the scenario:\n%s\n%s", j1.dump().c_str(), gp::to_json(s2).dump().c_str());

    std::size_t G = 0;
    try {
        G = gp::TreeTopology::from_config(s.topology).num_gpus();
    } catch (const gp::ConfigError&) {
        return 0;
    }
    if (too_big(s, G)) return 0;
    const std::uint64_t seed = size;
    const auto& m = s.comm.model;
    const bool known = m == "tree_route" || m == "ring_allreduce";
    bool threw = false;
    try {
        gp::fuzz::drive<gp::env>(s, seed);
    } catch (const gp::ConfigError& e) {
        // only an unknown or non-string comm model escapes drive(): a ConfigError, never a silent default
        threw = true;
        FUZZ_CHECK(std::string_view(e.what()).rfind("config /comm/model: ", 0) == 0, "unexpected error: %s", e.what());
    }
    FUZZ_CHECK(threw != known, "comm model %s: %s", m.c_str(), threw ? "refused" : "accepted");
    return 0;
}
