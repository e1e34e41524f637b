#pragma once
/// \file heuristics.hpp
/// The heuristic placers, one GPU pick per act(): random, first-fit, pack/best-fit, pack that
/// waits, load-balance, topology-greedy. Each acts on anything that reads like an env in GPU mode
/// (action_mask(), num_gpus(), defer_action(), topology(), has_current(), current_job(), picked(),
/// evaluate()): the env itself, or the planning view through which the env's placement and job
/// action modes ask a heuristic for a whole placement (detail/plan_view.hpp). A GPU is "available"
/// when the mask allows it. reserve() sizes a heuristic's buffers for a cluster, after which it
/// allocates nothing.
///
/// On a heterogeneous cluster (GPUs of several types, gpu_types.hpp) typed_policy<Rule, Base>
/// chooses the GPU type of each job (fastest_type or throughput_greedy) and lets Base place the job
/// on that type's GPUs.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "comm.hpp"
#include "detail/enum_names.hpp"
#include "detail/rng.hpp"
#include "topology.hpp"

namespace gpuplace {
/// Picks a valid GPU uniformly at random (never DEFER).
class random_policy {
public:
    static constexpr std::string_view name = "random";
    static constexpr bool places_gpus = true;
    explicit random_policy(std::uint64_t seed = 0) : rng_(seed) {}
    void reset(std::uint64_t seed) { rng_.seed(detail::mix_seed(seed, 0x72616e646f6dULL)); }
    template <class T>
    void reserve(const T&) {}
    /// A uniform draw in [0, n) from the policy's stream (n >= 1): in the placement and job action
    /// modes, random takes a uniformly random valid action.
    [[nodiscard]] std::uint64_t draw(std::uint64_t n) { return rng_.below(n); }

    template <class E>
    std::int64_t act(const E& e) {
        const auto mask = e.action_mask();
        const std::size_t G = e.num_gpus();
        std::size_t n = 0;
        for (std::size_t g = 0; g < G; ++g) n += mask[g];
        if (n == 0) return e.defer_action();
        auto k = rng_.below(n);
        for (std::size_t g = 0; g < G; ++g)
            if (mask[g] && k-- == 0) return static_cast<std::int64_t>(g);
        return e.defer_action();
    }

private:
    detail::rng rng_;
};

/// Picks the valid GPU with the lowest index.
struct first_fit_policy {
    static constexpr std::string_view name = "first_fit";
    static constexpr bool places_gpus = true;
    void reset(std::uint64_t) {}
    template <class T>
    void reserve(const T&) {}
    template <class E>
    std::int64_t act(const E& e) const {
        const auto mask = e.action_mask();
        for (std::size_t g = 0; g < e.num_gpus(); ++g)
            if (mask[g]) return static_cast<std::int64_t>(g);
        return e.defer_action();
    }
};

namespace detail {

/// Availability of the current job's candidate GPUs, per GPU, node and rack. "Planning"
/// availability counts the job's own picks as available, so a whole-job plan computed before the
/// first pick is computed again, unchanged, at every later pick of the same job.
struct availability {
    std::vector<std::uint8_t> gpu;        ///< available now, or picked for the current job
    std::vector<std::uint32_t> node, rack;

    template <class T>
    void reserve(const T& t) {
        gpu.reserve(t.num_gpus());
        node.reserve(t.num_nodes());
        rack.reserve(t.num_racks());
    }

