// Compares the heuristic baselines on the default scenario (a few held-out seeds) and on a window
// of a Gavel Philly-derived trace shipped in data/philly/. Prints the tables of mean +- standard error.
#include <cstdio>
#include <string>

#include <gpuplace/gpuplace.hpp>

int main() {
    using namespace gpuplace;
    std::vector<any_policy<env>> policies;
    for (const auto& n : heuristic_names()) policies.push_back(heuristic(n));
    policies.push_back(heuristic("pack+sjf"));
    const auto report = evaluate(default_scenario(), policies, held_out_seeds(5), 2);
    std::printf("default scenario\n%s\n", report.table().c_str());

    const std::string file = "$GPUPLACE_DATA/philly/0e4a51.trace";  // the data folder: data.hpp
    auto s = default_scenario();
    s.name = "philly 0e4a51";
    s.workload.kind = "trace";
    s.workload.format = trace_format::philly;
    s.workload.path = file;
    s.workload.trace_opts.target_load = 1.0;  // compress arrivals to offered load 1 on the 64 GPUs
    s.workload.episode_jobs = 100;            // each seed replays 100 consecutive jobs
    std::printf("%s\n%s", resolve_data_path(file).c_str(), evaluate(s, policies, held_out_seeds(5), 2).table().c_str());
    return 0;
}
