#pragma once
/// \file json/impl/colocation_inl.hpp
/// The definitions json/colocation.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <string>
#include <string_view>

#include "../../colocation.hpp"
#include "../../data.hpp"
#include "../../detail/input_file.hpp"
#include "../../model_zoo.hpp"
#include "../parse.hpp"
#include "../colocation.hpp"

namespace gpuplace {

GPUPLACE_INLINE colocation_config colocation_from_json(const detail::json& j, std::string_view path) {
    using namespace detail;
    check_keys(j, path, {"enabled", "max_jobs_per_gpu", "gpu_memory_gb", "profile"});
    colocation_config c;
    read_bool(j, path, "enabled", c.enabled);
    read_int(j, path, "max_jobs_per_gpu", c.max_jobs_per_gpu, 1, 64);
    read_number(j, path, "gpu_memory_gb", c.gpu_memory_gb, 1e-9, 1e6);
    read_string(j, path, "profile", c.profile);
    return c;
}

GPUPLACE_INLINE detail::json to_json(const colocation_config& c) {
    detail::json j = {{"enabled", c.enabled}, {"max_jobs_per_gpu", c.max_jobs_per_gpu}, {"gpu_memory_gb", c.gpu_memory_gb}};
    if (!c.profile.empty()) j["profile"] = c.profile;
    return j;
}

GPUPLACE_INLINE interference_table read_json_profile(const std::string& file, const ModelZoo& zoo, interference_table base) {
    std::string text;
    if (!detail::read_input_file<ConfigError>(file, text, display_path(file), "co-location profile: "))
        throw ConfigError("co-location profile: cannot open \"" + display_path(file) + "\"");
    const auto j = detail::parse_json(text, file);
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

}  // namespace gpuplace