    template <class E>
    void compute(const E& e) {
        const auto& t = e.topology();
        const auto mask = e.action_mask();
        const std::size_t G = e.num_gpus();
        gpu.assign(G, 0);
        node.assign(t.num_nodes(), 0);
        rack.assign(t.num_racks(), 0);
        for (std::size_t g = 0; g < G; ++g) gpu[g] = mask[g];
        for (auto g : e.picked()) gpu[g] = 1;
        for (std::size_t g = 0; g < G; ++g)
            if (gpu[g]) {
                ++node[t.node_of(gpu_id(g))];
                ++rack[t.rack_of(gpu_id(g))];
            }
    }
};

/// The first GPU of `plan` the mask allows (not yet picked), else the lowest valid GPU.
template <class E>
[[nodiscard]] std::int64_t next_of_plan(const E& e, std::span<const gpu_id> plan) {
    const auto mask = e.action_mask();
    for (auto g : plan)
        if (mask[g]) return std::int64_t(g);
    for (std::size_t g = 0; g < e.num_gpus(); ++g)
        if (mask[g]) return std::int64_t(g);
    return e.defer_action();
}

/// Appends up to `n` available GPUs of node `nd` (lowest index first, marking them taken).
template <class T>
std::uint32_t take_from_node(const T& t, std::size_t nd, std::uint32_t n, availability& a, std::vector<gpu_id>& plan) {
    std::uint32_t got = 0;
    const auto first = gpu_id(nd * t.gpus_per_node());
    for (gpu_id g = first; g < first + t.gpus_per_node() && got < n; ++g)
        if (a.gpu[g]) {
            a.gpu[g] = 0;
            plan.push_back(g);
            ++got;
        }
    a.node[nd] -= got;
    a.rack[t.rack_of(first)] -= got;
    return got;
}

/// What the heuristics that plan a whole job and follow the plan pick by pick share: the
/// availability they plan from and the plan.
struct job_plan {
    availability a_;
    std::vector<gpu_id> plan_;

    template <class T>
    void reserve(const T& t) {
        a_.reserve(t);
        plan_.reserve(t.num_gpus());
    }
};

}  // namespace detail

namespace detail {

/// Takes `need` GPUs from items first, first + 1, ... (nodes of a rack, or racks) with avail[i]
/// available each: best fit (the item with the fewest available >= the rest, ties the lower index)
/// when one holds the rest, else all of the item with most available (ties the lower index), and
/// again. take(i, n) takes n of item i's GPUs and returns how many it took (all of them; it lowers
/// avail[i] by as many and changes no other item). One scan when an item holds the whole need;
/// else the items with GPUs are sorted once, most first, and taken in that order (taking all of
/// an item changes no other), so O(n log n) for n items instead of a scan per item taken.
/// `order` is scratch (reserved for n).
template <class Take>
std::uint32_t best_fit_fill(std::size_t first, std::size_t n, const std::vector<std::uint32_t>& avail, std::uint32_t need,
                            std::vector<std::size_t>& order, Take&& take) {
    const std::size_t end = first + n;
    std::size_t fit = end;
    for (std::size_t i = first; i < end; ++i)
        if (avail[i] >= need && (fit == end || avail[i] < avail[fit])) fit = i;
    if (need == 0) return 0;
    if (fit != end) return take(fit, need);
    order.clear();
    for (std::size_t i = first; i < end; ++i)
        if (avail[i] > 0) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return avail[x] > avail[y] || (avail[x] == avail[y] && x < y); });
    std::uint32_t got = 0;
    for (std::size_t p = 0; p < order.size() && got < need; ++p) {
        const std::uint32_t rest = need - got;
        if (avail[order[p]] < rest) {  // no item holds the rest: all of the one with most
            got += take(order[p], avail[order[p]]);
            continue;
        }
        // the items left that hold the rest are order[p, q); the fewest available among them is
        // the last value there, and its lowest index the first position with that value
        std::size_t q = p;
        while (q < order.size() && avail[order[q]] >= rest) ++q;
        std::size_t b = q - 1;
        while (b > p && avail[order[b - 1]] == avail[order[q - 1]]) --b;
        return got + take(order[b], rest);
    }
    return got;
}

}  // namespace detail

/// Pack / best-fit: consolidates the job onto the fullest node that can hold it (fewest available
/// GPUs >= request; ties: the fuller rack, then the lower index); when no node can, onto the
/// fullest rack that can, filling its nodes best-fit (a node that holds the rest, else the node
/// with most available GPUs); when no rack can, racks are filled the same way. Never opens an
/// empty node while a partly-used node can hold the job. The plan is made for the whole job and
/// followed pick by pick. O(G) per pick when a rack holds the job and one of its nodes the rest
/// after the nodes with most, else O(G + R log R + nodes per rack x log) (detail::best_fit_fill).
class pack_policy : detail::job_plan {
public:
    static constexpr std::string_view name = "pack";
    static constexpr bool places_gpus = true;
    void reset(std::uint64_t) {}
    template <class T>
    void reserve(const T& t) {
        job_plan::reserve(t);
        racks_.reserve(t.num_racks());
        nodes_.reserve(t.nodes_per_rack());
    }

