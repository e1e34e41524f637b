#pragma once
/// \file detail/action_layer.hpp
/// The placement and job action modes of basic_env (env.action_mode): what an action chooses
/// among, the observation and mask that describe it, and the GPUs a choice stands for. A chosen
/// placement is applied as the GPU mode's picks of the same GPUs, so the simulator, the metrics and
/// the reward are the GPU mode's.
///
/// placement: Discrete(K + 1) - K candidate placements of the current job, then DEFER. The
///   candidates, in slot order, duplicates dropped (a later one equal to an earlier one is left
///   out) and empty slots masked: the placements of pack, load_balance, topology_greedy,
///   first_fit, spread (one GPU at a time from the node with most available GPUs), then pack
///   within each rack that can hold the job, rack by rack. Per candidate ("candidate_<name>", K
///   values each): valid, speed (1 / slowdown), comm (1 - (cost - best) / (worst - best)), nodes
///   (nodes used / nodes), racks (racks used / racks), opened (share of its nodes that were empty),
///   left (free GPUs its nodes keep / their GPUs), partial (partly used nodes after it / nodes);
///   then the GPU mode's "job", "queue" and "global" segments.
/// job: Discrete(K + 1) - the first K waiting jobs in queue order that fit now, then wait (until
///   the next arrival or completion; allowed with env.allow_defer when an event is pending). The
///   chosen job is placed by env.placer. Per slot ("slot_<name>", K values each): valid, request,
///   ideal_duration, comm_intensity, wait, fits_node (a node has room for it), fits_rack; then
///   "cluster" (free GPUs, empty nodes, most free in a node, most free in a rack; as fractions) and
///   the GPU mode's "global" segment.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../heuristics.hpp"
#include "../observation.hpp"
#include "plan_view.hpp"

namespace gpuplace {

inline constexpr std::string_view candidate_feature_names[] = {"valid", "speed", "comm", "nodes",
                                                               "racks", "opened", "left", "partial"};
inline constexpr std::string_view slot_feature_names[] = {"valid",  "request",   "ideal_duration", "comm_intensity",
                                                          "wait",   "fits_node", "fits_rack"};
inline constexpr std::string_view cluster_feature_names[] = {"free_gpus", "empty_nodes", "node_free_max", "rack_free_max"};
/// Where each placement-mode candidate comes from, in slot order before the per-rack packs.
inline constexpr std::string_view candidate_sources[] = {"pack", "load_balance", "topology_greedy", "first_fit", "spread"};

namespace detail {

template <class E>
class action_layer {
public:
    /// Sizes everything for env e (its topology, GPU-mode layout and options); allocates nothing later.
    void init(const E& e) {
        const auto& o = e.config().env;
        mode_ = o.mode;
        if (mode_ == action_mode::gpu) return;
        K_ = o.slots;
        placer_ = o.placer;
        const auto& t = e.topology();
        G_ = t.num_gpus();
        vmask_.assign(G_ + 1, 0);
        room_.assign(G_ + 1, 0);
        vpicks_.reserve(G_);
        cand_.assign(K_ * G_, 0);
        cand_n_.assign(K_, 0);
        win_job_.assign(K_, 0);
        win_pos_.assign(K_, 0);
        node_avail_.reserve(t.num_nodes());
        node_heap_.reserve(t.num_nodes());
        node_used_.reserve(t.num_nodes());
        pack_.reserve(t);
        lb_.reserve(t);
        tg_.reserve(t);
        ff_.reserve(t);
        // the GPU mode's context segments: everything after its per-GPU ones
        const auto& L = e.obs_.layout();
        const auto gl = L.segments();
        const std::size_t first_ctx = L.num_gpu_segments();
        ctx_src_ = L.context_offset();
        layout_.clear();
        std::size_t off = 0;
        const auto items = [&](std::string_view prefix, std::span<const std::string_view> names) {
            for (auto n : names) {
                layout_.push_back({std::string(prefix) + std::string(n), off, K_, {}});
                off += K_;
            }
        };
        if (mode_ == action_mode::placement) {
            items("candidate_", candidate_feature_names);
            ctx_dst_ = off;
            ctx_len_ = e.obs_.size() - ctx_src_;
            for (std::size_t i = first_ctx; i < gl.size(); ++i) {
                auto s = gl[i];
                s.offset = s.offset - ctx_src_ + off;
                layout_.push_back(std::move(s));
            }
            off += ctx_len_;
        } else {
            items("slot_", slot_feature_names);
            obs_segment c{"cluster", off, std::size(cluster_feature_names), {}};
            for (auto n : cluster_feature_names) c.fields.emplace_back(n);
            off += c.size;
            layout_.push_back(std::move(c));
            auto g = gl[first_ctx + std::size_t(obs_part::global)];
            ctx_src_ = g.offset;
            ctx_len_ = g.size;
            ctx_dst_ = off;
            g.offset = off;
            off += g.size;
            layout_.push_back(std::move(g));
        }
        buf_.allocate(off, K_ + 1);
    }

