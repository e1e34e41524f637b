#pragma once
/// \file json/impl/topology_inl.hpp
/// The definitions json/topology.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../data.hpp"
#include "../../data/topologies.hpp"
#include "../../detail/input_file.hpp"
#include "../../topology.hpp"
#include "../../topology_levels.hpp"
#include "../parse.hpp"
#include "../topology.hpp"

namespace gpuplace {

namespace detail {
/// The keys of a tree's topology object.
inline constexpr std::string_view tree_topology_keys[] = {
    "preset", "racks", "nodes_per_rack", "gpus_per_node", "node_bandwidth", "rack_bandwidth", "spine_bandwidth",
    "node_latency", "rack_latency", "spine_latency", "fabric", "pcie_bandwidth", "gpu_types"};

/// The presets TreeTopology builds itself (topology.hpp); the catalogue's others are read as levels.
[[nodiscard]] inline bool is_tree_preset(std::string_view name) noexcept { return name == "custom" || TreeTopology::is_preset(name); }

/// The catalogue of gpuplace/data/topologies.hpp, parsed once.
[[nodiscard]] inline const json& topology_catalogue() {
    static const json c = parse_json(topology_presets_json, "topology presets (gpuplace/data/topologies.hpp)");
    return c;
}

/// A preset's entry in the catalogue's form: a built-in one's, else a registered one's (the
/// pointer keeps it), else null.
[[nodiscard]] inline std::shared_ptr<const json> topology_entry(std::string_view name) {
    const auto& c = topology_catalogue();
    if (const auto it = c.find(std::string(name)); it != c.end()) return std::shared_ptr<const json>(std::shared_ptr<const json>(), &*it);
    if (auto r = registered_topologies_store().find(name)) return std::shared_ptr<const json>(r, &r->entry);
    return nullptr;
}

/// The preset names an error lists: the tree presets (with "custom" where a tree may be
/// described key by key), the catalogue's others, then the registered ones.
[[nodiscard]] inline std::string known_topology_presets(bool with_custom) {
    std::string known;
    for (const auto& n : topology_preset_names()) {
        known += (known.empty() ? "" : ", ") + n;
        if (with_custom && n == "proximity_drl") known += ", custom";
    }
    for (const auto& r : registered_topologies_store().all()) known += ", " + r->name;
    return known;
}

/// A positive whole number at `path` up to 2^24.
[[nodiscard]] inline std::uint32_t read_count(const json& v, const std::string& path, std::string_view what) {
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1LL << 24))
        config_fail(path, "expected " + std::string(what) + ", a whole number from 1 to 16777216, got " + short_dump(v));
    return static_cast<std::uint32_t>(v.get<long long>());
}


/// A catalogue preset read as levels, with the keys of `j` beside "preset" applied.
[[nodiscard]] inline topology_config levels_preset(const json& entry, std::string_view name, const json& j, std::string_view path) {
    topology_config c;
    c.name = std::string(name);
    c.levels = levels_from_json(entry.at("levels"), "topology preset " + std::string(name) + " levels");
    const auto& params = entry.at("parameters");
    std::string allowed = "preset";
    for (auto it = params.begin(); it != params.end(); ++it) allowed += ", " + it.key();
    for (const auto& l : c.levels) allowed += ", " + l.name + "_bandwidth, " + l.name + "_latency";
    auto level = [&](std::string_view n) -> level_config& {
        for (auto& l : c.levels)
            if (l.name == n) return l;
        throw ConfigError("topology preset " + std::string(name) + ": a parameter names no level \"" + std::string(n) + "\"");
    };
    for (auto it = j.begin(); it != j.end(); ++it) {
        const auto& key = it.key();
        const auto p = join_path(path, key);
        if (key == "preset") continue;
        if (auto pa = params.find(key); pa != params.end()) {
            level(pa->get<std::string>()).fanout = {read_count(*it, p, "a count")};
            continue;
        }
        bool done = false;
        for (auto& l : c.levels) {
            if (key == l.name + "_bandwidth") {
                if (!it->is_number() || !(it->get<double>() > 0)) config_fail(p, "expected a bandwidth > 0 (GB/s), got " + short_dump(*it));
                l.bandwidth = it->get<double>();
                done = true;
            } else if (key == l.name + "_latency") {
                if (!it->is_number() || !(it->get<double>() >= 0)) config_fail(p, "expected a latency >= 0 (s), got " + short_dump(*it));
                l.latency = it->get<double>();
                done = true;
            }
        }
        if (!done) config_fail(p, "unknown key \"" + key + "\" for preset \"" + std::string(name) + "\" (allowed: " + allowed + ")");
    }
    (void)levels_layout_of(c.levels, std::string(path) + " (preset " + std::string(name) + ") levels");  // e.g. too many GPUs
    return c;
}
}  // namespace detail

