#pragma once
/// \file topology.hpp
/// Cluster topologies. The env, the observation, the heuristics and the comm models read a
/// topology only through its level hierarchy (hierarchy.hpp): which GPUs share a domain on each
/// level, and each level's bandwidth and latency. TreeTopology is the common case, a uniform tree of
/// racks, nodes and GPUs, optionally with a GPU type per node (a heterogeneous cluster: types named
/// as in the model zoo, e.g. v100, p100, k80); LevelTopology (level_topology.hpp) is any hierarchy;
/// a user type that satisfies Topology works as well (docs/extending.md).

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "detail/cube_mesh.hpp"
#include "detail/divider.hpp"
#include "error.hpp"
#include "hierarchy.hpp"
#include "topology_levels.hpp"

namespace gpuplace {

/// How far apart two GPUs of a TreeTopology are: the highest level of the tree a message between
/// them crosses (level_hierarchy::link() of the tree's hierarchy).
enum class link_level : std::uint8_t { same_gpu = 0, node = 1, rack = 2, spine = 3 };

/// Coordinates of a GPU in the tree.
struct gpu_coord {
    std::uint32_t rack = 0;  ///< rack index
    std::uint32_t node = 0;  ///< global node index
    std::uint32_t slot = 0;  ///< slot inside the node
};

/// A topology: a name and a level hierarchy (every domain a contiguous range of GPU ids). Optional
/// parts, used when present:
///  - GPU types: `typed()`, `gpu_types()` (names as in the model zoo) and `type_of(g)`;
///  - a fabric inside a domain that is not one bandwidth: `ring_bandwidth(gpus, level)`, the
///    bandwidth of a ring over `gpus` (sorted) whose lowest common domain is on `level`, and
///    `slower_ring_bandwidth(k, level)`, a slower bandwidth some k GPUs there get, or none (a DGX-1's
///    hybrid cube-mesh, where some pairs of a node have NVLink and others PCIe).
template <class T>
concept Topology = std::copyable<T> && requires(const T& t) {
    { t.hierarchy() } -> std::convertible_to<const level_hierarchy&>;
    { t.name() } -> std::convertible_to<std::string_view>;
};

/// The number of GPUs of a topology.
template <Topology T>
[[nodiscard]] std::size_t num_gpus_of(const T& t) noexcept {
    return t.hierarchy().num_gpus();
}

/// Fabric inside a node.
enum class node_fabric : std::uint8_t {
    switched,   ///< every pair at the node bandwidth (NVSwitch, or a PCIe switch)
    cube_mesh,  ///< DGX-1 hybrid cube-mesh: NVLink pairs at the node bandwidth, others over PCIe
};

/// Parameters of a TreeTopology. Bandwidths in GB/s, latencies in seconds.
struct tree_params {
    std::size_t racks = 2;
    std::size_t nodes_per_rack = 4;
    std::size_t gpus_per_node = 8;
    double node_bandwidth = 300.0;   ///< GPU-GPU inside a node (NVSwitch / NVLink)
    double rack_bandwidth = 25.0;    ///< node-node inside a rack (per GPU, e.g. 200 Gb/s IB)
    double spine_bandwidth = 12.5;   ///< rack-rack through the spine (oversubscribed)
    double node_latency = 2e-6;
    double rack_latency = 5e-6;
    double spine_latency = 10e-6;
    node_fabric fabric = node_fabric::switched;
    double pcie_bandwidth = 12.0;    ///< cube_mesh only: pairs without NVLink
    std::string name = "custom";
    /// GPU type of each node (one name per node; empty: every GPU is of the model zoo's reference
    /// type, the untyped cluster). Names are the zoo's (ModelZoo::gpu_types()).
    std::vector<std::string> node_types;
};

/// A scenario's topology (key "topology"): either a tree preset ("dgx_a100", "dgx1",
/// "proximity_drl" or "custom", the default when unset) and the keys that override it (unset keys
/// keep the preset's values, and the JSON form holds exactly the keys that are set), or `levels`:
/// any level hierarchy, described level by level (topology_levels.hpp; the JSON reader turns the
/// presets written as levels, e.g. "nvl72", into them), with a `name`.
struct topology_config {
    std::optional<std::string> name;   ///< levels: the topology's name ("custom" unless set)
    std::vector<level_config> levels;  ///< non-empty: the topology is these levels (no tree key may be set)
    std::optional<std::string> preset;
    std::optional<std::size_t> racks, nodes_per_rack, gpus_per_node;  ///< racks and nodes_per_rack: 2 and 4 unless set
    std::optional<double> node_bandwidth, rack_bandwidth, spine_bandwidth, pcie_bandwidth;
    std::optional<double> node_latency, rack_latency, spine_latency;
    std::optional<std::string> fabric;  ///< "switched" or "cube_mesh"
    /// GPU types: one name for every node, one per rack (each rack's nodes) or one per node.
    std::optional<std::vector<std::string>> gpu_types;

