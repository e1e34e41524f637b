#pragma once
/// \file json/impl/job_fields_inl.hpp
/// The declared job fields in JSON (json/workload.hpp declares job_fields_from_json() and its
/// to_json()): compiled as json/impl/workload_inl.hpp is.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../feature_registry.hpp"
#include "../../trace.hpp"
#include "../../workload.hpp"
#include "../parse.hpp"
#include "../workload.hpp"

namespace gpuplace {

GPUPLACE_INLINE std::vector<job_field> job_fields_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    if (!j.is_array()) config_fail(path, "expected an array of job fields (names of known ones, or {\"name\": ..., \"type\": ...}), got " + short_dump(j));
    std::string known;
    for (const auto& n : known_job_field_names()) known += (known.empty() ? "" : ", ") + n;
    std::vector<job_field> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const auto p = join_path(path, std::to_string(i));
        const auto& e = j[i];
        std::string name;
        if (e.is_string()) name = e.get<std::string>();
        else if (e.is_object()) {
            check_keys(e, p, {"name", "type", "default", "categories", "range", "observe", "draw", "feature"});
            if (!e.contains("name")) config_fail(p, "missing key \"name\"");
            read_string(e, p, "name", name);
        } else
            config_fail(p, "expected a field's name or {\"name\": ..., \"type\": ...}, got " + short_dump(e));
        const auto np = e.is_object() ? join_path(p, "name") : p;
        if (!level_name_ok(name)) config_fail(np, "field name \"" + name + "\": expected letters, digits, '_', '-' or '.'");
        if (is_job_key(name)) config_fail(np, "\"" + name + "\" is a job key already, not a field");
        if (field_index(out, name) != std::string_view::npos) config_fail(np, "field \"" + name + "\" is declared twice");
        auto f = known_job_field(name);
        if (e.is_object() && e.contains("type")) {
            std::string t;
            read_string(e, p, "type", t);
            if (t != "number" && t != "category") config_fail(join_path(p, "type"), "unknown type \"" + t + "\" (allowed: number, category)");
            const auto type = t == "number" ? field_type::number : field_type::category;
            if (f && f->type != type) config_fail(join_path(p, "type"), "the known field \"" + name + "\" is a " + (f->type == field_type::number ? "number" : "category"));
            if (!f) {
                f.emplace();
                f->name = name;
                f->type = type;
            }
        }
        // a computed field: an observation feature of one's own, by the field's name or its "feature"
        std::shared_ptr<const registered_job_feature> computed;
        if (e.is_object() && e.contains("feature")) {
            std::string feature;
            read_string(e, p, "feature", feature);
            if (!(computed = find_observation_feature(feature))) {
                std::string registered;
                for (const auto& r : registered_observation_features()) registered += (registered.empty() ? "" : ", ") + r->name;
                config_fail(join_path(p, "feature"), "unknown observation feature \"" + feature + "\" (registered: " +
                                                         (registered.empty() ? "none" : registered) + ")");
            }
        } else if (!f && !(e.is_object() && e.contains("type"))) {
            computed = find_observation_feature(name);
        }
        if (computed) {
            if (f && f->type != field_type::number) config_fail(np, "field \"" + name + "\": an observation feature is a number");
            if (known_job_field(name)) config_fail(np, "field \"" + name + "\" is a known field; a computed one needs a name of its own");
            if (!f) f.emplace().name = name;
            f->feature = computed->name;
            f->observe = true;
            f->lo = computed->lo;
            f->hi = computed->hi;
            f->default_value = 0.0;  // jobs entries and trace rows do not give it
        }
        if (!f)
            config_fail(np, "unknown field \"" + name + "\": give its \"type\" (number or category), or declare a known one (" + known +
                                ") or a registered observation feature");
        if (e.is_object()) {
            if (!f->feature.empty() && (e.contains("default") || e.contains("draw") || e.contains("categories")))
                config_fail(p, "field \"" + name + "\" is computed by observation feature \"" + f->feature + "\": no default, draw or categories");
            read_bool(e, p, "observe", f->observe);
            if (auto c = e.find("categories"); c != e.end()) {
                const auto cp = join_path(p, "categories");
                if (f->type != field_type::category) config_fail(cp, "categories go with a category field");
                if (!c->is_array() || c->empty()) config_fail(cp, "expected a non-empty array of category names, got " + short_dump(*c));
                for (std::size_t k = 0; k < c->size(); ++k) {
                    if (!(*c)[k].is_string() || (*c)[k].get<std::string>().empty())
                        config_fail(join_path(cp, std::to_string(k)), "expected a category name, got " + short_dump((*c)[k]));
                    if (std::find(f->categories.begin(), f->categories.end(), (*c)[k].get<std::string>()) != f->categories.end())
                        config_fail(join_path(cp, std::to_string(k)), "category " + short_dump((*c)[k]) + " is listed twice");
                    f->categories.push_back((*c)[k].get<std::string>());
                }
                f->closed = true;
            }
            if (auto r = e.find("range"); r != e.end()) {
                if (f->type != field_type::number) config_fail(join_path(p, "range"), "a range goes with a number field");
                const auto [lo, hi] = read_range(*r, join_path(p, "range"), -1e300, 1e300);
                if (!(hi > lo)) config_fail(join_path(p, "range"), "range " + short_dump(*r) + ": expected lo < hi");
                f->lo = lo;
                f->hi = hi;
            }
            if (auto d = e.find("draw"); d != e.end()) {  // a generated workload's values
                const auto dp = join_path(p, "draw");
                if (f->type == field_type::number) {
                    const auto [lo, hi] = read_range(*d, dp, -1e300, 1e300);
                    if (!(hi > lo)) config_fail(dp, "range " + short_dump(*d) + ": expected lo < hi");
                    f->draw_lo = lo;
                    f->draw_hi = hi;
                } else {
                    if (!d->is_object() || d->empty()) config_fail(dp, "expected {\"<category>\": weight, ...}, got " + short_dump(*d));
                    std::vector<std::pair<std::string, double>> w;
                    read_model_weights(json{{"models", *d}}, dp, w);
                    for (const auto& [cat, weight] : w)
                        if (std::find(f->categories.begin(), f->categories.end(), cat) == f->categories.end()) {
                            if (f->closed) config_fail(join_path(dp, cat), "\"" + cat + "\" is not one of the categories");
                            f->categories.push_back(cat);
                        }
                    f->draw_weights.assign(f->categories.size(), 0.0);
                    double total = 0;
                    for (const auto& [cat, weight] : w) {
                        f->draw_weights[std::size_t(std::find(f->categories.begin(), f->categories.end(), cat) - f->categories.begin())] = weight;
                        total += weight;
                    }
                    if (!(total > 0)) config_fail(dp, "the weights sum to 0");
                }
            }
            if (auto d = e.find("default"); d != e.end()) {
                const auto dp = join_path(p, "default");
                if (f->type == field_type::number) {
                    if (!d->is_number()) config_fail(dp, "expected a number, got " + short_dump(*d));
                    f->default_value = d->get<double>();
                } else {
                    if (!d->is_string() || d->get<std::string>().empty()) config_fail(dp, "expected a category name, got " + short_dump(*d));
                    const auto v = d->get<std::string>();
                    auto at = std::find(f->categories.begin(), f->categories.end(), v);
                    if (at == f->categories.end()) {
                        if (f->closed) config_fail(dp, "\"" + v + "\" is not one of the categories");
                        f->categories.push_back(v);
                        at = f->categories.end() - 1;
                    }
                    f->default_value = double(at - f->categories.begin());
                }
            }
        }
        out.push_back(std::move(*f));
    }
    return out;
}

GPUPLACE_INLINE detail::json to_json(const std::vector<job_field>& fields) {
    detail::json a = detail::json::array();
    for (const auto& f : fields) {
        detail::json e = {{"name", f.name}, {"type", f.type == field_type::number ? "number" : "category"}};
        if (f.type == field_type::number) {
            e["range"] = {f.lo, f.hi};
            if (f.default_value) e["default"] = *f.default_value;
        } else {
            if (f.closed) e["categories"] = f.categories;
            if (f.default_value) e["default"] = f.categories.at(std::size_t(*f.default_value));
        }
        if (!f.feature.empty()) {  // computed: its name, range and whether it is observed say it all
            e.erase("default");
            e["feature"] = f.feature;
            if (!f.observe) e["observe"] = false;
        } else if (f.observe) e["observe"] = true;
        if (f.type == field_type::number && f.draw_hi > f.draw_lo) e["draw"] = {f.draw_lo, f.draw_hi};
        if (!f.draw_weights.empty()) {
            e["draw"] = detail::json::object();
            for (std::size_t c = 0; c < f.draw_weights.size(); ++c) e["draw"][f.categories[c]] = f.draw_weights[c];
        }
        a.push_back(std::move(e));
    }
    return a;
}

}  // namespace gpuplace
