#pragma once
/// \file data/topologies.hpp
/// The topology presets, written as levels (topology_levels.hpp, docs/extending.md): the JSON a
/// scenario's "topology" may hold itself. Data only: gpuplace/json/topology.hpp reads it
/// (topology_preset(), topology_preset_names()).
///
/// Each preset: "about" (one sentence), "levels" (level 1 first, the root last) and "parameters",
/// the keys a scenario may set beside "preset" and the level whose fan-out each sets (e.g. "racks":
/// the root's); "<level>_bandwidth" and "<level>_latency" set a level's link. The tree presets
/// (dgx_a100, dgx1, proximity_drl) are also TreeTopology's C++ presets, which a scenario naming
/// them builds (tests/topology_levels_test.cpp checks both give the same hierarchy).

#include <string_view>

namespace gpuplace {

inline constexpr std::string_view topology_presets_json = R"json({
  "dgx_a100": {
    "about": "NVIDIA DGX A100 pods: 8 GPUs per node on NVSwitch (300 GB/s), 200 Gb/s InfiniBand per GPU inside a rack (25 GB/s), a 2:1 oversubscribed spine (12.5 GB/s)",
    "parameters": {"racks": "spine", "nodes_per_rack": "rack", "gpus_per_node": "node"},
    "levels": [
      {"name": "node", "fanout": 8, "bandwidth": 300, "latency": 2e-6},
      {"name": "rack", "fanout": 4, "bandwidth": 25, "latency": 5e-6},
      {"name": "spine", "fanout": 2, "bandwidth": 12.5, "latency": 1e-5}]},
  "dgx1": {
    "about": "NVIDIA DGX-1 (V100): hybrid cube-mesh inside the node (NVLink pairs at 100 GB/s, the others over PCIe at 12 GB/s), 100 Gb/s InfiniBand between nodes",
    "parameters": {"racks": "spine", "nodes_per_rack": "rack"},
    "levels": [
      {"name": "node", "fanout": 8, "bandwidth": 100, "latency": 2e-6, "fabric": "cube_mesh", "pcie_bandwidth": 12},
      {"name": "rack", "fanout": 4, "bandwidth": 12.5, "latency": 5e-6},
      {"name": "spine", "fanout": 2, "bandwidth": 6.25, "latency": 1e-5}]},
  "proximity_drl": {
    "about": "the cluster of Proximity-DRL: 2 racks x 4 nodes x 4 GPUs",
    "parameters": {},
    "levels": [
      {"name": "node", "fanout": 4, "bandwidth": 100, "latency": 2e-6},
      {"name": "rack", "fanout": 4, "bandwidth": 12.5, "latency": 5e-6},
      {"name": "spine", "fanout": 2, "bandwidth": 6.25, "latency": 1e-5}]},
  "nvl72": {
    "about": "NVIDIA GB200 NVL72-style racks: 72 GPUs in one NVLink domain (900 GB/s per GPU, NVLink 5), the racks under a spine of 400 Gb/s InfiniBand per GPU (50 GB/s)",
    "parameters": {"racks": "spine"},
    "levels": [
      {"name": "nvl", "fanout": 72, "bandwidth": 900, "latency": 1e-6},
      {"name": "spine", "fanout": 4, "bandwidth": 50, "latency": 1e-5}]},
  "fat_tree": {
    "about": "a three-tier fat tree of DGX-style nodes: 8 GPUs on NVSwitch (300 GB/s), 4 nodes per leaf switch (25 GB/s per GPU), 2 leaves per pod (25 GB/s, more hops), 2 pods under an oversubscribed spine (12.5 GB/s)",
    "parameters": {"pods": "spine", "leaves_per_pod": "pod", "nodes_per_leaf": "leaf", "gpus_per_node": "node"},
    "levels": [
      {"name": "node", "fanout": 8, "bandwidth": 300, "latency": 2e-6},
      {"name": "leaf", "fanout": 4, "bandwidth": 25, "latency": 5e-6},
      {"name": "pod", "fanout": 2, "bandwidth": 25, "latency": 8e-6},
      {"name": "spine", "fanout": 2, "bandwidth": 12.5, "latency": 1.2e-5}]},
  "heterogeneous": {
    "about": "72 GPUs of three types: one rack of 3 servers x 8 GPUs each of V100, P100 and K80 (NVLink 100 GB/s inside a server, 12.5 GB/s between servers, 6.25 GB/s between racks)",
    "parameters": {"nodes_per_rack": "rack", "gpus_per_node": "node"},
    "levels": [
      {"name": "node", "fanout": 8, "bandwidth": 100, "latency": 2e-6},
      {"name": "rack", "fanout": 3, "bandwidth": 12.5, "latency": 5e-6, "gpu_types": ["v100", "p100", "k80"]},
      {"name": "spine", "fanout": 3, "bandwidth": 6.25, "latency": 1e-5}]}
})json";

}  // namespace gpuplace
