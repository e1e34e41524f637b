#pragma once
/// \file topology.hpp
/// Cluster topologies: GPUs in nodes, nodes in racks, racks under a spine.
/// Distance level, bandwidth and latency between two GPUs are O(1) from coordinates.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "detail/divider.hpp"
#include "detail/json_util.hpp"
#include "error.hpp"

namespace gpuplace {

/// Index of a GPU in the cluster, 0 .. num_gpus()-1.
using gpu_id = std::uint32_t;

/// How far apart two GPUs are: the highest level of the tree a message between them crosses.
enum class link_level : std::uint8_t { same_gpu = 0, node = 1, rack = 2, spine = 3 };

/// Coordinates of a GPU in the tree.
struct gpu_coord {
    std::uint32_t rack = 0;  ///< rack index
    std::uint32_t node = 0;  ///< global node index
    std::uint32_t slot = 0;  ///< slot inside the node
};

/// A topology: GPUs numbered contiguously node by node, nodes contiguously rack by rack, every node
/// with gpus_per_node() GPUs and every rack with nodes_per_rack() nodes. Pairwise queries are O(1).
template <class T>
concept Topology = requires(const T& t, gpu_id a, gpu_id b, link_level l) {
    { t.num_gpus() } -> std::convertible_to<std::size_t>;
    { t.num_nodes() } -> std::convertible_to<std::size_t>;
    { t.num_racks() } -> std::convertible_to<std::size_t>;
    { t.gpus_per_node() } -> std::convertible_to<std::size_t>;
    { t.nodes_per_rack() } -> std::convertible_to<std::size_t>;
    { t.node_of(a) } -> std::convertible_to<std::size_t>;
    { t.rack_of(a) } -> std::convertible_to<std::size_t>;
    { t.slot_of(a) } -> std::convertible_to<std::size_t>;
    { t.level(a, b) } -> std::same_as<link_level>;
    { t.bandwidth(a, b) } -> std::convertible_to<double>;
    { t.latency(a, b) } -> std::convertible_to<double>;
    { t.level_bandwidth(l) } -> std::convertible_to<double>;
    { t.level_latency(l) } -> std::convertible_to<double>;
};

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
        level_bw_[0] = 1e300;
        level_lat_ = {0.0, p_.node_latency, p_.rack_latency, p_.spine_latency};
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

    [[nodiscard]] std::size_t num_gpus() const noexcept { return num_gpus_; }
    [[nodiscard]] std::size_t num_nodes() const noexcept { return p_.racks * p_.nodes_per_rack; }
    [[nodiscard]] std::size_t num_racks() const noexcept { return p_.racks; }
    [[nodiscard]] std::size_t gpus_per_node() const noexcept { return p_.gpus_per_node; }
    [[nodiscard]] std::size_t nodes_per_rack() const noexcept { return p_.nodes_per_rack; }
    [[nodiscard]] std::size_t gpus_per_rack() const noexcept { return rack_div_.divisor(); }
    [[nodiscard]] const tree_params& params() const noexcept { return p_; }
    [[nodiscard]] const std::string& name() const noexcept { return p_.name; }

    [[nodiscard]] std::size_t node_of(gpu_id g) const noexcept { return node_div_.divide(g); }
    [[nodiscard]] std::size_t rack_of(gpu_id g) const noexcept { return rack_div_.divide(g); }
    [[nodiscard]] std::size_t slot_of(gpu_id g) const noexcept { return node_div_.remainder(g); }
    [[nodiscard]] gpu_coord coord(gpu_id g) const noexcept {
        return {static_cast<std::uint32_t>(rack_of(g)), static_cast<std::uint32_t>(node_of(g)),
                static_cast<std::uint32_t>(slot_of(g))};
    }

    [[nodiscard]] link_level level(gpu_id a, gpu_id b) const noexcept {
        if (a == b) return link_level::same_gpu;
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
        return level_bw_[static_cast<std::size_t>(l)];
    }
    [[nodiscard]] double latency(gpu_id a, gpu_id b) const noexcept {
        return level_lat_[static_cast<std::size_t>(level(a, b))];
    }
    [[nodiscard]] double level_bandwidth(link_level l) const noexcept { return level_bw_[static_cast<std::size_t>(l)]; }
    [[nodiscard]] double level_latency(link_level l) const noexcept { return level_lat_[static_cast<std::size_t>(l)]; }

    /// DGX-1 hybrid cube-mesh: slots 0-3 and 4-7 fully connected, plus i <-> i+4.
    [[nodiscard]] static constexpr bool nvlink_pair(std::size_t a, std::size_t b) noexcept {
        return (a / 4 == b / 4) || (a + 4 == b) || (b + 4 == a);
    }