    template <class E>
    std::int64_t act(const E& e) {
        if (!e.has_current()) return detail::next_of_plan(e, {});
        const auto& t = e.topology();
        a_.compute(e);
        plan_.clear();
        const std::uint32_t need = e.current_job().num_gpus;
        const std::size_t N = t.num_nodes(), npr = t.nodes_per_rack();
        // 1. the fullest node that can hold the whole job
        std::size_t best = N;
        for (std::size_t n = 0; n < N; ++n) {
            if (a_.node[n] < need) continue;
            if (best == N || a_.node[n] < a_.node[best] ||
                (a_.node[n] == a_.node[best] && a_.rack[n / npr] < a_.rack[best / npr]))
                best = n;
        }
        if (best != N) {
            detail::take_from_node(t, best, need, a_, plan_);
            return detail::next_of_plan(e, plan_);
        }
        // 2. the fullest rack that can hold it, else racks in turn, each filled node by node the same way
        detail::best_fit_fill(0, t.num_racks(), a_.rack, need, racks_, [&](std::size_t rk, std::uint32_t n) {
            return detail::best_fit_fill(rk * npr, npr, a_.node, n, nodes_,
                                         [&](std::size_t nd, std::uint32_t m) { return detail::take_from_node(t, nd, m, a_, plan_); });
        });
        return detail::next_of_plan(e, plan_);
    }

private:
    std::vector<std::size_t> racks_, nodes_;
};

/// Pack that waits: a job that one node could hold (or, when it is larger than a node, one rack)
/// but that no node (rack) has room for now is held back with DEFER until one has, instead of being
/// spread across nodes; every other decision is pack's. The rule for "when to hold a job back":
/// consolidation at the price of waiting. Where DEFER is disabled or not valid it is pack.
class pack_wait_policy {
public:
    static constexpr std::string_view name = "pack_wait";
    static constexpr bool places_gpus = true;
    void reset(std::uint64_t seed) { pack_.reset(seed); }
    template <class T>
    void reserve(const T& t) {
        pack_.reserve(t);
        a_.reserve(t);
    }

    template <class E>
    std::int64_t act(const E& e) {
        if (e.has_current() && e.picked().empty() && e.action_mask()[e.num_gpus()] && should_wait(e)) return e.defer_action();
        return pack_.act(e);
    }

private:
    template <class E>
    bool should_wait(const E& e) {
        const auto& t = e.topology();
        const std::size_t k = e.current_job().num_gpus, gpn = t.gpus_per_node(), gpr = gpn * t.nodes_per_rack();
        a_.compute(e);  // the GPUs the mask allows, per node and rack
        if (k <= gpn) return std::none_of(a_.node.begin(), a_.node.end(), [k](std::uint32_t n) { return n >= k; });
        if (k <= gpr) return std::none_of(a_.rack.begin(), a_.rack.end(), [k](std::uint32_t n) { return n >= k; });
        return false;  // larger than a rack: it spans racks whatever happens
    }

    pack_policy pack_;
    detail::availability a_;
};

/// Proximity-DRL's load balance: walks down from the cluster into the rack, then the node, with
/// the most available GPUs as long as it can hold the whole job, and takes the job's GPUs there,
/// from the children with the most available GPUs first (ties: lower index). The plan is made for
/// the whole job and followed pick by pick.
class load_balance_policy : detail::job_plan {
public:
    static constexpr std::string_view name = "load_balance";
    static constexpr bool places_gpus = true;
    void reset(std::uint64_t) {}
    template <class T>
    void reserve(const T& t) {
        job_plan::reserve(t);
        order_.reserve(t.num_racks());
        nodes_.reserve(t.nodes_per_rack());
    }