    [[nodiscard]] action_mode mode() const noexcept { return mode_; }
    [[nodiscard]] std::size_t slots() const noexcept { return K_; }
    [[nodiscard]] std::span<float> obs() const noexcept { return buf_.obs; }
    [[nodiscard]] std::span<std::uint8_t> mask() const noexcept { return buf_.mask; }
    [[nodiscard]] const std::vector<obs_segment>& layout() const noexcept { return layout_; }
    void bind(std::span<float> obs, std::span<std::uint8_t> mask) {
        if (obs.size() != buf_.obs.size() || mask.size() != buf_.mask.size())
            throw Error("bind(): buffer sizes " + std::to_string(obs.size()) + "/" + std::to_string(mask.size()) +
                        " do not match observation_size " + std::to_string(buf_.obs.size()) + " / num_actions " +
                        std::to_string(buf_.mask.size()));
        buf_.bind(obs, mask);
    }

    /// The GPUs of slot s's candidate (placement mode), sorted.
    [[nodiscard]] std::span<const gpu_id> candidate(std::size_t s) const noexcept { return {cand_.data() + s * G_, cand_n_[s]}; }
    /// The job of slot s (job mode) and its position in the queue.
    [[nodiscard]] std::uint32_t slot_job(std::size_t s) const noexcept { return win_job_[s]; }
    [[nodiscard]] std::size_t slot_position(std::size_t s) const noexcept { return win_pos_[s]; }

    /// After the env reached a decision (or the end): the choices, the observation and the mask.
    void write(E& e) {
        std::fill(buf_.obs.begin(), buf_.obs.end(), 0.0f);
        std::fill(buf_.mask.begin(), buf_.mask.end(), std::uint8_t{0});
        n_ = 0;
        if (!e.has_current()) return;
        if (mode_ == action_mode::placement) write_placement(e);
        else write_job(e);
    }

    /// Job mode: the GPUs env.placer gives the job of slot s (valid until the next call).
    std::span<const gpu_id> place_slot(const E& e, std::size_t s) {
        const auto j = win_job_[s];
        view_mask(e, j, false);
        plan_view<E> v(e, j, vmask_, vpicks_);
        run_placer(v, placer_);
        return vpicks_;
    }

    /// The action heuristic p takes in this mode (see basic_env::heuristic_action()).
    template <class P>
    std::int64_t heuristic_action(const E& e, P& p) {
        const auto mask = buf_.mask;
        const auto wait = std::int64_t(K_);
        if constexpr (requires { p.draw(std::uint64_t{1}); }) {  // random: a uniformly random valid action
            std::uint64_t n = 0;
            for (auto m : mask) n += m;
            if (n == 0) return wait;
            auto k = p.draw(n);
            for (std::size_t a = 0; a < mask.size(); ++a)
                if (mask[a] && k-- == 0) return std::int64_t(a);
            return wait;
        }
        if (!e.has_current()) return wait;
        if (mode_ == action_mode::placement) {
            view_mask(e, e.current_index(), mask[K_] != 0);
            plan_view<E> v(e, e.current_index(), vmask_, vpicks_);
            if (!v.place(p)) return vpicks_.empty() && mask[K_] ? wait : first_valid();
            std::sort(vpicks_.begin(), vpicks_.end());
            for (std::size_t s = 0; s < K_; ++s)
                if (mask[s] && std::equal(vpicks_.begin(), vpicks_.end(), candidate(s).begin(), candidate(s).end()))
                    return std::int64_t(s);
            return first_valid();  // a placement that is no candidate (e.g. coloc_packer's): the first candidate
        }
        // job mode: the first job p would not defer, where the GPU mode would let p defer it (DEFER
        // allowed while an event is pending or another job fits)
        const bool defer = e.config().env.allow_defer;
        for (std::size_t s = 0; s < n_; ++s) {
            view_mask(e, win_job_[s], defer && (e.simulator().has_events() || s + 1 < n_));
            plan_view<E> v(e, win_job_[s], vmask_, vpicks_);
            const auto a = p.act(v);
            if (a >= 0 && a < v.defer_action()) return std::int64_t(s);
        }
        return mask[K_] ? wait : first_valid();
    }

