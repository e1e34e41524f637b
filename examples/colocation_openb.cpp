// Co-location on a replay of Alibaba's openb pod list (GPU-sharing pods ask for a fraction of a
// GPU): exclusive GPUs with FIFO + first-fit versus the co-location aware packer. Each seed replays
// a different run of 300 consecutive pods.
//   example_colocation_openb [seeds] [pod list]
// The pod list defaults to examples/data/openb_sample.csv, a small file in the openb schema (the
// real trace is for research use only and is not part of the repository: pass its
// openb_pod_list_default.csv to reproduce docs/baselines.md's numbers, with 20 seeds).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gpuplace/colocation_policy.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

int main(int argc, char** argv) {
    const int seeds = argc > 1 ? std::atoi(argv[1]) : 3;
    const std::string pods = argc > 2 ? argv[2] : "examples/data/openb_sample.csv";
    auto shared = gpuplace::parse_scenario(R"json({
      "name": "colocation_openb",
      "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 1},
      "workload": {"kind": "trace", "format": "openb", "path": "examples/data/openb_sample.csv",
                   "target_load": 3.0, "episode_jobs": 300},
      "env": {"allow_defer": true},
      "colocation": {"enabled": true, "max_jobs_per_gpu": 4, "gpu_memory_gb": 32}
    })json");
    shared.workload.path = pods;
    auto exclusive = shared;
    exclusive.colocation.enabled = false;
    gpuplace::env ex(exclusive), co(shared);

    std::vector<double> mk_x, mk_c, jct_x, jct_c;
    for (const auto seed : gpuplace::held_out_seeds(static_cast<std::size_t>(seeds))) {
        gpuplace::first_fit_policy fifo;
        gpuplace::colocation_packer_policy packer;
        const auto a = gpuplace::run_episode(ex, fifo, seed);
        const auto b = gpuplace::run_episode(co, packer, seed);
        mk_x.push_back(a.m.makespan / 3600);
        mk_c.push_back(b.m.makespan / 3600);
        jct_x.push_back(a.m.avg_jct / 3600);
        jct_c.push_back(b.m.avg_jct / 3600);
    }
    const auto p = [](const char* name, const std::vector<double>& mk, const std::vector<double>& jct) {
        const auto m = gpuplace::summarize(mk), j = gpuplace::summarize(jct);
        std::printf("%-28s makespan %8.2f +- %.2f h   mean JCT %7.2f +- %.2f h\n", name, m.mean, m.sem, j.mean, j.sem);
    };
    std::printf("openb replay of %s (up to 300 pods per seed, 8 GPUs), %d held-out seeds\n", pods.c_str(), seeds);
    p("exclusive GPUs, FIFO", mk_x, jct_x);
    p("co-location packer", mk_c, jct_c);
    std::printf("makespan: %.2fx, mean JCT: %.2fx shorter with co-location\n",
                gpuplace::summarize(mk_x).mean / gpuplace::summarize(mk_c).mean,
                gpuplace::summarize(jct_x).mean / gpuplace::summarize(jct_c).mean);
    return 0;
}