    template <class E>
    std::int64_t act(const E& e) {
        if (!e.has_current()) return detail::next_of_plan(e, {});
        const auto& t = e.topology();
        a_.compute(e);
        plan_.clear();
        const std::uint32_t need = e.current_job().num_gpus;
        const std::size_t R = t.num_racks(), npr = t.nodes_per_rack();
        std::size_t rk = 0;
        for (std::size_t r = 1; r < R; ++r)
            if (a_.rack[r] > a_.rack[rk]) rk = r;
        if (a_.rack[rk] >= need) {
            std::size_t nd = rk * npr;
            for (std::size_t n = rk * npr + 1; n < (rk + 1) * npr; ++n)
                if (a_.node[n] > a_.node[nd]) nd = n;
            if (a_.node[nd] >= need) detail::take_from_node(t, nd, need, a_, plan_);
            else take_rack(t, rk, need);
        } else {
            order_.clear();
            for (std::size_t r = 0; r < R; ++r) order_.push_back(r);
            // most available first, ties by index: stable_sort's order without its buffer (no allocation)
            std::sort(order_.begin(), order_.end(),
                      [&](std::size_t x, std::size_t y) { return a_.rack[x] > a_.rack[y] || (a_.rack[x] == a_.rack[y] && x < y); });
            std::uint32_t got = 0;
            for (auto r : order_) {
                if (got == need) break;
                got += take_rack(t, r, std::min(need - got, a_.rack[r]));
            }
        }
        return detail::next_of_plan(e, plan_);
    }

private:
    template <class T>
    std::uint32_t take_rack(const T& t, std::size_t rk, std::uint32_t need) {
        const std::size_t npr = t.nodes_per_rack();
        nodes_.clear();
        for (std::size_t n = rk * npr; n < (rk + 1) * npr; ++n) nodes_.push_back(n);
        std::sort(nodes_.begin(), nodes_.end(),
                  [&](std::size_t x, std::size_t y) { return a_.node[x] > a_.node[y] || (a_.node[x] == a_.node[y] && x < y); });
        std::uint32_t got = 0;
        for (auto n : nodes_) {
            if (got == need) break;
            got += detail::take_from_node(t, n, need - got, a_, plan_);
        }
        return got;
    }

    std::vector<std::size_t> order_, nodes_;
};

namespace detail {

/// Sorted GPUs as two runs, every GPU of the first below every GPU of the second: a sorted list
/// with a range cut out of it.
struct sorted_runs {
    const gpu_id* a = nullptr;
    std::size_t na = 0;
    const gpu_id* b = nullptr;
    std::size_t nb = 0;

    /// list[0, n) without list[cut, cut + len).
    [[nodiscard]] static sorted_runs without(const gpu_id* list, std::size_t n, std::size_t cut, std::size_t len) noexcept {
        return {list, cut, list + cut + len, n - cut - len};
    }
    [[nodiscard]] bool empty() const noexcept { return na == 0 && nb == 0; }
    [[nodiscard]] gpu_id front() const noexcept { return na ? *a : *b; }
    void pop() noexcept {
        if (na) ++a, --na;
        else ++b, --nb;
    }
};

/// Appends the lowest `n` GPUs of x and y together (fewer when they hold fewer) to out; returns
/// how many.
inline std::size_t append_lowest(sorted_runs x, sorted_runs y, std::size_t n, std::vector<gpu_id>& out) {
    std::size_t got = 0;
    for (; got < n && !(x.empty() && y.empty()); ++got) {
        auto& from = y.empty() || (!x.empty() && x.front() < y.front()) ? x : y;
        out.push_back(from.front());
        from.pop();
    }
    return got;
}

/// topology_greedy's choice among candidates offered in index order: a candidate's placement is
/// the better of its two completions (lower cost, then lower slowdown; ties: the first), and the
/// candidate with the best placement wins (the same order; ties: the earlier candidate).
struct greedy_choice {
    std::int64_t gpu = -1;
    comm_result best;

    void offer(std::int64_t g, comm_result first, const comm_result& second) noexcept {
        if (second.cost < first.cost || (second.cost == first.cost && second.slowdown < first.slowdown)) first = second;
        if (gpu < 0 || first.cost < best.cost || (first.cost == best.cost && first.slowdown < best.slowdown)) {
            gpu = g;
            best = first;
        }
    }
};

}  // namespace detail

