#pragma once
/// \file comm.hpp
/// Communication models: given a job and its GPUs, the communication cost of the placement and the
/// slowdown (>= 1) of the job's step time relative to the best placement on the topology.

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "detail/inline.hpp"
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

/// A communication model for topology T. `evaluate` takes the job's GPUs sorted ascending. The
/// built-in ones are RingAllReduce and TreeRouteCost, chosen at run time through comm_model.
template <class C, class T>
concept CommModel = Topology<T> && std::copyable<C> &&
    requires(const C& c, const T& t, const ModelZoo& z, model_id m, std::uint32_t k, std::span<const gpu_id> gpus) {
        { c.ideal_step_time(t, z, m, k) } -> std::convertible_to<double>;
        { c.evaluate(t, z, m, gpus) } -> std::same_as<comm_result>;
        { c.bounds(t, z, m, k) } -> std::same_as<cost_bounds>;
    };

namespace detail {

/// The bandwidth of a ring over `gpus` (sorted) whose lowest common domain is on `level`: the
/// topology's own rule when it has one (a fabric inside a domain), else the level's bandwidth.
template <Topology T>
[[nodiscard]] double ring_bandwidth(const T& t, std::span<const gpu_id> gpus, std::size_t level) noexcept {
    if constexpr (requires { { t.ring_bandwidth(gpus, level) } -> std::convertible_to<double>; }) return t.ring_bandwidth(gpus, level);
    else return t.hierarchy().bandwidth(level);
}

/// A slower bandwidth some ring of k GPUs inside one domain of `level` gets (the topology's
/// slower_ring_bandwidth(), e.g. PCIe inside a DGX-1 node), or none.
template <Topology T>
[[nodiscard]] std::optional<double> slower_ring_bandwidth(const T& t, std::size_t k, std::size_t level) noexcept {
    if constexpr (requires { { t.slower_ring_bandwidth(k, level) } -> std::convertible_to<std::optional<double>>; })
        return t.slower_ring_bandwidth(k, level);
    else return std::nullopt;
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

    /// Best step time of model m at k GPUs on topology t (the most compact placement).
    template <Topology T>
    [[nodiscard]] double ideal_step_time(const T& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept {
        return best_step_time(t.hierarchy(), calibrate(z, m, k), k);
    }

    /// ideal_step_time() from a calibration already at hand.
    [[nodiscard]] static double best_step_time(const level_hierarchy& h, const step_model& s, std::uint32_t k) noexcept {
        const auto l = h.compact_level(k);
        return s.compute + s.volume / h.bandwidth(l) + s.hops * h.latency(l);
    }

    template <Topology T>
    [[nodiscard]] comm_result evaluate(const T& t, const ModelZoo& z, model_id m, std::span<const gpu_id> gpus) const noexcept {
        const auto& h = t.hierarchy();
        const auto k = static_cast<std::uint32_t>(gpus.size());
        const auto s = calibrate(z, m, k);
        // sorted, and every domain a range of GPU ids: the first and last GPUs' lowest common
        // domain holds them all (h.span(gpus), without reading every GPU's domains)
        const auto l = gpus.empty() ? std::size_t{0} : h.link(gpus.front(), gpus.back());
        const double comm = s.volume / detail::ring_bandwidth(t, gpus, l) + s.hops * h.latency(l);
        const double best = best_step_time(h, s, k);
        return {comm / best, std::max(1.0, (s.compute + comm) / best)};
    }

    template <Topology T>
    [[nodiscard]] cost_bounds bounds(const T& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept {
        const auto& h = t.hierarchy();
        const auto s = calibrate(z, m, k);
        const double best = best_step_time(h, s, k);
        const auto lc = h.compact_level(k), lw = h.spread_level(k);
        double worst = s.volume / h.bandwidth(lw) + s.hops * h.latency(lw);
        // inside a domain with a slower fabric, k GPUs without a fast ring can be slower than the
        // most spread placement (DGX-1: 12 GB/s PCIe against 12.5 GB/s InfiniBand)
        for (std::size_t l = 1; l < h.num_levels(); ++l)
            if (k <= h.max_size(l))
                if (const auto b = detail::slower_ring_bandwidth(t, k, l)) worst = std::max(worst, s.volume / *b + s.hops * h.latency(l));
        return {(s.volume / h.bandwidth(lc) + s.hops * h.latency(lc)) / best, worst / best};
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
/// change run time). Defined on a tree of nodes (level 1), racks (level 2) and a spine, each
/// level's domains of one size (check()).
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

    /// ConfigError unless topology t is a tree of nodes, racks and a spine with nodes of one size
    /// and racks of one size (the closed form of the cost bounds needs them).
    template <Topology T>
    static void check(const T& t, std::string_view path = "/comm") {
        const auto& h = t.hierarchy();
        if (h.num_levels() != 3 || h.uniform_size(1) == 0 || h.uniform_size(2) == 0)
            throw ConfigError("config " + std::string(path) + ": tree_route needs a tree of nodes, racks and a spine with nodes of one "
                              "size and racks of one size (this topology has " + std::to_string(h.num_levels()) + " levels)");
    }

    /// Cost of the GPUs (sorted ascending) in O(n).
    template <Topology T>
    [[nodiscard]] double cost(const T& t, std::span<const gpu_id> gpus) const noexcept {
        const auto& h = t.hierarchy();
        double pairs = 0, nodes = 0, racks = 0;
        std::size_t last_node = ~std::size_t{0}, last_rack = ~std::size_t{0};
        double run = 0;
        for (auto g : gpus) {
            const std::size_t nd = h.domain_of(1, g), rk = h.domain_of(2, g);
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
        const auto& h = t.hierarchy();
        const double S = double(h.uniform_size(1)), N = double(h.uniform_size(2) / h.uniform_size(1)), R = double(h.num_domains(2));
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
        const auto& h = t.hierarchy();
        const std::uint64_t S = h.uniform_size(1), N = h.uniform_size(2) / h.uniform_size(1), R = h.num_domains(2);
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

/// A communication model as a run-time object on TreeTopology (the topology type of every env a
/// scenario builds): what comm_model holds for a model registered by name (comm_registry.hpp),
/// written in C++ or in another language.
class comm_model_interface {
public:
    virtual ~comm_model_interface() = default;
    [[nodiscard]] virtual std::string_view name() const noexcept = 0;
    [[nodiscard]] virtual double ideal_step_time(const TreeTopology& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept = 0;
    [[nodiscard]] virtual comm_result evaluate(const TreeTopology& t, const ModelZoo& z, model_id m, std::span<const gpu_id> gpus) const noexcept = 0;
    [[nodiscard]] virtual cost_bounds bounds(const TreeTopology& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept = 0;
    /// ConfigError when the model is not defined on topology t.
    virtual void check(const TreeTopology& /*t*/, std::string_view /*path*/) const {}
    /// The first error a call met since the last take, or "": a model whose calls can fail (one
    /// written in Python) answers neutral values meanwhile, and the env raises it (take_error()).
    [[nodiscard]] virtual std::string take_error() const { return {}; }
};

namespace detail {
/// The model registered under c.model made from `c` (comm_registry.hpp, included below), or null.
[[nodiscard]] inline std::shared_ptr<const comm_model_interface> make_registered_comm(const comm_config& c, std::string_view path);
/// The registered models' names, ", name" each (comm_registry.hpp).
[[nodiscard]] inline std::string registered_comm_names();
}  // namespace detail

/// The built-in comm models and those registered by name as one run-time value (the scenario's
/// /comm/model): one env type serves every scenario, and the model is evaluated once per job
/// start, so the dispatch costs nothing measurable. Another model is a CommModel type given to
/// basic_env as its C, or registered (comm_registry.hpp).
class comm_model {
public:
    /// A model registered by name (comm_registry.hpp).
    using registered = std::shared_ptr<const comm_model_interface>;

    comm_model() = default;
    comm_model(RingAllReduce m) : m_(m) {}  // NOLINT: implicit, as the variant's alternatives
    comm_model(TreeRouteCost m) : m_(m) {}  // NOLINT
    explicit comm_model(registered m) : m_(std::move(m)) {}

    /// The model a config describes ("ring_allreduce", "tree_route" and its keys, or a model
    /// registered by name); ConfigError naming `path`/model or the bad key otherwise.
    [[nodiscard]] static comm_model from_config(const comm_config& c, std::string_view path = "/comm") {
        if (c.model == RingAllReduce::name) return RingAllReduce::from_config(c, path);
        if (c.model == TreeRouteCost::name) return TreeRouteCost::from_config(c, path);
        if (auto r = detail::make_registered_comm(c, path)) return comm_model(std::move(r));
        throw ConfigError("config " + std::string(path) + "/model: unknown model \"" + c.model + "\" (allowed: " +
                          std::string(RingAllReduce::name) + ", " + std::string(TreeRouteCost::name) + detail::registered_comm_names() + ")");
    }

    /// "ring_allreduce", "tree_route" or a registered model's name.
    [[nodiscard]] std::string_view name() const noexcept {
        if (m_.index() == 2) return std::get<2>(m_)->name();
        if (m_.index() == 1) return TreeRouteCost::name;
        return RingAllReduce::name;
    }
    /// The model when it is an M, else null.
    template <class M>
    [[nodiscard]] const M* get_if() const noexcept {
        return std::get_if<M>(&m_);
    }
    /// ConfigError when the model is not defined on topology t (TreeRouteCost::check(), a
    /// registered model's check(); a registered model is defined on TreeTopology alone).
    template <Topology T>
    void check(const T& t, std::string_view path = "/comm") const {
        if (const auto* r = get_if<TreeRouteCost>()) r->check(t, path);
        if (m_.index() == 2) {
            if constexpr (std::same_as<T, TreeTopology>) std::get<2>(m_)->check(t, path);
            else
                throw ConfigError("config " + std::string(path) + "/model: \"" + std::string(name()) +
                                  "\" is registered for TreeTopology, the topology type of the envs scenarios build; this env's is another");
        }
    }
    /// Throws the first error a registered model's calls met (one written in Python), if any.
    void rethrow_error() const {
        if (m_.index() == 2) [[unlikely]] rethrow_registered();
    }

    template <Topology T>
    [[nodiscard]] double ideal_step_time(const T& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept {
        return visit<T>([&](const auto& c) { return double(c.ideal_step_time(t, z, m, k)); });
    }
    template <Topology T>
    [[nodiscard]] comm_result evaluate(const T& t, const ModelZoo& z, model_id m, std::span<const gpu_id> gpus) const noexcept {
        return visit<T>([&](const auto& c) { return c.evaluate(t, z, m, gpus); });
    }
    template <Topology T>
    [[nodiscard]] cost_bounds bounds(const T& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept {
        return visit<T>([&](const auto& c) { return c.bounds(t, z, m, k); });
    }

private:
    /// std::visit's work as an index switch (GCC calls std::visit's table out of line: a call per
    /// job start), inlined into the caller (GCC kept this switch out of line too: a call per job
    /// start, and the model's evaluate() then could not be inlined into the env's start()). A
    /// registered model (index 2) exists on TreeTopology alone (check()).
    template <class T, class F>
    GPUPLACE_ALWAYS_INLINE decltype(auto) visit(F&& f) const {
        if (m_.index() == 0) [[likely]] return f(std::get<0>(m_));
        if constexpr (std::same_as<T, TreeTopology>)
            if (m_.index() == 2) [[unlikely]] return f(*std::get<2>(m_));
        return f(std::get<1>(m_));
    }
    /// rethrow_error()'s work, out of the callers' way (the job start inlines its check).
    [[gnu::cold, gnu::noinline]] void rethrow_registered() const {
        if (auto e = std::get<2>(m_)->take_error(); !e.empty()) throw Error(e);
    }

    std::variant<RingAllReduce, TreeRouteCost, registered> m_;
};

static_assert(CommModel<comm_model, TreeTopology>);

/// Communication model C as a scenario's "comm" says: C::from_config() when C reads a config
/// (comm_model, RingAllReduce, TreeRouteCost), else C{} (a model of one's own).
template <class C>
[[nodiscard]] C comm_of_config(const comm_config& c, std::string_view path = "/comm") {
    if constexpr (requires { C::from_config(c, path); }) return C::from_config(c, path);
    else return C{};
}

}  // namespace gpuplace

#include "comm_registry.hpp"  // communication models of one's own, by name (detail::make_registered_comm())
