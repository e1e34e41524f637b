// Train the reference PPO for a second on a tiny cluster where only consolidation avoids a 3x
// slowdown, save a checkpoint, load it back and compare its greedy policy with first-fit.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/rl/rl.hpp>

int main() {
    using namespace gpuplace;
    // 2 nodes x 4 GPUs; a 2-GPU, a 1-GPU and a 4-GPU job of a communication-heavy model arrive.
    const auto s = parse_scenario(R"({
      "name": "consolidation",
      "topology": {"preset": "custom", "racks": 1, "nodes_per_rack": 2, "gpus_per_node": 4},
      "workload": {"kind": "jobs", "jobs": [
        {"submit_time": 0, "num_gpus": 2, "model": 17, "work": 400000},
        {"submit_time": 1, "num_gpus": 1, "model": 17, "work": 400000},
        {"submit_time": 2, "num_gpus": 4, "model": 17, "work": 400000}]},
      "env": {"queue_window": 2}
    })");
    rl::ppo_config c;
    c.total_steps = 12'000;
    c.num_envs = 8;
    c.num_steps = 16;
    c.minibatches = 2;
    c.learning_rate = 3e-3;
    c.gamma = 1.0;
    c.ent_coef = 0.0;
    c.network.hidden = {16, 16};
    c.network.value_hidden = {16};
    c.seed = 3;
    rl::ppo trainer(s, c);
    while (!trainer.done()) trainer.iterate();

    const auto file = (std::filesystem::temp_directory_path() / "gpuplace_example_ppo.json").string();
    rl::save_checkpoint(file, trainer.network(), c, s);
    auto ck = rl::load_checkpoint(file);
    std::filesystem::remove(file);

    rl::network_policy ppo(std::make_shared<const rl::actor_critic>(std::move(ck.network)));
    first_fit_policy ff;
    env e(s);
    const auto r_ppo = run_episode(e, ppo, 0);
    const auto r_ff = run_episode(e, ff, 0);
    std::printf("average JCT  PPO %.2f h  first-fit %.2f h\n", r_ppo.m.avg_jct / 3600, r_ff.m.avg_jct / 3600);
    std::printf("avg slowdown PPO %.2f    first-fit %.2f\n", r_ppo.m.avg_slowdown, r_ff.m.avg_slowdown);
    return r_ppo.m.avg_jct < r_ff.m.avg_jct ? 0 : 1;
}
