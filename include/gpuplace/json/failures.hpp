#pragma once
/// \file json/failures.hpp
/// JSON form of a scenario's failures (gpuplace/failures.hpp): the "failures" key.

#include <string>
#include <string_view>

#include "../failures.hpp"
#include "util.hpp"

namespace gpuplace {

/// Reads {"enabled", "scope": "node"|"gpu", "mtbf_hours", "repair_hours", "distribution":
/// "exponential"|"weibull", "shape", "restart_overhead", "checkpoint_interval": seconds or
/// "young_daly", "checkpoint_cost"}. Errors name the JSON path and the value.
[[nodiscard]] inline failures_config failures_from_json(const detail::json& j, std::string_view path = "/failures") {
    using namespace detail;
    check_keys(j, path, {"enabled", "scope", "mtbf_hours", "repair_hours", "distribution", "shape", "restart_overhead",
                         "checkpoint_interval", "checkpoint_cost"});
    failures_config f;
    read_bool(j, path, "enabled", f.enabled);
    const auto name = [&](const char* key, auto& out) {
        auto it = j.find(key);
        if (it == j.end()) return;
        using E = std::decay_t<decltype(out)>;
        if (it->is_string())
            if (const auto v = enum_from_name<E>(it->template get<std::string>())) {
                out = *v;
                return;
            }
        config_fail(join_path(path, key), "unknown value " + short_dump(*it) + " (allowed: " + enum_name_list<E>() + ")");
    };
    name("scope", f.scope);
    name("distribution", f.distribution);
    read_number(j, path, "mtbf_hours", f.mtbf_hours, 1e-6, 1e9);
    read_number(j, path, "repair_hours", f.repair_hours, 0.0, 1e6);
    read_number(j, path, "shape", f.shape, 1e-3, 100.0);
    read_number(j, path, "restart_overhead", f.restart_overhead, 0.0, 1e7);
    read_number(j, path, "checkpoint_cost", f.checkpoint_cost, 0.0, 1e7);
    if (auto it = j.find("checkpoint_interval"); it != j.end()) {
        if (it->is_string() && it->get<std::string>() == "young_daly") f.young_daly = true;
        else if (it->is_string())
            config_fail(join_path(path, "checkpoint_interval"), "expected seconds or \"young_daly\", got " + short_dump(*it));
        else read_number(j, path, "checkpoint_interval", f.checkpoint_interval, 0.0, 1e9);
    }
    check_failures(f, path);
    return f;
}

[[nodiscard]] inline detail::json to_json(const failures_config& f) {
    detail::json j = {{"enabled", f.enabled},
                      {"scope", to_string(f.scope)},
                      {"mtbf_hours", f.mtbf_hours},
                      {"repair_hours", f.repair_hours},
                      {"distribution", to_string(f.distribution)},
                      {"shape", f.shape},
                      {"restart_overhead", f.restart_overhead},
                      {"checkpoint_cost", f.checkpoint_cost}};
    if (f.young_daly) j["checkpoint_interval"] = "young_daly";
    else j["checkpoint_interval"] = f.checkpoint_interval;
    return j;
}

}  // namespace gpuplace