    /// Why `action` is invalid in this mode, or "" when it is valid (the env checked the episode).
    [[nodiscard]] std::string why_invalid(std::int64_t action) const {
        const auto K = std::int64_t(K_);
        const bool placement = mode_ == action_mode::placement;
        const char* last = placement ? "DEFER" : "wait";
        if (action < 0 || action > K)
            return "out of range [0, " + std::to_string(K) + "] (" + std::to_string(K) + (placement ? " candidates" : " queue slots") +
                   ", " + last + " = " + std::to_string(K) + ")";
        if (buf_.mask[std::size_t(action)]) return {};
        if (action == K)
            return std::string(last) + " is not allowed now (env.allow_defer is off, or it would stall the episode: no event is pending" +
                   (placement ? " and no other waiting job fits)" : ")");
        return placement ? "slot " + std::to_string(action) + " holds no candidate (" + std::to_string(n_) +
                               " distinct candidates for this job)"
                         : "slot " + std::to_string(action) + " holds no job (" + std::to_string(n_) + " waiting jobs fit now)";
    }

private:
    [[nodiscard]] std::int64_t first_valid() const noexcept {
        for (std::size_t a = 0; a <= K_; ++a)
            if (buf_.mask[a]) return std::int64_t(a);
        return std::int64_t(K_);
    }

    /// The view's mask for job j: the GPUs with room for it, DEFER as `defer`.
    void view_mask(const E& e, std::uint32_t j, bool defer) {
        for (std::size_t g = 0; g < G_; ++g) vmask_[g] = static_cast<std::uint8_t>(e.has_room(gpu_id(g), j));
        vmask_[G_] = defer;
    }

    template <class V>
    void run_placer(V& v, placer_kind k) {
        bool ok = false;
        switch (k) {
            case placer_kind::pack: ok = v.place(pack_); break;
            case placer_kind::first_fit: ok = v.place(ff_); break;
            case placer_kind::load_balance: ok = v.place(lb_); break;
            case placer_kind::topology_greedy: ok = v.place(tg_); break;
        }
        (void)ok;  // the view's DEFER entry is 0: a placer always places a job that fits
    }

    /// Spread: one GPU at a time, the lowest available GPU of the node with most available GPUs
    /// (the lowest such node). The nodes with available GPUs in a heap by that order: O(N + k log N).
    void spread(const E& e, std::uint32_t j) {
        const auto& t = e.topology();
        const std::size_t N = t.num_nodes(), gpn = t.gpus_per_node();
        node_avail_.assign(N, 0);
        for (std::size_t g = 0; g < G_; ++g) node_avail_[g / gpn] += vmask_[g];
        // a before b in the heap's order: fewer available GPUs, or as many and a higher index
        const auto later = [this](std::uint32_t a, std::uint32_t b) {
            return node_avail_[a] != node_avail_[b] ? node_avail_[a] < node_avail_[b] : a > b;
        };
        node_heap_.clear();
        for (std::size_t n = 0; n < N; ++n)
            if (node_avail_[n]) node_heap_.push_back(std::uint32_t(n));
        std::make_heap(node_heap_.begin(), node_heap_.end(), later);
        const std::size_t k = e.simulator().job(j).num_gpus;
        vpicks_.clear();
        while (vpicks_.size() < k && !node_heap_.empty()) {
            std::pop_heap(node_heap_.begin(), node_heap_.end(), later);
            const std::uint32_t best = node_heap_.back();
            for (std::size_t g = best * gpn; g < (best + 1) * gpn; ++g)
                if (vmask_[g]) {
                    vmask_[g] = 0;
                    vpicks_.push_back(gpu_id(g));
                    break;
                }
            if (--node_avail_[best]) std::push_heap(node_heap_.begin(), node_heap_.end(), later);
            else node_heap_.pop_back();
        }
    }

