#pragma once
/// \file env/room_index.hpp
/// Co-location: which GPUs have room for a job. has_room(g, j) depends on j only through its
/// model, GPU share and memory, so the jobs of an episode fall into a few room classes; for each
/// class the index keeps which GPUs have room and how many, brought up to date on demand by
/// replaying the cluster's change log (only the GPUs whose jobs changed since the class was last
/// used are checked again; every GPU when the log was cleared or is longer than G). The answers
/// are has_room()'s, so results do not depend on the index.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../cluster.hpp"
#include "../simulator.hpp"

namespace gpuplace::env_detail {

/// Whether GPU g can take job j of `sim` now: free, or, with co-location, a free slot, enough
/// memory (of `gpu_memory_gb`), GPU shares that fit, and only compatible jobs there.
template <class J>
[[nodiscard]] bool has_room(const basic_simulator<J>& sim, gpu_id g, std::uint32_t j, double gpu_memory_gb) noexcept {
    const auto& cl = sim.cluster();
    if (cl.is_free(g)) return true;
    if (!sim.colocation()) return false;
    if (cl.jobs_on_count(g) >= cl.max_jobs_per_gpu()) return false;
    if (cl.memory_used(g) + sim.memory_of(j) > gpu_memory_gb + 1e-9) return false;
    const auto& job = sim.job(j);
    const double share = sim.share_of(job);
    bool fractional = share < 1.0;
    const auto* t = sim.interference();
    for (auto o : cl.jobs_on(g)) {
        const auto& oj = sim.job(o);
        const double so = sim.share_of(oj);
        fractional = fractional || so < 1.0;
        if (!t->compatible(job.model, share, oj.model, so)) return false;
    }
    return !fractional || cl.share_used(g) + share <= 1.0 + 1e-9;
}

/// Job j's rate factor next to the jobs on GPU g (1 without co-location); room not checked.
template <class J>
[[nodiscard]] double interference_on(const basic_simulator<J>& sim, gpu_id g, std::uint32_t j) noexcept {
    const auto* t = sim.interference();
    if (!t) return 1.0;
    const auto& job = sim.job(j);
    double f = 1.0;
    for (auto o : sim.cluster().jobs_on(g))
        f *= t->factor(job.model, sim.share_of(job), sim.job(o).model, sim.share_of(sim.job(o)));
    return f;
}

class room_index {
public:
    /// Sizes the storage for up to `classes` classes on `num_gpus` GPUs, so that build() does not
    /// allocate for it again.
    void reserve(std::size_t classes, std::size_t num_gpus) {
        G_ = num_gpus;
        rep_.reserve(classes);
        hosts_.reserve(classes);
        gen_.reserve(classes);
        pos_.reserve(classes);
        room_.reserve(classes * num_gpus);
    }

    /// Groups the jobs of `sim`'s episode into classes of the same model, GPU share and memory.
    /// Every class is checked against every GPU at its first use.
    template <class J>
    void build(const basic_simulator<J>& sim) {
        const std::size_t n = sim.jobs().size();
        const auto key_less = [&sim](std::uint32_t a, std::uint32_t b) {
            const auto &ja = sim.job(a), &jb = sim.job(b);
            if (ja.model != jb.model) return ja.model < jb.model;
            const double sa = sim.share_of(ja), sb = sim.share_of(jb);
            if (sa != sb) return sa < sb;
            return sim.memory_of(a) < sim.memory_of(b);
        };
        order_.resize(n);
        for (std::size_t i = 0; i < n; ++i) order_[i] = static_cast<std::uint32_t>(i);
        std::sort(order_.begin(), order_.end(),
                  [&](std::uint32_t a, std::uint32_t b) { return key_less(a, b) || (!key_less(b, a) && a < b); });
        class_of_.resize(n);
        rep_.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const auto j = order_[i];
            if (i == 0 || key_less(rep_.back(), j)) rep_.push_back(j);
            class_of_[j] = static_cast<std::uint32_t>(rep_.size() - 1);
        }
        const std::size_t classes = rep_.size();
        hosts_.assign(classes, 0);
        gen_.assign(classes, never_synced);
        pos_.assign(classes, 0);
        room_.resize(classes * G_);
    }

    [[nodiscard]] std::uint32_t class_of(std::uint32_t j) const noexcept { return class_of_[j]; }
    /// Per GPU, 1 if it has room for class c (as of c's last sync()).
    [[nodiscard]] const std::uint8_t* room(std::uint32_t c) const noexcept { return room_.data() + std::size_t(c) * G_; }

    /// Brings class c up to date with `sim`'s cluster (GPUs of `gpu_memory_gb`); returns how many
    /// GPUs have room for it.
    template <class J>
    std::uint32_t sync(std::uint32_t c, const basic_simulator<J>& sim, double gpu_memory_gb) noexcept {
        const auto& cl = sim.cluster();
        const auto log = cl.changes();
        const auto rep = rep_[c];
        std::uint8_t* room = room_.data() + std::size_t(c) * G_;
        std::uint32_t n = hosts_[c];
        if (gen_[c] != cl.change_generation() || log.size() - pos_[c] >= G_) {
            n = 0;
            for (std::size_t g = 0; g < G_; ++g) {
                const bool r = has_room(sim, static_cast<gpu_id>(g), rep, gpu_memory_gb);
                room[g] = static_cast<std::uint8_t>(r);
                n += r;
            }
        } else {
            for (std::size_t i = pos_[c]; i < log.size(); ++i) {
                const auto g = log[i];
                const bool r = has_room(sim, g, rep, gpu_memory_gb);
                n = n - room[g] + static_cast<std::uint32_t>(r);
                room[g] = static_cast<std::uint8_t>(r);
            }
        }
        hosts_[c] = n;
        gen_[c] = cl.change_generation();
        pos_[c] = log.size();
        return n;
    }

private:
    static constexpr std::uint64_t never_synced = ~std::uint64_t{0};
    std::size_t G_ = 0;
    std::vector<std::uint32_t> class_of_;  ///< per job: its class
    std::vector<std::uint32_t> rep_;       ///< per class: one of its jobs
    std::vector<std::uint32_t> hosts_;     ///< per class: GPUs with room (as of its last sync)
    std::vector<std::uint64_t> gen_;       ///< per class: cluster change generation at its last sync
    std::vector<std::size_t> pos_;         ///< per class: change-log position at its last sync
    std::vector<std::uint8_t> room_;       ///< class x GPU: 1 if the GPU has room for the class
    std::vector<std::uint32_t> order_;     ///< scratch for build()
};

}  // namespace gpuplace::env_detail
