// A preemptive queue discipline of one's own, registered once by name (discipline_registry.hpp):
// a scenario's /env/queue_policy, a policy's "<placer>+<name>", the evaluation harness and the
// benchmark then take it by name, as they take las, and `--list`-style listings show it under kind
// "queue".
#include <algorithm>
#include <cstdio>
#include <vector>

#include <gpuplace/discipline_registry.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/registry.hpp>

#include "bench/run.hpp"

// Shortest estimated remaining time first: the duration the scheduler is shown, less the time the
// job has run (its attained GPU-seconds over its GPUs). Lower runs first; ties go to the earlier job.
GPUPLACE_REGISTER_DISCIPLINE("estimated_srtf", "shortest shown duration minus time run first (examples/registered_discipline.cpp)",
                             [](const gpuplace::discipline_view&, const gpuplace::discipline_job& j) {
                                 return std::max(0.0, j.shown_duration - j.attained / double(j.gpus));
                             });

int main() {
    using namespace gpuplace;
    for (const auto& e : registry_entries("queue"))
        if (e.name == "estimated_srtf" || e.name == "las") std::printf("queue %-16s %s\n", e.name.c_str(), e.about.c_str());

    // by name in a scenario (preemption on, as for any preemptive discipline)
    auto s = scenario_from_json(detail::json::parse(R"({"workload": {"kind": "synthetic", "num_jobs": 60, "load": 1.5},
                                                       "env": {"queue_policy": "estimated_srtf"},
                                                       "preemption": {"enabled": true, "restart_overhead": 10}})"));
    env e(s);
    pack_policy pack;
    const auto r = run_episode(e, pack, 1);
    std::printf("one episode under %s: return %.3f\n", queue_policy_name(s.env).c_str(), r.episode_return);

    // the harness by name, beside the built-in disciplines, with durations predicted (shown with error)
    s.durations.mode = duration_info::predicted;
    const std::vector<any_policy<env>> policies = {heuristic<env>("pack+estimated_srtf"), heuristic<env>("pack+las"),
                                                   heuristic<env>("pack+sjf")};
    std::printf("%s\n", evaluate(s, policies, held_out_seeds(3)).table().c_str());

    // the benchmark by name, on a track of one's own (a scenario, 2 held-out seeds)
    const auto b = bench::run(bench::scenario_track(s, 2, "pack+las"), "pack+estimated_srtf");
    std::printf("%s\n", bench::result_row(b).c_str());
    return 0;
}