    /// A preset of a given size, e.g. topology_config::of("dgx_a100", 2, 4).
    [[nodiscard]] static topology_config of(std::string preset, std::size_t racks, std::size_t nodes_per_rack) {
        topology_config c;
        c.preset = std::move(preset);
        c.racks = racks;
        c.nodes_per_rack = nodes_per_rack;
        return c;
    }
    friend bool operator==(const topology_config&, const topology_config&) = default;
};

/// The default topology: a uniform tree of racks, nodes and GPUs.
class TreeTopology {
public:
    TreeTopology() : TreeTopology(tree_params{}) {}

    /// Builds a tree; throws ConfigError on zero sizes, non-positive bandwidths or a cube-mesh
    /// node that does not have 8 GPUs.
    explicit TreeTopology(tree_params p) : p_(std::move(p)) {
        auto bad = [](const std::string& what) { throw ConfigError("topology: " + what); };
        if (p_.racks == 0 || p_.nodes_per_rack == 0 || p_.gpus_per_node == 0)
            bad("racks, nodes_per_rack and gpus_per_node must be >= 1 (got " + std::to_string(p_.racks) + ", " +
                std::to_string(p_.nodes_per_rack) + ", " + std::to_string(p_.gpus_per_node) + ")");
        if (p_.racks * p_.nodes_per_rack * p_.gpus_per_node > (1u << 24))
            bad("too many GPUs (" + std::to_string(p_.racks * p_.nodes_per_rack * p_.gpus_per_node) + " > 16777216)");
        for (double b : {p_.node_bandwidth, p_.rack_bandwidth, p_.spine_bandwidth, p_.pcie_bandwidth})
            if (!(b > 0)) bad("bandwidths must be > 0 (got " + std::to_string(b) + ")");
        for (double l : {p_.node_latency, p_.rack_latency, p_.spine_latency})
            if (!(l >= 0)) bad("latencies must be >= 0 (got " + std::to_string(l) + ")");
        if (p_.fabric == node_fabric::cube_mesh && p_.gpus_per_node != 8)
            bad("cube_mesh fabric needs 8 GPUs per node (got " + std::to_string(p_.gpus_per_node) + ")");
        num_gpus_ = p_.racks * p_.nodes_per_rack * p_.gpus_per_node;
        node_div_ = detail::divider(static_cast<std::uint32_t>(p_.gpus_per_node));
        rack_div_ = detail::divider(static_cast<std::uint32_t>(p_.nodes_per_rack * p_.gpus_per_node));
        level_bw_ = {0.0, p_.node_bandwidth, p_.rack_bandwidth, p_.spine_bandwidth};
        level_bw_[0] = level_hierarchy::same_gpu_bandwidth;
        level_lat_ = {0.0, p_.node_latency, p_.rack_latency, p_.spine_latency};
        hierarchy_ = std::make_shared<const level_hierarchy>(level_hierarchy::uniform(
            {{"node", p_.node_bandwidth, p_.node_latency}, {"rack", p_.rack_bandwidth, p_.rack_latency},
             {"spine", p_.spine_bandwidth, p_.spine_latency}},
            {p_.gpus_per_node, p_.nodes_per_rack, p_.racks}, p_.fabric != node_fabric::cube_mesh));
        set_node_types();
    }

    /// A topology of any level hierarchy, described level by level (topology_levels.hpp): level 1's
    /// domains are its nodes and level 2's its racks (the root's one domain when there are only two
    /// levels); GPU types, when set, are per node. ConfigError naming `path` on a bad level.
    TreeTopology(std::string name, std::vector<level_config> levels, std::string_view path = "/topology/levels") {
        auto layout = levels_layout_of(levels, path);
        levels_ = std::move(levels);
        const auto& h = layout.hierarchy;
        num_gpus_ = h.num_gpus();
        p_.name = std::move(name);
        p_.racks = p_.nodes_per_rack = p_.gpus_per_node = 0;  // the tree's sizes: none (see params())
        p_.fabric = layout.cube_mesh ? node_fabric::cube_mesh : node_fabric::switched;
        p_.pcie_bandwidth = layout.pcie_bandwidth;
        p_.node_types = std::move(layout.domain_types);
        hierarchy_ = std::make_shared<const level_hierarchy>(h);
        set_node_types();
    }


