#pragma once
/// \file env/placement_mode.hpp
/// The placement action mode (env.action_mode "placement"): Discrete(K + 1), K candidate
/// placements of the current job, then DEFER. The candidates, in slot order, duplicates dropped
/// (a later one equal to an earlier one is left out) and empty slots masked: the placements of
/// pack, load_balance, topology_greedy, first_fit, spread (one GPU at a time from the level-1
/// domain with most available GPUs), with co-location share (the GPUs with room in the order of
/// colocation_packer_policy::score(): free ones best fit by node, then shared ones by the combined
/// rate of their jobs), then pack within each top-level domain (each rack of a tree) that can hold
/// the job, domain by domain. Per candidate ("candidate_<name>", K values each): valid, speed (1 /
/// slowdown; on a heterogeneous cluster the job's rate on those GPUs, at their slowest type, over
/// its rate at its best placement on its fastest type; with co-location times the rate the job
/// would keep next to the jobs already on those GPUs), comm (1 - (cost - best) / (worst - best)),
/// nodes (level-1 domains used / their number), racks (top-level domains used / their number), opened (share of its
/// level-1 domains that were empty), left (free GPUs its level-1 domains keep / their GPUs),
/// partial (partly used level-1 domains after it / their number), with co-location combined (the
/// combined rate of the jobs on its GPU of the lowest, the job included, colocation_packer_policy::
/// combined(), over colocation.max_jobs_per_gpu: a free GPU 2 / max); then the GPU mode's "job",
/// "queue", "global" (and on a heterogeneous cluster "job_type") segments.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../colocation_policy.hpp"
#include "../heuristics.hpp"
#include "../observation.hpp"
#include "gpu_mode.hpp"
#include "slots.hpp"

namespace gpuplace {

inline constexpr std::string_view candidate_feature_names[] = {"valid", "speed", "comm", "nodes",
                                                               "racks", "opened", "left", "partial"};
/// The candidates' features with co-location: those, then "combined".
inline constexpr std::string_view candidate_colocation_feature_names[] = {"valid", "speed", "comm", "nodes", "racks",
                                                                          "opened", "left", "partial", "combined"};
/// Where each placement-mode candidate comes from, in slot order before the per-domain packs.
inline constexpr std::string_view candidate_sources[] = {"pack", "load_balance", "topology_greedy", "first_fit", "spread"};

namespace env_detail {

template <class Core, class View>
class placement_mode : public slot_front_end {
public:
    void init(const Core& core, const observation_writer& obs) {
        const auto& h = core.hierarchy();
        G_ = h.num_gpus();
        const std::size_t K = core.config().env.slots;
        constexpr obs_part parts[] = {obs_part::job, obs_part::queue, obs_part::global, obs_part::job_type, obs_part::job_fields};
        coloc_ = core.config().colocation.enabled;
        slots_.init(K, "candidate_", coloc_ ? std::span<const std::string_view>(candidate_colocation_feature_names)
                                            : std::span<const std::string_view>(candidate_feature_names),
                    obs.layout(), parts);
        room_.assign(G_, 0);
        vmask_.assign(G_, 0);
        out_.reserve(G_);
        want_.reserve(G_);
        cand_.assign(K * G_, 0);
        cand_n_.assign(K, 0);
        avail_.reserve(h.num_domains(1));
        scored_.reserve(G_);
        heap_.reserve(h.num_domains(1));
        type_speed_.assign(core.gpu_types().num_types(), 0.0);
        reserve_placers(h);
    }

    void reset(const Core&) noexcept {}
    /// The GPUs (sorted) of slot s's candidate.
    [[nodiscard]] std::span<const gpu_id> candidate(std::size_t s) const noexcept { return {cand_.data() + s * G_, cand_n_[s]}; }