/// Topology-greedy: each pick takes the GPU that minimises the communication cost (env.evaluate,
/// i.e. the scenario's comm model) of the job's completed placement: the picks so far, this GPU,
/// and the better of two completions of the rest - lowest-index available GPUs, or a compact fill
/// (the nodes already used, then their racks, then the rest, each in index order). Both
/// completions are prefix-consistent, so the cost never rises from one pick to the next and the
/// final placement costs no more than first-fit's on the same state. Candidates: the lowest
/// available GPU of each node (every available GPU on cube-mesh nodes, where slots differ).
/// Ties: lower slowdown, then lower index. O(G + C x (k log k + log G)) per pick for C candidates
/// and a job of k GPUs: the available GPUs are split once per pick into those on the job's nodes,
/// elsewhere in its racks and elsewhere, and each candidate's compact fill is merged from them.
class topology_greedy_policy {
public:
    static constexpr std::string_view name = "topology_greedy";
    static constexpr bool places_gpus = true;
    void reset(std::uint64_t) {}
    template <class T>
    void reserve(const T& t) {
        free_.reserve(t.num_gpus());
        set_.reserve(t.num_gpus());
        for (auto& c : cls_) c.reserve(t.num_gpus());
        node_used_.reserve(t.num_nodes());
        rack_used_.reserve(t.num_racks());
    }

    template <class E>
    std::int64_t act(const E& e) {
        if (!e.has_current()) return detail::next_of_plan(e, {});
        const auto& t = e.topology();
        const auto mask = e.action_mask();
        const std::size_t G = e.num_gpus(), gpn = t.gpus_per_node(), gpr = gpn * t.nodes_per_rack();
        const auto picked = e.picked();
        const std::size_t k = e.current_job().num_gpus;
        const std::size_t rest = k - picked.size() - 1;  // GPUs to add after the candidate
        bool all_slots = false;
        if constexpr (requires { t.params().fabric; }) all_slots = t.params().fabric == node_fabric::cube_mesh;
        node_used_.assign(t.num_nodes(), 0);
        rack_used_.assign(t.num_racks(), 0);
        for (auto g : picked) {
            node_used_[t.node_of(g)] = 1;
            rack_used_[t.rack_of(g)] = 1;
        }
        // the available GPUs, and by class: on a node the picks use (0), elsewhere in a rack they
        // use (1), elsewhere (2); each in index order
        free_.clear();
        for (auto& c : cls_) c.clear();
        for (std::size_t g = 0; g < G; ++g)
            if (mask[g]) {
                free_.push_back(gpu_id(g));
                cls_[class_of(t, gpu_id(g))].push_back(gpu_id(g));
            }
        detail::greedy_choice choice;
        std::size_t rack_lo = 0, rack_hi = 0, rack = ~std::size_t{0};  // the candidate's rack: free_[rack_lo, rack_hi)
        for (std::size_t lo = 0, hi; lo < free_.size(); lo = hi) {
            // node nd's available GPUs: free_[lo, hi)
            const auto nd = t.node_of(free_[lo]), rk = t.rack_of(free_[lo]);
            hi = lo + 1;
            while (hi < free_.size() && free_[hi] < (nd + 1) * gpn) ++hi;
            if (rk != rack) {
                rack = rk;
                rack_lo = lo;
                rack_hi = std::size_t(std::lower_bound(free_.begin() + lo, free_.end(), gpu_id((rk + 1) * gpr)) - free_.begin());
            }
            // With the candidate, its node joins class 0 and, when its rack is new, the rest of its
            // rack joins class 1: the classes without those GPUs, and what joins them.
            const std::size_t c_nd = class_of(t, free_[lo]);
            const auto& moved = cls_[c_nd];
            const std::size_t cut_lo = c_nd == 2 ? rack_lo : lo, cut_len = c_nd == 2 ? rack_hi - rack_lo : hi - lo;
            const auto cut = std::size_t(std::lower_bound(moved.begin(), moved.end(), free_[cut_lo]) - moved.begin());
            const detail::sorted_runs rest_of_rack =
                c_nd == 2 ? detail::sorted_runs::without(free_.data() + rack_lo, rack_hi - rack_lo, lo - rack_lo, hi - lo)
                          : detail::sorted_runs{};
            for (std::size_t p = lo; p < (all_slots ? hi : lo + 1); ++p) {
                const auto g = free_[p];
                // completion 1: lowest-index available GPUs
                set_.assign(picked.begin(), picked.end());
                set_.push_back(g);
                for (std::size_t i = 0, added = 0; i < free_.size() && added < rest; ++i)
                    if (free_[i] != g) {
                        set_.push_back(free_[i]);
                        ++added;
                    }
                const auto r1 = score(e);
                // completion 2: compact fill around the picks and g
                set_.assign(picked.begin(), picked.end());
                set_.push_back(g);
                const auto rest_of_node = detail::sorted_runs::without(free_.data() + lo, hi - lo, p - lo, 1);
                std::size_t added = 0;
                for (std::size_t c = 0; c < 3 && added < rest; ++c) {
                    const auto base = c == c_nd ? detail::sorted_runs::without(cls_[c].data(), cls_[c].size(), cut, cut_len)
                                                : detail::sorted_runs{cls_[c].data(), cls_[c].size(), nullptr, 0};
                    const auto joins = c == 0 ? rest_of_node : c == 1 ? rest_of_rack : detail::sorted_runs{};
                    added += detail::append_lowest(base, joins, rest - added, set_);
                }
                choice.offer(std::int64_t(g), r1, score(e));
            }
        }
        return choice.gpu >= 0 ? choice.gpu : e.defer_action();
    }

private:
    template <class T>
    [[nodiscard]] std::size_t class_of(const T& t, gpu_id g) const noexcept {
        return node_used_[t.node_of(g)] ? 0 : rack_used_[t.rack_of(g)] ? 1 : 2;
    }

