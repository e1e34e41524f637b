// gpuplace-eval: evaluates heuristic policies on held-out seeds of a scenario and prints a table.
//   gpuplace-eval [--scenario FILE|default|proximity_drl] [--seeds N] [--policies a,b,...]
//                 [--csv FILE] [--json FILE] [--threads N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>

namespace {
std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t b = 0;
    while (b <= s.size()) {
        auto e = s.find(',', b);
        if (e == std::string::npos) e = s.size();
        if (e > b) out.push_back(s.substr(b, e - b));
        b = e + 1;
    }
    return out;
}
int usage() {
    std::fprintf(stderr, "usage: gpuplace-eval [--scenario FILE|default|proximity_drl] [--seeds N] "
                         "[--policies a,b,...] [--csv FILE] [--json FILE] [--threads N]\n");
    return 2;
}
}  // namespace

int main(int argc, char** argv) {
    std::string scen = "default", csv, json_out;
    std::size_t seeds = 20, threads = 0;
    std::vector<std::string> policies = gpuplace::heuristic_names();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw gpuplace::ConfigError("missing value after " + a);
            return argv[++i];
        };
        try {
            if (a == "--scenario") scen = next();
            else if (a == "--seeds") seeds = std::stoul(next());
            else if (a == "--policies") policies = split(next());
            else if (a == "--csv") csv = next();
            else if (a == "--json") json_out = next();
            else if (a == "--threads") threads = std::stoul(next());
            else if (a == "-h" || a == "--help") return usage(), 0;
            else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return usage(); }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            return 2;
        }
    }
    try {
        const auto s = (scen == "default" || scen == "proximity_drl") ? gpuplace::preset_scenario(scen)
                                                                       : gpuplace::scenario::load(scen);
        std::vector<gpuplace::any_policy<gpuplace::env>> ps;
        for (const auto& p : policies) ps.push_back(gpuplace::heuristic(p));
        const auto t0 = std::chrono::steady_clock::now();
        const auto rep = gpuplace::evaluate(s, ps, gpuplace::held_out_seeds(seeds), threads);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("scenario %s: %zu policies x %zu seeds in %.2f s\n", s.name.c_str(), ps.size(), seeds, secs);
        std::printf("%s", rep.table().c_str());
        if (!csv.empty()) std::ofstream(csv) << rep.csv();
        if (!json_out.empty()) std::ofstream(json_out) << rep.to_json().dump(2) << "\n";
    } catch (const gpuplace::Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