    /// Stores vpicks_ (a whole placement of `k` GPUs) as the next candidate unless it repeats one.
    void add_candidate(std::size_t k) {
        if (vpicks_.size() != k || n_ == K_) return;
        std::sort(vpicks_.begin(), vpicks_.end());
        for (std::size_t s = 0; s < n_; ++s)
            if (std::equal(vpicks_.begin(), vpicks_.end(), candidate(s).begin(), candidate(s).end())) return;
        std::copy(vpicks_.begin(), vpicks_.end(), cand_.begin() + std::ptrdiff_t(n_ * G_));
        cand_n_[n_] = vpicks_.size();
        ++n_;
    }

    void write_placement(E& e) {
        const auto j = e.current_index();
        const auto& job = e.simulator().job(j);
        const std::size_t k = job.num_gpus;
        const auto& t = e.topology();
        std::fill(cand_n_.begin(), cand_n_.end(), 0);
        view_mask(e, j, false);  // which GPUs have room for the job: once, every plan starts from a copy
        std::copy(vmask_.begin(), vmask_.end(), room_.begin());
        const auto plan = [&](auto& h) {
            std::copy(room_.begin(), room_.end(), vmask_.begin());
            plan_view<E> v(e, j, vmask_, vpicks_);
            if (v.place(h)) add_candidate(k);
        };
        plan(pack_);
        plan(lb_);
        plan(tg_);
        plan(ff_);
        std::copy(room_.begin(), room_.end(), vmask_.begin());
        spread(e, j);
        add_candidate(k);
        // pack within each rack: the rack's GPUs (numbered rack by rack, so contiguous) and no others
        const std::size_t R = t.num_racks(), gpr = t.nodes_per_rack() * t.gpus_per_node();
        for (std::size_t r = 0; r < R && n_ < K_; ++r) {
            const auto first = room_.begin() + std::ptrdiff_t(r * gpr), last = first + std::ptrdiff_t(gpr);
            if (std::size_t(std::count(first, last, std::uint8_t{1})) < k) continue;
            std::fill(vmask_.begin(), vmask_.end(), std::uint8_t{0});
            std::copy(first, last, vmask_.begin() + std::ptrdiff_t(r * gpr));
            plan_view<E> v(e, j, vmask_, vpicks_);
            if (v.place(pack_)) add_candidate(k);
        }
        // features
        const auto& cl = e.cluster();
        const std::size_t N = t.num_nodes(), gpn = t.gpus_per_node();
        std::size_t partial_before = 0;
        for (std::size_t n = 0; n < N; ++n) partial_before += cl.node_free(n) > 0 && cl.node_free(n) < gpn;
        const auto b = e.comm().bounds(t, e.zoo(), job.model, job.num_gpus);
        float* o = buf_.obs.data();
        node_used_.assign(N, 0);
        for (std::size_t s = 0; s < n_; ++s) {
            const auto gpus = candidate(s);
            const auto res = e.comm().evaluate(t, e.zoo(), job.model, gpus);
            std::size_t nodes = 0, racks = 0, opened = 0, left = 0, partial = partial_before;
            std::size_t last_rack = ~std::size_t{0};
            for (std::size_t i = 0; i < gpus.size();) {  // GPUs are numbered node by node, sorted
                const std::size_t n = t.node_of(gpus[i]);
                std::size_t used = 0;
                while (i < gpus.size() && t.node_of(gpus[i]) == n) ++used, ++i;
                const std::size_t f = cl.node_free(n), after = f > used ? f - used : 0;
                ++nodes;
                opened += f == gpn;
                left += after;
                partial += (after > 0 && after < gpn) ? 1 : 0;
                partial -= (f > 0 && f < gpn) ? 1 : 0;
                const std::size_t r = t.rack_of(gpus[i - 1]);
                if (r != last_rack) ++racks, last_rack = r;  // racks are contiguous in GPU order
            }
            const double score = b.worst > b.best ? 1.0 - (res.cost - b.best) / (b.worst - b.best) : 1.0;
            const float v[] = {1.0f,
                               static_cast<float>(1.0 / std::max(1.0, res.slowdown)),
                               static_cast<float>(std::clamp(score, 0.0, 1.0)),
                               float(nodes) / float(N),
                               float(racks) / float(t.num_racks()),
                               float(opened) / float(nodes),
                               float(left) / float(nodes * gpn),
                               float(partial) / float(N)};
            for (std::size_t f = 0; f < std::size(v); ++f) o[f * K_ + s] = v[f];
            buf_.mask[s] = 1;
        }
        const auto src = e.obs_.obs().subspan(ctx_src_, ctx_len_);
        std::copy(src.begin(), src.end(), buf_.obs.begin() + std::ptrdiff_t(ctx_dst_));
        buf_.mask[K_] = e.obs_.mask()[G_];
    }