GPUPLACE_INLINE std::vector<level_config> levels_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    if (!j.is_array() || j.empty())
        config_fail(path, "expected a non-empty array of levels, level 1 first and the root last, e.g. [{\"name\": \"node\", "
                          "\"fanout\": 8, \"bandwidth\": 300}, {\"name\": \"spine\", \"fanout\": 4, \"bandwidth\": 25}], got " + short_dump(j));
    std::vector<level_config> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const auto& e = j[i];
        const auto p = join_path(path, std::to_string(i));
        check_keys(e, p, {"name", "fanout", "bandwidth", "latency", "gpu_types", "fabric", "pcie_bandwidth"});
        for (const char* req : {"name", "fanout", "bandwidth"})
            if (!e.contains(req)) config_fail(p, std::string("missing key \"") + req + "\"");
        level_config l;
        read_string(e, p, "name", l.name);
        const auto& f = e["fanout"];
        const auto fp = join_path(p, "fanout");
        if (f.is_array() && !f.empty())
            for (std::size_t k = 0; k < f.size(); ++k) l.fanout.push_back(read_count(f[k], join_path(fp, std::to_string(k)), "a fan-out"));
        else if (f.is_array())
            config_fail(fp, "expected a fan-out or a non-empty array of them (one per domain), got []");
        else
            l.fanout.push_back(read_count(f, fp, "a fan-out (children per domain) or an array of them (one per domain)"));
        auto positive = [&](const char* key, double& value, bool zero_ok, const char* what) {
            const auto it = e.find(key);
            if (it == e.end()) return;
            if (!it->is_number() || !(zero_ok ? it->get<double>() >= 0 : it->get<double>() > 0))
                config_fail(join_path(p, key), std::string("expected ") + what + ", got " + short_dump(*it));
            value = it->get<double>();
        };
        positive("bandwidth", l.bandwidth, false, "a bandwidth > 0 (GB/s per GPU)");
        positive("latency", l.latency, true, "a latency >= 0 (seconds per hop)");
        if (auto it = e.find("gpu_types"); it != e.end()) l.gpu_types = read_names(*it, join_path(p, "gpu_types"), "a GPU type name");
        read_string(e, p, "fabric", l.fabric);
        if (e.contains("pcie_bandwidth")) positive("pcie_bandwidth", l.pcie_bandwidth.emplace(), false, "a bandwidth > 0 (GB/s per GPU)");
        out.push_back(std::move(l));
    }
    (void)levels_layout_of(out, path);  // its checks, now
    return out;
}

GPUPLACE_INLINE detail::json to_json(const std::vector<level_config>& levels) {
    detail::json a = detail::json::array();
    for (const auto& l : levels) {
        detail::json e = {{"name", l.name}};
        e["fanout"] = l.fanout.size() == 1 ? detail::json(l.fanout[0]) : detail::json(l.fanout);
        e["bandwidth"] = l.bandwidth;
        e["latency"] = l.latency;
        if (!l.gpu_types.empty()) e["gpu_types"] = l.gpu_types.size() == 1 ? detail::json(l.gpu_types[0]) : detail::json(l.gpu_types);
        if (!l.fabric.empty()) e["fabric"] = l.fabric;
        if (l.pcie_bandwidth) e["pcie_bandwidth"] = *l.pcie_bandwidth;
        a.push_back(std::move(e));
    }
    return a;
}

GPUPLACE_INLINE std::vector<std::string> topology_preset_names() {
    std::vector<std::string> v;
    // in the catalogue's order as written (nlohmann's objects sort their keys)
    const auto text = topology_presets_json;
    const auto& c = detail::topology_catalogue();
    std::vector<std::pair<std::size_t, std::string>> at;
    for (auto it = c.begin(); it != c.end(); ++it) at.emplace_back(text.find("\"" + it.key() + "\": {"), it.key());
    std::sort(at.begin(), at.end());
    for (auto& [pos, name] : at) v.push_back(std::move(name));
    return v;
}

GPUPLACE_INLINE topology_config topology_preset(std::string_view name) {
    const auto e = detail::topology_entry(name);
    if (!e) throw ConfigError("unknown topology preset \"" + std::string(name) + "\" (known: " + detail::known_topology_presets(false) + ")");
    return detail::levels_preset(*e, name, detail::json::object(), "");
}

GPUPLACE_INLINE std::string topology_preset_about(std::string_view name) {
    (void)topology_preset(name);  // known
    const auto e = detail::topology_entry(name);
    std::string s = e->value("about", std::string());
    const auto& params = e->at("parameters");
    std::string ps;
    for (auto it = params.begin(); it != params.end(); ++it)
        ps += (ps.empty() ? "" : ", ") + it.key() + " (" + it->get<std::string>() + " fan-out)";
    return ps.empty() ? s : s + "; parameters: " + ps;
}

