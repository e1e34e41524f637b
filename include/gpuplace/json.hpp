#pragma once
/// \file json.hpp
/// JSON forms of scenarios and their parts (topology, communication model, model zoo, workload,
/// co-location) and of results (metrics, evaluation reports), with nlohmann::json:
///  - reading: every key optional unless said, unknown keys and bad values are ConfigErrors naming
///    the JSON path and the value (e.g. "config /topology/racks: value 0 out of range [1, 65536]");
///  - writing: to_json(x), which the reader reads back to the same value;
///  - scenario files and text: load_scenario(), parse_scenario(); the preset scenarios.
/// Including this header anywhere in a program also lets envs read the JSON files a scenario may
/// name (a zoo file, a co-location profile): see detail::json_readers(). The rest of the library
/// does not parse JSON, so that it is cheap to include.

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "colocation.hpp"
#include "comm.hpp"
#include "config.hpp"
#include "data.hpp"
#include "detail/input_file.hpp"
#include "detail/json_util.hpp"
#include "evaluate.hpp"
#include "metrics.hpp"
#include "model_zoo.hpp"
#include "topology.hpp"
#include "trace.hpp"
#include "workload.hpp"

namespace gpuplace {

// ---- topology -----------------------------------------------------------------------------------

/// Reads a topology config: {"preset": "dgx_a100"|"dgx1"|"proximity_drl"|"custom", "racks",
/// "nodes_per_rack", "gpus_per_node", "node_bandwidth", "rack_bandwidth", "spine_bandwidth",
/// "node_latency", "rack_latency", "spine_latency", "fabric": "switched"|"cube_mesh",
/// "pcie_bandwidth", "gpu_types": a type name (every node) or an array of them, one per rack or one
/// per node (names of the model zoo's GPU types, e.g. "v100")}. Keys after the preset override it.
[[nodiscard]] inline topology_config topology_config_from_json(const detail::json& j, std::string_view path = "/topology") {
    using namespace detail;
    check_keys(j, path,
               {"preset", "racks", "nodes_per_rack", "gpus_per_node", "node_bandwidth", "rack_bandwidth", "spine_bandwidth",
                "node_latency", "rack_latency", "spine_latency", "fabric", "pcie_bandwidth", "gpu_types"});
    topology_config c;
    if (auto it = j.find("gpu_types"); it != j.end()) {
        const auto p = join_path(path, "gpu_types");
        c.gpu_types.emplace();
        if (it->is_string()) c.gpu_types->push_back(it->get<std::string>());
        else if (it->is_array() && !it->empty()) {
            for (std::size_t i = 0; i < it->size(); ++i) {
                if (!(*it)[i].is_string()) config_fail(join_path(p, std::to_string(i)), "expected a GPU type name, got " + short_dump((*it)[i]));
                c.gpu_types->push_back((*it)[i].get<std::string>());
            }
        } else
            config_fail(p, "expected a GPU type name or a non-empty array of them (one per rack or per node), got " + short_dump(*it));
    }
    auto str = [&](const char* key, std::optional<std::string>& out) {
        if (!j.contains(key)) return;
        out.emplace();
        read_string(j, path, key, *out);
    };
    auto integer = [&](const char* key, std::optional<std::size_t>& out, long long hi) {
        if (!j.contains(key)) return;
        out.emplace();
        read_int(j, path, key, *out, 1, hi);
    };
    auto number = [&](const char* key, std::optional<double>& out, double lo) {
        if (!j.contains(key)) return;
        out.emplace();
        read_number(j, path, key, *out, lo);
    };
    str("preset", c.preset);
    integer("racks", c.racks, 1 << 16);
    integer("nodes_per_rack", c.nodes_per_rack, 1 << 16);
    integer("gpus_per_node", c.gpus_per_node, 1 << 12);
    number("node_bandwidth", c.node_bandwidth, 1e-9);
    number("rack_bandwidth", c.rack_bandwidth, 1e-9);
    number("spine_bandwidth", c.spine_bandwidth, 1e-9);
    number("pcie_bandwidth", c.pcie_bandwidth, 1e-9);
    number("node_latency", c.node_latency, 0.0);
    number("rack_latency", c.rack_latency, 0.0);
    number("spine_latency", c.spine_latency, 0.0);
    str("fabric", c.fabric);
    return c;
}

/// Reads a topology (see topology_config_from_json()).
[[nodiscard]] inline TreeTopology topology_from_json(const detail::json& j, std::string_view path = "/topology") {
    return TreeTopology::from_config(topology_config_from_json(j, path), path);
}

/// The keys a topology config sets.
[[nodiscard]] inline detail::json to_json(const topology_config& c) {
    detail::json j = detail::json::object();
    auto put = [&](const char* key, const auto& v) {
        if (v) j[key] = *v;
    };
    put("preset", c.preset);
    put("racks", c.racks);
    put("nodes_per_rack", c.nodes_per_rack);
    put("gpus_per_node", c.gpus_per_node);
    put("node_bandwidth", c.node_bandwidth);
    put("rack_bandwidth", c.rack_bandwidth);
    put("spine_bandwidth", c.spine_bandwidth);
    put("node_latency", c.node_latency);
    put("rack_latency", c.rack_latency);
    put("spine_latency", c.spine_latency);
    put("fabric", c.fabric);
    put("pcie_bandwidth", c.pcie_bandwidth);
    put("gpu_types", c.gpu_types);
    return j;
}

/// The JSON that topology_from_json() reads back to an equal topology.
[[nodiscard]] inline detail::json to_json(const TreeTopology& t) {
    const auto& p = t.params();
    detail::json j = {{"preset", "custom"},
            {"racks", p.racks},
            {"nodes_per_rack", p.nodes_per_rack},
            {"gpus_per_node", p.gpus_per_node},
            {"node_bandwidth", p.node_bandwidth},
            {"rack_bandwidth", p.rack_bandwidth},
            {"spine_bandwidth", p.spine_bandwidth},
            {"node_latency", p.node_latency},
            {"rack_latency", p.rack_latency},
            {"spine_latency", p.spine_latency},
            {"fabric", p.fabric == node_fabric::cube_mesh ? "cube_mesh" : "switched"},
            {"pcie_bandwidth", p.pcie_bandwidth}};
    if (!p.node_types.empty()) j["gpu_types"] = p.node_types;
    return j;
}

// ---- communication models -------------------------------------------------------------------------

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

/// Reads comm model C from the keys C takes (the "model" key is not checked).
template <class C>
[[nodiscard]] C comm_from_json(const detail::json& j, std::string_view path = "/comm") {
    comm_config c;
    c.model = std::string(C::name);
    detail::read_comm_keys(j, path, C::name, c);
    return C::from_config(c, path);
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

// ---- model zoo ----------------------------------------------------------------------------------

/// Reads a zoo: {"gpu_type", "reference": {node_bandwidth, network_bandwidth, node_latency,
/// network_latency}, "models": [{"name", "memory_gb", "throughput": {"<gpus>": [consolidated,
/// spread], ...}}, ...], "colocation": {"<model>": {"<other>": [self, other]}}, "types": [{"gpu_type",
/// "models": [{"name", "throughput"}, ...], "colocation"}, ...]} ("source", "license" and "notes"
/// are allowed and ignored). A type under "types" lists the reference type's models in
/// order (their memory is the reference type's). Errors name the JSON path.
[[nodiscard]] inline ModelZoo zoo_from_json(const detail::json& j, std::string_view path = "/zoo");

namespace detail {
/// A zoo's models and co-location pairs (what zoo_from_json() reads, and each entry of "types").
[[nodiscard]] inline ModelZoo zoo_models_from_json(const json& j, std::string_view path, measurement_cluster ref,
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
}  // namespace detail

inline ModelZoo zoo_from_json(const detail::json& j, std::string_view path) {
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

/// Reads a zoo file ("$GPUPLACE_DATA/..." allowed); errors name the file. ModelZoo::load() calls it.
[[nodiscard]] inline ModelZoo load_zoo(const std::string& path) {
    const std::string file = resolve_data_path(path);
    if (auto d = detail::directory_not_file(file, display_path(file)); !d.empty()) throw ConfigError("model zoo: " + d);
    std::ifstream in(file);
    if (!in) throw ConfigError("model zoo: cannot open \"" + display_path(file) + "\"");
    std::stringstream ss;
    ss << in.rdbuf();
    return zoo_from_json(detail::parse_json(ss.str(), file), file + ":");
}

/// The JSON that zoo_from_json() reads back to an equal zoo.
[[nodiscard]] inline detail::json to_json(const ModelZoo& z) {
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

// ---- co-location --------------------------------------------------------------------------------

/// Reads co-location options: {"enabled", "max_jobs_per_gpu" (1..64), "gpu_memory_gb", "profile"}.
[[nodiscard]] inline colocation_config colocation_from_json(const detail::json& j, std::string_view path = "/colocation") {
    using namespace detail;
    check_keys(j, path, {"enabled", "max_jobs_per_gpu", "gpu_memory_gb", "profile"});
    colocation_config c;
    read_bool(j, path, "enabled", c.enabled);
    read_int(j, path, "max_jobs_per_gpu", c.max_jobs_per_gpu, 1, 64);
    read_number(j, path, "gpu_memory_gb", c.gpu_memory_gb, 1e-9, 1e6);
    read_string(j, path, "profile", c.profile);
    return c;
}

[[nodiscard]] inline detail::json to_json(const colocation_config& c) {
    detail::json j = {{"enabled", c.enabled}, {"max_jobs_per_gpu", c.max_jobs_per_gpu}, {"gpu_memory_gb", c.gpu_memory_gb}};
    if (!c.profile.empty()) j["profile"] = c.profile;
    return j;
}

/// Reads a JSON co-location profile {"<model>": {"<other>": factor}} (`file` already resolved)
/// into `base`, whose size matches the zoo; errors name file:/path. interference_table::load_profile() calls it.
[[nodiscard]] inline interference_table read_json_profile(const std::string& file, const ModelZoo& zoo, interference_table base) {
    if (auto d = detail::directory_not_file(file, display_path(file)); !d.empty()) throw ConfigError("co-location profile: " + d);
    std::ifstream in(file);
    if (!in) throw ConfigError("co-location profile: cannot open \"" + display_path(file) + "\"");
    std::stringstream ss;
    ss << in.rdbuf();
    const auto j = detail::parse_json(ss.str(), file);
    if (!j.is_object()) throw ConfigError(file + ": expected an object {\"<model>\": {\"<other>\": factor}}");
    for (auto a = j.begin(); a != j.end(); ++a) {
        const auto pa = file + ":/" + a.key();
        const model_id ia = zoo.find(a.key());
        if (!a->is_object()) throw ConfigError(pa + ": expected an object {\"<other>\": factor}");
        for (auto b = a->begin(); b != a->end(); ++b) {
            if (!b->is_number() || b->get<double>() < 0)
                throw ConfigError(pa + "/" + b.key() + ": expected a factor >= 0, got " + detail::short_dump(*b));
            base.set(ia, zoo.find(b.key()), b->get<double>());
        }
    }
    return base;
}

// ---- workloads ----------------------------------------------------------------------------------

/// Reads trace options from JSON keys of `j` (the workload object): "window": [start, end],
/// "max_jobs", "time_scale", "target_load", "max_gpus", "drop_oversized", "skip_bad_rows",
/// "model". Errors name the JSON path.
[[nodiscard]] inline trace_options trace_options_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    trace_options o;
    if (auto it = j.find("window"); it != j.end()) {
        const auto p = join_path(path, "window");
        if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !((*it)[1].is_number() || (*it)[1].is_null()))
            config_fail(p, "expected [start, end] in seconds (end may be null), got " + short_dump(*it));
        o.window_start = (*it)[0].get<double>();
        if ((*it)[1].is_number()) o.window_end = (*it)[1].get<double>();
        if (!(o.window_end > o.window_start)) config_fail(p, "the window " + short_dump(*it) + " is empty");
    }
    read_int(j, path, "max_jobs", o.max_jobs, 0, 1LL << 40);
    read_number(j, path, "time_scale", o.time_scale, min_time_scale, max_time_scale);
    read_number(j, path, "target_load", o.target_load, 0.0, 1e6);
    read_int(j, path, "max_gpus", o.max_gpus, 0, 1 << 24);
    read_bool(j, path, "drop_oversized", o.drop_oversized);
    read_bool(j, path, "skip_bad_rows", o.skip_bad_rows);
    read_string(j, path, "model", o.model);
    return o;
}

/// The JSON keys trace_options_from_json reads back to the same options.
inline void trace_options_to_json(const trace_options& o, detail::json& j) {
    j["window"] = {o.window_start, std::isfinite(o.window_end) ? detail::json(o.window_end) : detail::json(nullptr)};
    j["max_jobs"] = o.max_jobs;
    j["time_scale"] = o.time_scale;
    j["target_load"] = o.target_load;
    j["max_gpus"] = o.max_gpus;
    j["drop_oversized"] = o.drop_oversized;
    j["skip_bad_rows"] = o.skip_bad_rows;
    if (!o.model.empty()) j["model"] = o.model;
}

namespace detail {
/// Reads a workload's optional "models": {"<model name>": weight >= 0, ...} into `out`.
inline void read_model_weights(const json& j, std::string_view path, std::vector<std::pair<std::string, double>>& out) {
    const auto it = j.find("models");
    if (it == j.end()) return;
    const auto p = join_path(path, "models");
    if (!it->is_object()) config_fail(p, "expected an object {\"<model name>\": weight}, got " + short_dump(*it));
    for (auto e = it->begin(); e != it->end(); ++e) {
        if (!e->is_number() || e->get<double>() < 0) config_fail(join_path(p, e.key()), "expected a weight >= 0, got " + short_dump(*e));
        out.emplace_back(e.key(), e->get<double>());
    }
}
}  // namespace detail

/// Reads a workload: "kind" ("synthetic", default; "proximity_drl", "trace", "jobs" or "mixture")
/// and the kind's keys. A synthetic "load" or a GPU count's weight may be a range [lo, hi], and a
/// trace's "target_load" too (drawn per episode); a trace's "path" may be a list of files.
[[nodiscard]] inline workload_config workload_from_json(const detail::json& j, std::string_view path = "/workload") {
    using namespace detail;
    workload_config c;
    if (!j.is_object()) config_fail(path, "expected an object, got " + short_dump(j));
    read_string(j, path, "kind", c.kind);
    if (c.kind == "trace") {
        check_keys(j, path, {"kind", "format", "path", "window", "max_jobs", "time_scale", "target_load", "max_gpus",
                             "drop_oversized", "skip_bad_rows", "model", "episode_jobs"});
        std::string fmt;
        read_string(j, path, "format", fmt);
        if (!j.contains("format")) config_fail(path, "kind \"trace\" needs \"format\" (philly, openb or csv)");
        c.format = parse_trace_format(fmt, join_path(path, "format"));
        if (auto it = j.find("path"); it != j.end() && it->is_array()) {  // several files: each episode replays one
            const auto p = join_path(path, "path");
            if (it->empty()) config_fail(p, "expected a file name or a non-empty list of file names");
            for (std::size_t i = 0; i < it->size(); ++i) {
                const auto& f = (*it)[i];
                if (!f.is_string() || f.get<std::string>().empty())
                    config_fail(join_path(p, std::to_string(i)), "expected a file name, got " + short_dump(f));
                (i == 0 ? c.path : c.more_paths.emplace_back()) = f.get<std::string>();
            }
        } else {
            read_string(j, path, "path", c.path);
        }
        if (c.path.empty()) config_fail(join_path(path, "path"), "kind \"trace\" needs the trace file's path");
        auto opts = j;
        if (auto it = j.find("target_load"); it != j.end() && it->is_array()) {  // a range: drawn per episode
            const auto range = read_range(*it, join_path(path, "target_load"), 1e-6, 1e6);
            opts["target_load"] = range.first;
            c.target_load_max = range.second;
        }
        c.trace_opts = trace_options_from_json(opts, path);
        read_int(j, path, "episode_jobs", c.episode_jobs, 0, 1LL << 40);
        return c;
    }
    if (c.kind == "mixture") {
        check_keys(j, path, {"kind", "components"});
        const auto p = join_path(path, "components");
        const auto it = j.find("components");
        if (it == j.end() || !it->is_array() || it->empty())
            config_fail(p, "kind \"mixture\" needs a non-empty list of {\"weight\": w, \"workload\": {...}}");
        double total = 0;
        for (std::size_t i = 0; i < it->size(); ++i) {
            const auto cp = join_path(p, std::to_string(i));
            const auto& e = (*it)[i];
            check_keys(e, cp, {"weight", "workload"});
            workload_component comp;
            read_number(e, cp, "weight", comp.weight, 0.0, 1e12);
            if (!e.contains("workload")) config_fail(cp, "missing key \"workload\"");
            comp.workload = workload_from_json(e["workload"], join_path(cp, "workload"));
            total += comp.weight;
            c.components.push_back(std::move(comp));
        }
        if (!(total > 0)) config_fail(p, "the weights sum to 0");
        return c;
    }
    if (c.kind == "proximity_drl") {
        check_keys(j, path, {"kind", "num_jobs", "max_length", "max_request", "time_step", "arrival_rate", "models"});
        auto& w = c.proximity_drl;
        read_int(j, path, "num_jobs", w.num_jobs, 1, 10'000'000);
        read_int(j, path, "max_length", w.max_length, 1, 1'000'000);
        read_int(j, path, "max_request", w.max_request, 1, 1 << 24);
        read_number(j, path, "time_step", w.time_step, 1e-9, 1e12);
        read_number(j, path, "arrival_rate", w.arrival_rate, 0.0, 1e12);
        read_model_weights(j, path, w.models);
        return c;
    }
    check_keys(j, path, {"kind", "num_jobs", "load", "gpu_counts", "duration_min", "duration_max", "models", "jobs"});
    if (c.kind != "synthetic" && c.kind != "jobs")
        config_fail(join_path(path, "kind"),
                    "unknown workload kind \"" + c.kind + "\" (allowed: synthetic, proximity_drl, trace, jobs, mixture)");
    auto& s = c.synthetic;
    read_int(j, path, "num_jobs", s.num_jobs, 1, 10'000'000);
    if (auto it = j.find("load"); it != j.end() && it->is_array()) {
        const auto range = read_range(*it, join_path(path, "load"), 1e-6, 1e6);
        s.load = range.first;
        s.load_max = range.second;
    } else {
        read_number(j, path, "load", s.load, 1e-6, 1e6);
    }
    read_number(j, path, "duration_min", s.duration_min, min_job_duration, max_trace_time);
    read_number(j, path, "duration_max", s.duration_max, min_job_duration, max_trace_time);
    if (s.duration_max < s.duration_min)
        config_fail(join_path(path, "duration_max"), "value " + std::to_string(s.duration_max) +
                                                         " is below duration_min " + std::to_string(s.duration_min));
    if (auto it = j.find("gpu_counts"); it != j.end()) {
        const auto p = join_path(path, "gpu_counts");
        if (!it->is_object() || it->empty()) config_fail(p, "expected an object {\"<gpus>\": probability}, got " + short_dump(*it));
        s.gpu_counts.clear();
        for (auto e = it->begin(); e != it->end(); ++e) {
            const auto ep = join_path(p, e.key());
            long k = 0;
            try {
                std::size_t pos = 0;
                k = std::stol(e.key(), &pos);
                if (pos != e.key().size()) k = 0;
            } catch (const std::exception&) { k = 0; }
            if (k < 1 || k > (1 << 24)) config_fail(ep, "GPU count \"" + e.key() + "\" is not an integer >= 1");
            std::pair<double, double> w;
            if (e->is_array()) {  // a range: the weight is drawn per episode
                w = read_range(*e, ep, 0.0, 1e12);
            } else {
                if (!e->is_number() || e->get<double>() < 0)
                    config_fail(ep, "expected a probability >= 0 or a range [lo, hi], got " + short_dump(*e));
                w = {e->get<double>(), e->get<double>()};
            }
            s.gpu_counts.emplace_back(static_cast<std::uint32_t>(k), w.first);
            s.gpu_counts_max.push_back(w.second);
        }
        // sorted by GPU count, the ranges' tops along
        std::vector<std::size_t> order(s.gpu_counts.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return s.gpu_counts[a] < s.gpu_counts[b]; });
        std::vector<std::pair<std::uint32_t, double>> counts;
        std::vector<double> tops;
        bool ranged = false;
        for (auto i : order) {
            counts.push_back(s.gpu_counts[i]);
            tops.push_back(s.gpu_counts_max[i]);
            ranged = ranged || s.gpu_counts_max[i] != s.gpu_counts[i].second;
        }
        s.gpu_counts = std::move(counts);
        s.gpu_counts_max = ranged ? std::move(tops) : std::vector<double>{};
        if (ranged && s.gpu_counts.size() > 64) config_fail(p, "ranges of weights need at most 64 GPU counts");
        double tot = 0, tot_hi = 0;
        for (std::size_t i = 0; i < s.gpu_counts.size(); ++i) {
            tot += s.gpu_counts[i].second;
            tot_hi += ranged ? s.gpu_counts_max[i] : s.gpu_counts[i].second;
        }
        if (!(tot > 0) && !(ranged && tot_hi > 0)) config_fail(p, "probabilities sum to 0");
    }
    read_model_weights(j, path, s.models);
    if (auto it = j.find("jobs"); it != j.end()) {
        const auto p = join_path(path, "jobs");
        if (!it->is_array() || it->empty()) config_fail(p, "expected a non-empty array of jobs");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const auto& jj = (*it)[i];
            const auto jp = join_path(p, std::to_string(i));
            check_keys(jj, jp, {"submit_time", "num_gpus", "model", "work"});
            TrainingJob job;
            job.id = static_cast<job_id>(i);
            for (const char* req : {"submit_time", "num_gpus", "model", "work"})
                if (!jj.contains(req)) config_fail(jp, std::string("missing key \"") + req + "\"");
            read_number(jj, jp, "submit_time", job.submit_time, 0.0, max_trace_time);
            read_int(jj, jp, "num_gpus", job.num_gpus, 1, 1 << 24);
            read_int(jj, jp, "model", job.model, 0, 65535);
            read_number(jj, jp, "work", job.work, 1e-12, 1e18);
            c.jobs.push_back(job);
        }
    }
    if (c.kind == "jobs" && c.jobs.empty()) config_fail(join_path(path, "jobs"), "kind \"jobs\" needs a job list");
    return c;
}

[[nodiscard]] inline detail::json to_json(const workload_config& w) {
    detail::json j;
    j["kind"] = w.kind;
    if (w.kind == "trace") {
        j["format"] = to_string(w.format);
        j["path"] = w.more_paths.empty() ? detail::json(w.path) : detail::json(w.trace_paths());
        trace_options_to_json(w.trace_opts, j);
        if (w.target_load_max > 0) j["target_load"] = {w.trace_opts.target_load, w.target_load_max};
        j["episode_jobs"] = w.episode_jobs;
    } else if (w.kind == "mixture") {
        j["components"] = detail::json::array();
        for (const auto& comp : w.components) j["components"].push_back({{"weight", comp.weight}, {"workload", to_json(comp.workload)}});
    } else if (w.kind == "proximity_drl") {
        const auto& p = w.proximity_drl;
        j["num_jobs"] = p.num_jobs;
        j["max_length"] = p.max_length;
        j["max_request"] = p.max_request;
        j["time_step"] = p.time_step;
        j["arrival_rate"] = p.arrival_rate;
        if (!p.models.empty()) {
            detail::json m = detail::json::object();
            for (auto& [n, wt] : p.models) m[n] = wt;
            j["models"] = m;
        }
    } else if (w.kind == "synthetic") {
        j["num_jobs"] = w.synthetic.num_jobs;
        j["load"] = w.synthetic.load_max > 0 ? detail::json{w.synthetic.load, w.synthetic.load_max} : detail::json(w.synthetic.load);
        j["duration_min"] = w.synthetic.duration_min;
        j["duration_max"] = w.synthetic.duration_max;
        detail::json g = detail::json::object();
        for (std::size_t i = 0; i < w.synthetic.gpu_counts.size(); ++i) {
            const auto [k, p] = w.synthetic.gpu_counts[i];
            g[std::to_string(k)] = w.synthetic.gpu_counts_max.empty() ? detail::json(p) : detail::json{p, w.synthetic.gpu_counts_max[i]};
        }
        j["gpu_counts"] = g;
        if (!w.synthetic.models.empty()) {
            detail::json m = detail::json::object();
            for (auto& [n, p] : w.synthetic.models) m[n] = p;
            j["models"] = m;
        }
    } else {
        detail::json arr = detail::json::array();
        for (auto& jb : w.jobs)
            arr.push_back({{"submit_time", jb.submit_time}, {"num_gpus", jb.num_gpus}, {"model", jb.model}, {"work", jb.work}});
        j["jobs"] = arr;
    }
    return j;
}


// ---- scenarios ----------------------------------------------------------------------------------

/// Reads a scenario; every key is optional (defaults: config.hpp), unknown keys are errors.
[[nodiscard]] inline scenario scenario_from_json(const detail::json& j) {
    using namespace detail;
    check_keys(j, "", {"name", "topology", "comm", "zoo", "workload", "env", "reward", "colocation"});
    scenario s;
    read_string(j, "", "name", s.name);
    if (auto it = j.find("topology"); it != j.end()) {
        if (!it->is_object()) config_fail("/topology", "expected an object, got " + short_dump(*it));
        s.topology = topology_config_from_json(*it, "/topology");
        (void)TreeTopology::from_config(s.topology, "/topology");  // its checks, now
    }
    if (auto it = j.find("comm"); it != j.end()) s.comm = comm_config_from_json(*it, "/comm");
    if (auto it = j.find("zoo"); it != j.end()) {
        if (!it->is_null() && !it->is_string() && !it->is_object())
            config_fail("/zoo", "expected a file name or an object, got " + short_dump(*it));
        if (it->is_string()) s.zoo.file = it->get<std::string>();
        else if (it->is_object()) s.zoo.zoo = zoo_from_json(*it, "/zoo");
    }
    if (auto it = j.find("colocation"); it != j.end()) s.colocation = colocation_from_json(*it, "/colocation");
    if (auto it = j.find("workload"); it != j.end()) s.workload = workload_from_json(*it, "/workload");
    if (auto it = j.find("env"); it != j.end()) {
        const std::string p = "/env";
        check_keys(*it, p, {"queue_policy", "backfill", "allow_defer", "queue_window", "max_steps", "max_time", "action_mode",
                            "slots", "placer", "confine_type"});
        read_bool(*it, p, "confine_type", s.env.confine_type);
        std::string q = std::string(to_string(s.env.order));
        read_string(*it, p, "queue_policy", q);
        if (const auto o = detail::enum_from_name<queue_order>(q)) s.env.order = *o;
        else config_fail(p + "/queue_policy", "unknown queue policy \"" + q + "\" (allowed: " + detail::enum_name_list<queue_order>() + ")");
        read_bool(*it, p, "backfill", s.env.backfill);
        read_bool(*it, p, "allow_defer", s.env.allow_defer);
        read_int(*it, p, "queue_window", s.env.queue_window, 0, 1024);
        read_int(*it, p, "max_steps", s.env.max_steps, 0, (1LL << 62));
        read_number(*it, p, "max_time", s.env.max_time, 0.0);
        std::string m = std::string(to_string(s.env.mode));
        read_string(*it, p, "action_mode", m);
        s.env.mode = parse_action_mode(m, p + "/action_mode");
        read_int(*it, p, "slots", s.env.slots, 1, 1024);
        std::string pl = std::string(to_string(s.env.placer));
        read_string(*it, p, "placer", pl);
        if (const auto k = detail::enum_from_name<placer_kind>(pl)) s.env.placer = *k;
        else config_fail(p + "/placer", "unknown placer \"" + pl + "\" (allowed: " + detail::enum_name_list<placer_kind>() + ")");
    }
    if (auto it = j.find("reward"); it != j.end()) {
        const std::string p = "/reward";
        check_keys(*it, p, {"jct", "makespan", "comm", "placement", "time_scale"});
        read_number(*it, p, "jct", s.reward.jct);
        read_number(*it, p, "makespan", s.reward.makespan);
        read_number(*it, p, "comm", s.reward.comm);
        read_number(*it, p, "placement", s.reward.placement);
        read_number(*it, p, "time_scale", s.reward.time_scale, 1e-12);
    }
    return s;
}

/// Parses a scenario from JSON text (source names it in errors).
[[nodiscard]] inline scenario parse_scenario(std::string_view text, std::string_view source = "<string>") {
    return scenario_from_json(detail::parse_json(text, source));
}

/// Reads a scenario file. Relative file paths in it (trace, zoo file, co-location profile) are
/// relative to the file's folder: they are made absolute (scenario::resolve_paths()).
[[nodiscard]] inline scenario load_scenario(const std::string& file) {
    if (auto d = detail::directory_not_file(file, display_path(file)); !d.empty()) throw ConfigError("scenario file " + d);
    std::ifstream in(file);
    if (!in) throw ConfigError("cannot open scenario file \"" + display_path(file) + "\"");
    std::stringstream ss;
    ss << in.rdbuf();
    auto s = parse_scenario(ss.str(), file);
    s.resolve_paths(std::filesystem::path(display_path(file)).parent_path().string());
    return s;
}

/// The JSON that scenario_from_json() reads back to the same scenario.
[[nodiscard]] inline detail::json to_json(const scenario& s) {
    detail::json j;
    j["name"] = s.name;
    j["topology"] = to_json(s.topology);
    j["comm"] = to_json(s.comm);
    if (s.zoo.zoo) j["zoo"] = to_json(*s.zoo.zoo);
    else if (!s.zoo.file.empty()) j["zoo"] = s.zoo.file;
    j["workload"] = to_json(s.workload);
    const auto& e = s.env;
    j["env"] = {{"queue_policy", to_string(e.order)}, {"backfill", e.backfill},   {"allow_defer", e.allow_defer},
                {"queue_window", e.queue_window},     {"max_steps", e.max_steps}, {"max_time", e.max_time}};
    if (e.mode != action_mode::gpu) {  // a GPU-mode scenario's JSON is as it was before the modes
        j["env"]["action_mode"] = to_string(e.mode);
        j["env"]["slots"] = e.slots;
        j["env"]["placer"] = to_string(e.placer);
    }
    if (e.confine_type) j["env"]["confine_type"] = true;  // written only when set: other scenarios' JSON is unchanged
    if (s.colocation.enabled) j["colocation"] = to_json(s.colocation);
    const auto& r = s.reward;
    j["reward"] = {{"jct", r.jct}, {"makespan", r.makespan}, {"comm", r.comm}, {"placement", r.placement}, {"time_scale", r.time_scale}};
    return j;
}

// ---- results ------------------------------------------------------------------------------------

[[nodiscard]] inline detail::json to_json(const metrics& m) {
    return {{"avg_jct", m.avg_jct},
            {"p50_jct", m.p50_jct},
            {"p95_jct", m.p95_jct},
            {"p99_jct", m.p99_jct},
            {"avg_queueing_delay", m.avg_queueing_delay},
            {"makespan", m.makespan},
            {"avg_comm_cost", m.avg_comm_cost},
            {"total_comm_cost", m.total_comm_cost},
            {"avg_slowdown", m.avg_slowdown},
            {"utilization", m.utilization},
            {"sm_utilization", m.sm_utilization},
            {"memory_utilization", m.memory_utilization},
            {"avg_interference", m.avg_interference},
            {"jobs_done", m.jobs_done},
            {"jobs_total", m.jobs_total},
            {"type_utilization", m.type_utilization}};
}

/// Per policy, mean and standard error of each metric plus the per-seed metrics.
[[nodiscard]] inline detail::json to_json(const eval_report& r) {
    detail::json j;
    j["scenario"] = r.scenario;
    j["seeds"] = r.seeds;
    for (const auto& p : r.policies) {
        detail::json pj;
        for (const auto& n : eval_metric_names()) {
            const auto s = p.get(n);
            pj["summary"][n] = {{"mean", s.mean}, {"sem", s.sem}};
        }
        for (const auto& m : p.per_seed) pj["per_seed"].push_back(to_json(m));
        j["policies"][p.policy] = pj;
    }
    return j;
}

// ---- presets ------------------------------------------------------------------------------------

/// The default scenario as JSON (default_scenario() builds the same scenario without reading it):
/// 64 GPUs in DGX-A100 nodes (2 racks x 4 nodes x 8 GPUs) under a 2:1 oversubscribed spine, 160
/// jobs of the built-in zoo (40% 1 GPU, 20% each 2/4/8 GPUs) at offered load 1.0, DEFER allowed.
inline constexpr std::string_view default_scenario_json = R"json({
  "name": "default",
  "topology": {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "synthetic", "num_jobs": 160, "load": 1.0,
               "gpu_counts": {"1": 0.4, "2": 0.2, "4": 0.2, "8": 0.2},
               "duration_min": 600, "duration_max": 14400},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// The Proximity-DRL cluster (2 racks x 4 nodes x 4 GPUs) with its route cost and workload.
inline constexpr std::string_view proximity_drl_scenario_json = R"json({
  "name": "proximity_drl",
  "topology": {"preset": "proximity_drl"},
  "comm": {"model": "tree_route"},
  "workload": {"kind": "proximity_drl", "num_jobs": 30, "max_length": 20, "max_request": 8, "time_step": 60},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": false, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Co-location: 16 GPUs (2 DGX-A100 nodes), a burst of 200 single-GPU jobs of four models that
/// share a GPU well (Gavel's measured pairs), up to 2 jobs per 32 GB GPU, DEFER enabled.
inline constexpr std::string_view colocation_scenario_json = R"json({
  "name": "colocation",
  "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "synthetic", "num_jobs": 200, "load": 50.0, "gpu_counts": {"1": 1.0},
               "duration_min": 1800, "duration_max": 3600,
               "models": {"ResNet-18 (batch size 64)": 1, "LM (batch size 20)": 1,
                          "Transformer (batch size 64)": 1, "A3C": 1}},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "colocation": {"enabled": true, "max_jobs_per_gpu": 2, "gpu_memory_gb": 32},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// A heterogeneous cluster: 72 GPUs, one rack of 3 servers x 8 GPUs per GPU type (V100, P100,
