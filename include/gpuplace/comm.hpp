#pragma once
/// \file comm.hpp
/// Communication models: given a job and its GPUs, the communication cost of the placement and the
/// slowdown (>= 1) of the job's step time relative to the best placement on the topology.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "error.hpp"
#include "model_zoo.hpp"
#include "topology.hpp"

namespace gpuplace {

/// A scenario's communication model (key "comm"): its name and, for tree_route, the weights it
/// sets (unset: the model's defaults). The JSON form holds the model and exactly the keys that are set.
struct comm_config {
    std::string model = "ring_allreduce";
    std::optional<double> gpu_weight, pair_weight, node_weight, rack_weight, slowdown_exponent;  ///< tree_route only

    /// The optional keys, by name, in the order they are read and written.
    [[nodiscard]] std::array<std::pair<const char*, const std::optional<double>&>, 5> weights() const noexcept {
        return {{{"gpu_weight", gpu_weight}, {"pair_weight", pair_weight}, {"node_weight", node_weight},
                 {"rack_weight", rack_weight}, {"slowdown_exponent", slowdown_exponent}}};
    }
    friend bool operator==(const comm_config&, const comm_config&) = default;
};

/// What a communication model says of a placement.
struct comm_result {
    double cost = 0.0;      ///< communication cost (model-specific units, lower is better)
    double slowdown = 1.0;  ///< step time / best step time on this topology, >= 1
};

/// Best and worst communication cost of a job of k GPUs on an empty cluster.
struct cost_bounds {
    double best = 0.0;
    double worst = 0.0;
};

/// A communication model for topology T. `evaluate` takes the job's GPUs sorted ascending.
template <class C, class T>
concept CommModel = Topology<T> && std::copyable<C> &&
    requires(const C& c, const T& t, const ModelZoo& z, model_id m, std::uint32_t k, std::span<const gpu_id> gpus) {
        { C::name } -> std::convertible_to<std::string_view>;
        { c.ideal_step_time(t, z, m, k) } -> std::convertible_to<double>;
        { c.evaluate(t, z, m, gpus) } -> std::same_as<comm_result>;
        { c.bounds(t, z, m, k) } -> std::same_as<cost_bounds>;
    };

namespace detail {

/// For each subset of the 8 slots of a DGX-1 node (bit mask), whether its GPUs can be ordered in a
/// ring that uses NVLink only (hybrid cube-mesh). Computed once (Held-Karp over subsets).
[[nodiscard]] inline const std::array<bool, 256>& cube_mesh_nvlink_ring() {
    static const std::array<bool, 256> table = [] {
        std::array<bool, 256> out{};
        for (unsigned mask = 1; mask < 256; ++mask) {
            const int n = std::popcount(mask);
            if (n <= 1) { out[mask] = true; continue; }
            int first = std::countr_zero(mask);
            if (n == 2) {
                const int second = std::countr_zero(mask & ~(1u << first));
                out[mask] = TreeTopology::nvlink_pair(first, second);
                continue;
            }
            // reach[s][v]: a NVLink path from `first` visiting set s (subset of mask) ends at v
            std::array<std::array<bool, 8>, 256> reach{};
            reach[1u << first][first] = true;
            for (unsigned s = 0; s < 256; ++s) {
                if ((s & mask) != s || !(s & (1u << first))) continue;
                for (int v = 0; v < 8; ++v) {
                    if (!reach[s][v]) continue;
                    for (int w = 0; w < 8; ++w)
                        if ((mask & (1u << w)) && !(s & (1u << w)) && TreeTopology::nvlink_pair(v, w))
                            reach[s | (1u << w)][w] = true;
                }
            }
            bool ok = false;
            for (int v = 0; v < 8; ++v)
                ok = ok || (reach[mask][v] && v != first && TreeTopology::nvlink_pair(v, first));
            out[mask] = ok;
        }
        return out;
    }();
    return table;
}

/// Whether some k of the 8 slots of a DGX-1 node admit no NVLink-only ring.
[[nodiscard]] inline bool cube_mesh_pcie_subset_exists(std::size_t k) {
    static const std::array<bool, 9> table = [] {
        std::array<bool, 9> out{};
        for (unsigned mask = 1; mask < 256; ++mask)
            if (!cube_mesh_nvlink_ring()[mask]) out[static_cast<std::size_t>(std::popcount(mask))] = true;
        return out;
    }();
    return k < table.size() && table[k];
}

/// The highest level a set of GPUs spans (and, inside one node, the slot mask when it fits 64 bits).
template <Topology T>
[[nodiscard]] link_level span_level(const T& t, std::span<const gpu_id> gpus) noexcept {
    if (gpus.size() <= 1) return link_level::same_gpu;
    const auto n0 = t.node_of(gpus[0]);
    const auto r0 = t.rack_of(gpus[0]);
    link_level l = link_level::node;
    for (auto g : gpus) {
        if (t.rack_of(g) != r0) return link_level::spine;
        if (t.node_of(g) != n0) l = link_level::rack;
    }
    return l;
}

/// The level of the most compact placement of k GPUs on an empty cluster of topology t.
template <Topology T>
[[nodiscard]] link_level compact_level(const T& t, std::size_t k) noexcept {
    if (k <= 1) return link_level::same_gpu;
    if (k <= t.gpus_per_node()) return link_level::node;
    if (k <= t.gpus_per_node() * t.nodes_per_rack()) return link_level::rack;
    return link_level::spine;
}

/// The level of the most spread placement of k GPUs on an empty cluster.
template <Topology T>
[[nodiscard]] link_level spread_level(const T& t, std::size_t k) noexcept {
    if (k <= 1) return link_level::same_gpu;
    if (t.num_racks() > 1) return link_level::spine;
    if (t.num_nodes() > 1) return link_level::rack;
    return link_level::node;
}

}  // namespace detail

/// Ring all-reduce (default). Step time = compute + 2(k-1)/k * gradient bytes / bottleneck
/// bandwidth of the ring + 2(k-1) hop latencies. Compute time and gradient volume are calibrated
/// per model and GPU count from the zoo's consolidated and spread throughputs on the zoo's
/// measurement cluster, so both measurements are reproduced there. The ring's bottleneck is the
/// bandwidth of the highest level it crosses; inside a DGX-1 cube-mesh node it is NVLink when the
/// chosen slots admit an NVLink-only ring and PCIe otherwise. Cost = all-reduce time per step /
/// best step time; slowdown = step time / best step time on this topology.
struct RingAllReduce {
    static constexpr std::string_view name = "ring_allreduce";

