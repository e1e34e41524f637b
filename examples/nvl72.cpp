// An NVL72-style cluster: racks of 72 GPUs, each rack one NVLink domain, under an InfiniBand spine
// (LevelTopology::nvl72). Large jobs fit inside a rack at NVLink speed; the placement action mode
// offers each job's candidate placements as whole racks or spread.
#include <cstdio>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/level_topology.hpp>

int main() {
    using namespace gpuplace;
    auto s = default_scenario();
    s.workload.synthetic.num_jobs = 200;
    s.workload.synthetic.gpu_counts = {{8, 0.4}, {16, 0.3}, {32, 0.2}, {64, 0.1}};
    using nvl_env = basic_env<LevelTopology>;
    nvl_env e(LevelTopology::nvl72(4), comm_model{}, ModelZoo::builtin(), s);
    std::printf("%s: %zu GPUs, %zu NVLink domains of %u\n", e.topology().name().c_str(), e.num_gpus(),
                e.hierarchy().num_domains(1), e.hierarchy().max_size(1));
    for (const char* mode : {"gpu", "placement"}) {
        s.env.mode = parse_action_mode(mode);
        nvl_env m(LevelTopology::nvl72(4), comm_model{}, ModelZoo::builtin(), s);
        pack_policy pack;
        first_fit_policy ff;
        const auto a = run_episode(m, pack, 1), b = run_episode(m, ff, 1);
        std::printf("%-9s mode: pack %.3f h (slowdown %.3f), first_fit %.3f h (slowdown %.3f)\n", mode, a.m.avg_jct / 3600,
                    a.m.avg_slowdown, b.m.avg_jct / 3600, b.m.avg_slowdown);
        if (!a.terminated || !b.terminated) return 1;
    }
    return 0;
}
