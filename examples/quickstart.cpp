// Quick start: make the default environment, place every job with first-fit, print the metrics.
#include <cstdio>

#include <gpuplace/gpuplace.hpp>

int main() {
    gpuplace::env env;  // the embedded default scenario: 64 DGX-A100 GPUs, 160 jobs
    gpuplace::first_fit_policy policy;

    env.reset(/*seed=*/42);
    double total_reward = 0;
    while (!env.done()) {
        const auto action = policy.act(env);  // one GPU pick per step, always valid under the mask
        total_reward += env.step(action).reward;
    }

    const auto m = env.episode_metrics();
    std::printf("%zu of %zu jobs done in %zu steps\n", m.jobs_done, m.jobs_total, env.steps());
    std::printf("average JCT %.2f h (p95 %.2f h), makespan %.2f h, GPU utilisation %.1f %%\n",
                m.avg_jct / 3600, m.p95_jct / 3600, m.makespan / 3600, 100 * m.utilization);
    std::printf("reward sum %.4f (= -sum of JCTs / 3600 s)\n", total_reward);
    return m.jobs_done == m.jobs_total ? 0 : 1;
}
