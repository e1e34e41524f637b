#pragma once
/// \file env/core_inl.hpp
/// The definitions of scheduling_core's members that no decision runs, or only in a setting
/// that is off by default (env/core.hpp declares and documents them): building the core, starting
/// and forking an episode, the shown durations, the metrics, and the preemptive discipline's and
/// typed GPUs' branches of the step path. env/core.hpp includes this file.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>

#include "core.hpp"

namespace gpuplace::env_detail {

template <Topology T, Job J, class C>
template <class Features>
void scheduling_core<T, J, C>::begin_episode(std::uint64_t seed, const Features& features) {
    seed_ = seed;
    workload_.generate(zoo_, num_gpus(), seed, gen_, extras_);
    for (std::size_t i = 0; i < gen_.size(); ++i) gen_[i].id = static_cast<job_id>(i);
    validate_jobs(cfg_, gen_, num_gpus(), zoo_);  // before anything changes
    sim_.reserve_placements(workload_.max_episode_gpus(num_gpus()));  // once: later resets (autoresets) allocate nothing
    if (outcome_field_ != ~std::size_t{0}) read_outcomes();  // trace outcomes
    sim_.reset(std::span<const TrainingJob>(gen_),
               [this](const J& j) { return cut_.empty() ? ideal_of(j) : std::min(ideal_of(j), cut_[j.id]); },  // (NaN: the ideal)
               [this](const J& j) { return zoo_[j.model].memory_gb; });
    rethrow_comm_error();  // the ideal durations' step times
    const std::size_t n = sim_.jobs().size();
    queue_.reset(n);
    describe(0, features);
    if (sim_.colocation()) rooms_.build(sim_);
    current_ = none;
    cur_gpus_ = 0;
    if (preempt_) disc_.reset(n, sim_.now(), ten_.num_tenants());
    if (fail_) fails_.reset(seed, sim_.now());
    if (ten_.on()) describe_tenancy(0, seed);
}

template <Topology T, Job J, class C>
void scheduling_core<T, J, C>::describe_tenancy(std::uint32_t from, std::uint64_t seed) {
    // the duration the scheduler may use: the one shown, or with durations hidden the sampled
    // jobs' mean GPU-seconds over the job's GPUs (0 without a sample)
    double mean = 0;
    if (cfg_.durations.mode == duration_info::hidden && known_.sampled() && !known_.sizes().empty()) {
        for (double x : known_.sizes()) mean += x;
        mean /= double(known_.sizes().size());
    }
    ten_.reset(sim_, extras_.fields, extras_.width, from, seed, [&](std::uint32_t j) {
        return cfg_.durations.mode == duration_info::hidden ? mean / double(sim_.job(j).num_gpus) : shown_[j];
    });
    // a drawn deadline joins its job's fields (seconds after submission, as a given one): the
    // observation (an observed "deadline" field), Python and the reports see it
    if (const auto d = ten_.deadline_column(); d < extras_.width)
        for (std::uint32_t j = from; j < sim_.jobs().size(); ++j) {
            auto& v = extras_.fields[std::size_t(j) * extras_.width + d];
            if (!(v == v) && ten_.deadline(j) < std::numeric_limits<double>::infinity()) v = ten_.deadline(j) - double(sim_.job(j).submit_time);
        }
}

template <Topology T, Job J, class C>
template <class Features>
void scheduling_core<T, J, C>::redraw_future(std::uint64_t seed, const Features& features) {
    const double now = sim_.now();
    const auto keep = static_cast<std::uint32_t>(sim_.arrived());
    // a new draw's jobs after its first `keep` (as many jobs to come as in the truth), their
    // arrivals continuing from now with the draw's own gaps
    episode_extras drawn;
    workload_.generate(zoo_, num_gpus(), detail::mix_seed(seed, 0x666f726b6564ULL), gen_, drawn);  // "forked"
    if (extras_.width > 0) {  // the present jobs' fields, then the drawn future's past its first `keep`
        const std::size_t F = extras_.width, from = std::min<std::size_t>(keep, gen_.size()) * F;
        extras_.fields.resize(std::size_t(keep) * F);
        extras_.fields.insert(extras_.fields.end(), drawn.fields.begin() + std::ptrdiff_t(from), drawn.fields.end());
    }
    const double origin = keep == 0 || gen_.size() < keep ? (gen_.empty() ? 0.0 : gen_.front().submit_time) : gen_[keep - 1].submit_time;
    gen_.erase(gen_.begin(), gen_.begin() + std::ptrdiff_t(std::min<std::size_t>(keep, gen_.size())));
    for (std::size_t i = 0; i < gen_.size(); ++i) {
        gen_[i].id = static_cast<job_id>(keep + i);
        gen_[i].submit_time = std::nextafter(now, 1e300) + (gen_[i].submit_time - origin);
    }
    validate_jobs(cfg_, gen_, num_gpus(), zoo_);
    if (!cut_.empty()) read_outcomes();
    sim_.replace_future(std::span<const TrainingJob>(gen_),
                        [this](const J& j) { return cut_.empty() ? ideal_of(j) : std::min(ideal_of(j), cut_[j.id]); },
                        [this](const J& j) { return zoo_[j.model].memory_gb; });
    rethrow_comm_error();  // the ideal durations' step times
    const std::size_t n = sim_.jobs().size();
    queue_.resize_jobs(n);
    describe(keep, features);
    if (sim_.colocation()) rooms_.build(sim_);
    if (preempt_) disc_.grow(n);
    if (fail_) fails_.reseed(seed, now);  // the failures to come are not known either
    if (ten_.on()) describe_tenancy(keep, seed);
    if (cfg_.durations.mode != duration_info::hidden) return;
    if (!known_.sampled()) sample_durations();
    detail::rng r(detail::mix_seed(seed, 0x6475726174696f6eULL));  // "duration"
    for (std::uint32_t j = 0; j < keep; ++j) {
        if (is_finished(j)) continue;
        const double k = double(sim_.job(j).num_gpus);
        sim_.set_ideal_duration(j, known_.redraw(sim_.attained(j), k, r) / k);
    }
}

template <Topology T, Job J, class C>
metrics scheduling_core<T, J, C>::episode_metrics() const {
    auto m = sim_.compute(scratch_);
    m.type_utilization = types_.utilization(sim_.finished(), sim_.placements(), m.makespan);
    if (sim_.colocation() && m.makespan > 0) {
        m.memory_utilization = sim_.memory_time() / (double(num_gpus()) * cfg_.colocation.gpu_memory_gb * m.makespan);
        // jobs sharing a GPU must not count it twice: busy GPU-time as the simulator measured it
        m.utilization = sim_.busy_gpu_time() / (double(num_gpus()) * m.makespan);
    }
    if (fail_ || !cut_.empty()) {
        double held = 0, wasted = 0, hits = 0, jct = 0, completed = 0;
        for (const auto& r : sim_.finished()) {
            const double h = double(r.num_gpus) * (r.preemptions || r.interruptions ? r.run_time : r.end - r.start);
            held += h;
            hits += r.interruptions;
            if (!cut_.empty() && cut_[r.id] == cut_[r.id]) {  // failed or killed in its trace: all of its GPU time
                wasted += h;
                continue;
            }
            wasted += r.lost_gpu_time + r.checkpoint_gpu_time;
            jct += r.jct();
            ++completed;
        }
        const double n = double(std::max<std::size_t>(sim_.finished().size(), 1));
        m.failures = true;
        m.goodput = held > 0 ? (held - wasted) / held : 1.0;
        m.wasted_gpu_hours = wasted / 3600.0;
        m.avg_interruptions = hits / n;
        m.hardware_failures = fail_ ? double(fails_.failures()) : 0.0;
        m.avg_jct_completed = completed > 0 ? jct / completed : 0.0;
    }
    if (ten_.on()) m.groups = ten_.compute(sim_.finished(), num_gpus());
    return m;
}

template <Topology T, Job J, class C>
void scheduling_core<T, J, C>::tell_discipline(const advance_result& ev) {
    for (auto j = ev.first_arrival; j < ev.first_arrival + ev.arrivals; ++j) {
        disc_.arrived(j, sim_.now(), sim_.job(j).num_gpus);
        if (ten_.on()) ten_.arrived(j, sim_.now());
    }
    for (const auto& r : ev.finished) disc_.finished(std::uint32_t(r.id));
    disc_.touch(ev.arrivals == 0 && ev.finished.empty());  // neither: the discipline's own decision time
}

template <Topology T, Job J, class C>
comm_result scheduling_core<T, J, C>::typed_comm(const J& job, std::span<const gpu_id> gpus) const noexcept {
    const auto t = types_.slowest(zoo_, job.model, gpus);
    const auto& tz = types_.zoo_of(t);
    auto res = comm_.evaluate(topo_, tz, job.model, gpus);
    res.slowdown *= comm_.ideal_step_time(topo_, tz, job.model, job.num_gpus) / comm_.ideal_step_time(topo_, zoo_, job.model, job.num_gpus);
    return res;
}

template <Topology T, Job J, class C>
std::size_t scheduling_core<T, J, C>::find_in_run_set(std::uint32_t skip, std::size_t free) noexcept {
    return queue_.find(skip, free, true, false, [&](std::uint32_t j) { return disc_.in_run_set(j) && sim_.job(j).num_gpus <= free; });
}

template <Topology T, Job J, class C>
std::size_t scheduling_core<T, J, C>::most_free_of_a_type() noexcept {
    std::fill(type_free_.begin(), type_free_.end(), 0);
    const auto& cl = cluster();
    const auto& h = hierarchy();
    for (std::size_t n = 0; n < h.num_domains(1); ++n) type_free_[types_.type_of(h.first(1, n))] += cl.free_in(1, n);
    return *std::max_element(type_free_.begin(), type_free_.end());
}

template <Topology T, Job J, class C>
bool scheduling_core<T, J, C>::is_finished(std::uint32_t j) const noexcept {
    const auto& r = sim_.finished();
    return std::any_of(r.begin(), r.end(), [j](const job_record& x) { return x.id == j; });
}

template <Topology T, Job J, class C>
void scheduling_core<T, J, C>::decide() {
    const discipline_inputs in{shown_, extras_.fields, extras_.width, cfg_.job_fields};
    for (auto j : disc_.decide(sim_, queue_.jobs(), num_gpus(), sim_.now(), ten_.on() ? &ten_ : nullptr, in)) {
        sim_.suspend(j);
        if (ten_.tenants()) ten_.job_stopped(j, sim_.job(j).num_gpus);
        if (cfg_.durations.mode == duration_info::hidden)  // what it has attained, per GPU, as its duration feature
            queue_.info(j).ideal_feat = squash(sim_.attained(j) / double(sim_.job(j).num_gpus));
    }
    queue_.reorder(disc_.order(), [&](std::uint32_t j) { return sim_.job(j).num_gpus; });
    queue_.next_epoch();
}

template <Topology T, Job J, class C>
template <class Features>
void scheduling_core<T, J, C>::describe(std::uint32_t from, const Features& features) {
    const auto n = static_cast<std::uint32_t>(sim_.jobs().size());
    shown_.resize(n);
    for (auto i = from; i < n; ++i) {
        shown_[i] = shown_duration(i);
        const auto& j = sim_.job(i);
        const auto p = zoo_[j.model].at(j.num_gpus);
        queue_.info(i) = {features.request(j.num_gpus), features.squash(shown_[i]),
                          detail::comm_intensity(p.spread, p.consolidated), double(j.submit_time), 0};
    }
}

template <Topology T, Job J, class C>
void scheduling_core<T, J, C>::init_information() {
    duration_knowledge::check(cfg_);
    if (duration_knowledge::needs_sample(cfg_)) sample_durations();
    const auto& p = cfg_.preemption;
    if (!p.enabled) return;
    preempt_ = true;
    sim_.set_preemption({p.restart_overhead, p.checkpoint_interval});
    const auto order = cfg_.env.order;
    disc_.init(order, p, order == queue_order::gittins ? gittins_table(known_.sizes(), p.gittins_quantum) : gittins_table{},
               cfg_.env.discipline);
}

template <Topology T, Job J, class C>
void scheduling_core<T, J, C>::sample_durations() {
    known_.sample(cfg_, zoo_, num_gpus(), [this](const TrainingJob& j) { return ideal_of(j); });
}

}  // namespace gpuplace::env_detail
