#pragma once
/// \file json/impl/comm_inl.hpp
/// The definitions json/comm.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <string_view>

#include "../../comm.hpp"
#include "../../config.hpp"
#include "../parse.hpp"
#include "../comm.hpp"

namespace gpuplace {

GPUPLACE_INLINE void detail::read_comm_keys(const json& j, std::string_view path, std::string_view model, comm_config& c) {
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

GPUPLACE_INLINE comm_config comm_config_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    if (!j.is_object()) config_fail(path, "expected an object, got " + short_dump(j));
    comm_config c;
    if (auto it = j.find("model"); it != j.end()) {
        // never a silent default for a model that is not a string
        if (!it->is_string()) config_fail(join_path(path, "model"), "expected a string, got " + short_dump(*it));
        c.model = it->get<std::string>();
    }
    if (c.model != RingAllReduce::name && c.model != TreeRouteCost::name && !find_comm_model(c.model))
        config_fail(join_path(path, "model"), "unknown model \"" + c.model + "\" (allowed: " + std::string(RingAllReduce::name) +
                                                   ", " + std::string(TreeRouteCost::name) + registered_comm_names() + ")");
    read_comm_keys(j, path, c.model, c);
    if (c.model == TreeRouteCost::name) (void)TreeRouteCost::from_config(c, path);  // its checks, now
    return c;
}

GPUPLACE_INLINE detail::json to_json(const comm_config& c) {
    detail::json j = {{"model", c.model}};
    for (const auto& [key, v] : c.weights())
        if (v) j[key] = *v;
    return j;
}

GPUPLACE_INLINE detail::json to_json(const TreeRouteCost& c) {
    return {{"model", TreeRouteCost::name}, {"gpu_weight", c.gpu_weight},   {"pair_weight", c.pair_weight},
            {"node_weight", c.node_weight}, {"rack_weight", c.rack_weight}, {"slowdown_exponent", c.slowdown_exponent}};
}

}  // namespace gpuplace
