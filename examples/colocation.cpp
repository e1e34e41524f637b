// Co-location: exclusive GPUs with FIFO + first-fit versus the co-location aware packer, on the
// "colocation" preset (a burst of single-GPU jobs that share GPUs well).
//   example_colocation [seeds]   (default 3; the README's numbers use 20)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gpuplace/colocation_policy.hpp>
#include <gpuplace/gpuplace.hpp>

int main(int argc, char** argv) {
    const int seeds = argc > 1 ? std::atoi(argv[1]) : 3;
    const auto shared = gpuplace::preset_scenario("colocation");
    auto exclusive = shared;
    exclusive.colocation.enabled = false;

    std::vector<double> mk_x, mk_c, jct_x, jct_c;
    for (int i = 0; i < seeds; ++i) {
        const auto seed = gpuplace::held_out_seeds(seeds)[i];
        gpuplace::env ex(exclusive), co(shared);
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
        std::printf("%-28s makespan %6.2f +- %.2f h   mean JCT %6.2f +- %.2f h\n", name, m.mean, m.sem, j.mean, j.sem);
    };
    std::printf("colocation preset, %d held-out seeds\n", seeds);
    p("exclusive GPUs, FIFO", mk_x, jct_x);
    p("co-location packer", mk_c, jct_c);
    const double ratio = gpuplace::summarize(mk_x).mean / gpuplace::summarize(mk_c).mean;
    std::printf("makespan: %.2fx shorter with co-location\n", ratio);
    return ratio > 1.0 ? 0 : 1;
}
