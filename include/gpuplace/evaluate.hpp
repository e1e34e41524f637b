#pragma once
/// \file evaluate.hpp
/// The evaluation harness: runs policies (each under an optional queue policy) on held-out seeds
/// of a scenario - synthetic or a trace - in parallel, into an eval_report (eval_report.hpp: the
/// table, CSV; its JSON: json/report.hpp). The heuristics by name: heuristic_registry.hpp, which
/// this header includes, as it does any_policy.hpp.

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "any_policy.hpp"
#include "config.hpp"
#include "detail/thread_pool.hpp"
#include "env.hpp"
#include "env_concepts.hpp"
#include "eval_report.hpp"
#include "heuristic_registry.hpp"
#include "metrics.hpp"
#include "progress.hpp"

namespace gpuplace {

/// evaluate()'s progress report: called after each episode with the episodes finished so far and
/// the episodes in all (policies x seeds), from the worker threads but never two calls at once.
using eval_progress = std::function<void(std::size_t done, std::size_t total)>;

namespace detail {

/// evaluate()'s work: policy i runs on copies of protos[which[i]], or through runners[i] (a round
/// policy's whole episodes) when that is set.
template <EpisodeEnv E>
[[nodiscard]] eval_report evaluate_on(std::string name, const std::vector<E>& protos, const std::vector<std::size_t>& which,
                                      const std::vector<std::function<episode_outcome(std::uint64_t)>>& runners,
                                      const std::vector<any_policy<E>>& policies, const std::vector<std::uint64_t>& seeds,
                                      std::size_t threads, const eval_progress& progress);

/// The prototype envs of the policies, one per distinct queue policy, made by make(scenario with
/// the queue applied) (each reads a trace workload once); a policy under a round policy runs whole
/// episodes through its own runner (any_policy::rounds).
template <EpisodeEnv E, class Make>
[[nodiscard]] eval_report evaluate_scenario(const scenario& s, Make&& make, const std::vector<any_policy<E>>& policies,
                                            const std::vector<std::uint64_t>& seeds, std::size_t threads, const eval_progress& progress) {
    std::vector<E> protos;
    protos.reserve(policies.size());
    std::map<std::string, std::size_t> proto_of;
    std::vector<std::size_t> which(policies.size());
    std::vector<std::function<episode_outcome(std::uint64_t)>> runners(policies.size());
    for (std::size_t i = 0; i < policies.size(); ++i) {
        if (policies[i].rounds) {
            scenario q = s;
            apply_queue(q, policies[i].queue);
            runners[i] = policies[i].rounds(q);
            continue;
        }
        auto [it, fresh] = proto_of.try_emplace(policies[i].queue, protos.size());
        if (fresh) {
            scenario q = s;
            apply_queue(q, policies[i].queue);
            protos.push_back(make(q));
        }
        which[i] = it->second;
    }
    return evaluate_on<E>(s.name, protos, which, runners, policies, seeds, threads, progress);
}

}  // namespace detail

/// Runs every policy on every seed of the scenario (each policy under its queue policy, if any),
/// in parallel over `threads` threads (0 = all cores), calling `progress` (when set) after each
/// episode (e.g. progress_line, progress.hpp). Results do not depend on the thread count.
template <EpisodeEnv E = env>
    requires std::constructible_from<E, const scenario&>
[[nodiscard]] eval_report evaluate(const scenario& s, const std::vector<any_policy<E>>& policies,
                                   const std::vector<std::uint64_t>& seeds, std::size_t threads = 0,
                                   const eval_progress& progress = {}) {
    return detail::evaluate_scenario<E>(s, [](const scenario& q) { return E(q); }, policies, seeds, threads, progress);
}

/// evaluate() on envs of one's own type made from the scenario by `make(scenario)` (env_concepts.hpp):
/// each policy's queue policy is applied to the scenario `make` gets, as evaluate() does.
template <EpisodeEnv E, class F>
    requires std::is_invocable_r_v<E, F&, const scenario&>
[[nodiscard]] eval_report evaluate(F make, const scenario& s, const std::vector<any_policy<E>>& policies,
                                   const std::vector<std::uint64_t>& seeds, std::size_t threads = 0,
                                   const eval_progress& progress = {}) {
    return detail::evaluate_scenario<E>(s, make, policies, seeds, threads, progress);
}

/// evaluate() on envs of one's own type (env_concepts.hpp): `make()` makes the env (the same one at
/// every call; episodes differ by reset(seed)), copied per thread. The report's scenario name is
/// `name`. A queue policy ("pack+sjf") or a round policy is a scenario's option, which such an env
/// has none of: ConfigError naming the policy.
template <EpisodeEnv E, EnvFactory<E> F>
[[nodiscard]] eval_report evaluate(F make, std::string name, const std::vector<any_policy<E>>& policies,
                                   const std::vector<std::uint64_t>& seeds, std::size_t threads = 0,
                                   const eval_progress& progress = {}) {
    for (const auto& p : policies)
        if (!p.queue.empty() || p.rounds)
            throw ConfigError("evaluate: policy \"" + p.name + "\" runs under the queue policy \"" + p.queue +
                              "\", an option of a scenario; an env made by a factory has no scenario (make the env from one: "
                              "evaluate(make(scenario), scenario, ...))");
    std::vector<E> protos;
    if (!policies.empty()) protos.push_back(E(make()));
    return detail::evaluate_on<E>(std::move(name), protos, std::vector<std::size_t>(policies.size(), 0),
                                  std::vector<std::function<episode_outcome(std::uint64_t)>>(policies.size()), policies, seeds, threads,
                                  progress);
}

template <EpisodeEnv E>
eval_report detail::evaluate_on(std::string name, const std::vector<E>& protos, const std::vector<std::size_t>& which,
                                const std::vector<std::function<episode_outcome(std::uint64_t)>>& runners,
                                const std::vector<any_policy<E>>& policies, const std::vector<std::uint64_t>& seeds,
                                std::size_t threads, const eval_progress& progress) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    for (std::size_t i = 0; i < policies.size(); ++i)  // what cannot run here is refused before any episode
        if (policies[i].check && !runners[i]) policies[i].check(protos[which[i]]);
    eval_report rep;
    rep.scenario = std::move(name);
    rep.seeds = seeds;
    for (const auto& p : policies) rep.policies.push_back({p.name, std::vector<metrics>(seeds.size()), std::vector<double>(seeds.size())});
    const std::size_t jobs = policies.size() * seeds.size();
    threads = std::min(threads, std::max<std::size_t>(jobs, 1));
    detail::block_pool pool(threads);
    std::atomic<std::size_t> next{0};
    std::mutex progress_mutex;
    std::size_t done = 0;
    auto task = [&](std::size_t) {
        std::vector<std::unique_ptr<E>> envs(protos.size());
        for (std::size_t k; (k = next.fetch_add(1)) < jobs;) {
            const auto pi = k / seeds.size(), si = k % seeds.size();
            if (runners[pi]) {
                const auto r = runners[pi](seeds[si]);
                rep.policies[pi].per_seed[si] = r.m;
                rep.policies[pi].returns[si] = r.episode_return;
                if (progress) {
                    const std::lock_guard<std::mutex> lock(progress_mutex);
                    progress(++done, jobs);
                }
                continue;
            }
            auto& slot = envs[which[pi]];
            if (!slot) slot = std::make_unique<E>(protos[which[pi]]);
            E& e = *slot;
            auto act = policies[pi].make(seeds[si]);
            e.reset(seeds[si]);
            while (!e.done()) e.step(act(e));
            rep.policies[pi].per_seed[si] = e.episode_metrics();
            rep.policies[pi].returns[si] = e.episode_return();
            if (progress) {
                const std::lock_guard<std::mutex> lock(progress_mutex);
                progress(++done, jobs);
            }
        }
    };
    pool.run(task);
    return rep;
}

/// Seeds held out from training: 1000000 + i.
[[nodiscard]] inline std::vector<std::uint64_t> held_out_seeds(std::size_t n) {
    std::vector<std::uint64_t> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(1'000'000 + i);
    return v;
}

}  // namespace gpuplace
