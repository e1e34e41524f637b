#pragma once
/// \file json/impl/information_inl.hpp
/// The definitions json/information.hpp declares: included by it in the header-only library, compiled
/// once into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <string>
#include <string_view>

#include "../../information.hpp"
#include "../information.hpp"
#include "../parse.hpp"

namespace gpuplace {

namespace detail {
/// Reads enum E at obj[key] (if present) by its name, or fails naming the allowed ones.
template <class E>
void read_enum(const json& obj, std::string_view path, const char* key, E& out) {
    std::string name(enum_name(out));
    read_string(obj, path, key, name);
    if (const auto e = enum_from_name<E>(name)) out = *e;
    else config_fail(join_path(path, key), "unknown value \"" + name + "\" (allowed: " + enum_name_list<E>() + ")");
}
}  // namespace detail

GPUPLACE_INLINE durations_config durations_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"mode", "error", "sigma", "sample_files"});
    durations_config d;
    read_enum(j, path, "mode", d.mode);
    read_enum(j, path, "error", d.error);
    read_number(j, path, "sigma", d.sigma, 0.0, 10.0);
    if (auto it = j.find("sample_files"); it != j.end()) {
        const auto p = join_path(path, "sample_files");
        if (!it->is_array()) config_fail(p, "expected a list of trace files, got " + short_dump(*it));
        for (std::size_t i = 0; i < it->size(); ++i) {
            if (!(*it)[i].is_string() || (*it)[i].get<std::string>().empty())
                config_fail(p + "/" + std::to_string(i), "expected a file name, got " + short_dump((*it)[i]));
            d.sample_files.push_back((*it)[i].get<std::string>());
        }
    }
    return d;
}

GPUPLACE_INLINE detail::json to_json(const durations_config& d) {
    detail::json j = {{"mode", to_string(d.mode)}, {"error", to_string(d.error)}, {"sigma", d.sigma}};
    if (!d.sample_files.empty()) j["sample_files"] = d.sample_files;
    return j;
}

GPUPLACE_INLINE preemption_config preemption_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"enabled", "restart_overhead", "checkpoint_interval", "round", "thresholds", "starvation", "gittins_quantum"});
    preemption_config p;
    read_bool(j, path, "enabled", p.enabled);
    read_number(j, path, "restart_overhead", p.restart_overhead, 0.0, 1e7);
    read_number(j, path, "checkpoint_interval", p.checkpoint_interval, 0.0, 1e9);
    read_number(j, path, "round", p.round, 0.0, 1e9);
    read_number(j, path, "starvation", p.starvation, 0.0, 1e6);
    read_number(j, path, "gittins_quantum", p.gittins_quantum, 1e-9, 1e12);
    if (auto it = j.find("thresholds"); it != j.end()) {
        const auto pp = join_path(path, "thresholds");
        if (!it->is_array() || it->empty())
            config_fail(pp, "expected a list of one or more GPU-seconds (e.g. [3250, 7200]), got " + short_dump(*it));
        p.thresholds.clear();
        for (std::size_t i = 0; i < it->size(); ++i) {
            const auto& v = (*it)[i];
            if (!v.is_number() || !(v.get<double>() > 0) || (i > 0 && !(v.get<double>() > p.thresholds.back())))
                config_fail(pp + "/" + std::to_string(i), "expected a number of GPU-seconds above the one before, got " + short_dump(v));
            p.thresholds.push_back(v.get<double>());
        }
    }
    return p;
}

GPUPLACE_INLINE detail::json to_json(const preemption_config& p) {
    return {{"enabled", p.enabled}, {"restart_overhead", p.restart_overhead}, {"checkpoint_interval", p.checkpoint_interval},
            {"round", p.round}, {"thresholds", p.thresholds}, {"starvation", p.starvation}, {"gittins_quantum", p.gittins_quantum}};
}

GPUPLACE_INLINE rounds_config rounds_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"enabled", "policy", "length", "min_reset_interval", "restore", "elastic"});
    rounds_config r;
    read_bool(j, path, "enabled", r.enabled);
    read_string(j, path, "policy", r.policy);
    read_number(j, path, "length", r.length, 1e-3, 1e9);
    read_number(j, path, "min_reset_interval", r.min_reset_interval, 0.0, 1e12);
    if (auto it = j.find("restore"); it != j.end()) {
        const auto rp = join_path(path, "restore");
        check_keys(*it, rp, {"seconds", "per_gb", "models"});
        read_number(*it, rp, "seconds", r.restore.seconds, 0.0, 1e7);
        read_number(*it, rp, "per_gb", r.restore.per_gb, 0.0, 1e7);
        if (auto m = it->find("models"); m != it->end()) {
            const auto mp = join_path(rp, "models");
            if (!m->is_object()) config_fail(mp, "expected an object of model name: seconds, got " + short_dump(*m));
            for (const auto& [name, v] : m->items()) {
                if (!v.is_number() || !(v.get<double>() >= 0) || !(v.get<double>() <= 1e7))
                    config_fail(mp + "/" + name, "expected seconds in [0, 1e7], got " + short_dump(v));
                r.restore.models.emplace_back(name, v.get<double>());
            }
        }
    }
    if (auto it = j.find("elastic"); it != j.end()) {
        const auto ep = join_path(path, "elastic");
        check_keys(*it, ep, {"share", "min_scale", "max_scale"});
        read_number(*it, ep, "share", r.elastic.share, 0.0, 1.0);
        read_number(*it, ep, "min_scale", r.elastic.min_scale, 0.0, 1.0);
        read_number(*it, ep, "max_scale", r.elastic.max_scale, 1.0, 1024.0);
    }
    return r;
}

GPUPLACE_INLINE detail::json to_json(const rounds_config& r) {
    detail::json models = detail::json::object();
    for (const auto& [name, secs] : r.restore.models) models[name] = secs;
    detail::json j = {{"enabled", r.enabled},
            {"policy", r.policy},
            {"length", r.length},
            {"min_reset_interval", r.min_reset_interval},
            {"restore", {{"seconds", r.restore.seconds}, {"per_gb", r.restore.per_gb}, {"models", models}}}};
    if (!(r.elastic == elastic_config{}))  // written when set: other scenarios' JSON is unchanged
        j["elastic"] = {{"share", r.elastic.share}, {"min_scale", r.elastic.min_scale}, {"max_scale", r.elastic.max_scale}};
    return j;
}

}  // namespace gpuplace