    /// Calibrated step model of a model at k GPUs: step time = compute + volume / bandwidth + hops * latency.
    struct step_model {
        double compute = 0.0;  ///< s per step
        double volume = 0.0;   ///< GB moved by the slowest link per step (2(k-1)/k * gradient GB)
        double hops = 0.0;     ///< 2(k-1)
    };

    /// Fits compute and volume to the zoo's consolidated / spread throughputs at k GPUs. A spread
    /// throughput at or above the consolidated one (measurement noise) gives volume 0: the job is
    /// treated as insensitive to placement.
    [[nodiscard]] static step_model calibrate(const ModelZoo& z, model_id m, std::uint32_t k) noexcept {
        const auto p = z[m].at(k);
        const auto& ref = z.reference();
        step_model s;
        s.hops = 2.0 * (double(k) - 1.0);
        const double tc = 1.0 / p.consolidated;
        if (k <= 1) {
            s.compute = tc;
            return s;
        }
        const double ts = 1.0 / p.spread;
        const double denom = 1.0 / ref.network_bandwidth - 1.0 / ref.node_bandwidth;
        double v = (ts - tc - s.hops * (ref.network_latency - ref.node_latency)) / denom;
        if (!(v > 0)) v = 0;
        double c = tc - v / ref.node_bandwidth - s.hops * ref.node_latency;
        if (!(c > 0.05 * tc)) c = 0.05 * tc;  // degenerate fit: keep compute positive
        s.compute = c;
        s.volume = v;
        return s;
    }

    template <Topology T>
    [[nodiscard]] static double level_bw(const T& t, link_level l) noexcept {
        return l == link_level::same_gpu ? 1e300 : double(t.level_bandwidth(l));
    }