GPUPLACE_INLINE topology_config topology_config_of(const std::string& value, std::string_view source) {
    auto read = [&](const detail::json& j) {
        try {
            return topology_config_from_json(j, "/topology");
        } catch (const ConfigError& e) {
            throw ConfigError(std::string(source) + " " + value.substr(0, 60) + (value.size() > 60 ? "..." : "") + ": " + e.what());
        }
    };
    if (!value.empty() && value.front() == '{') return read(detail::parse_json(value, source));
    if (detail::is_tree_preset(value) || detail::topology_entry(value)) return read(detail::json{{"preset", value}});
    std::string text;
    if (!detail::read_input_file<ConfigError>(value, text, display_path(value), std::string(source) + ": "))
        throw ConfigError(std::string(source) + " \"" + value + "\": neither a topology preset (" + detail::known_topology_presets(true) +
                          "), JSON text nor a file that can be opened");
    return read(detail::parse_json(text, display_path(value)));
}

GPUPLACE_INLINE topology_config topology_config_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    if (!j.is_object()) config_fail(path, "expected an object, got " + short_dump(j));
    if (j.contains("levels")) {  // any hierarchy, level by level
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (it.key() == "name" || it.key() == "levels") continue;
            bool tree = false;
            for (auto k : tree_topology_keys) tree = tree || k == it.key();
            if (tree)
                config_fail(join_path(path, it.key()), "\"" + it.key() + "\" describes a tree preset; with \"levels\" the levels say it all "
                                                       "(fan-outs, bandwidths, latencies, GPU types on the levels)");
            config_fail(join_path(path, it.key()), "unknown key \"" + it.key() + "\" (allowed with levels: name, levels)");
        }
        topology_config c;
        c.name.emplace("custom");
        read_string(j, path, "name", *c.name);
        if (c.name->empty()) config_fail(join_path(path, "name"), "empty topology name");
        c.levels = levels_from_json(j["levels"], join_path(path, "levels"));
        return c;
    }
    if (auto it = j.find("preset"); it != j.end() && it->is_string() && !is_tree_preset(it->get<std::string>())) {
        const auto name = it->get<std::string>();
        if (const auto e = topology_entry(name)) return levels_preset(*e, name, j, path);
        config_fail(join_path(path, "preset"), "unknown preset \"" + name + "\" (allowed: " + known_topology_presets(true) + ")");
    }
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

GPUPLACE_INLINE TreeTopology topology_from_json(const detail::json& j, std::string_view path) {
    return TreeTopology::from_config(topology_config_from_json(j, path), path);
}

GPUPLACE_INLINE detail::json to_json(const topology_config& c) {
    if (!c.levels.empty()) return {{"name", c.name.value_or("custom")}, {"levels", to_json(c.levels)}};
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

GPUPLACE_INLINE detail::json to_json(const TreeTopology& t) {
    if (t.levels_form()) return {{"name", t.name()}, {"levels", to_json(t.levels())}};
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

GPUPLACE_INLINE bool register_topology(const std::string& name, std::string_view entry) {
    using namespace detail;
    const std::string what = "topology \"" + name + "\"";
    if (name.empty() || name.find_first_of(":/\\{") != std::string::npos)
        throw ConfigError(what + ": an empty name or one with ':', '/', '\\' or '{' (they name a file or JSON text)");
    if (is_tree_preset(name) || topology_catalogue().contains(name)) throw ConfigError(what + " is a built-in preset");
    json e = parse_json(entry, what);
    const std::string at = what + " ";
    if (!e.is_object()) throw ConfigError(at + "expected an object with \"levels\" (and \"about\", \"parameters\"), got " + short_dump(e));
    try {
        check_keys(e, "", {"about", "levels", "parameters"});
        if (!e.contains("levels")) config_fail("", "missing key \"levels\"");
        if (!e.contains("about")) e["about"] = "a topology registered by name";
        if (!e["about"].is_string()) config_fail("/about", "expected a sentence, got " + short_dump(e["about"]));
        if (!e.contains("parameters")) e["parameters"] = json::object();
        const auto levels = levels_from_json(e["levels"], "/levels");
        const auto& params = e["parameters"];
        if (!params.is_object()) config_fail("/parameters", "expected an object {\"key\": \"<level>\"}, got " + short_dump(params));
        for (auto it = params.begin(); it != params.end(); ++it) {
            const bool names_level = it->is_string() && std::any_of(levels.begin(), levels.end(), [&](const level_config& l) { return l.name == it->get<std::string>(); });
            if (!names_level) {
                std::string ls;
                for (const auto& l : levels) ls += (ls.empty() ? "" : ", ") + l.name;
                config_fail(join_path("/parameters", it.key()), "expected the name of the level whose fan-out it sets (" + ls + "), got " + short_dump(*it));
            }
            if (it.key() == "preset") config_fail("/parameters/preset", "\"preset\" names the preset, not a parameter");
        }
    } catch (const ConfigError& x) {
        throw ConfigError(at + x.what());
    }
    const std::string about = e["about"].get<std::string>();
    registered_topologies_store().add<ConfigError>(std::make_shared<const registered_topology>(registered_topology{name, about, std::move(e)}),
                                                   "topology");
    return true;
}

}  // namespace gpuplace
