#pragma once
/// \file json/impl/zoo_inl.hpp
/// The definitions json/zoo.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "../../data.hpp"
#include "../../detail/input_file.hpp"
#include "../../model_zoo.hpp"
#include "../parse.hpp"
#include "../zoo.hpp"

namespace gpuplace {

GPUPLACE_INLINE ModelZoo detail::zoo_models_from_json(const json& j, std::string_view path, measurement_cluster ref,
                                                   const std::string& gpu_type, const ModelZoo* reference) {
    auto mit = j.find("models");
    const auto mpath = join_path(path, "models");
    if (mit == j.end() || !mit->is_array() || mit->empty()) config_fail(mpath, "expected a non-empty array of models");
    std::vector<ModelProfile> models;
    for (std::size_t i = 0; i < mit->size(); ++i) {
        const auto& mj = (*mit)[i];
        const auto p = join_path(mpath, std::to_string(i));
        check_keys(mj, p, {"name", "memory_gb", "throughput", "notes"});
        ModelProfile mp;
        if (!mj.contains("name")) config_fail(p, "missing key \"name\"");
        read_string(mj, p, "name", mp.name);
        if (reference) {  // a GPU type's models: the reference type's, in order, with their memory
            if (i >= reference->size() || (*reference)[model_id(i)].name != mp.name)
                config_fail(join_path(p, "name"), "\"" + mp.name + "\": expected " +
                                                      (i < reference->size() ? "\"" + (*reference)[model_id(i)].name + "\"" : std::string("no more models")) +
                                                      " (a type lists the reference type's models, in order)");
            if (mj.contains("memory_gb")) config_fail(join_path(p, "memory_gb"), "a GPU type's model takes the reference type's memory");
            mp.memory_gb = (*reference)[model_id(i)].memory_gb;
        }
        read_number(mj, p, "memory_gb", mp.memory_gb, 0.0, 1e6);
        auto tit = mj.find("throughput");
        const auto tp = join_path(p, "throughput");
        if (tit == mj.end() || !tit->is_object() || tit->empty()) config_fail(tp, "expected an object {\"<gpus>\": [consolidated, spread]}");
        for (auto e = tit->begin(); e != tit->end(); ++e) {
            const auto ep = join_path(tp, e.key());
            std::uint32_t k = 0;
            try {
                std::size_t pos = 0;
                const long v = std::stol(e.key(), &pos);
                if (pos != e.key().size() || v < 1 || v > 65536) throw std::invalid_argument("");
                k = static_cast<std::uint32_t>(v);
            } catch (const std::exception&) {
                config_fail(ep, "GPU count \"" + e.key() + "\" is not an integer in [1, 65536]");
            }
            const auto& v = e.value();
            if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
                config_fail(ep, "expected [consolidated, spread] steps/s, got " + short_dump(v));
            const double c = v[0].get<double>(), s = v[1].get<double>();
            if (!(c > 0) || !(s > 0)) config_fail(ep, "throughputs must be > 0, got " + short_dump(v));
            mp.points.push_back({k, c, s});
        }
        std::sort(mp.points.begin(), mp.points.end(), [](auto& a, auto& b) { return a.gpus < b.gpus; });
        models.push_back(std::move(mp));
    }
    const ModelZoo checked(models, ref, gpu_type, {}, std::string(path));  // the models' errors before the pairs'
    auto cit = j.find("colocation");
    if (cit == j.end()) return checked;
    const auto cpath = join_path(path, "colocation");
    const auto& c = *cit;
    if (!c.is_object()) config_fail(cpath, "expected an object {\"<model>\": {\"<other>\": [self, other]}}, got " + short_dump(c));
    const std::size_t n = models.size();
    std::vector<std::array<double, 2>> pairs(n * n, std::array<double, 2>{-1.0, -1.0});
    auto id = [&](const std::string& name, const std::string& p) -> std::size_t {
        for (std::size_t i = 0; i < n; ++i)
            if (models[i].name == name) return i;
        config_fail(p, "unknown model \"" + name + "\"");
    };
    for (auto a = c.begin(); a != c.end(); ++a) {
        const auto pa = join_path(cpath, a.key());
        const auto ia = id(a.key(), pa);
        if (!a->is_object()) config_fail(pa, "expected an object, got " + short_dump(*a));
        for (auto b = a->begin(); b != a->end(); ++b) {
            const auto pb = join_path(pa, b.key());
            const auto ib = id(b.key(), pb);
            const auto& v = b.value();
            if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() || v[0].get<double>() < 0 ||
                v[1].get<double>() < 0)
                config_fail(pb, "expected [self, other] steps/s >= 0, got " + short_dump(v));
            pairs[ia * n + ib] = {v[0].get<double>(), v[1].get<double>()};
        }
    }
    return ModelZoo(std::move(models), ref, gpu_type, std::move(pairs), std::string(path));
}

