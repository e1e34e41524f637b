#pragma once
/// \file rounds/gittins_sample.hpp
/// The sample class_gittins (rounds/gittins.hpp) judges jobs by: the jobs of 256 episodes of the
/// scenario's durations.sample_files (the training files for the presets), or of its own workload
/// when it names none, as the event-driven Gittins index samples them (env/duration_knowledge.hpp).

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "../config.hpp"
#include "../workload_source.hpp"
#include "gittins.hpp"

namespace gpuplace {

/// The classes' size distribution of scenario s's sample, for a cluster of `cluster_gpus` GPUs.
[[nodiscard]] inline gittins_prior sample_gittins_prior(const scenario& s, std::size_t cluster_gpus, std::size_t min_class = 30) {
    const auto zoo = s.zoo.make();
    const workload_source src(duration_sample_workload(s), zoo, cluster_gpus);
    std::vector<TrainingJob> jobs;
    std::vector<gittins_prior::sample> out;
    constexpr std::size_t episodes = 256, most = 1u << 20;  // at most about a million jobs
    for (std::uint64_t e = 0; e < episodes && out.size() < most; ++e) {
        src.generate(zoo, cluster_gpus, (std::uint64_t{1} << 40) + e, jobs);  // the seeds duration_knowledge samples
        for (const auto& j : jobs) out.push_back({j.model, j.num_gpus, j.work});
    }
    return gittins_prior(std::move(out), min_class);
}

/// A class_gittins prior function for scenario s: samples on first use for a cluster's GPU count
/// and shares the result among the episodes (and threads) of the policy made from it.
[[nodiscard]] inline gittins_round_policy::prior_fn gittins_prior_of(const scenario& s) {
    struct cache {
        std::mutex m;
        std::size_t gpus = 0;
        std::shared_ptr<const gittins_prior> prior;
    };
    auto c = std::make_shared<cache>();
    return [c, s](std::size_t gpus) {
        std::lock_guard lock(c->m);
        if (!c->prior || c->gpus != gpus) c->prior = std::make_shared<const gittins_prior>(sample_gittins_prior(s, gpus)), c->gpus = gpus;
        return c->prior;
    };
}

}  // namespace gpuplace
