// A topology of one's own: servers of PCIe switches (examples/pcie_box.hpp, written here, not in the
// library), servers of different sizes. Every heuristic places jobs on it through the same env.
#include <cstdio>

#include <gpuplace/gpuplace.hpp>

#include "pcie_box.hpp"

int main() {
    using namespace gpuplace;
    auto s = default_scenario();  // its workload, env and reward options; the topology is ours
    s.workload.synthetic.num_jobs = 120;
    s.workload.synthetic.gpu_counts = {{1, 0.4}, {2, 0.3}, {4, 0.2}, {8, 0.1}};
    using box_env = basic_env<pcie_box_cluster>;
    box_env e(pcie_box_cluster{}, comm_model{}, ModelZoo::builtin(), s);
    std::printf("%zu GPUs in %zu switches and %zu servers\n", e.num_gpus(), e.hierarchy().num_domains(1), e.hierarchy().num_domains(2));
    const auto run = [&](auto policy, const char* name) {
        policy.reserve(e.topology());
        double jct = 0;
        for (std::uint64_t seed = 1; seed <= 3; ++seed) jct += run_episode(e, policy, seed).m.avg_jct / 3;
        std::printf("%-16s mean JCT %.3f h\n", name, jct / 3600);
        return jct;
    };
    run(first_fit_policy{}, "first_fit");
    run(load_balance_policy{}, "load_balance");
    const double pack = run(pack_policy{}, "pack");
    const double tg = run(topology_greedy_policy{}, "topology_greedy");
    return pack > 0 && tg > 0 ? 0 : 1;
}