    /// NVIDIA DGX A100 pods: 8 GPUs per node on NVSwitch (300 GB/s), 200 Gb/s InfiniBand per GPU
    /// inside a rack (25 GB/s) and a 2:1 oversubscribed spine (12.5 GB/s).
    [[nodiscard]] static TreeTopology dgx_a100(std::size_t racks = 2, std::size_t nodes_per_rack = 4) {
        tree_params p;
        p.racks = racks;
        p.nodes_per_rack = nodes_per_rack;
        p.gpus_per_node = 8;
        p.name = "dgx_a100";
        return TreeTopology(p);
    }
    /// NVIDIA DGX-1 (V100): hybrid cube-mesh inside the node (NVLink pairs 0-3, 4-7 and i<->i+4 at
    /// 100 GB/s, other pairs over PCIe at 12 GB/s), 100 Gb/s InfiniBand between nodes.
    [[nodiscard]] static TreeTopology dgx1(std::size_t racks = 2, std::size_t nodes_per_rack = 4) {
        tree_params p;
        p.racks = racks;
        p.nodes_per_rack = nodes_per_rack;
        p.gpus_per_node = 8;
        p.node_bandwidth = 100.0;
        p.pcie_bandwidth = 12.0;
        p.rack_bandwidth = 12.5;
        p.spine_bandwidth = 6.25;
        p.fabric = node_fabric::cube_mesh;
        p.name = "dgx1";
        return TreeTopology(p);
    }
    /// The cluster of Proximity-DRL: 2 racks x 4 nodes x 4 GPUs.
    [[nodiscard]] static TreeTopology proximity_drl() {
        tree_params p;
        p.racks = 2;
        p.nodes_per_rack = 4;
        p.gpus_per_node = 4;
        p.node_bandwidth = 100.0;
        p.rack_bandwidth = 12.5;
        p.spine_bandwidth = 6.25;
        p.name = "proximity_drl";
        return TreeTopology(p);
    }

    /// Whether TreeTopology has a preset of this name ("dgx_a100", "dgx1", "proximity_drl"; the
    /// JSON reader has more, written as levels: gpuplace/json/topology.hpp).
    [[nodiscard]] static bool is_preset(std::string_view name) noexcept {
        return name == "dgx_a100" || name == "dgx1" || name == "proximity_drl";
    }

    [[nodiscard]] std::size_t num_gpus() const noexcept { return num_gpus_; }
    /// Nodes: the domains of level 1; racks: those of level 2 (on a tree of racks, nodes and GPUs
    /// as the names say). The sizes per node and per rack: 0 when they differ between domains.
    [[nodiscard]] std::size_t num_nodes() const noexcept { return levels_form() ? hierarchy_->num_domains(1) : p_.racks * p_.nodes_per_rack; }
    [[nodiscard]] std::size_t num_racks() const noexcept { return levels_form() ? hierarchy_->num_domains(2) : p_.racks; }
    [[nodiscard]] std::size_t gpus_per_node() const noexcept { return levels_form() ? hierarchy_->uniform_size(1) : p_.gpus_per_node; }
    [[nodiscard]] std::size_t nodes_per_rack() const noexcept {
        if (!levels_form()) return p_.nodes_per_rack;
        const auto& h = *hierarchy_;
        const auto r = h.uniform_size(2), n = h.uniform_size(1);
        return r && n ? r / n : 0;
    }
    [[nodiscard]] std::size_t gpus_per_rack() const noexcept { return levels_form() ? hierarchy_->uniform_size(2) : rack_div_.divisor(); }
    /// The tree's parameters; for a topology described by levels, only name, fabric, pcie_bandwidth
    /// and node_types are meaningful (the sizes are 0: see levels()).
    [[nodiscard]] const tree_params& params() const noexcept { return p_; }
    /// Whether the topology was described by levels (else it is a tree of racks, nodes and GPUs).
    [[nodiscard]] bool levels_form() const noexcept { return !levels_.empty(); }
    /// The levels it was described by (empty for a tree of racks, nodes and GPUs).
    [[nodiscard]] const std::vector<level_config>& levels() const noexcept { return levels_; }
    /// The topology as a level hierarchy: levels "node", "rack" and "spine" for a tree, else the
    /// levels it was described by (shared by copies).
    [[nodiscard]] const level_hierarchy& hierarchy() const noexcept { return *hierarchy_; }
    [[nodiscard]] const std::string& name() const noexcept { return p_.name; }