    void write_job(E& e) {
        const auto& t = e.topology();
        const auto& cl = e.cluster();
        const auto& q = e.queue_;
        const std::size_t N = t.num_nodes(), R = t.num_racks(), gpn = t.gpus_per_node(), gpr = G_ / R;
        std::size_t node_max = 0, rack_max = 0, empty = 0;
        for (std::size_t n = 0; n < N; ++n) {
            node_max = std::max<std::size_t>(node_max, cl.node_free(n));
            empty += cl.node_free(n) == gpn;
        }
        for (std::size_t r = 0; r < R; ++r) rack_max = std::max<std::size_t>(rack_max, cl.rack_free(r));
        const std::size_t free = cl.free_gpus();
        const double now = e.now();
        float* o = buf_.obs.data();
        const auto jobs = q.jobs();
        for (std::size_t i = 0; i < jobs.size() && n_ < K_; ++i) {
            const auto j = jobs[i];
            if (q.deferred(j) || !e.fits_now(j)) continue;
            win_job_[n_] = j;
            win_pos_[n_] = i;
            const auto& w = q.info(j);
            const std::size_t k = q.gpus_at(i);
            const float v[] = {1.0f, w.request_feat, w.ideal_feat, w.comm_feat, e.obs_.squash(now - w.submit),
                               node_max >= k ? 1.0f : 0.0f, rack_max >= k ? 1.0f : 0.0f};
            for (std::size_t f = 0; f < std::size(v); ++f) o[f * K_ + n_] = v[f];
            buf_.mask[n_] = 1;
            ++n_;
        }
        float* c = o + std::size(slot_feature_names) * K_;
        c[0] = float(free) / float(G_);
        c[1] = float(empty) / float(N);
        c[2] = float(node_max) / float(gpn);
        c[3] = float(rack_max) / float(gpr);
        const auto src = e.obs_.obs().subspan(ctx_src_, ctx_len_);
        std::copy(src.begin(), src.end(), buf_.obs.begin() + std::ptrdiff_t(ctx_dst_));
        buf_.mask[K_] = e.wait_allowed();
    }

    action_mode mode_ = action_mode::gpu;
    placer_kind placer_ = placer_kind::pack;
    std::size_t K_ = 0, G_ = 0, n_ = 0;
    std::size_t ctx_src_ = 0, ctx_len_ = 0, ctx_dst_ = 0;  ///< the context copied from the GPU-mode observation
    obs_buffers buf_;
    std::vector<obs_segment> layout_;
    std::vector<std::uint8_t> vmask_, room_;  ///< the planning view's mask; the GPUs with room for the current job
    std::vector<gpu_id> vpicks_, cand_;
    std::vector<std::size_t> cand_n_, win_pos_;
    std::vector<std::uint32_t> win_job_, node_avail_, node_heap_, node_used_;
    pack_policy pack_;
    load_balance_policy lb_;
    topology_greedy_policy tg_;
    first_fit_policy ff_;
};

}  // namespace detail
}  // namespace gpuplace