    /// The candidates of the current decision, their observation and the mask (lazy: the DEFER
    /// bit only; the candidates are made as ensure() asks for them, the rest by complete()).
    void write(Core& core, const observation_writer& obs, const typename View::state& st) {
        std::fill(cand_n_.begin(), cand_n_.end(), 0);
        n_ = 0;
        stage_ = 0;
        pending_ = false;
        if (lazy_) std::fill(slots_.mask().begin(), slots_.mask().end(), std::uint8_t{0});
        else slots_.clear();
        if (!core.has_current()) return;
        const auto j = core.current();
        if (const auto& sim = core.simulator(); !sim.colocation()) {  // has_room(): free (a step's hot loop)
            const auto& cl = sim.cluster();
            for (std::size_t g = 0; g < G_; ++g) room_[g] = static_cast<std::uint8_t>(cl.is_free(gpu_id(g)));
        } else {
            for (std::size_t g = 0; g < G_; ++g) room_[g] = static_cast<std::uint8_t>(core.has_room(gpu_id(g), j));
        }
        slots_.mask()[slots_.slots()] = core.may_defer();
        if (lazy_) {
            pending_ = true;
            return;
        }
        generate(core, st, slots_.slots());
        finish(core, obs, st);
    }

    /// Lazy candidates (basic_env::set_lazy): a rollout's base policy reads one candidate or two of
    /// a decision, not its observation, so the candidates are made in slot order only as far as
    /// asked (the same candidates, the same slots) and the observation only when read. Turning it
    /// off completes the current decision.
    void set_lazy(bool on, Core& core, const observation_writer& obs, const typename View::state& st) {
        if (!on) complete(core, obs, st);
        lazy_ = on;
    }
    /// Makes the candidates up to slot s (fewer when the decision has fewer).
    void ensure(Core& core, std::size_t s, const typename View::state& st) {
        if (pending_ && s < slots_.slots()) generate(core, st, s);
    }
    /// Makes the rest of the candidates and writes the observation.
    void complete(Core& core, const observation_writer& obs, const typename View::state& st) {
        if (!pending_) return;
        std::fill(slots_.obs().begin(), slots_.obs().end(), 0.0f);
        generate(core, st, slots_.slots());
        finish(core, obs, st);
        pending_ = false;
    }
    [[nodiscard]] bool pending() const noexcept { return pending_; }

    /// Starts the chosen candidate, or holds the job back (DEFER).
    template <class State>
    front_step step(Core& core, observation_writer& obs, std::int64_t action, double reward, State&& state) {
        const typename View::state st = state();
        const auto s = static_cast<std::size_t>(action);
        if (s == slots_.slots()) core.defer_current();
        else reward += core.start(candidate(s));
        reward += core.advance([](std::span<const gpu_id>) {}).reward;
        write(core, obs, st);
        return {reward, true};
    }

    template <class E>
    [[nodiscard]] std::string why_invalid(const E&, std::int64_t action) const {
        return slots_.why_invalid(action, "candidates", "DEFER", "candidate (" + std::to_string(n_) + " distinct candidates for this job)",
                                  "(env.allow_defer is off, or it would stall the episode: no event is pending and no other "
                                  "waiting job fits)");
    }

    /// Placer p's action: the candidate equal to its whole placement (DEFER when it holds the job
    /// back; the first candidate when its placement is none of them).
    template <class P>
    [[nodiscard]] std::int64_t heuristic_action(const Core& core, const observation_writer&, P& p,
                                                const typename View::state& st) const {
        const auto K = slots_.slots();
        const auto mask = slots_.mask();
        if (!core.has_current()) return std::int64_t(K);
        const auto j = core.current();
        auto& self = const_cast<placement_mode&>(*this);  // lazy: making a candidate changes no state, only what is computed
        std::copy(room_.begin(), room_.end(), vmask_.begin());  // room_: write()'s, for this decision
        if (!p.plan(View(st, j, vmask_, {}, mask[K] != 0), out_)) {
            if (out_.empty() && mask[K]) return std::int64_t(K);
            if (pending_) self.generate(core, st, 0);
            return slots_.first_valid();
        }
        complete(core.job(j).num_gpus);
        std::sort(out_.begin(), out_.end());
        want_.assign(out_.begin(), out_.end());  // generate() plans in out_
        for (std::size_t s = 0; s < K; ++s) {
            if (pending_) self.generate(core, st, s);
            if (mask[s] && std::equal(want_.begin(), want_.end(), candidate(s).begin(), candidate(s).end())) return std::int64_t(s);
        }
        return slots_.first_valid();  // a placement that is no candidate (e.g. coloc_packer's): the first candidate
    }

private:
    /// A plan followed pick by pick: its GPUs the mask allows, then the lowest allowed ones, until k.
    void complete(std::size_t k) const {
        std::size_t n = 0;
        for (auto g : out_)
            if (vmask_[g]) vmask_[g] = 0, out_[n++] = g;
        out_.resize(n);
        for (std::size_t g = 0; g < G_ && out_.size() < k; ++g)
            if (vmask_[g]) vmask_[g] = 0, out_.push_back(gpu_id(g));
    }

