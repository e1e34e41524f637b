#pragma once
// Shared helpers of the rl tests: a tiny scenario (8 GPUs, 12 jobs, DEFER allowed) and a PPO config
// small enough to train in a test.

#include <cstddef>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/rl/rl.hpp>

namespace gpuplace::test {

inline scenario tiny_ppo_scenario() {
    return parse_scenario(R"({
      "name": "tiny",
      "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 4},
      "workload": {"kind": "synthetic", "num_jobs": 12, "load": 1.0,
                   "gpu_counts": {"1": 0.5, "2": 0.3, "4": 0.2}, "duration_min": 600, "duration_max": 3600},
      "env": {"queue_window": 2, "allow_defer": true}
    })");
}

/// 512 env steps: 4 envs x 32 steps, 2 epochs of 2 minibatches, an 8-8 network.
inline rl::ppo_config tiny_ppo_config(std::size_t threads = 1) {
    rl::ppo_config c;
    c.total_steps = 512;
    c.num_envs = 4;
    c.num_steps = 32;
    c.minibatches = 2;
    c.epochs = 2;
    c.threads = threads;
    c.network.hidden = {8, 8};
    c.network.value_hidden = {8};
    c.network.normalize_obs = true;
    return c;
}

/// Every parameter of a trainer's network, part after part (to compare two trainers bit for bit).
inline std::vector<float> network_params(rl::ppo& p) {
    std::vector<float> v;
    for (auto* part : p.network().parts()) v.insert(v.end(), part->params().data(), part->params().data() + part->params().size());
    return v;
}

}  // namespace gpuplace::test