/// K80; NVLink inside a server at 100 GB/s, 12.5 GB/s between servers, 6.25 GB/s between racks),
/// 160 jobs of the built-in zoo's 26 job types (40% 1 GPU, 20% each 2/4/8 GPUs) at offered load
/// 0.6 in V100 time (the P100 and K80 racks are slower for most models), DEFER allowed
/// (docs/heterogeneous.md).
inline constexpr std::string_view heterogeneous_scenario_json = R"json({
  "name": "heterogeneous",
  "topology": {"preset": "custom", "racks": 3, "nodes_per_rack": 3, "gpus_per_node": 8,
               "node_bandwidth": 100, "rack_bandwidth": 12.5, "spine_bandwidth": 6.25,
               "gpu_types": ["v100", "p100", "k80"]},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "synthetic", "num_jobs": 160, "load": 0.6,
               "gpu_counts": {"1": 0.4, "2": 0.2, "4": 0.2, "8": 0.2},
               "duration_min": 600, "duration_max": 14400},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// The Philly-derived trace files (data/philly/, data/README.md) a policy is trained on, and those
/// held out from training (results on Philly traces are reported on these, file by file).
[[nodiscard]] inline std::vector<std::string> philly_training_files() {
    return {"103959", "11cb48", "2869ce", "6214e9", "b436b2", "ed69ec", "ee9e8c"};
}
[[nodiscard]] inline std::vector<std::string> philly_heldout_files() { return {"0e4a51", "6c71a0", "7f04ca", "e13805"}; }