    template <class E>
    comm_result score(const E& e) {
        std::sort(set_.begin(), set_.end());
        return e.evaluate(set_);
    }

    std::vector<gpu_id> free_, set_;
    std::vector<gpu_id> cls_[3];  ///< the available GPUs by class (see act())
    std::vector<std::uint8_t> node_used_, rack_used_;
};

namespace detail {

/// An env seen through a narrower mask: what the heuristics read (basic_env's names), with
/// action_mask() restricted to the GPUs of one type.
template <class E>
class masked_view {
public:
    masked_view(const E& e, std::span<const std::uint8_t> mask) : e_(e), mask_(mask) {}
    [[nodiscard]] std::span<const std::uint8_t> action_mask() const noexcept { return mask_; }
    [[nodiscard]] std::size_t num_gpus() const noexcept { return e_.num_gpus(); }
    [[nodiscard]] std::int64_t defer_action() const noexcept { return e_.defer_action(); }
    [[nodiscard]] decltype(auto) topology() const noexcept { return e_.topology(); }
    [[nodiscard]] bool has_current() const noexcept { return e_.has_current(); }
    [[nodiscard]] std::uint32_t current_index() const noexcept { return e_.current_index(); }
    [[nodiscard]] decltype(auto) current_job() const { return e_.current_job(); }
    [[nodiscard]] std::span<const gpu_id> picked() const noexcept { return e_.picked(); }
    [[nodiscard]] decltype(auto) cluster() const noexcept { return e_.cluster(); }
    [[nodiscard]] decltype(auto) simulator() const noexcept { return e_.simulator(); }
    [[nodiscard]] bool has_room(gpu_id g, std::uint32_t j) const noexcept { return e_.has_room(g, j); }
    [[nodiscard]] double expected_interference(gpu_id g, std::uint32_t j) const noexcept { return e_.expected_interference(g, j); }
    [[nodiscard]] comm_result evaluate(std::span<const gpu_id> gpus) const { return e_.evaluate(gpus); }
    [[nodiscard]] decltype(auto) zoo() const noexcept { return e_.zoo(); }
    [[nodiscard]] decltype(auto) gpu_types() const noexcept { return e_.gpu_types(); }
    [[nodiscard]] decltype(auto) queue() const noexcept { return e_.queue(); }

private:
    const E& e_;
    std::span<const std::uint8_t> mask_;
};

}  // namespace detail

/// How typed_policy chooses a job's GPU type among the types with room for the whole job.
enum class type_rule : std::uint8_t {
    /// the type on which the job's model (at its GPU count) runs fastest
    fastest_type,
    /// Gavel's max-throughput idea, one decision at a time: the type where the job's speedup over
    /// its slowest type, divided by the mean speedup on that type of the first 16 waiting jobs (the
    /// job included), is largest - each type goes to the jobs that gain most from it relative to
    /// the others. Ties (e.g. a queue of one job): the faster type.
    throughput_greedy,
};

