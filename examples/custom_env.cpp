// An env type of one's own through everything. priority_env wraps basic_env<LevelTopology> with a
// job type that carries a priority, and pays a reward of its own: minus each job's priority x JCT
// (hours) when it finishes. It satisfies the concepts of gpuplace/env_concepts.hpp, so the
// reference PPO trains it (a few seconds), the harness evaluates the network against a heuristic
// and a rollout planner over it, and bench::run benchmarks it on a track of its own: held-out
// seeds and paired differences against a yardstick, the suite's result format. (Google Benchmark
// would measure how fast it steps; the question here is how well a policy schedules.)
#include <cmath>
#include <cstdio>
#include <memory>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/level_topology.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/rl/rl.hpp>

#include "bench/env_track.hpp"

using namespace gpuplace;

struct priority_job : TrainingJob {
    int priority = 1;  ///< 1 (batch) .. 3 (interactive)
    priority_job() = default;
    explicit priority_job(const TrainingJob& j) : TrainingJob(j), priority(1 + int(j.model % 3)) {}
};

class priority_env {
public:
    using inner_env = basic_env<LevelTopology, priority_job>;
    explicit priority_env(inner_env e) : e_(std::move(e)) {}

    // the episode, with a reward of its own (EpisodeEnv)
    void reset(std::uint64_t seed) {
        e_.reset(seed);
        counted_ = 0;
        return_ = 0;
    }
    step_result step(std::int64_t action) {
        auto r = e_.step(action);
        r.reward = 0;
        for (const auto fin = e_.finished(); counted_ < fin.size(); ++counted_)
            r.reward -= e_.simulator().job(fin[counted_].id).priority * fin[counted_].jct() / 3600;
        return_ += r.reward;
        return r;
    }
    [[nodiscard]] bool done() const { return e_.done(); }
    [[nodiscard]] double episode_return() const { return return_; }
    [[nodiscard]] metrics episode_metrics() const { return e_.episode_metrics(); }

    // what policies read (PolicyEnv), the vector env and the PPO (VectorEnv), and the heuristics
    [[nodiscard]] std::span<const std::uint8_t> action_mask() const { return e_.action_mask(); }
    [[nodiscard]] std::size_t num_actions() const { return e_.num_actions(); }
    [[nodiscard]] std::span<const float> observation() const { return e_.observation(); }
    [[nodiscard]] std::size_t observation_size() const { return e_.observation_size(); }
    [[nodiscard]] const std::vector<obs_segment>& observation_layout() const { return e_.observation_layout(); }
    [[nodiscard]] std::size_t num_gpus() const { return e_.num_gpus(); }
    [[nodiscard]] std::size_t steps() const { return e_.steps(); }
    [[nodiscard]] std::uint64_t seed() const { return e_.seed(); }
    [[nodiscard]] std::string why_invalid(std::int64_t a) const { return e_.why_invalid(a); }
    void bind(std::span<float> obs, std::span<std::uint8_t> mask) { e_.bind(obs, mask); }
    template <class P>
    [[nodiscard]] std::int64_t heuristic_action(P& p) const {
        return e_.heuristic_action(p);
    }

    // what the rollout planners read (ForkableEnv, and the optional mode and DEFER)
    [[nodiscard]] priority_env fork(std::uint64_t seed) const {
        priority_env f(e_.fork(seed));
        f.counted_ = counted_;
        f.return_ = return_;
        return f;
    }
    [[nodiscard]] action_mode mode() const { return e_.mode(); }
    [[nodiscard]] std::int64_t defer_action() const { return e_.defer_action(); }

private:
    inner_env e_;
    std::size_t counted_ = 0;  ///< finished jobs already paid for
    double return_ = 0;
};
static_assert(ForkableEnv<priority_env> && HeuristicEnv<priority_env> && VectorEnv<priority_env>);

int main() {
    // 32 GPUs (a pod of 2 leaves x 2 nodes x 8 GPUs), 40 jobs an episode, 4 candidate placements a decision
    auto s = default_scenario();
    s.workload.synthetic.num_jobs = 40;
    s.env.mode = action_mode::placement;
    s.env.slots = 4;
    s.env.allow_defer = false;  // every decision places a job
    const auto make = [s] {
        return priority_env(priority_env::inner_env(LevelTopology::fat_tree(1, 2, 2, 8), comm_model{}, ModelZoo::builtin(), s));
    };

    // train: behaviour cloning of pack_wait, then PPO on the priority reward (a tiny budget)
    rl::ppo_config c;
    c.num_envs = 4;
    c.num_steps = 64;
    c.teacher = "pack_wait";
    c.imitation_steps = 4096;
    c.total_steps = 2048;
    c.network.hidden = {32, 32};
    c.network.value_hidden = {32};
    rl::basic_ppo<priority_env> trainer(make, c);
    while (!trainer.done()) {
        const auto st = trainer.iterate();
        if (st.iteration % 8 == 0 || trainer.done())
            std::printf("iteration %zu: mean return %.2f over %zu episodes\n", st.iteration, st.mean_return, st.window);
    }
    const auto net = std::make_shared<const rl::actor_critic>(trainer.network());

    // evaluate: the network, a heuristic and a rollout planner over priority_env, held-out seeds
    const auto seeds = held_out_seeds(8);
    const std::vector<any_policy<priority_env>> policies = {rl::as_policy<priority_env>("ppo", net),
                                                            heuristic<priority_env>("pack_wait"),
                                                            named_policy<priority_env>("rollout2:pack_wait")};
    const auto rep = evaluate(make, "priority fat tree", policies, seeds);
    for (const auto& p : rep.policies) {
        double ret = 0;
        for (const double r : p.returns) ret += r / double(p.returns.size());
        std::printf("%-20s mean JCT %.3f h, mean priority-weighted return %.2f\n", p.policy.c_str(), p.get("avg_jct").mean / 3600, ret);
    }

    // benchmark: the network on a track of priority_env's own, against pack_wait on the same seeds
    const bench::env_track<priority_env> track{"priority-fat-tree", "priority-weighted JCT on 32 GPUs", make, seeds.size(),
                                               seeds.front(), heuristic<priority_env>("pack_wait")};
    const auto r = bench::run(track, policies[0], {"ppo", "model", {}, {}});
    std::printf("%s\n%s\n", bench::result_row_header().c_str(), bench::result_row(r).c_str());

    // the benchmark's yardstick episodes are the harness's, number for number
    bool same = true;
    for (std::size_t i = 0; i < seeds.size(); ++i)
        same = same && r.best[i].episode_return == rep.policies[1].returns[i] && r.episodes[i].episode_return == rep.policies[0].returns[i];
    std::printf("benchmark episodes equal the evaluation's: %s\n", same ? "yes" : "NO");
    return same && std::isfinite(rep.policies[0].returns[0]) ? 0 : 1;
}
