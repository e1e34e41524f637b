// env_concepts.hpp: every basic_env satisfies the concepts, a type lacking a member does not; an env
// type of one's own trains (rl::basic_ppo), evaluates, and is refused clearly where it lacks a hook.
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gpuplace/env_concepts.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/level_topology.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/rl/rl.hpp>

#include "rl_test_util.hpp"

namespace env_concepts_test {
using namespace gpuplace;

struct flagged_job : TrainingJob {
    bool urgent = false;
    flagged_job() = default;
    explicit flagged_job(const TrainingJob& j) : TrainingJob(j), urgent(j.model % 2 == 0) {}
};

template <class E>
constexpr bool all_concepts = EpisodeEnv<E> && PolicyEnv<E> && HeuristicEnv<E> && RolloutEnv<E> && ForkableEnv<E> && VectorEnv<E>;
static_assert(all_concepts<env>);
static_assert(all_concepts<basic_env<LevelTopology>>);
static_assert(all_concepts<basic_env<TreeTopology, flagged_job>>);
static_assert(all_concepts<basic_env<LevelTopology, flagged_job>>);

static_assert(!EpisodeEnv<int>);
static_assert(!PolicyEnv<int>);
static_assert(!VectorEnv<int>);
static_assert(!StepResult<int>);
static_assert(StepResult<step_result> && VectorStepResult<step_result>);

/// An env type of one's own: the default env behind a wrapper that offers only what a vector env
/// steps (VectorEnv): no fork(), no heuristic_action(), no observation layout.
class plain_env {
public:
    explicit plain_env(const scenario& s) : e_(s) {}
    void reset(std::uint64_t seed) { e_.reset(seed); }
    step_result step(std::int64_t a) { return e_.step(a); }
    [[nodiscard]] bool done() const { return e_.done(); }
    [[nodiscard]] double episode_return() const { return e_.episode_return(); }
    [[nodiscard]] metrics episode_metrics() const { return e_.episode_metrics(); }
    [[nodiscard]] std::span<const std::uint8_t> action_mask() const { return e_.action_mask(); }
    [[nodiscard]] std::size_t num_actions() const { return e_.num_actions(); }
    [[nodiscard]] std::span<const float> observation() const { return e_.observation(); }
    [[nodiscard]] std::size_t observation_size() const { return e_.observation_size(); }
    [[nodiscard]] std::size_t num_gpus() const { return e_.num_gpus(); }
    [[nodiscard]] std::size_t steps() const { return e_.steps(); }
    [[nodiscard]] std::uint64_t seed() const { return e_.seed(); }
    [[nodiscard]] std::string why_invalid(std::int64_t a) const { return e_.why_invalid(a); }
    void bind(std::span<float> o, std::span<std::uint8_t> m) { e_.bind(o, m); }

private:
    env e_;
};
static_assert(VectorEnv<plain_env> && RolloutEnv<plain_env>);
static_assert(!ForkableEnv<plain_env> && !HeuristicEnv<plain_env>);

/// What lacks bind() is no VectorEnv, but still a PolicyEnv.
struct unbound_env : env {
    void bind(std::span<float>, std::span<std::uint8_t>) = delete;
};
static_assert(PolicyEnv<unbound_env> && !VectorEnv<unbound_env>);

/// The first valid action (a policy of one's own: it reads only the mask).
any_policy<plain_env> first_valid() {
    return {"first_valid", [](std::uint64_t) {
                return std::function<std::int64_t(const plain_env&)>([](const plain_env& e) {
                    const auto m = e.action_mask();
                    for (std::size_t a = 0; a < m.size(); ++a)
                        if (m[a]) return std::int64_t(a);
                    return std::int64_t(m.size()) - 1;
                });
            },
            {},
            {}};
}

TEST_CASE("env concepts: evaluate on an env of one's own equals the same env run by hand") {
    auto s = test::tiny_ppo_scenario();
    const auto make = [&] { return plain_env(s); };
    const auto seeds = held_out_seeds(3);
    const auto rep = evaluate(make, "plain", std::vector{first_valid()}, seeds, 2);
    CHECK(rep.scenario == "plain");
    REQUIRE(rep.policies.size() == 1);
    for (std::size_t i = 0; i < seeds.size(); ++i) {
        plain_env e(s);
        auto act = first_valid().make(seeds[i]);
        e.reset(seeds[i]);
        while (!e.done()) e.step(act(e));
        CHECK(rep.policies[0].returns[i] == e.episode_return());
        CHECK(rep.policies[0].per_seed[i].avg_jct == e.episode_metrics().avg_jct);
        CHECK(rep.policies[0].per_seed[i].jobs_done == e.episode_metrics().jobs_done);
    }
    // the factory form taking the scenario runs the default env's numbers exactly
    const auto by_scenario = evaluate([](const scenario& q) { return env(q); }, s, std::vector{heuristic<env>("pack+sjf")}, seeds, 1);
    CHECK(by_scenario.csv() == evaluate(s, std::vector{heuristic<env>("pack+sjf")}, seeds, 1).csv());
}

/// An env type of one's own that forks (a ForkableEnv): the default env under another name.
struct forking_env : env {
    explicit forking_env(const scenario& s) : env(s) {}
    explicit forking_env(env e) : env(std::move(e)) {}
    [[nodiscard]] forking_env fork(std::uint64_t seed) const { return forking_env(env::fork(seed)); }
};
static_assert(ForkableEnv<forking_env> && HeuristicEnv<forking_env>);

/// One whose fork() returns the default env: copies, but no forked futures of its own type.
struct own_copy_env : env {
    explicit own_copy_env(const scenario& s) : env(s) {}
};
static_assert(HeuristicEnv<own_copy_env> && RolloutEnv<own_copy_env> && !ForkableEnv<own_copy_env>);

TEST_CASE("env concepts: the rollout planners over an env type of one's own play the default env's episodes") {
    auto s = test::tiny_ppo_scenario();
    s.env.mode = action_mode::placement;
    s.env.slots = 3;
    const auto seeds = held_out_seeds(2);
    for (const char* name : {"rollout2:pack", "hindsight:pack"}) {
        CAPTURE(name);
        const auto mine = evaluate([&] { return forking_env(s); }, "forking", std::vector{named_policy<forking_env>(name)}, seeds, 1);
        const auto theirs = evaluate(s, std::vector{named_policy<env>(name)}, seeds, 1);
        CHECK(mine.policies[0].returns == theirs.policies[0].returns);
        CHECK(mine.policies[0].get("avg_jct").mean == theirs.policies[0].get("avg_jct").mean);
    }
}

TEST_CASE("env concepts: what an env of one's own lacks is refused by name") {
    auto s = test::tiny_ppo_scenario();
    const auto make = [&] { return plain_env(s); };
    CHECK_THROWS_WITH_AS((void)named_policy<plain_env>("pack"),
                         "policy \"pack\": the built-in heuristics act through heuristic_action(), which this env type lacks "
                         "(env_concepts.hpp, HeuristicEnv)",
                         ConfigError);
    CHECK_THROWS_WITH_AS((void)heuristic<plain_env>("first_fit+sjf"),
                         "policy \"first_fit+sjf\": the built-in heuristics act through heuristic_action(), which this env type lacks "
                         "(env_concepts.hpp, HeuristicEnv)",
                         ConfigError);
    CHECK_THROWS_AS((void)rollout_policy<plain_env>(rollout_policy<plain_env>::base_factory{}, rollout_options{}), ConfigError);  // fair: needs fork()
    CHECK_THROWS_WITH_AS((void)named_policy<own_copy_env>("rollout:pack"),
                         "policy \"rollout:pack\": the fair rollout planner plays on forked futures, and this env type has no "
                         "fork(seed) (env_concepts.hpp, ForkableEnv); \"hindsight:pack\" plays on copies (NOT causal)",
                         ConfigError);
    CHECK_NOTHROW((void)named_policy<own_copy_env>("hindsight:pack"));
    rollout_options hs;
    hs.hindsight = true;
    CHECK_NOTHROW((void)rollout_policy<plain_env>(rollout_policy<plain_env>::base_factory{}, hs));
    auto queued = first_valid();
    queued.queue = "sjf";
    CHECK_THROWS_WITH_AS((void)evaluate(make, "plain", std::vector{queued}, held_out_seeds(1)),
                         doctest::Contains("runs under the queue policy \"sjf\""), ConfigError);
    auto c = test::tiny_ppo_config();
    c.teacher = "pack";
    c.imitation_steps = 64;
    CHECK_THROWS_AS((rl::basic_ppo<plain_env>(make, c)), ConfigError);
}

TEST_CASE("env concepts: rl::basic_ppo trains an env of one's own, deterministic by seed") {
    auto s = test::tiny_ppo_scenario();
    const auto make = [&] { return plain_env(s); };
    auto c = test::tiny_ppo_config();
    c.network.arch = rl::architecture::flat;  // no observation layout: the flat network
    c.total_steps = 256;
    rl::basic_ppo<plain_env> a(make, c), b(make, c);
    std::size_t episodes = 0;
    while (!a.done()) episodes = a.iterate().episodes;
    while (!b.done()) b.iterate();
    CHECK(a.iterations() == 2);
    CHECK(a.env_steps() == 256);
    const auto pa = a.network().parts(), pb = b.network().parts();
    for (std::size_t i = 0; i < pa.size(); ++i) CHECK(pa[i]->params() == pb[i]->params());
    CHECK(a.scenario_config().name == "env factory");
    c.seed = 7;
    rl::basic_ppo<plain_env> d(make, c);
    while (!d.done()) d.iterate();
    CHECK(d.network().parts()[0]->params() != pa[0]->params());
    (void)episodes;
    // the per_gpu network needs per-GPU segments, which an env without observation_layout() lacks
    c.network.arch = rl::architecture::per_gpu;
    CHECK_THROWS_WITH_AS((rl::basic_ppo<plain_env>(make, c)), "network: per_gpu architecture needs per-GPU observation segments",
                         ConfigError);
}

}  // namespace env_concepts_test
