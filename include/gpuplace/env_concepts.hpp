#pragma once
/// \file env_concepts.hpp
/// What an env type must provide for each consumer of the library, so that a type of one's own
/// (not a basic_env) can be evaluated, planned over, trained and benchmarked. Each concept asks
/// only what its consumer calls; every basic_env<T, J, C> satisfies all of them
/// (tests/env_concepts_test.cpp), and docs/extending.md shows one of one's own
/// (examples/custom_env.cpp).
///
///  consumer                                   concept
///  evaluate() (evaluate.hpp), bench::run      EpisodeEnv: reset, step, done, the episode's return and metrics
///  a policy reading masks and observations    PolicyEnv: EpisodeEnv, action_mask, num_actions, observation
///  the built-in heuristics by name            HeuristicEnv: PolicyEnv, heuristic_action(placer)
///  "hindsight:" planner (planner.hpp)         RolloutEnv: PolicyEnv, copies, num_gpus
///  "rollout:" planner (planner.hpp)           ForkableEnv: RolloutEnv, fork(seed)
///  basic_vector_env, rl::basic_ppo            VectorEnv: PolicyEnv, bind, why_invalid, steps, seed, ...
///
/// Optional hooks, used where a type has them: observation_layout() (the PPO's per_gpu network
/// reads its per-item segments; without it only the flat MLP trains), mode() and defer_action()
/// (the planners refuse the GPU action mode; DEFER when no action is valid), set_lazy() and info()
/// (a planner's lazy forks and progress line), heuristic_action() (HeuristicEnv).

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "metrics.hpp"

namespace gpuplace {

/// What step() returns, as the harness and the planners read it: the step's reward.
template <class R>
concept StepResult = requires(const R& r) {
    { r.reward } -> std::convertible_to<double>;
};

/// What step() returns, as a vector env reads it: the reward, whether the episode ended
/// (terminated: its jobs are done; truncated: a limit was reached) and the simulated seconds the
/// step advanced (0 where time is not simulated; the PPO's discount "time" reads it).
template <class R>
concept VectorStepResult = StepResult<R> && requires(const R& r) {
    { r.terminated } -> std::convertible_to<bool>;
    { r.truncated } -> std::convertible_to<bool>;
    { r.elapsed } -> std::convertible_to<double>;
};

/// An env whose episodes the evaluation harness (evaluate()) and the benchmark (bench::run) run:
/// reset(seed) starts an episode (the same seed, the same episode), step(action) applies an
/// action, done() says when the episode is over, and episode_return() and episode_metrics() say
/// how it went. Copies: the harness keeps one prototype and copies it per thread.
template <class E>
concept EpisodeEnv = std::copy_constructible<E> && requires(E& e, const E& ce, std::uint64_t seed, std::int64_t a) {
    e.reset(seed);
    { e.step(a) } -> StepResult;
    { ce.done() } -> std::convertible_to<bool>;
    { ce.episode_return() } -> std::convertible_to<double>;
    { ce.episode_metrics() } -> std::convertible_to<metrics>;
};

/// An env a policy acts in: an EpisodeEnv with num_actions() discrete actions, the mask of the
/// valid ones (nonzero: valid) and an observation vector.
template <class E>
concept PolicyEnv = EpisodeEnv<E> && requires(const E& ce) {
    { ce.action_mask() } -> std::convertible_to<std::span<const std::uint8_t>>;
    { ce.num_actions() } -> std::convertible_to<std::size_t>;
    { ce.observation() } -> std::convertible_to<std::span<const float>>;
};

namespace detail {
/// A placer type of no heuristic: HeuristicEnv asks heuristic_action() of any placer type.
struct any_placer {};
}  // namespace detail

/// An env the built-in heuristics act in (heuristic<E>(name), heuristics.hpp): a PolicyEnv whose
/// heuristic_action(placer), a member template declared to return std::int64_t, turns a placer's
/// plan into the env's action (basic_env::heuristic_action()).
template <class E>
concept HeuristicEnv = PolicyEnv<E> && requires(const E& ce, detail::any_placer& p) {
    { ce.heuristic_action(p) } -> std::convertible_to<std::int64_t>;
};

/// An env a "hindsight:" rollout planner plays on (planner.hpp): a PolicyEnv whose copies play
/// on (a copy keeps the env's own future: not causal) and that says its size, num_gpus() (the
/// planners refuse a cluster too large for them).
template <class E>
concept RolloutEnv = PolicyEnv<E> && requires(const E& ce) {
    { ce.num_gpus() } -> std::convertible_to<std::size_t>;
};

/// An env the fair "rollout:" planners play on: a RolloutEnv with fork(seed), a copy that keeps
/// the present and redraws with `seed` what a scheduler cannot know (basic_env::fork()).
template <class E>
concept ForkableEnv = RolloutEnv<E> && requires(const E& ce, std::uint64_t seed) {
    { ce.fork(seed) } -> std::convertible_to<E>;
};

/// An env basic_vector_env steps, and so rl::basic_ppo trains on: a PolicyEnv (movable) whose
/// step() says how the episode ended and the simulated time it took (VectorStepResult), with
/// observation_size(), num_gpus(), steps() and seed() (the episode's step count and seed),
/// why_invalid(action) (a message, "" when valid) and bind(obs, mask): from then on the env writes
/// its observation and mask into those spans (a row of the vector env's buffers), its current
/// ones copied over.
template <class E>
concept VectorEnv = PolicyEnv<E> && std::movable<E> &&
                    requires(E& e, const E& ce, std::int64_t a, std::span<float> obs, std::span<std::uint8_t> mask) {
                        { e.step(a) } -> VectorStepResult;
                        { ce.observation_size() } -> std::convertible_to<std::size_t>;
                        { ce.num_gpus() } -> std::convertible_to<std::size_t>;
                        { ce.steps() } -> std::convertible_to<std::size_t>;
                        { ce.seed() } -> std::convertible_to<std::uint64_t>;
                        { ce.why_invalid(a) } -> std::convertible_to<std::string>;
                        e.bind(obs, mask);
                    };

/// A factory of envs of type E for the harness and the trainer: a callable taking nothing that
/// returns the same env (its episodes differing by reset(seed)) at every call.
template <class F, class E>
concept EnvFactory = std::invocable<F&> && std::convertible_to<std::invoke_result_t<F&>, E>;

}  // namespace gpuplace
