#pragma once
/// \file impl/observation_inl.hpp
/// The definitions of observation_writer's members that rewrite whole rows (observation.hpp
/// declares and documents them): its constructor, the per-GPU rows written whole, the time and
/// type rows, and the domain rows by level. observation.hpp includes this file; the members a
/// step runs at every decision stay in the class.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../observation.hpp"

namespace gpuplace {

inline observation_writer::observation_writer(const level_hierarchy& h, std::size_t queue_window, bool colocation, double time_scale,
                                              bool heterogeneous, bool hidden, bool preemption)
    : G_(h.num_gpus()), K_(queue_window), time_scale_(time_scale), time_scale_f_(static_cast<float>(time_scale)), h_(h) {
    std::vector<std::string> names;
    for (std::size_t l = 1; l < h.num_levels(); ++l) names.push_back(h.level(l).name);
    L_ = obs_layout(G_, std::move(names), K_, colocation, heterogeneous, hidden, preemption);
    top_ = h.num_levels() - 1;
    using f = gpu_feature;
    picked_ = L_.offset(f::picked), remaining_ = L_.offset(f::remaining), proximity_ = L_.offset(f::proximity);
    free_ = L_.offset(f::domain_free, 1), job_off_ = L_.offset(obs_part::job);
    size_ = L_.size();
    buf_.allocate(size_, G_ + 1);
    top_dirty_.assign(h.num_domains(top_), 0);
    dirty_tops_.reserve(h.num_domains(top_));
    top_map_ = h.map(top_);
    maps_.assign(top_ + 1, {});
    prox_.assign(top_ + 2, 0.0f);
    for (std::size_t l = 1; l <= top_; ++l) {
        maps_[l] = h.map(l);
        prox_[l] = float(top_ + 1 - l) / float(top_);
    }
    map1_ = maps_[1];
    if (top_ >= 2) map2_ = maps_[2];
    bounds1_ = h_.bounds(1).data();
    bounds2_ = h_.bounds(2).data();
    children2_ = h_.children(2).data();
    node_size_ = h_.uniform_size(1);
    request_.resize(G_ + 1);
    for (std::size_t k = 0; k <= G_; ++k)
        request_[k] = static_cast<float>(std::log2(double(k) + 1.0) / std::log2(double(G_) + 1.0));
}

inline void observation_writer::observe_fields(std::vector<observed_field> fields) {
    observed_ = std::move(fields);
    std::vector<std::string> names;
    for (const auto& f : observed_) names.push_back(f.field.name);
    L_ = obs_layout(G_, L_.level_names(), K_, L_.has(gpu_feature::occupancy), L_.has(gpu_feature::type), L_.hidden(), L_.preemption(),
                    std::move(names));
    size_ = L_.size();
    buf_.allocate(size_, G_ + 1);
}

inline void observation_writer::bind(std::span<float> obs, std::span<std::uint8_t> mask) { buf_.bind_checked<Error>(obs, mask); }

template <class J>
inline void observation_writer::gpu_rows(const basic_simulator<J>& sim, const env_detail::pick_set& picks, bool active) noexcept {
    const auto& cl = sim.cluster();
    float* busy = buf_.obs.data() + L_.offset(gpu_feature::busy);
    float* pick = buf_.obs.data() + picked_;
    const std::uint8_t* picked = picks.picked_flags();
    std::uint8_t* mask = buf_.mask.data();
    discard_marks();  // every GPU is rewritten
    for (std::size_t g = 0; g < G_; ++g) {
        const bool free = cl.is_free(static_cast<gpu_id>(g));
        busy[g] = free ? 0.0f : 1.0f;
        pick[g] = picked[g] ? 1.0f : 0.0f;
        mask[g] = static_cast<std::uint8_t>(active && free && !picked[g]);
    }
    remaining_all(cl, sim.now());
    for (std::size_t t = 0; t < h_.num_domains(top_); ++t) domain_rows(cl, picks, top_, t, 0.0f);
}

template <class J>
inline void observation_writer::gpu_rows_colocation(const basic_simulator<J>& sim, const env_detail::pick_set& picks, const std::uint8_t* room, std::uint32_t current, double gpu_memory_gb) noexcept {
    const auto& cl = sim.cluster();
    const double now = sim.now();
    using f = gpu_feature;
    const auto at = [&](gpu_feature x) { return buf_.obs.data() + L_.offset(x); };
    float *busy = at(f::busy), *pick = at(f::picked), *rem = at(f::remaining);
    float *occ = at(f::occupancy), *head = at(f::memory_headroom), *itf = at(f::interference);
    std::uint8_t* mask = buf_.mask.data();
    const double M = double(cl.max_jobs_per_gpu()), cap = gpu_memory_gb;
    discard_marks();  // every GPU is rewritten
    for (std::size_t g = 0; g < G_; ++g) {
        const auto gg = static_cast<gpu_id>(g);
        const auto jobs = cl.jobs_on_count(gg);
        const bool free = jobs == 0;
        busy[g] = free ? 0.0f : 1.0f;
        pick[g] = picks.picked(gg) ? 1.0f : 0.0f;
        rem[g] = free ? 0.0f : remaining(sim.projected_end(cl.holder(gg)) - now);
        const bool ok = room && room[g];
        mask[g] = static_cast<std::uint8_t>(ok && !picks.picked(gg));
        occ[g] = static_cast<float>(double(jobs) / M);
        head[g] = free ? 1.0f : static_cast<float>(std::clamp((cap - cl.memory_used(gg)) / cap, 0.0, 1.0));
        // a free GPU: no one to interfere with, factor 1
        itf[g] = !ok ? 0.0f
                     : free ? 1.0f
                            : static_cast<float>(std::clamp(env_detail::interference_on(sim, gg, current), 0.0, 1.0));
    }
    for (std::size_t t = 0; t < h_.num_domains(top_); ++t) domain_rows(cl, picks, top_, t, 0.0f);
}

template <class J>
inline void observation_writer::time_row(const basic_simulator<J>& sim, std::span<const double> shown, bool hidden) noexcept {
    const auto& cl = sim.cluster();
    const double now = sim.now();
    float* rem = buf_.obs.data() + remaining_;
    for (std::size_t g = 0; g < G_; ++g) {
        const auto j = cl.holder(gpu_id(g));
        if (j == no_job) {
            rem[g] = 0.0f;
            continue;
        }
        if (j == cluster_state::failed) {  // out of service: the time until its repair
            rem[g] = remaining(cl.end_time(gpu_id(g)) - now);
            continue;
        }
        const double x = hidden ? now - sim.run_start(j)
                                : std::max(0.0, shown[j] - (sim.ideal_duration(j) - sim.work_left(j))) * sim.slowdown(j);
        rem[g] = remaining(x);
    }
}

template <class Types>
inline void observation_writer::type_rows(const Types& types, std::span<const double> speeds) noexcept {
    float* speed = buf_.obs.data() + L_.offset(gpu_feature::type_speed);
    float* type = buf_.obs.data() + L_.offset(gpu_feature::type);
    const std::size_t NT = types.num_types();
    for (std::size_t g = 0; g < G_; ++g) type[g] = float(types.type_of(gpu_id(g))) / float(NT - 1);
    buf_.obs[L_.offset(obs_part::job_type)] = best_type_speedup(speeds);
    if (speeds.empty()) {
        std::fill(speed, speed + G_, 0.0f);
        return;
    }
    double fast = 0;
    for (const double v : speeds) fast = std::max(fast, v);
    for (std::size_t g = 0; g < G_; ++g) speed[g] = static_cast<float>(speeds[types.type_of(gpu_id(g))] / fast);
}

inline void observation_writer::domain_rows(const cluster_state& cl, const env_detail::pick_set& picks, std::size_t l, std::size_t d, float above) noexcept {
    const float p = !picks.empty() && picks.in(l, d) ? level_proximity(l) : above;
    const float f = float(cl.free_in(l, d)) * (1.0f / float(h_.size(l, d)));
    if (l == 1) {  // a hierarchy of one domain level: its domains are the leaves
        const gpu_id first = h_.first(1, d), n = h_.size(1, d);
        std::fill_n(buf_.obs.data() + proximity_ + first, n, p);
        std::fill_n(buf_.obs.data() + free_ + first, n, f);
        return;
    }
    if (l == 2) return leaf_rows(cl, picks, d, p, f);
    std::fill_n(buf_.obs.data() + free_ + (l - 1) * G_ + h_.first(l, d), h_.size(l, d), f);
    for (auto c = h_.first_child(l, d); c < h_.end_child(l, d); ++c) domain_rows(cl, picks, l - 1, c, p);
}

inline void observation_writer::proximity_rows(const env_detail::pick_set& picks, std::size_t l, std::size_t d, float above) noexcept {
    const float p = picks.in(l, d) ? level_proximity(l) : above;
    if (l == 1) {
        std::fill_n(buf_.obs.data() + proximity_ + h_.first(l, d), h_.size(l, d), p);
        return;
    }
    if (l == 2) return leaf_proximity(picks, d, p);
    for (auto c = h_.first_child(l, d); c < h_.end_child(l, d); ++c) proximity_rows(picks, l - 1, c, p);
}

}  // namespace gpuplace
