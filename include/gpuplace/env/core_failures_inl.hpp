#pragma once
/// \file env/core_failures_inl.hpp
/// The scheduling core's members for hardware failures (failures.hpp; env/core.hpp declares and
/// documents them): a failure stops every job on the failed unit's GPUs, each losing its progress
/// since its last checkpoint and waiting again; the unit's GPUs hold no job and are not free (every
/// mask leaves them out) until it is repaired. env/core.hpp includes this file.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <span>
#include <string>
#include <utility>

#include "core.hpp"

namespace gpuplace::env_detail {

template <Topology T, Job J, class C>
void scheduling_core<T, J, C>::init_failures() {
    const auto o = field_index(cfg_.job_fields, "outcome"), rt = field_index(cfg_.job_fields, "run_time");
    if (o != std::string_view::npos) {
        if (cfg_.job_fields[o].type != field_type::category || rt == std::string_view::npos ||
            cfg_.job_fields[rt].type != field_type::number)
            throw ConfigError("config /job_fields: a job field \"outcome\" (a category: completed, failed, killed, ...) needs a "
                              "number field \"run_time\" (seconds the job ran in its trace)");
        outcome_field_ = o;
        run_time_field_ = rt;
    }
    const auto& f = cfg_.failures;
    if (!f.enabled) return;
    check_failures(f);
    if (cfg_.env.mode == action_mode::round || cfg_.rounds.enabled)
        throw ConfigError("config /failures: hardware failures are not supported with rounds (/env/action_mode \"round\" or "
                          "/rounds/enabled); use the gpu, placement or job action mode");
    if (cfg_.colocation.enabled)
        throw ConfigError("config /failures: hardware failures are not supported with co-location (/colocation/enabled)");
    for (const auto& [name, out] : {std::pair<const char*, std::size_t*>{"checkpoint_interval", &interval_field_},
                                    std::pair<const char*, std::size_t*>{"checkpoint_cost", &cost_field_}})
        if (const auto i = field_index(cfg_.job_fields, name); i != std::string_view::npos) {
            if (cfg_.job_fields[i].type != field_type::number)
                throw ConfigError(std::string("config /job_fields: the job field \"") + name + "\" must be a number (seconds)");
            *out = i;
        }
    fails_.init(f, hierarchy());
    sim_.enable_failures(f.restart_overhead);
    fail_ = true;
}

template <Topology T, Job J, class C>
void scheduling_core<T, J, C>::read_outcomes() {
    const std::size_t F = extras_.width, n = F ? extras_.fields.size() / F : 0;
    cut_.assign(n, std::numeric_limits<double>::quiet_NaN());
    const auto& names = workload_.dictionary().categories(outcome_field_);
    for (std::size_t j = 0; j < n; ++j) {
        const double c = extras_.fields[j * F + outcome_field_], t = extras_.fields[j * F + run_time_field_];
        if (!(c >= 0) || std::size_t(c) >= names.size() || !(t > 0)) continue;
        const auto& name = names[std::size_t(c)];
        const auto is = [&](std::string_view w) {
            return name.size() == w.size() && std::equal(name.begin(), name.end(), w.begin(), [](char a, char b) { return (a | 0x20) == b; });
        };
        if (is("failed") || is("killed")) cut_[j] = t;
    }
}

template <Topology T, Job J, class C>
template <class OnFinish>
void scheduling_core<T, J, C>::hardware_events(OnFinish& finished) {
    const bool hidden = cfg_.durations.mode == duration_info::hidden;
    while (fails_.next_time() <= sim_.now()) {
        const auto e = fails_.pop();
        const auto gpus = fails_.gpus(e.unit);
        if (!e.failure) {
            sim_.bring_up(gpus);
            finished(gpus);
            continue;
        }
        for (const auto g : gpus) {
            const auto j = cluster().holder(g);
            if (j >= cluster_state::failed) continue;  // free
            sim_.fail(j);
            if (ten_.tenants()) ten_.job_stopped(j, sim_.job(j).num_gpus);
            finished(sim_.gpus_of(sim_.record(j)));
            const auto k = sim_.job(j).num_gpus;
            queue_.insert(j, k, [this](std::uint32_t a, std::uint32_t b) { return queue_less(a, b); });
            if (hidden) queue_.info(j).ideal_feat = squash(sim_.attained(j) / double(k));  // as a suspended job's
            if (preempt_) {
                disc_.stopped(j);  // no longer running: the discipline decides again
                disc_.touch();
            }
        }
        sim_.take_down(gpus, fails_.next_of(e.unit));
        finished(gpus);
    }
}

template <Topology T, Job J, class C>
double scheduling_core<T, J, C>::checkpointing(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown) noexcept {
    const auto& f = fails_.config();
    // a job's own interval and cost (declared job fields) where it gives them (NaN: not given), else the scenario's
    const auto own = [&](std::size_t i) {
        return i == ~std::size_t{0} ? std::numeric_limits<double>::quiet_NaN() : extras_.fields[std::size_t(j) * extras_.width + i];
    };
    const double own_cost = own(cost_field_), own_interval = own(interval_field_);
    const double cost = own_cost >= 0 ? own_cost : f.checkpoint_cost;
    double tau = own_interval >= 0 ? own_interval : f.checkpoint_interval;
    if (f.young_daly && !(own_interval >= 0)) {  // the job's mean time to interruption: the unit MTBF over the units it spans
        std::size_t units = 0;
        std::uint32_t last = ~std::uint32_t{0};
        for (const auto g : gpus) {  // sorted ascending, and a unit's GPUs are consecutive
            const auto u = fails_.unit_of(g);
            units += u != last;
            last = u;
        }
        tau = young_daly_interval(cost, fails_.unit_mtbf_seconds(), units);
    }
    if (!(tau > 0)) {
        sim_.set_checkpointing(j, 0.0, 0.0);
        return slowdown;
    }
    const double period = tau + cost;
    sim_.set_checkpointing(j, period, cost / period);
    return slowdown * period / tau;
}

}  // namespace gpuplace::env_detail
