#pragma once
/// \file json/comm.hpp
/// JSON form of a communication model (gpuplace/comm.hpp): comm_config_from_json(), comm_from_json<C>(),
/// to_json().

#include <string_view>

#include "../comm.hpp"
#include "../config.hpp"
#include "parse.hpp"

namespace gpuplace {

namespace detail {
/// Reads the keys of comm model `model` (ring_allreduce: "model" only; tree_route: its weights).
inline void read_comm_keys(const json& j, std::string_view path, std::string_view model, comm_config& c) {
    if (model == TreeRouteCost::name) {
        check_keys(j, path, {"model", "gpu_weight", "pair_weight", "node_weight", "rack_weight", "slowdown_exponent"});
        auto number = [&](const char* key, std::optional<double>& out, double hi) {
            if (!j.contains(key)) return;
            out.emplace();
            read_number(j, path, key, *out, 0.0, hi);
        };
        number("gpu_weight", c.gpu_weight, 1e300);
        number("pair_weight", c.pair_weight, 1e300);
        number("node_weight", c.node_weight, 1e300);
        number("rack_weight", c.rack_weight, 1e300);
        number("slowdown_exponent", c.slowdown_exponent, 10.0);
    } else {
        check_keys(j, path, {"model"});
    }
}
}  // namespace detail

/// Reads a scenario's comm model: {"model": "ring_allreduce" (default) | "tree_route", and
/// tree_route's "gpu_weight", "pair_weight", "node_weight", "rack_weight" (>= 0),
/// "slowdown_exponent" (0..10)}.
[[nodiscard]] inline comm_config comm_config_from_json(const detail::json& j, std::string_view path = "/comm") {
    using namespace detail;
    if (!j.is_object()) config_fail(path, "expected an object, got " + short_dump(j));
    comm_config c;
    if (auto it = j.find("model"); it != j.end()) {
        // never a silent default for a model that is not a string
        if (!it->is_string()) config_fail(join_path(path, "model"), "expected a string, got " + short_dump(*it));
        c.model = it->get<std::string>();
    }
    if (c.model != RingAllReduce::name && c.model != TreeRouteCost::name)
        config_fail(join_path(path, "model"), "unknown model \"" + c.model + "\" (allowed: " + std::string(RingAllReduce::name) +
                                                   ", " + std::string(TreeRouteCost::name) + ")");
    read_comm_keys(j, path, c.model, c);
    if (c.model == TreeRouteCost::name) (void)TreeRouteCost::from_config(c, path);  // its checks, now
    return c;
}

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
[[nodiscard]] inline detail::json to_json(const comm_config& c) {
    detail::json j = {{"model", c.model}};
    for (const auto& [key, v] : c.weights())
        if (v) j[key] = *v;
    return j;
}
[[nodiscard]] inline detail::json to_json(const RingAllReduce&) { return {{"model", RingAllReduce::name}}; }
[[nodiscard]] inline detail::json to_json(const TreeRouteCost& c) {
    return {{"model", TreeRouteCost::name}, {"gpu_weight", c.gpu_weight},   {"pair_weight", c.pair_weight},
            {"node_weight", c.node_weight}, {"rack_weight", c.rack_weight}, {"slowdown_exponent", c.slowdown_exponent}};
}

}  // namespace gpuplace