    // ---- GPU types ------------------------------------------------------------------------------

    /// Whether the nodes have GPU types (tree_params::node_types); untyped, every GPU is of the
    /// model zoo's reference type.
    [[nodiscard]] bool typed() const noexcept { return !types_.empty(); }
    /// Whether the GPUs are of more than one type.
    [[nodiscard]] bool heterogeneous() const noexcept { return types_.size() > 1; }
    /// The cluster's GPU types in order of first appearance (node 0's first); empty when untyped.
    [[nodiscard]] const std::vector<std::string>& gpu_types() const noexcept { return types_; }
    /// The index (into gpu_types()) of node n's type; 0 when untyped.
    [[nodiscard]] std::size_t node_type(std::size_t n) const noexcept { return types_.empty() ? 0 : node_type_[n]; }
    /// The index (into gpu_types()) of GPU g's type; 0 when untyped.
    [[nodiscard]] std::size_t type_of(gpu_id g) const noexcept { return types_.empty() ? 0 : node_type_[node_of(g)]; }

    [[nodiscard]] std::size_t node_of(gpu_id g) const noexcept { return levels_form() ? hierarchy_->domain_of(1, g) : node_div_.divide(g); }
    [[nodiscard]] std::size_t rack_of(gpu_id g) const noexcept { return levels_form() ? hierarchy_->domain_of(2, g) : rack_div_.divide(g); }
    /// The GPU's place inside its node (0 .. node size - 1).
    [[nodiscard]] std::size_t slot_of(gpu_id g) const noexcept {
        return levels_form() ? g - hierarchy_->first(1, node_of(g)) : node_div_.remainder(g);
    }
    [[nodiscard]] gpu_coord coord(gpu_id g) const noexcept {
        return {static_cast<std::uint32_t>(rack_of(g)), static_cast<std::uint32_t>(node_of(g)),
                static_cast<std::uint32_t>(slot_of(g))};
    }

    /// The link between two GPUs; for a topology described by levels, spine is the root's level
    /// and rack every level between the first and the root.
    [[nodiscard]] link_level level(gpu_id a, gpu_id b) const noexcept {
        if (a == b) return link_level::same_gpu;
        if (levels_form()) {
            const auto l = hierarchy_->link(a, b);
            return l == 1 ? link_level::node : l == hierarchy_->num_levels() ? link_level::spine : link_level::rack;
        }
        if (node_of(a) == node_of(b)) return link_level::node;
        if (rack_of(a) == rack_of(b)) return link_level::rack;
        return link_level::spine;
    }
    /// Bandwidth (GB/s) of the path between two GPUs: the bandwidth of the highest level crossed;
    /// inside a cube-mesh node, NVLink pairs get the node bandwidth and the rest PCIe.
    [[nodiscard]] double bandwidth(gpu_id a, gpu_id b) const noexcept {
        const auto l = level(a, b);
        if (l == link_level::node && p_.fabric == node_fabric::cube_mesh && !nvlink_pair(slot_of(a), slot_of(b)))
            return p_.pcie_bandwidth;
        return levels_form() ? hierarchy_->bandwidth(hierarchy_->link(a, b)) : level_bw_[static_cast<std::size_t>(l)];
    }
    [[nodiscard]] double latency(gpu_id a, gpu_id b) const noexcept {
        return levels_form() ? hierarchy_->latency(hierarchy_->link(a, b)) : level_lat_[static_cast<std::size_t>(level(a, b))];
    }
    /// A link level's bandwidth and latency (described by levels: rack is level 2).
    [[nodiscard]] double level_bandwidth(link_level l) const noexcept {
        return levels_form() ? hierarchy_->bandwidth(hierarchy_index(l)) : level_bw_[static_cast<std::size_t>(l)];
    }
    [[nodiscard]] double level_latency(link_level l) const noexcept {
        return levels_form() ? hierarchy_->latency(hierarchy_index(l)) : level_lat_[static_cast<std::size_t>(l)];
    }

