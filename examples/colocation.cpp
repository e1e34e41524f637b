// Co-location: exclusive GPUs with FIFO + first-fit versus the co-location aware packer and a PPO
// policy, on the "colocation" preset (a burst of single-GPU jobs that share GPUs well).
//   example_colocation [seeds] [checkpoint]   (default 3 seeds; the README's numbers use 20)
// The PPO network is loaded from examples/data/colocation_ppo.json (trained by gpuplace-train for
// 1M env steps, about 4 minutes on one core; see README "Co-location"), so the example runs in
// seconds. Train your own with
//   gpuplace-train --config cfg.json --scenario colocation --steps 1000000 --compare --out out/coloc
// where cfg.json is {"train_reward": {"comm": 0}, "ppo": {"gamma": 1.0, "gae_lambda": 1.0,
// "ent_coef": 0.01, "num_envs": 8, "num_steps": 512, "learning_rate": 0.0003}}.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gpuplace/colocation_policy.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/rl/rl.hpp>

int main(int argc, char** argv) {
    const int seeds = argc > 1 ? std::atoi(argv[1]) : 3;
    const std::string checkpoint = argc > 2 ? argv[2] : "examples/data/colocation_ppo.json";
    const auto shared = gpuplace::preset_scenario("colocation");
    auto exclusive = shared;
    exclusive.colocation.enabled = false;

    // The trained network (kept optional: the table of heuristics is printed without it).
    std::unique_ptr<gpuplace::rl::network_policy> ppo;
    try {
        auto ck = gpuplace::rl::load_checkpoint(checkpoint);
        ppo = std::make_unique<gpuplace::rl::network_policy>(
            std::make_shared<const gpuplace::rl::actor_critic>(std::move(ck.network)));
    } catch (const std::exception& e) {
        std::printf("PPO row skipped: %s (run from the repository root, or pass the checkpoint)\n", e.what());
    }

    std::vector<double> mk_x, mk_c, mk_p, jct_x, jct_c, jct_p;
    for (const auto seed : gpuplace::held_out_seeds(static_cast<std::size_t>(seeds))) {
        gpuplace::env ex(exclusive), co(shared);
        gpuplace::first_fit_policy fifo;
        gpuplace::colocation_packer_policy packer;
        const auto a = gpuplace::run_episode(ex, fifo, seed);
        const auto b = gpuplace::run_episode(co, packer, seed);
        mk_x.push_back(a.m.makespan / 3600);
        mk_c.push_back(b.m.makespan / 3600);
        jct_x.push_back(a.m.avg_jct / 3600);
        jct_c.push_back(b.m.avg_jct / 3600);
        if (ppo) {
            const auto c = gpuplace::run_episode(co, *ppo, seed);  // greedy actions of the network
            mk_p.push_back(c.m.makespan / 3600);
            jct_p.push_back(c.m.avg_jct / 3600);
        }
    }
    const auto p = [](const char* name, const std::vector<double>& mk, const std::vector<double>& jct) {
        const auto m = gpuplace::summarize(mk), j = gpuplace::summarize(jct);
        std::printf("%-34s makespan %6.2f +- %.2f h   mean JCT %6.2f +- %.2f h\n", name, m.mean, m.sem, j.mean, j.sem);
    };
    std::printf("colocation preset, %d held-out seeds\n", seeds);
    p("exclusive GPUs, FIFO", mk_x, jct_x);
    p("co-location packer", mk_c, jct_c);
    if (ppo) p("PPO with co-location (checkpoint)", mk_p, jct_p);
    const double ratio = gpuplace::summarize(mk_x).mean / gpuplace::summarize(mk_c).mean;
    std::printf("makespan: %.2fx shorter with the co-location packer", ratio);
    if (ppo) std::printf(", %.2fx with PPO", gpuplace::summarize(mk_x).mean / gpuplace::summarize(mk_p).mean);
    std::printf("\n");
    return ratio > 1.0 ? 0 : 1;
}