template <>
struct detail::enum_names<type_rule> {
    static constexpr std::array<std::pair<type_rule, std::string_view>, 2> values{
        {{type_rule::fastest_type, "fastest_type"}, {type_rule::throughput_greedy, "throughput_greedy"}}};
};
[[nodiscard]] constexpr std::string_view to_string(type_rule r) noexcept { return detail::enum_name(r); }

/// A type-aware heuristic: Rule chooses the current job's GPU type among the types whose available
/// GPUs can hold the whole job (after the first pick: the first pick's type), and Base places the
/// job on that type's GPUs (it sees the mask restricted to them). When no type can hold the job
/// alone, or the cluster is not heterogeneous, Base acts on the whole mask. Named
/// "<rule>:<base>", e.g. "fastest_type:pack_wait".
template <type_rule Rule, class Base>
class typed_policy {
public:
    static constexpr bool places_gpus = true;
    static constexpr type_rule rule = Rule;
    void reset(std::uint64_t seed) { base_.reset(seed); }
    template <class T>
    void reserve(const T& t) {
        base_.reserve(t);
        mask_.reserve(t.num_gpus() + 1);
    }

    template <class E>
    std::int64_t act(const E& e) {
        if constexpr (!requires { e.gpu_types(); e.zoo(); e.queue(); }) {
            return base_.act(e);
        } else {
            const auto& types = e.gpu_types();
            if (!types.heterogeneous() || !e.has_current()) return base_.act(e);
            const auto mask = e.action_mask();
            const std::size_t G = e.num_gpus(), T = types.num_types();
            avail_.assign(T, 0);
            for (std::size_t g = 0; g < G; ++g) avail_[types.type_of(gpu_id(g))] += mask[g];
            const auto picked = e.picked();
            for (auto g : picked) ++avail_[types.type_of(g)];  // planning availability: the picks count
            const auto& job = e.current_job();
            std::size_t target = T;
            if (!picked.empty()) {
                const auto t0 = types.type_of(picked.front());
                if (avail_[t0] >= job.num_gpus) target = t0;
            } else {
                target = choose(e, job.model, job.num_gpus);
            }
            if (target == T) return base_.act(e);  // no type holds it alone: Base on every type
            mask_.assign(mask.begin(), mask.end());
            for (std::size_t g = 0; g < G; ++g)
                if (types.type_of(gpu_id(g)) != target) mask_[g] = 0;
            return base_.act(detail::masked_view<E>(e, mask_));
        }
    }

private:
    /// The type for model m at k GPUs among those with room for k GPUs, or T when none has.
    template <class E>
    std::size_t choose(const E& e, model_id m, std::uint32_t k) {
        const auto& types = e.gpu_types();
        const auto& zoo = e.zoo();
        const std::size_t T = types.num_types();
        auto gain = [&](model_id mm, std::uint32_t kk, std::size_t t) {
            double slow = 1e300;
            for (std::size_t u = 0; u < T; ++u) slow = std::min(slow, types.speed(zoo, mm, u, kk));
            return types.speed(zoo, mm, t, kk) / slow;
        };
        score_.assign(T, 0.0);
        if constexpr (Rule == type_rule::throughput_greedy) {
            mean_.assign(T, 0.0);
            std::size_t n = 0;
            bool self = false;
            for (auto j : e.queue()) {
                if (n == 16) break;
                const auto& w = e.simulator().job(j);
                for (std::size_t t = 0; t < T; ++t) mean_[t] += gain(w.model, w.num_gpus, t);
                self = self || j == e.current_index();
                ++n;
            }
            if (!self) {
                for (std::size_t t = 0; t < T; ++t) mean_[t] += gain(m, k, t);
                ++n;
            }
            for (std::size_t t = 0; t < T; ++t) score_[t] = gain(m, k, t) / (mean_[t] / double(n));
        }
        std::size_t best = T;
        for (std::size_t t = 0; t < T; ++t) {
            if (avail_[t] < k) continue;
            const double sp = types.speed(zoo, m, t, k);
            if (best == T || score_[t] > score_[best] ||
                (score_[t] == score_[best] && sp > types.speed(zoo, m, best, k)))
                best = t;
        }
        return best;
    }

    Base base_;
    std::vector<std::uint8_t> mask_;
    std::vector<std::uint32_t> avail_;
    std::vector<double> score_, mean_;
};

}  // namespace gpuplace