    /// Best step time of model m at k GPUs on topology t (the most compact placement).
    template <Topology T>
    [[nodiscard]] double ideal_step_time(const T& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept {
        return best_step_time(t, calibrate(z, m, k), k);
    }

    /// ideal_step_time() from a calibration already at hand.
    template <Topology T>
    [[nodiscard]] static double best_step_time(const T& t, const step_model& s, std::uint32_t k) noexcept {
        const auto l = detail::compact_level(t, k);
        return s.compute + s.volume / level_bw(t, l) + s.hops * double(t.level_latency(l));
    }

    template <Topology T>
    [[nodiscard]] comm_result evaluate(const T& t, const ModelZoo& z, model_id m, std::span<const gpu_id> gpus) const noexcept {
        const auto k = static_cast<std::uint32_t>(gpus.size());
        const auto s = calibrate(z, m, k);
        const auto l = detail::span_level(t, gpus);
        double bw = level_bw(t, l);
        if constexpr (std::same_as<T, TreeTopology>) {
            if (l == link_level::node && t.params().fabric == node_fabric::cube_mesh) {
                unsigned mask = 0;
                for (auto g : gpus) mask |= 1u << t.slot_of(g);
                if (!detail::cube_mesh_nvlink_ring()[mask]) bw = t.params().pcie_bandwidth;
            }
        }
        const double comm = s.volume / bw + s.hops * double(t.level_latency(l));
        const double best = best_step_time(t, s, k);
        return {comm / best, std::max(1.0, (s.compute + comm) / best)};
    }

    template <Topology T>
    [[nodiscard]] cost_bounds bounds(const T& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept {
        const auto s = calibrate(z, m, k);
        const double best = best_step_time(t, s, k);
        const auto lc = detail::compact_level(t, k), lw = detail::spread_level(t, k);
        double worst = s.volume / level_bw(t, lw) + s.hops * double(t.level_latency(lw));
        if constexpr (std::same_as<T, TreeTopology>) {
            // inside a cube-mesh node, k GPUs without an NVLink ring go over PCIe, which can be
            // slower than the network (DGX-1: 12 GB/s PCIe against 12.5 GB/s InfiniBand)
            if (t.params().fabric == node_fabric::cube_mesh && k > 1 && k <= t.gpus_per_node() &&
                detail::cube_mesh_pcie_subset_exists(k))
                worst = std::max(worst, s.volume / t.params().pcie_bandwidth +
                                            s.hops * double(t.level_latency(link_level::node)));
        }
        return {(s.volume / level_bw(t, lc) + s.hops * double(t.level_latency(lc))) / best, worst / best};
    }

    /// The model a config describes (which sets no tree_route weight).
    [[nodiscard]] static RingAllReduce from_config(const comm_config& c, std::string_view path = "/comm") {
        for (auto [key, v] : c.weights())
            if (v) throw ConfigError("config " + std::string(path) + "/" + key + ": unknown key \"" + key + "\" (allowed: model)");
        return {};
    }
};

/// Proximity-DRL's route cost: the sum of edge weights on the union of shortest paths among the
/// spine and the job's GPUs. Closed form for n GPUs: n*gpu + sum over nodes C(n_node, 2)*pair +
/// nodes_used*node + racks_used*rack with weights 1/40, 1/40, 1/4, 1/2. The slowdown is
/// (cost / best cost)^slowdown_exponent (0 reproduces Proximity-DRL, where placement does not
/// change run time).
struct TreeRouteCost {
    static constexpr std::string_view name = "tree_route";
    double gpu_weight = 1.0 / 40;   ///< GPU-node edge
    double pair_weight = 1.0 / 40;  ///< GPU-GPU edge inside a node, per pair
    double node_weight = 1.0 / 4;   ///< node-rack edge
    double rack_weight = 1.0 / 2;   ///< rack-spine edge
    double slowdown_exponent = 1.0;

    /// Cost from counts: n GPUs, sum of C(n_node, 2), nodes used, racks used.
    [[nodiscard]] double cost_of(double n, double pairs, double nodes, double racks) const noexcept {
        return n * gpu_weight + pairs * pair_weight + nodes * node_weight + racks * rack_weight;
    }

    template <Topology T>
    [[nodiscard]] double ideal_step_time(const T&, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept {
        return 1.0 / z[m].at(k).consolidated;
    }

    /// Cost of the GPUs (sorted ascending) in O(n).
    template <Topology T>
    [[nodiscard]] double cost(const T& t, std::span<const gpu_id> gpus) const noexcept {
        double pairs = 0, nodes = 0, racks = 0;
        std::size_t last_node = ~std::size_t{0}, last_rack = ~std::size_t{0};
        double run = 0;
        for (auto g : gpus) {
            const auto nd = t.node_of(g), rk = t.rack_of(g);
            if (nd != last_node) {
                pairs += run * (run - 1) / 2;
                run = 0;
                nodes += 1;
                last_node = nd;
            }
            if (rk != last_rack) {
                racks += 1;
                last_rack = rk;
            }
            run += 1;
        }
        pairs += run * (run - 1) / 2;
        return cost_of(double(gpus.size()), pairs, nodes, racks);
    }

    /// Best and worst cost of k GPUs on an empty cluster, over every number n of nodes used: the
    /// best spreads the GPUs evenly over n nodes in as few racks as possible, the worst fills
    /// nodes one after another (one GPU on each other node) across as many racks as possible.
    /// O(number of nodes).
    template <Topology T>
    [[nodiscard]] cost_bounds bounds(const T& t, const ModelZoo&, model_id, std::uint32_t k) const noexcept {
        const double S = double(t.gpus_per_node()), N = double(t.nodes_per_rack()), R = double(t.num_racks());
        const double kk = double(k);
        const double n_lo = std::ceil(kk / S), n_hi = std::min(kk, N * R);
        double worst = -1e300;
        for (double n = n_lo; n <= n_hi; n += 1) {
            // most pairs: one GPU per node, the rest filling nodes to S one after another
            double pairs_full = 0;
            if (S > 1) {
                const double rest = kk - n, full = std::floor(rest / (S - 1)), rem = rest - full * (S - 1);
                pairs_full = full * S * (S - 1) / 2 + (rem + 1) * rem / 2;
            }
            worst = std::max(worst, cost_of(kk, pairs_full, n, std::min(R, n)));
        }
        return {best_cost(t, k), worst};
    }

    /// bounds().best alone: the GPUs spread as evenly as possible over n nodes in as few racks as
    /// possible, for every n. In integers (every count is exact), so without a floating-point
    /// division, floor or ceil per n: evaluate() calls it at every job start.
    template <Topology T>
    [[nodiscard]] double best_cost(const T& t, std::uint32_t k) const noexcept {
        const std::uint64_t S = t.gpus_per_node(), N = t.nodes_per_rack(), R = t.num_racks();
        const std::uint64_t n_lo = std::max<std::uint64_t>(1, (k + S - 1) / S), n_hi = std::min<std::uint64_t>(k, N * R);
        double best = 1e300;
        for (std::uint64_t n = n_lo; n <= n_hi; ++n) {
            const std::uint64_t per = k / n, extra = k - per * n;
            const std::uint64_t pairs = ((n - extra) * per * (per - 1) + extra * (per + 1) * per) / 2;
            best = std::min(best, cost_of(double(k), double(pairs), double(n), double((n + N - 1) / N)));
        }
        return best;
    }

    template <Topology T>
    [[nodiscard]] comm_result evaluate(const T& t, const ModelZoo&, model_id, std::span<const gpu_id> gpus) const noexcept {
        const double c = cost(t, gpus);
        const double best = best_cost(t, static_cast<std::uint32_t>(gpus.size()));
        const double ratio = std::max(1.0, c / best);
        // pow(x, 1) is x exactly: the default exponent skips the call (about a tenth of a step)
        const double sd = slowdown_exponent == 0 ? 1.0 : slowdown_exponent == 1 ? ratio : std::pow(ratio, slowdown_exponent);
        return {c, sd};
    }

    /// The model a config describes: the weights it sets, the defaults for the others.
    [[nodiscard]] static TreeRouteCost from_config(const comm_config& c, std::string_view path = "/comm") {
        TreeRouteCost t;
        t.gpu_weight = c.gpu_weight.value_or(t.gpu_weight);
        t.pair_weight = c.pair_weight.value_or(t.pair_weight);
        t.node_weight = c.node_weight.value_or(t.node_weight);
        t.rack_weight = c.rack_weight.value_or(t.rack_weight);
        t.slowdown_exponent = c.slowdown_exponent.value_or(t.slowdown_exponent);
        if (t.gpu_weight + t.node_weight + t.rack_weight <= 0)
            throw ConfigError("config " + std::string(path) + ": at least one of gpu_weight, node_weight, rack_weight must be > 0");
        return t;
    }
};

static_assert(CommModel<RingAllReduce, TreeTopology>);
static_assert(CommModel<TreeRouteCost, TreeTopology>);

}  // namespace gpuplace
