#pragma once
/// \file any_policy.hpp
/// A type-erased policy for an env type (any_policy), the queue policies a policy may run under
/// (queue_names(), apply_queue()), and wrap_policy() for a heuristic type: what the evaluation
/// harness (evaluate.hpp) runs and the heuristic registry (heuristic_registry.hpp) makes.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "error.hpp"
#include "policy.hpp"

namespace gpuplace {

/// A type-erased policy for env type E, built per episode by a factory (so episodes can run in
/// parallel without sharing state).
template <class E>
struct any_policy {
    std::string name;
    std::function<std::function<std::int64_t(const E&)>(std::uint64_t seed)> make;  ///< seed -> act function
    std::string queue;  ///< queue policy to run under (see apply_queue); empty = the scenario's
};

/// Names of the queue policies: "fifo" (strict head-of-line FIFO), "backfill" (FIFO order, any
/// waiting job that fits may start), "sjf" (shortest ideal duration first, with backfill),
/// "fewest_gpus" (smallest request first, with backfill).
[[nodiscard]] inline std::vector<std::string> queue_names() { return {"fifo", "backfill", "sjf", "fewest_gpus"}; }

/// Sets the scenario's queue order and backfill from a queue policy name (ConfigError otherwise).
inline void apply_queue(scenario& s, std::string_view queue) {
    if (queue.empty()) return;
    if (queue == "fifo") s.env.order = queue_order::fifo, s.env.backfill = false;
    else if (queue == "backfill") s.env.order = queue_order::fifo, s.env.backfill = true;
    else if (queue == "sjf") s.env.order = queue_order::sjf, s.env.backfill = true;
    else if (queue == "fewest_gpus") s.env.order = queue_order::fewest_gpus, s.env.backfill = true;
    else
        throw ConfigError("unknown queue policy \"" + std::string(queue) + "\" (known: fifo, backfill, sjf, fewest_gpus)");
}

/// Wraps a Policy type (default-constructible, reset(seed) per episode) as an any_policy.
template <class E, class P>
[[nodiscard]] any_policy<E> wrap_policy(std::string name) {
    return {std::move(name), [](std::uint64_t seed) {
                auto p = std::make_shared<P>();
                p->reset(seed);
                return std::function<std::int64_t(const E&)>([p](const E& e) { return gpuplace::act(e, *p); });
            },
            {}};
}

}  // namespace gpuplace
