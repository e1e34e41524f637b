#pragma once
/// \file bench/env_track.hpp
/// The benchmark on an env type of one's own (env_concepts.hpp): a track made of a factory of the
/// env (the env is code, not a scenario), held-out seeds and the policy its paired differences are
/// against; run() scores a policy on it into a run_result as the suite's tracks do (result.hpp:
/// the JSON, the summary, the paired differences, result_row()). Its version is "env":
/// bench::validate() says that only the program that defines the env can reproduce it.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gpuplace/any_policy.hpp>
#include <gpuplace/env_concepts.hpp>
#include <gpuplace/error.hpp>
#include <gpuplace/evaluate.hpp>
#include "result.hpp"
#include "run.hpp"
#include "track.hpp"

namespace gpuplace::bench {

/// A track of env type E: `make()` makes the env (the same one at every call; an episode is
/// reset(seed)), `episodes` held-out seeds from first_seed, and `best` the policy its results'
/// paired differences are against (the yardstick: a heuristic, or a policy of one's own).
template <EpisodeEnv E>
struct env_track {
    std::string name;   ///< e.g. "priority-nvl72"
    std::string about;  ///< what it tests (one sentence)
    std::function<E()> make;
    std::size_t episodes = 0;
    std::uint64_t first_seed = 1'000'000;
    any_policy<E> best;

    [[nodiscard]] std::vector<std::uint64_t> seeds() const {
        std::vector<std::uint64_t> v;
        for (std::size_t i = 0; i < episodes; ++i) v.push_back(first_seed + i);
        return v;
    }
    /// The definition a result records (version "env"; no preset, no patch).
    [[nodiscard]] track definition() const {
        return {name, std::string(env_version), about, "", "", first_seed, episodes, best.name};
    }
};

namespace detail_bench {
/// Runs `p` on the track's seeds: the episodes with their actions, and the wall time.
template <EpisodeEnv E>
std::vector<episode_result> env_episodes(const env_track<E>& t, const any_policy<E>& p, std::size_t threads,
                                         const eval_progress& progress, double* seconds) {
    const auto seeds = t.seeds();
    std::vector<std::vector<std::int64_t>> actions(seeds.size());
    const auto t0 = std::chrono::steady_clock::now();
    const auto rep = evaluate(t.make, t.name, std::vector<any_policy<E>>{recording(p, seeds, actions)}, seeds, threads, progress);
    if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<episode_result> out(seeds.size());
    for (std::size_t i = 0; i < seeds.size(); ++i)
        out[i] = {seeds[i], rep.policies[0].per_seed[i], rep.policies[0].returns[i], std::move(actions[i])};
    return out;
}
}  // namespace detail_bench

/// Scores policy `p` (described by `ref`) on env track `t`: its episodes, then the track's `best`
/// on the same seeds (not run again when `ref` names it). ConfigError for a track without a
/// factory, episodes or a best policy, or a policy under a queue policy (evaluate()'s factory form).
template <EpisodeEnv E>
[[nodiscard]] run_result run(const env_track<E>& t, const any_policy<E>& p, policy_ref ref, const run_options& o = {}) {
    if (!t.make || t.episodes == 0 || !t.best.make)
        throw ConfigError("env track " + t.name + ": needs a factory (make), at least one episode and a best policy (best)");
    auto r = detail_bench::start_result(std::move(ref), p.queue, o);
    r.t = t.definition();
    const bool same = r.policy.name == t.best.name;
    const auto [first, second] = detail_bench::halves(o, t.episodes, same);
    r.episodes = detail_bench::env_episodes(t, p, o.threads, first, &r.seconds);
    r.best = same ? r.episodes : detail_bench::env_episodes(t, t.best, o.threads, second, nullptr);
    return r;
}

}  // namespace gpuplace::bench