    /// DGX-1 hybrid cube-mesh: slots 0-3 and 4-7 fully connected, plus i <-> i+4.
    [[nodiscard]] static constexpr bool nvlink_pair(std::size_t a, std::size_t b) noexcept { return detail::nvlink_pair(a, b); }

    /// The bandwidth of a ring over `gpus` (sorted, lowest common domain on `level`): inside a
    /// cube-mesh node NVLink when the slots admit an NVLink-only ring and PCIe otherwise; the
    /// level's bandwidth everywhere else.
    [[nodiscard]] double ring_bandwidth(std::span<const gpu_id> gpus, std::size_t level) const noexcept {
        if (level == 1 && p_.fabric == node_fabric::cube_mesh) {
            unsigned mask = 0;
            for (auto g : gpus) mask |= 1u << slot_of(g);
            if (!detail::cube_mesh_nvlink_ring()[mask]) return p_.pcie_bandwidth;
        }
        return hierarchy_->bandwidth(level);
    }
    /// The slower bandwidth some ring of k GPUs inside one domain of `level` gets, or none: inside
    /// a cube-mesh node, PCIe when some k slots admit no NVLink ring.
    [[nodiscard]] std::optional<double> slower_ring_bandwidth(std::size_t k, std::size_t level) const noexcept {
        if (level == 1 && p_.fabric == node_fabric::cube_mesh && k > 1 && detail::cube_mesh_pcie_subset_exists(k))
            return p_.pcie_bandwidth;
        return std::nullopt;
    }

    /// The topology a config describes: the preset's parameters, then every key the config sets.
    /// Errors (an unknown preset or fabric, a size given to the fixed-size proximity_drl preset, a
    /// cube-mesh node without 8 GPUs) are ConfigErrors naming the key under `path`.
    [[nodiscard]] static TreeTopology from_config(const topology_config& c, std::string_view path = "/topology");

private:
    /// The hierarchy's level of a link level (described by levels: rack is level 2, spine the root).
    [[nodiscard]] std::size_t hierarchy_index(link_level l) const noexcept {
        return l == link_level::spine ? hierarchy_->num_levels() : std::min<std::size_t>(std::size_t(l), hierarchy_->num_levels());
    }
    /// types_ and node_type_ from p_.node_types (one per node, or none).
    void set_node_types() {
        if (p_.node_types.empty()) return;
        auto bad = [](const std::string& what) { throw ConfigError("topology: " + what); };
        if (p_.node_types.size() != num_nodes())
            bad("node_types lists " + std::to_string(p_.node_types.size()) + " types for " + std::to_string(num_nodes()) + " nodes");
        node_type_.resize(num_nodes());
        for (std::size_t n = 0; n < num_nodes(); ++n) {
            const auto& name = p_.node_types[n];
            if (name.empty()) bad("node " + std::to_string(n) + " has an empty GPU type");
            std::size_t t = 0;
            while (t < types_.size() && types_[t] != name) ++t;
            if (t == types_.size()) {
                if (types_.size() == 255) bad("more than 255 GPU types");
                types_.push_back(name);
            }
            node_type_[n] = static_cast<std::uint8_t>(t);
        }
    }

