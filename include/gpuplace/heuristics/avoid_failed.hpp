#pragma once
/// \file heuristics/avoid_failed.hpp
/// A failure-aware placer: pack, on the GPUs whose unit (node, or GPU) has not failed recently.

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "../topology.hpp"
#include "pack.hpp"
#include "placer.hpp"

namespace gpuplace {

/// Pack (best fit) on the GPUs whose unit has not failed within the last `window` seconds,
/// when those can hold the job; else pack on every GPU the mask allows. Where a unit's hazard
/// falls with its age since repair (Weibull shape < 1, as node failures of HPC and ML clusters
/// were fit; docs/realities.md), a repaired unit fails again sooner than one that has run long,
/// and a job kept off it is interrupted less. Without failures (the view has none) it is pack.
/// O(G) per plan on top of pack's.
class avoid_failed_policy : public whole_placer<avoid_failed_policy> {
public:
    static constexpr std::string_view name = "avoid_failed";
    /// `window_hours`: how long after a failure a unit is avoided (24 h by default).
    explicit avoid_failed_policy(double window_hours = 24.0) : window_(window_hours * 3600.0) {}
    void reset(std::uint64_t seed) { pack_.reset(seed); }
    void reserve(const level_hierarchy& h) {
        reserve_plan(h);
        pack_.reserve(h);
        mask_.reserve(h.num_gpus());
    }
    template <Topology T>
    void reserve(const T& t) { reserve(t.hierarchy()); }

    template <class V>
    bool plan(const V& v, std::vector<gpu_id>& out) {
        const auto f = v.failures();
        if (!f) return pack_.plan(v, out);
        const auto mask = v.mask();
        mask_.assign(mask.begin(), mask.end());
        const double now = v.simulator().now();
        std::size_t left = 0;
        for (std::size_t g = 0; g < mask_.size(); ++g) {
            if (mask_[g] && now - f.last_failure(f.unit_of(gpu_id(g))) < window_) mask_[g] = 0;
            left += mask_[g];
        }
        if (left >= v.remaining()) return pack_.plan(v.with_mask(mask_), out);
        return pack_.plan(v, out);
    }

private:
    double window_;
    pack_policy pack_;
    std::vector<std::uint8_t> mask_;
};

}  // namespace gpuplace