    /// Makes candidates in slot order until slot `upto` exists or none is left: stage 0 pack, 1
    /// load_balance, 2 topology_greedy, 3 first_fit, 4 spread, with co-location 5 share, then pack
    /// within top-level domain r.
    void generate(const Core& core, const typename View::state& st, std::size_t upto) {
        const auto K = slots_.slots();
        const auto j = core.current();
        const std::size_t k = core.job(j).num_gpus;
        const auto& h = core.hierarchy();
        const std::size_t shares = coloc_ ? 1 : 0;
        const std::size_t top = h.num_levels() - 1, stages = 5 + shares + h.num_domains(top);
        const auto plan = [&](auto& p, std::span<const std::uint8_t> mask) {
            if (p.plan(View(st, j, mask, {}, false), out_)) add_candidate(k);
        };
        for (; stage_ < stages && n_ <= upto && n_ < K; ++stage_) {
            const std::size_t before = n_;
            switch (stage_) {
                case 0: plan(pack_, room_); break;
                case 1: plan(lb_, room_); break;
                case 2: plan(tg_, room_); break;
                case 3: plan(ff_, room_); break;
                case 4: spread(h, k), add_candidate(k); break;
                default: {
                    if (stage_ < 5 + shares) {
                        share(View(st, j, room_, {}, false), k), add_candidate(k);
                        break;
                    }
                    // pack within top-level domain r: its GPUs (contiguous) and no others
                    const std::size_t r = stage_ - 5 - shares;
                    const auto first = room_.begin() + h.first(top, r), last = room_.begin() + h.end(top, r);
                    if (std::size_t(std::count(first, last, std::uint8_t{1})) < k) break;
                    std::fill(vmask_.begin(), vmask_.end(), std::uint8_t{0});
                    std::copy(first, last, vmask_.begin() + h.first(top, r));
                    plan(pack_, vmask_);
                }
            }
            if (n_ > before) slots_.mask()[n_ - 1] = 1;
        }
    }

    /// The candidates' features and the GPU mode's context segments.
    void finish(const Core& core, const observation_writer& obs, const typename View::state& st) {
        if (!core.has_current()) return;
        const auto j = core.current();
        const auto& job = core.job(j);
        features(core, job, st);
        const auto& sim = core.simulator();
        obs.job_segment(slots_.context(obs_part::job), sim, core.queue(), j, core.current_gpus(), 0);
        obs.queue_segment(slots_.context(obs_part::queue), sim, core.queue(), j);
        obs.global_segment(slots_.context(obs_part::global), sim, core.queue());
        if (obs.layout().has(obs_part::job_fields)) obs.fields_segment(slots_.context(obs_part::job_fields), core.queue(), j, core.extras());
        if (core.gpu_types().heterogeneous()) {
            const auto& types = core.gpu_types();
            for (std::size_t t = 0; t < types.num_types(); ++t) type_speed_[t] = types.speed(core.zoo(), job.model, t, job.num_gpus);
            *slots_.context(obs_part::job_type) = observation_writer::best_type_speedup(type_speed_);
        }
    }

