#pragma once
/// \file json/impl/tenancy_inl.hpp
/// The definitions json/tenancy.hpp declares: included by it in the header-only library, compiled
/// once into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../tenancy.hpp"
#include "../parse.hpp"
#include "../tenancy.hpp"

namespace gpuplace {

namespace detail {
/// Reads {"<name>": number, ...} at obj[key] (if present): each number finite and in [lo, hi]
/// (above lo when `open_lo`).
inline void read_named_numbers(const json& obj, std::string_view path, const char* key, std::vector<std::pair<std::string, double>>& out,
                               double lo, double hi, bool open_lo) {
    auto it = obj.find(key);
    if (it == obj.end()) return;
    const auto p = join_path(path, key);
    if (!it->is_object()) config_fail(p, "expected an object of tenant names to numbers, got " + short_dump(*it));
    out.clear();
    for (auto e = it->begin(); e != it->end(); ++e) {
        const auto pe = join_path(p, e.key());
        if (!e->is_number()) config_fail(pe, "expected a number, got " + short_dump(*e));
        const double v = e->get<double>();
        if (!std::isfinite(v) || v < lo || v > hi || (open_lo && v == lo))
            config_fail(pe, "value " + short_dump(*e) + " out of range " + (open_lo ? "(" : "[") + json(lo).dump() + ", " + json(hi).dump() + "]");
        out.emplace_back(e.key(), v);
    }
}
inline void read_field_name(const json& obj, std::string_view path, std::string& out) {
    read_string(obj, path, "field", out);
    if (out.empty()) config_fail(join_path(path, "field"), "expected the name of a declared job field, got \"\"");
}
}  // namespace detail

GPUPLACE_INLINE tenants_config tenants_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"enabled", "field", "quotas", "share", "weights"});
    tenants_config t;
    t.enabled = true;
    read_bool(j, path, "enabled", t.enabled);
    read_field_name(j, path, t.field);
    read_bool(j, path, "share", t.share);
    read_named_numbers(j, path, "quotas", t.quotas, 0.0, t.share ? 1.0 : 1e9, false);
    read_named_numbers(j, path, "weights", t.weights, 0.0, 1e9, true);
    if (t.share) {
        double sum = 0;
        for (const auto& [n, v] : t.quotas) sum += v;
        if (sum > 1.0 + 1e-9) config_fail(join_path(path, "quotas"), "shares sum to " + json(sum).dump() + ", more than the whole cluster (1)");
    }
    return t;
}

GPUPLACE_INLINE detail::json to_json(const tenants_config& t) {
    detail::json q = detail::json::object(), w = detail::json::object();
    for (const auto& [n, v] : t.quotas) q[n] = v;
    for (const auto& [n, v] : t.weights) w[n] = v;
    detail::json j = {{"enabled", t.enabled}, {"field", t.field}, {"quotas", q}, {"share", t.share}};
    if (!t.weights.empty()) j["weights"] = w;
    return j;
}

GPUPLACE_INLINE spot_config spot_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"enabled", "field", "value"});
    spot_config s;
    s.enabled = true;
    read_bool(j, path, "enabled", s.enabled);
    read_field_name(j, path, s.field);
    read_string(j, path, "value", s.value);
    if (s.value.empty()) config_fail(join_path(path, "value"), "expected the category that marks a spot job, got \"\"");
    return s;
}

GPUPLACE_INLINE detail::json to_json(const spot_config& s) { return {{"enabled", s.enabled}, {"field", s.field}, {"value", s.value}}; }

GPUPLACE_INLINE deadlines_config deadlines_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"enabled", "field", "factor"});
    deadlines_config d;
    d.enabled = true;
    read_bool(j, path, "enabled", d.enabled);
    read_field_name(j, path, d.field);
    if (auto it = j.find("factor"); it != j.end()) {
        const auto p = join_path(path, "factor");
        if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !(*it)[1].is_number())
            config_fail(p, "expected [lo, hi], two numbers, got " + short_dump(*it));
        const double lo = (*it)[0].get<double>(), hi = (*it)[1].get<double>();
        if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi))
            config_fail(p, "expected 0 < lo <= hi (finite), got " + short_dump(*it));
        d.factor_lo = lo;
        d.factor_hi = hi;
    }
    return d;
}

GPUPLACE_INLINE detail::json to_json(const deadlines_config& d) {
    return {{"enabled", d.enabled}, {"field", d.field}, {"factor", {d.factor_lo, d.factor_hi}}};
}

}  // namespace gpuplace