    // the dividers and sizes first: node_of() / rack_of() and the sizes read one cache line
    detail::divider node_div_, rack_div_;  ///< by gpus_per_node, by GPUs per rack (= gpus_per_rack())
    std::size_t num_gpus_ = 0;
    tree_params p_;
    std::array<double, 4> level_bw_{};
    std::array<double, 4> level_lat_{};
    std::vector<std::string> types_;        ///< distinct GPU types, in order of first appearance
    std::vector<std::uint8_t> node_type_;   ///< per node: index into types_
    std::shared_ptr<const level_hierarchy> hierarchy_;
    std::vector<level_config> levels_;  ///< described by levels: them; a tree: none
};

inline TreeTopology TreeTopology::from_config(const topology_config& c, std::string_view path) {
    auto fail = [&](std::string_view key, const std::string& what) {
        detail::config_fail(key.empty() ? std::string(path) : detail::join_path(path, key), what);
    };
    if (!c.levels.empty()) {  // any hierarchy: the levels say everything a tree's keys would
        const std::pair<const char*, bool> tree_keys[] = {
            {"preset", bool(c.preset)}, {"racks", bool(c.racks)}, {"nodes_per_rack", bool(c.nodes_per_rack)},
            {"gpus_per_node", bool(c.gpus_per_node)}, {"node_bandwidth", bool(c.node_bandwidth)},
            {"rack_bandwidth", bool(c.rack_bandwidth)}, {"spine_bandwidth", bool(c.spine_bandwidth)},
            {"pcie_bandwidth", bool(c.pcie_bandwidth)}, {"node_latency", bool(c.node_latency)},
            {"rack_latency", bool(c.rack_latency)}, {"spine_latency", bool(c.spine_latency)}, {"fabric", bool(c.fabric)},
            {"gpu_types", bool(c.gpu_types)}};
        for (const auto& [key, set] : tree_keys)
            if (set) fail(key, std::string("\"") + key + "\" describes a tree of racks and nodes; with \"levels\" set it on the levels instead");
        return TreeTopology(c.name.value_or("custom"), c.levels, detail::join_path(path, "levels"));
    }
    if (c.name) fail("name", "\"name\" names a topology described by \"levels\" (a tree preset is named by \"preset\")");
    const std::string preset = c.preset.value_or("custom");
    const std::size_t racks = c.racks.value_or(2), npr = c.nodes_per_rack.value_or(4);
    tree_params p;
    if (preset == "dgx_a100") p = dgx_a100(racks, npr).params();
    else if (preset == "dgx1") p = dgx1(racks, npr).params();
    else if (preset == "proximity_drl") {
        if (c.racks || c.nodes_per_rack || c.gpus_per_node)
            fail("", "preset \"proximity_drl\" has a fixed size (2 racks x 4 nodes x 4 GPUs); use preset \"custom\" to change it");
        p = proximity_drl().params();
    } else if (preset == "custom") {
        p.racks = racks;
        p.nodes_per_rack = npr;
    } else
        fail("preset", "unknown preset \"" + preset + "\" (allowed: dgx_a100, dgx1, proximity_drl, custom)");
    p.gpus_per_node = c.gpus_per_node.value_or(p.gpus_per_node);
    p.node_bandwidth = c.node_bandwidth.value_or(p.node_bandwidth);
    p.rack_bandwidth = c.rack_bandwidth.value_or(p.rack_bandwidth);
    p.spine_bandwidth = c.spine_bandwidth.value_or(p.spine_bandwidth);
    p.pcie_bandwidth = c.pcie_bandwidth.value_or(p.pcie_bandwidth);
    p.node_latency = c.node_latency.value_or(p.node_latency);
    p.rack_latency = c.rack_latency.value_or(p.rack_latency);
    p.spine_latency = c.spine_latency.value_or(p.spine_latency);
    const std::string fabric = c.fabric.value_or(p.fabric == node_fabric::cube_mesh ? "cube_mesh" : "switched");
    if (fabric == "cube_mesh") p.fabric = node_fabric::cube_mesh;
    else if (fabric == "switched") p.fabric = node_fabric::switched;
    else fail("fabric", "unknown fabric \"" + fabric + "\" (allowed: switched, cube_mesh)");
    if (p.fabric == node_fabric::cube_mesh && p.gpus_per_node != 8)
        fail("fabric", "cube_mesh needs gpus_per_node = 8 (got " + std::to_string(p.gpus_per_node) + ")");
    if (preset != "custom" && p.name != preset) p.name = preset;
    if (c.gpu_types) {
        const auto& v = *c.gpu_types;
        const std::size_t N = p.racks * p.nodes_per_rack;
        p.node_types.clear();
        if (v.size() == 1) p.node_types.assign(N, v[0]);
        else if (v.size() == N) p.node_types = v;
        else if (v.size() == p.racks)
            for (std::size_t r = 0; r < p.racks; ++r)
                for (std::size_t n = 0; n < p.nodes_per_rack; ++n) p.node_types.push_back(v[r]);
        else
            fail("gpu_types", std::to_string(v.size()) + " types: expected 1 (every node), " + std::to_string(p.racks) +
                                  " (one per rack) or " + std::to_string(N) + " (one per node)");
        for (std::size_t i = 0; i < v.size(); ++i)
            if (v[i].empty()) fail("gpu_types/" + std::to_string(i), "empty GPU type name");
    }
    return TreeTopology(p);
}

static_assert(Topology<TreeTopology>);

}  // namespace gpuplace
