// Fuzzes the JSON scenario reader (gpuplace::scenario::parse) and what is built from it: a
// scenario that parses must survive a to_json() round trip unchanged, and an env built from it
// must reset and step through valid actions without any error but gpuplace::Error.
//
// Inputs above the size caps in fuzz_check.hpp (GPUs, jobs), and inputs that name files (a trace
// workload, a zoo file, a co-location profile), are parsed but not built.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <gpuplace/config.hpp>
#include <gpuplace/env.hpp>

#include "fuzz_check.hpp"

namespace gp = gpuplace;

namespace {

bool too_big(const gp::scenario& s, std::size_t G) {
    const auto& w = s.workload;
    if (G > gp::fuzz::max_gpus) return true;
    if (w.kind == "trace") return true;  // reads a file
    if (w.kind == "synthetic" && w.synthetic.num_jobs > gp::fuzz::max_jobs) return true;
    if (w.kind == "proximity_drl" && w.proximity_drl.num_jobs > gp::fuzz::max_jobs) return true;
    if (s.zoo.is_string() || !s.colocation.profile.empty()) return true;  // reads a file
    return false;
}

template <class E>
void drive(const gp::scenario& s, std::uint64_t seed) {
    std::unique_ptr<E> e;
    try {
        e = std::make_unique<E>(s);
    } catch (const gp::ConfigError&) {
        return;  // e.g. a job that can never fit: rejected at construction, as documented
    }
    try {
        e->reset(seed);
    } catch (const gp::ConfigError&) {
        return;  // a drawn job the cluster or zoo cannot take (e.g. a proximity_drl request > G)
    }
    const std::size_t G = e->num_gpus();
    for (std::size_t step = 0; step < gp::fuzz::max_steps && !e->done(); ++step) {
        const auto mask = e->action_mask();
        FUZZ_CHECK(mask.size() == G + 1, "mask size %zu for %zu GPUs", mask.size(), G);
        std::size_t valid = 0;
        for (auto m : mask) valid += m != 0;
        FUZZ_CHECK(valid > 0, "all-zero mask at step %zu", step);
        for (float x : e->observation()) FUZZ_CHECK(std::isfinite(x) && x >= 0.0f && x <= 1.0f, "feature %g", double(x));
        // rotate through the valid actions so that DEFER is taken too
        std::size_t k = (seed + step) % valid;
        std::int64_t a = -1;
        for (std::size_t i = 0; i <= G; ++i)
            if (mask[i] && k-- == 0) {
                a = std::int64_t(i);
                break;
            }
        (void)e->step(a);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    gp::scenario s;
    try {
        s = gp::scenario::parse(text, "fuzz");
    } catch (const gp::ConfigError& e) {
        FUZZ_CHECK(std::string_view(e.what()).rfind("config /", 0) == 0 ||
                       std::string_view(e.what()).rfind("fuzz: invalid JSON at byte ", 0) == 0 ||
                       std::string_view(e.what()).rfind("model zoo", 0) == 0 ||
                       std::string_view(e.what()).rfind("/zoo", 0) == 0,
                   "config error without a JSON path: %s", e.what());
        return 0;
    }
    // to_json() reads back to the same scenario
    const auto j1 = s.to_json();
    gp::scenario s2;
    try {
        s2 = gp::scenario::from_json(j1);
    } catch (const gp::Error& e) {
        FUZZ_CHECK(false, "to_json() does not read back: %s\n%s", e.what(), j1.dump().c_str());
    }
    FUZZ_CHECK(s2.to_json() == j1, "round trip changed the scenario:\n%s\n%s", j1.dump().c_str(), s2.to_json().dump().c_str());

    std::size_t G = 0;
    try {
        G = gp::TreeTopology::from_json(s.topology, "/topology").num_gpus();
    } catch (const gp::ConfigError&) {
        return 0;
    }
    if (too_big(s, G)) return 0;
    const std::uint64_t seed = size;
    const auto& m = s.comm["model"];
    if (m == "tree_route") drive<gp::tree_route_env>(s, seed);
    else if (m == "ring_allreduce") drive<gp::env>(s, seed);
    else {
        // an unknown or non-string comm model is a ConfigError, never a silent default
        bool threw = false;
        try {
            gp::env e(s);
        } catch (const gp::ConfigError&) {
            threw = true;
        }
        FUZZ_CHECK(threw, "comm model %s accepted", m.dump().c_str());
    }
    return 0;
}
