#pragma once
/// \file detail/cube_mesh.hpp
/// The NVIDIA DGX-1 hybrid cube-mesh inside a node of 8 GPUs: which pairs of slots have NVLink,
/// and which sets of slots admit a ring over NVLink only.

#include <array>
#include <bit>
#include <cstddef>

namespace gpuplace::detail {

/// DGX-1 hybrid cube-mesh: slots 0-3 and 4-7 fully connected, plus i <-> i+4.
[[nodiscard]] constexpr bool nvlink_pair(std::size_t a, std::size_t b) noexcept {
    return (a / 4 == b / 4) || (a + 4 == b) || (b + 4 == a);
}

/// For each subset of the 8 slots (bit mask), whether its GPUs can be ordered in a ring that uses
/// NVLink only. Computed once (Held-Karp over subsets).
[[nodiscard]] inline const std::array<bool, 256>& cube_mesh_nvlink_ring() {
    static const std::array<bool, 256> table = [] {
        std::array<bool, 256> out{};
        for (unsigned mask = 1; mask < 256; ++mask) {
            const int n = std::popcount(mask);
            if (n <= 1) {
                out[mask] = true;
                continue;
            }
            const int first = std::countr_zero(mask);
            if (n == 2) {
                const int second = std::countr_zero(mask & ~(1u << first));
                out[mask] = nvlink_pair(first, second);
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
                        if ((mask & (1u << w)) && !(s & (1u << w)) && nvlink_pair(v, w)) reach[s | (1u << w)][w] = true;
                }
            }
            bool ok = false;
            for (int v = 0; v < 8; ++v) ok = ok || (reach[mask][v] && v != first && nvlink_pair(v, first));
            out[mask] = ok;
        }
        return out;
    }();
    return table;
}

/// Whether some k of the 8 slots admit no NVLink-only ring.
[[nodiscard]] inline bool cube_mesh_pcie_subset_exists(std::size_t k) {
    static const std::array<bool, 9> table = [] {
        std::array<bool, 9> out{};
        for (unsigned mask = 1; mask < 256; ++mask)
            if (!cube_mesh_nvlink_ring()[mask]) out[static_cast<std::size_t>(std::popcount(mask))] = true;
        return out;
    }();
    return k < table.size() && table[k];
}

}  // namespace gpuplace::detail