    /// Spread: one GPU at a time, the lowest available GPU of the level-1 domain with most
    /// available GPUs (the lowest such domain). The domains with available GPUs in a heap by that
    /// order: O(N + k log N).
    template <class H>
    void spread(const H& h, std::size_t k) {
        const std::size_t N = h.num_domains(1);
        avail_.assign(N, 0);
        std::copy(room_.begin(), room_.end(), vmask_.begin());
        const auto m = h.map(1);
        for (std::size_t g = 0; g < G_; ++g) avail_[m(gpu_id(g))] += vmask_[g];
        // a before b in the heap's order: fewer available GPUs, or as many and a higher index
        const auto later = [this](std::uint32_t a, std::uint32_t b) { return avail_[a] != avail_[b] ? avail_[a] < avail_[b] : a > b; };
        heap_.clear();
        for (std::size_t n = 0; n < N; ++n)
            if (avail_[n]) heap_.push_back(std::uint32_t(n));
        std::make_heap(heap_.begin(), heap_.end(), later);
        out_.clear();
        while (out_.size() < k && !heap_.empty()) {
            std::pop_heap(heap_.begin(), heap_.end(), later);
            const std::uint32_t best = heap_.back();
            for (gpu_id g = h.first(1, best); g < h.end(1, best); ++g)
                if (vmask_[g]) {
                    vmask_[g] = 0;
                    out_.push_back(g);
                    break;
                }
            if (--avail_[best]) std::push_heap(heap_.begin(), heap_.end(), later);
            else heap_.pop_back();
        }
    }

    /// Share (co-location): the k GPUs with room in the order of colocation_packer_policy's first
    /// pick (score()): free GPUs first, best fit by node, then shared ones by the combined rate of
    /// their jobs with the current one; ties: the lower GPU. O(G log k).
    void share(const View& v, std::size_t k) {
        scored_.clear();
        for (std::size_t g = 0; g < G_; ++g)
            if (room_[g]) scored_.push_back({colocation_packer_policy::score(v, gpu_id(g), k), gpu_id(g)});
        const auto before = [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; };
        const auto end = scored_.begin() + std::ptrdiff_t(std::min(k, scored_.size()));
        std::partial_sort(scored_.begin(), end, scored_.end(), before);
        out_.clear();
        for (auto it = scored_.begin(); it != end; ++it) out_.push_back(it->second);
    }

    /// Stores out_ (a whole placement of `k` GPUs) as the next candidate unless it repeats one.
    void add_candidate(std::size_t k) {
        if (out_.size() != k || n_ == slots_.slots()) return;
        std::sort(out_.begin(), out_.end());
        for (std::size_t s = 0; s < n_; ++s)
            if (std::equal(out_.begin(), out_.end(), candidate(s).begin(), candidate(s).end())) return;
        std::copy(out_.begin(), out_.end(), cand_.begin() + std::ptrdiff_t(n_ * G_));
        cand_n_[n_] = out_.size();
        ++n_;
    }