    /// Reads a topology from JSON: {"preset": "dgx_a100"|"dgx1"|"proximity_drl"|"custom", "racks",
    /// "nodes_per_rack", "gpus_per_node", "node_bandwidth", "rack_bandwidth", "spine_bandwidth",
    /// "node_latency", "rack_latency", "spine_latency", "fabric": "switched"|"cube_mesh",
    /// "pcie_bandwidth"}. Keys after the preset override it. Errors name the JSON path.
    [[nodiscard]] static TreeTopology from_json(const detail::json& j, std::string_view path = "/topology") {
        detail::check_keys(j, path,
                           {"preset", "racks", "nodes_per_rack", "gpus_per_node", "node_bandwidth", "rack_bandwidth",
                            "spine_bandwidth", "node_latency", "rack_latency", "spine_latency", "fabric",
                            "pcie_bandwidth"});
        std::string preset = "custom";
        detail::read_string(j, path, "preset", preset);
        std::size_t racks = 2, npr = 4;
        detail::read_int(j, path, "racks", racks, 1, 1 << 16);
        detail::read_int(j, path, "nodes_per_rack", npr, 1, 1 << 16);
        tree_params p;
        if (preset == "dgx_a100") p = dgx_a100(racks, npr).params();
        else if (preset == "dgx1") p = dgx1(racks, npr).params();
        else if (preset == "proximity_drl") {
            if (j.contains("racks") || j.contains("nodes_per_rack") || j.contains("gpus_per_node"))
                detail::config_fail(path, "preset \"proximity_drl\" has a fixed size (2 racks x 4 nodes x 4 GPUs); "
                                          "use preset \"custom\" to change it");
            p = proximity_drl().params();
        } else if (preset == "custom") {
            p.racks = racks;
            p.nodes_per_rack = npr;
        } else
            detail::config_fail(detail::join_path(path, "preset"),
                                "unknown preset \"" + preset + "\" (allowed: dgx_a100, dgx1, proximity_drl, custom)");
        detail::read_int(j, path, "gpus_per_node", p.gpus_per_node, 1, 1 << 12);
        detail::read_number(j, path, "node_bandwidth", p.node_bandwidth, 1e-9);
        detail::read_number(j, path, "rack_bandwidth", p.rack_bandwidth, 1e-9);
        detail::read_number(j, path, "spine_bandwidth", p.spine_bandwidth, 1e-9);
        detail::read_number(j, path, "pcie_bandwidth", p.pcie_bandwidth, 1e-9);
        detail::read_number(j, path, "node_latency", p.node_latency, 0.0);
        detail::read_number(j, path, "rack_latency", p.rack_latency, 0.0);
        detail::read_number(j, path, "spine_latency", p.spine_latency, 0.0);
        std::string fabric = p.fabric == node_fabric::cube_mesh ? "cube_mesh" : "switched";
        detail::read_string(j, path, "fabric", fabric);
        if (fabric == "cube_mesh") p.fabric = node_fabric::cube_mesh;
        else if (fabric == "switched") p.fabric = node_fabric::switched;
        else detail::config_fail(detail::join_path(path, "fabric"),
                                 "unknown fabric \"" + fabric + "\" (allowed: switched, cube_mesh)");
        if (p.fabric == node_fabric::cube_mesh && p.gpus_per_node != 8)
            detail::config_fail(detail::join_path(path, "fabric"),
                                "cube_mesh needs gpus_per_node = 8 (got " + std::to_string(p.gpus_per_node) + ")");
        if (preset != "custom" && p.name != preset) p.name = preset;
        return TreeTopology(p);
    }

    /// The JSON that from_json reads back to an equal topology.
    [[nodiscard]] detail::json to_json() const {
        return {{"preset", "custom"},
                {"racks", p_.racks},
                {"nodes_per_rack", p_.nodes_per_rack},
                {"gpus_per_node", p_.gpus_per_node},
                {"node_bandwidth", p_.node_bandwidth},
                {"rack_bandwidth", p_.rack_bandwidth},
                {"spine_bandwidth", p_.spine_bandwidth},
                {"node_latency", p_.node_latency},
                {"rack_latency", p_.rack_latency},
                {"spine_latency", p_.spine_latency},
                {"fabric", p_.fabric == node_fabric::cube_mesh ? "cube_mesh" : "switched"},
                {"pcie_bandwidth", p_.pcie_bandwidth}};
    }

private:
    // the dividers and sizes first: node_of() / rack_of() and the sizes read one cache line
    detail::divider node_div_, rack_div_;  ///< by gpus_per_node, by GPUs per rack (= gpus_per_rack())
    std::size_t num_gpus_ = 0;
    tree_params p_;
    std::array<double, 4> level_bw_{};
    std::array<double, 4> level_lat_{};
};

static_assert(Topology<TreeTopology>);

}  // namespace gpuplace
