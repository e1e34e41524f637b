#pragma once
/// \file json/comm.hpp
/// JSON form of a communication model (gpuplace/comm.hpp): comm_config_from_json(), comm_from_json<C>(),
/// to_json().

#include <string_view>

#include "../comm.hpp"
#include "../compiled.hpp"
#include "../config.hpp"
#include "parse.hpp"

namespace gpuplace {

namespace detail {
/// Reads the keys of comm model `model` (ring_allreduce: "model" only; tree_route: its weights).
GPUPLACE_INLINE void read_comm_keys(const json& j, std::string_view path, std::string_view model, comm_config& c);
}  // namespace detail

/// Reads a scenario's comm model: {"model": "ring_allreduce" (default) | "tree_route", and
/// tree_route's "gpu_weight", "pair_weight", "node_weight", "rack_weight" (>= 0),
/// "slowdown_exponent" (0..10)}.
[[nodiscard]] GPUPLACE_INLINE comm_config comm_config_from_json(const detail::json& j, std::string_view path = "/comm");

/// Reads comm model C from the keys C takes (the "model" key is not checked). A user's comm model
/// with a from_json(const json&, C&) hook of its own (nlohmann's ADL form) is read by it instead.
template <class C>
[[nodiscard]] C comm_from_json(const detail::json& j, std::string_view path = "/comm") {
    if constexpr (requires(C& m) { from_json(j, m); }) {
        C m{};
        from_json(j, m);
        return m;
    } else {
        comm_config c;
        c.model = std::string(C::name);
        detail::read_comm_keys(j, path, C::name, c);
        return C::from_config(c, path);
    }
}

/// The model and the keys a comm config sets.
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const comm_config& c);
[[nodiscard]] inline detail::json to_json(const RingAllReduce&) { return {{"model", RingAllReduce::name}}; }
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const TreeRouteCost& c);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/comm_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