GPUPLACE_INLINE ModelZoo zoo_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"gpu_type", "reference", "models", "source", "license", "notes", "colocation", "types"});
    measurement_cluster ref;
    if (auto it = j.find("reference"); it != j.end()) {
        const auto p = join_path(path, "reference");
        check_keys(*it, p, {"node_bandwidth", "network_bandwidth", "node_latency", "network_latency"});
        read_number(*it, p, "node_bandwidth", ref.node_bandwidth, 1e-9);
        read_number(*it, p, "network_bandwidth", ref.network_bandwidth, 1e-9);
        read_number(*it, p, "node_latency", ref.node_latency, 0.0);
        read_number(*it, p, "network_latency", ref.network_latency, 0.0);
    }
    std::string gpu_type = "v100";
    read_string(j, path, "gpu_type", gpu_type);
    const auto zoo = zoo_models_from_json(j, path, ref, gpu_type, nullptr);
    auto tit = j.find("types");
    if (tit == j.end()) return zoo;
    const auto tpath = join_path(path, "types");
    if (!tit->is_array()) config_fail(tpath, "expected an array [{\"gpu_type\", \"models\", \"colocation\"}], got " + short_dump(*tit));
    std::vector<ModelZoo> types;
    for (std::size_t i = 0; i < tit->size(); ++i) {
        const auto& t = (*tit)[i];
        const auto p = join_path(tpath, std::to_string(i));
        if (!t.is_object()) config_fail(p, "expected an object {\"gpu_type\", \"models\", \"colocation\"}, got " + short_dump(t));
        check_keys(t, p, {"gpu_type", "models", "colocation", "notes"});
        if (!t.contains("gpu_type")) config_fail(p, "missing key \"gpu_type\"");
        std::string name;
        read_string(t, p, "gpu_type", name);
        if (name == gpu_type) config_fail(join_path(p, "gpu_type"), "the reference type \"" + gpu_type + "\" is not listed under types");
        types.push_back(zoo_models_from_json(t, p, ref, name, &zoo));
    }
    return zoo.with_types(std::move(types), "config " + std::string(tpath));
}

GPUPLACE_INLINE ModelZoo load_zoo(const std::string& path) {
    const std::string file = resolve_data_path(path);
    std::string text;
    if (!detail::read_input_file<ConfigError>(file, text, display_path(file), "model zoo: "))
        throw ConfigError("model zoo: cannot open \"" + display_path(file) + "\"");
    return zoo_from_json(detail::parse_json(text, file), file + ":");
}

GPUPLACE_INLINE detail::json to_json(const ModelZoo& z) {
    const auto& r = z.reference();
    detail::json j = {{"gpu_type", z.gpu_type()},
                      {"reference",
                       {{"node_bandwidth", r.node_bandwidth},
                        {"network_bandwidth", r.network_bandwidth},
                        {"node_latency", r.node_latency},
                        {"network_latency", r.network_latency}}}};
    auto models_of = [](const ModelZoo& tz, detail::json& out, bool memory) {
        auto& models = out["models"] = detail::json::array();
        for (const auto& m : tz.models()) {
            detail::json t = detail::json::object();
            for (const auto& p : m.points) t[std::to_string(p.gpus)] = {p.consolidated, p.spread};
            if (memory) models.push_back({{"name", m.name}, {"memory_gb", m.memory_gb}, {"throughput", t}});
            else models.push_back({{"name", m.name}, {"throughput", t}});
        }
        if (tz.has_colocation()) {
            auto& c = out["colocation"] = detail::json::object();
            for (std::size_t a = 0; a < tz.size(); ++a)
                for (std::size_t b = 0; b < tz.size(); ++b)
                    if (const auto p = tz.colocation(model_id(a), model_id(b)); p[0] >= 0)
                        c[tz[model_id(a)].name][tz[model_id(b)].name] = {p[0], p[1]};
        }
    };
    models_of(z, j, true);
    for (std::size_t t = 1; t < z.num_types(); ++t) {
        detail::json tj = {{"gpu_type", z.of_type(t).gpu_type()}};
        models_of(z.of_type(t), tj, false);
        j["types"].push_back(std::move(tj));
    }
    return j;
}

}  // namespace gpuplace
