/// \file benchmarks/ppo_perf.cpp
/// The C++ PPO (include/gpuplace/rl/): one iteration = a rollout of num_envs x num_steps env steps
/// plus `epochs` passes of minibatch updates; items are env steps, so items/s is the training
/// throughput to compare with SB3 MaskablePPO (benchmarks/python/ppo_vs_sb3.py uses the same
/// settings: SB3's MlpPolicy network, i.e. a flat MLP of 64-64 tanh for the policy and the value).
/// Run: build/benchmarks/perf_ppo --benchmark_repetitions=3 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>

#include <gpuplace/rl/blocking.hpp>
#include <gpuplace/rl/ppo.hpp>

#include "perf_scenarios.hpp"

namespace {

/// args: GPUs, architecture (0 flat = SB3 MlpPolicy, 1 per_gpu)
void BM_ppo_iteration(benchmark::State& state) {
    gpuplace::rl::ppo_config c;
    c.num_envs = 8;
    c.num_steps = 128;
    c.epochs = 4;
    c.minibatches = 16;  // batch size 64
    c.total_steps = 1ULL << 40;
    c.network.arch = state.range(1) == 0 ? gpuplace::rl::architecture::flat : gpuplace::rl::architecture::per_gpu;
    c.network.hidden = {64, 64};
    c.network.value_hidden = {64, 64};
    gpuplace::rl::pin_cache_sizes();  // as gpuplace-train does (rl/blocking.hpp)
    gpuplace::rl::basic_ppo<gpuplace::env> ppo(gpuplace::perf::scaled_default(state.range(0)), c);
    double rollout = 0, update = 0;
    for (auto _ : state) {
        const auto st = ppo.iterate();
        rollout += st.rollout_seconds;
        update += st.update_seconds;
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(c.num_envs * c.num_steps));
    state.counters["rollout_share"] = rollout / (rollout + update);
}
BENCHMARK(BM_ppo_iteration)->ArgNames({"gpus", "per_gpu"})->ArgsProduct({{32, 64}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

/// One PPO iteration as gpuplace-train runs the main job (apps/gpuplace_train.cpp's embedded
/// config: per_gpu network with node features, 16 envs x 128 steps, 4 epochs of 4 minibatches of
/// 512 samples, the default scenario). A minibatch scores ~15 k (sample, valid GPU) columns, so the
/// weight gradients are products of depth ~15 k.
void BM_ppo_iteration_main_job(benchmark::State& state) {
    gpuplace::rl::ppo_config c;
    c.num_envs = 16;
    c.num_steps = 128;
    c.epochs = 4;
    c.minibatches = 4;
    c.total_steps = 1ULL << 40;
    c.gamma = 1.0;
    c.clip = 0.1;
    c.ent_coef = 0.0;
    c.network.arch = gpuplace::rl::architecture::per_gpu;
    c.network.hidden = {64, 64};
    c.network.value_hidden = {64, 64};
    c.network.normalize_obs = false;
    c.network.node_features = true;
    gpuplace::rl::pin_cache_sizes();  // as gpuplace-train does (rl/blocking.hpp)
    gpuplace::rl::basic_ppo<gpuplace::env> ppo(gpuplace::preset_scenario("default"), c);
    for (auto _ : state) ppo.iterate();
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(c.num_envs * c.num_steps));
}
BENCHMARK(BM_ppo_iteration_main_job)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