/// Philly: the default scenario's 64 GPUs replaying windows of 200 consecutive jobs of Gavel's
/// Philly-derived traces (models and steps from the trace, throughputs from the zoo). Each episode
/// picks one of the training files and a window of it, with the file's arrivals compressed to an
/// offered load drawn from [0.8, 1.2] on the 64 GPUs. "philly:<file>" is one file (e.g. a held-out
/// one, "philly:0e4a51") at offered load 1.0.
inline constexpr std::string_view philly_scenario_json = R"json({
  "name": "philly",
  "topology": {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4},
  "comm": {"model": "ring_allreduce"},
  "workload": {"kind": "trace", "format": "philly", "path": [], "target_load": [0.8, 1.2], "episode_jobs": 200},
  "env": {"queue_policy": "fifo", "backfill": true, "allow_defer": true, "queue_window": 8},
  "reward": {"jct": 1.0, "time_scale": 3600}
})json";

/// Names of the preset scenarios ("philly:<file>" too: one file of data/philly/).
[[nodiscard]] inline std::vector<std::string> preset_names() {
    return {"default", "proximity_drl", "colocation", "philly", "heterogeneous"};
}

/// A named preset scenario: "default", "proximity_drl", "colocation", "philly", "philly:<file>" or
/// "heterogeneous".
[[nodiscard]] inline scenario preset_scenario(std::string_view name) {
    if (name == "default") return parse_scenario(default_scenario_json, "default scenario");
    if (name == "proximity_drl") return parse_scenario(proximity_drl_scenario_json, "proximity_drl scenario");
    if (name == "colocation") return parse_scenario(colocation_scenario_json, "colocation scenario");
    if (name == "heterogeneous") return parse_scenario(heterogeneous_scenario_json, "heterogeneous scenario");
    if (name == "philly" || name.starts_with("philly:")) {
        auto j = detail::parse_json(philly_scenario_json, "philly scenario");
        auto& w = j["workload"];
        if (name == "philly") {
            for (const auto& f : philly_training_files()) w["path"].push_back("$GPUPLACE_DATA/philly/" + f + ".trace");
        } else {
            const auto file = std::string(name.substr(7));
            if (file.empty() || file.find_first_of("/\\.") != std::string::npos)
                throw ConfigError("scenario preset \"" + std::string(name) + "\": expected philly:<file>, a file of data/philly/ "
                                  "without its extension (e.g. philly:0e4a51)");
            w["path"] = "$GPUPLACE_DATA/philly/" + file + ".trace";
            w["target_load"] = 1.0;
            j["name"] = std::string(name);
        }
        return scenario_from_json(j);
    }
    std::string known;
    for (const auto& p : preset_names()) known += (known.empty() ? "" : ", ") + p;
    throw ConfigError("unknown scenario preset \"" + std::string(name) + "\" (allowed: " + known + ", philly:<file>)");
}

/// Whether a name is a preset (preset_names(), or "philly:<file>").
[[nodiscard]] inline bool is_preset_name(std::string_view name) {
    for (const auto& p : preset_names())
        if (name == p) return true;
    return name.starts_with("philly:");
}

namespace detail {
/// Installs the JSON file readers (see json_readers()) when the program starts.
inline const bool json_file_readers_installed = [] {
    json_readers() = {&load_zoo, &read_json_profile};
    return true;
}();
}  // namespace detail

}  // namespace gpuplace
