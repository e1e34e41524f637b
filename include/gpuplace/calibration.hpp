#pragma once
/// \file calibration.hpp
/// How well the ring all-reduce model reproduces the zoo's measurements (docs/fidelity.md): per
/// model and measured GPU count, the measured throughputs (consolidated in one node, spread one GPU
/// per node) and the ones RingAllReduce gives on the zoo's measurement cluster (8 nodes of 8 GPUs
/// with its reference bandwidths and latencies). gpuplace-eval --calibration and
/// `python -m gpuplace evaluate --calibration` print it.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "comm.hpp"
#include "model_zoo.hpp"
#include "topology.hpp"

namespace gpuplace {

/// One measured point of a zoo model and what the ring all-reduce model makes of it (steps/s).
struct calibration_row {
    std::string model;
    std::uint32_t gpus = 0;
    double measured_consolidated = 0, model_consolidated = 0;
    double measured_spread = 0, model_spread = 0;
    double max_error_percent = 0;  ///< the larger relative error of the two placements, in percent
};

/// The cluster zoo `z` was measured on: 8 servers of 8 GPUs, its reference bandwidths and
/// latencies inside a server and on the network between them.
[[nodiscard]] inline TreeTopology measurement_topology(const ModelZoo& z) {
    const auto& ref = z.reference();
    tree_params p;
    p.racks = 1;
    p.nodes_per_rack = 8;
    p.gpus_per_node = 8;
    p.node_bandwidth = ref.node_bandwidth;
    p.rack_bandwidth = p.spine_bandwidth = ref.network_bandwidth;
    p.node_latency = ref.node_latency;
    p.rack_latency = p.spine_latency = ref.network_latency;
    return TreeTopology(p);
}

/// Every measured point of zoo `z`, in model order.
[[nodiscard]] inline std::vector<calibration_row> calibration_rows(const ModelZoo& z) {
    const TreeTopology t = measurement_topology(z);
    const RingAllReduce c;
    std::vector<calibration_row> rows;
    for (std::size_t m = 0; m < z.size(); ++m)
        for (const auto& pt : z[model_id(m)].points) {
            std::vector<gpu_id> cons, spread;
            for (std::uint32_t i = 0; i < pt.gpus; ++i) {
                cons.push_back(i);
                spread.push_back(i * 8);
            }
            const double best = c.ideal_step_time(t, z, model_id(m), pt.gpus);
            const double tc = best * c.evaluate(t, z, model_id(m), cons).slowdown;
            const double ts = best * c.evaluate(t, z, model_id(m), spread).slowdown;
            const double ec = std::abs(1 / tc / pt.consolidated - 1), es = std::abs(1 / ts / pt.spread - 1);
            rows.push_back({z[model_id(m)].name, pt.gpus, pt.consolidated, 1 / tc, pt.spread, 1 / ts, 100 * std::max(ec, es)});
        }
    return rows;
}

}  // namespace gpuplace
