// A user-defined topology, written outside the library: servers whose GPUs hang off PCIe switches.
// GPUs under one switch talk peer to peer over PCIe; GPUs of one server under different switches
// go through the CPUs' link; servers talk over Ethernet. Older servers have one switch of 4 GPUs,
// newer ones two switches of 4, so the domains on one level differ in size. gpuplace needs only
// hierarchy() and name() (the Topology concept); examples/custom_topology.cpp runs an env on it and
// tests/topology_conformance_test.cpp checks it like every shipped topology.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <gpuplace/hierarchy.hpp>

struct pcie_box_cluster {
    /// `old_servers` servers of one 4-GPU switch, then `new_servers` of two.
    explicit pcie_box_cluster(std::size_t old_servers = 2, std::size_t new_servers = 4) {
        std::vector<std::uint32_t> switches, servers;
        for (std::size_t s = 0; s < old_servers; ++s) switches.push_back(4), servers.push_back(4);
        for (std::size_t s = 0; s < new_servers; ++s) switches.insert(switches.end(), {4, 4}), servers.push_back(8);
        h = gpuplace::level_hierarchy({{"switch", 24.0, 1.5e-6},   // PCIe 4.0 x16 peer to peer
                                       {"server", 16.0, 3e-6},     // through the CPUs' link
                                       {"network", 12.5, 10e-6}},  // 100 Gb/s Ethernet
                                      {switches, servers});
    }
    [[nodiscard]] const gpuplace::level_hierarchy& hierarchy() const noexcept { return h; }
    [[nodiscard]] std::string_view name() const noexcept { return "pcie_box"; }

    gpuplace::level_hierarchy h;
};