    /// The candidates' features.
    template <class J>
    void features(const Core& core, const J& job, const typename View::state& st) {
        const auto& h = core.hierarchy();
        const auto& cl = core.cluster();
        const std::size_t N = h.num_domains(1), top = h.num_levels() - 1;
        std::size_t partial_before = 0;
        for (std::size_t n = 0; n < N; ++n) partial_before += cl.free_in(1, n) > 0 && cl.free_in(1, n) < h.size(1, n);
        const auto& topo = core.topology();
        const auto b = core.comm().bounds(topo, core.zoo(), job.model, job.num_gpus);
        // heterogeneous: speed is the rate on the candidate's GPUs (its slowest type, as start()
        // prices it) over the job's best rate, on its fastest type's ideal step time
        const bool typed = core.gpu_types().heterogeneous();
        double best_step = 0, ref_step = 1;
        if (typed) {
            best_step = core.ideal_step_time_on(core.current(), 0);
            for (std::size_t t = 1; t < core.gpu_types().num_types(); ++t) best_step = std::min(best_step, core.ideal_step_time_on(core.current(), t));
            ref_step = core.comm().ideal_step_time(topo, core.zoo(), job.model, job.num_gpus);
        }
        const View view(st, core.current(), room_, {}, false);  // co-location: combined()
        for (std::size_t s = 0; s < n_; ++s) {
            const auto gpus = candidate(s);
            const auto res = core.comm().evaluate(topo, core.zoo(), job.model, gpus);
            std::size_t nodes = 0, racks = 0, opened = 0, left = 0, size = 0, partial = partial_before;
            std::size_t last_top = ~std::size_t{0};
            for (std::size_t i = 0; i < gpus.size();) {  // domains are contiguous and the GPUs sorted
                const std::size_t n = h.domain_of(1, gpus[i]), gpn = h.size(1, n);
                std::size_t used = 0;
                while (i < gpus.size() && h.domain_of(1, gpus[i]) == n) ++used, ++i;
                const std::size_t f = cl.free_in(1, n), after = f > used ? f - used : 0;
                ++nodes;
                size += gpn;
                opened += f == gpn;
                left += after;
                partial += (after > 0 && after < gpn) ? 1 : 0;
                partial -= (f > 0 && f < gpn) ? 1 : 0;
                const std::size_t r = h.domain_of(top, gpus[i - 1]);
                if (r != last_top) ++racks, last_top = r;
            }
            const double score = b.worst > b.best ? 1.0 - (res.cost - b.best) / (b.worst - b.best) : 1.0;
            double shared = 1.0;  // co-location: the rate the job keeps next to the jobs on those GPUs (its slowest GPU's)
            if (core.simulator().interference())
                for (const auto g : gpus) shared = std::min(shared, interference_on(core.simulator(), g, core.current()));
            const double rate = typed ? std::min(1.0, best_step / (core.price(core.current(), gpus).slowdown * ref_step))
                                      : 1.0 / std::max(1.0, res.slowdown);
            double combined = 0;  // co-location: its GPU's of the lowest combined rate, over the jobs a GPU holds
            if (coloc_) {
                combined = 1e300;
                for (const auto g : gpus) combined = std::min(combined, colocation_packer_policy::combined(view, g));
                combined = std::clamp(combined / double(std::max<std::uint32_t>(1, core.config().colocation.max_jobs_per_gpu)), 0.0, 1.0);
            }
            const float v[] = {1.0f,
                               static_cast<float>(shared * rate),
                               static_cast<float>(std::clamp(score, 0.0, 1.0)),
                               float(nodes) / float(N),
                               float(racks) / float(h.num_domains(top)),
                               float(opened) / float(nodes),
                               float(left) / float(size),
                               float(partial) / float(N),
                               static_cast<float>(combined)};
            slots_.put(s, std::span<const float>(v, coloc_ ? 9 : 8));
        }
    }

    std::size_t G_ = 0, n_ = 0;
    std::size_t stage_ = 0;   ///< lazy: the next stage of generate()
    bool lazy_ = false;       ///< candidates made as asked (set_lazy)
    bool pending_ = false;    ///< lazy: candidates or the observation not yet made
    bool coloc_ = false;      ///< co-location: the share candidate and the "combined" feature
    std::vector<std::uint8_t> room_;                      ///< which GPUs have room for the current job
    mutable std::vector<std::uint8_t> vmask_;             ///< a plan's mask
    mutable std::vector<gpu_id> out_;                     ///< a plan
    mutable std::vector<gpu_id> want_;                    ///< heuristic_action(): the placer's placement
    std::vector<gpu_id> cand_;                            ///< K x G: the candidates' GPUs
    std::vector<std::size_t> cand_n_;                     ///< per slot: its candidate's size
    std::vector<std::uint32_t> avail_, heap_;             ///< spread's scratch
    std::vector<std::pair<double, gpu_id>> scored_;       ///< share's scratch
    std::vector<double> type_speed_;
};

}  // namespace env_detail
}  // namespace gpuplace
