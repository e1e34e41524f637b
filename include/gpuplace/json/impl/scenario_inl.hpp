#pragma once
/// \file json/impl/scenario_inl.hpp
/// The definitions json/scenario.hpp declares: included by it in the header-only library, compiled once
/// into gpuplace::compiled (src/compiled/gpuplace.cpp) when GPUPLACE_COMPILED is defined.

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>

#include "../../config.hpp"
#include "../../data.hpp"
#include "../../discipline_registry.hpp"
#include "../../reward_registry.hpp"
#include "../../detail/input_file.hpp"
#include "../colocation.hpp"
#include "../comm.hpp"
#include "../failures.hpp"
#include "../information.hpp"
#include "../tenancy.hpp"
#include "../topology.hpp"
#include "../workload.hpp"
#include "../zoo.hpp"
#include "../parse.hpp"
#include "../scenario.hpp"

namespace gpuplace {

GPUPLACE_INLINE scenario scenario_from_json(const detail::json& j) {
    using namespace detail;
    check_keys(j, "", {"name", "topology", "comm", "zoo", "workload", "env", "reward", "colocation", "durations", "preemption", "job_fields",
                      "rounds", "failures", "tenants", "spot", "deadlines", "observation"});
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
        if (it->is_string()) {
            s.zoo.file = it->get<std::string>();
            s.zoo.read_file = &load_zoo;  // read when an env is built, from the path resolve_paths() may still change
        }
        else if (it->is_object()) s.zoo.zoo = zoo_from_json(*it, "/zoo");
    }
    if (auto it = j.find("colocation"); it != j.end()) s.colocation = colocation_from_json(*it, "/colocation");
    if (!s.colocation.profile.empty()) s.colocation.read_json = &read_json_profile;  // read when an env is built
    if (auto it = j.find("job_fields"); it != j.end()) s.job_fields = job_fields_from_json(*it, "/job_fields");
    if (auto it = j.find("workload"); it != j.end()) s.workload = workload_from_json(*it, "/workload", s.job_fields);
    if (auto it = j.find("durations"); it != j.end()) s.durations = durations_from_json(*it, "/durations");
    if (auto it = j.find("preemption"); it != j.end()) s.preemption = preemption_from_json(*it, "/preemption");
    if (auto it = j.find("rounds"); it != j.end()) s.rounds = rounds_from_json(*it, "/rounds");
    if (auto it = j.find("failures"); it != j.end()) s.failures = failures_from_json(*it, "/failures");
    if (auto it = j.find("tenants"); it != j.end()) s.tenants = tenants_from_json(*it, "/tenants");
    if (auto it = j.find("spot"); it != j.end()) s.spot = spot_from_json(*it, "/spot");
    if (auto it = j.find("deadlines"); it != j.end()) s.deadlines = deadlines_from_json(*it, "/deadlines");
    if (auto it = j.find("env"); it != j.end()) {
        const std::string p = "/env";
        check_keys(*it, p, {"queue_policy", "backfill", "allow_defer", "queue_window", "max_steps", "max_time", "action_mode",
                            "slots", "placer", "confine_type", "round_idle", "round_advisor"});
        read_bool(*it, p, "confine_type", s.env.confine_type);
        read_bool(*it, p, "round_idle", s.env.round_idle);
        read_string(*it, p, "round_advisor", s.env.round_advisor);
        std::string q = queue_policy_name(s.env);
        read_string(*it, p, "queue_policy", q);
        if (const auto o = detail::enum_from_name<queue_order>(q)) {
            s.env.order = *o;
            s.env.discipline.clear();
        } else if (find_discipline(q)) {  // a discipline registered by name (discipline_registry.hpp)
            s.env.order = queue_order::registered;
            s.env.discipline = q;
        } else {
            std::string allowed = detail::enum_name_list<queue_order>();
            for (const auto& n : registered_discipline_names()) allowed += ", " + n;
            config_fail(p + "/queue_policy", "unknown queue policy \"" + q + "\" (allowed: " + allowed + ")");
        }
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
        if (!it->is_object()) config_fail(p, "expected an object, got " + short_dump(*it));
        for (auto k = it->begin(); k != it->end(); ++k) {  // the built-in keys, and reward terms of one's own (reward_registry.hpp)
            if (std::find(std::begin(builtin_reward_keys), std::end(builtin_reward_keys), k.key()) != std::end(builtin_reward_keys)) continue;
            if (!find_reward_term(k.key())) {
                std::string allowed;
                for (auto b : builtin_reward_keys) allowed += (allowed.empty() ? "" : ", ") + std::string(b);
                for (const auto& t : registered_reward_terms()) allowed += ", " + t->name;
                config_fail(join_path(p, k.key()), "unknown key \"" + k.key() + "\" (allowed: " + allowed + ")");
            }
            double w = 0;
            read_number(*it, p, k.key().c_str(), w);
            s.reward.terms.emplace_back(k.key(), w);
        }
        read_number(*it, p, "jct", s.reward.jct);
        read_number(*it, p, "makespan", s.reward.makespan);
        read_number(*it, p, "comm", s.reward.comm);
        read_number(*it, p, "placement", s.reward.placement);
        read_number(*it, p, "time_scale", s.reward.time_scale, 1e-12);
        read_number(*it, p, "deadline_miss", s.reward.deadline_miss);
        read_number(*it, p, "wasted", s.reward.wasted);
        read_number(*it, p, "unfairness", s.reward.unfairness);
    }
    if (auto it = j.find("observation"); it != j.end()) {
        const std::string p = "/observation";
        if (!it->is_object()) config_fail(p, "expected an object, got " + short_dump(*it));
        check_keys(*it, p, {"features", "exclude"});
        if (auto k = it->find("features"); k != it->end()) s.observation.features = read_names(*k, p + "/features", "a segment name");
        if (auto k = it->find("exclude"); k != it->end()) s.observation.exclude = read_names(*k, p + "/exclude", "a segment name");
        if (!s.observation.features.empty() && !s.observation.exclude.empty())
            config_fail(p, "give \"features\" (the segments to show) or \"exclude\" (those to leave out), not both");
    }
    return s;
}

GPUPLACE_INLINE scenario parse_scenario(std::string_view text, std::string_view source) {
    return scenario_from_json(detail::parse_json(text, source));
}

GPUPLACE_INLINE scenario load_scenario(const std::string& file) {
    std::string text;
    if (!detail::read_input_file<ConfigError>(file, text, display_path(file), "scenario file "))
        throw ConfigError("cannot open scenario file \"" + display_path(file) + "\"");
    auto s = parse_scenario(text, file);
    s.resolve_paths(std::filesystem::path(display_path(file)).parent_path().string());
    return s;
}

GPUPLACE_INLINE detail::json to_json(const scenario& s) {
    detail::json j;
    j["name"] = s.name;
    j["topology"] = to_json(s.topology);
    j["comm"] = to_json(s.comm);
    if (s.zoo.zoo) j["zoo"] = to_json(*s.zoo.zoo);
    else if (!s.zoo.file.empty()) j["zoo"] = s.zoo.file;
    j["workload"] = to_json(s.workload);
    const auto& e = s.env;
    j["env"] = {{"queue_policy", queue_policy_name(e)}, {"backfill", e.backfill},   {"allow_defer", e.allow_defer},
                {"queue_window", e.queue_window},     {"max_steps", e.max_steps}, {"max_time", e.max_time}};
    if (e.mode != action_mode::gpu) {  // a GPU-mode scenario's JSON is as it was before the modes
        j["env"]["action_mode"] = to_string(e.mode);
        j["env"]["slots"] = e.slots;
        j["env"]["placer"] = to_string(e.placer);
    }
    if (e.confine_type) j["env"]["confine_type"] = true;  // written only when set: other scenarios' JSON is unchanged
    if (e.round_idle) j["env"]["round_idle"] = true;
    if (!e.round_advisor.empty()) j["env"]["round_advisor"] = e.round_advisor;
    if (s.colocation.enabled) j["colocation"] = to_json(s.colocation);
    // written only when not the default: other scenarios' JSON is unchanged
    if (!(s.durations == durations_config{})) j["durations"] = to_json(s.durations);
    if (!(s.preemption == preemption_config{})) j["preemption"] = to_json(s.preemption);
    if (!(s.rounds == rounds_config{})) j["rounds"] = to_json(s.rounds);
    if (!(s.failures == failures_config{})) j["failures"] = to_json(s.failures);
    if (!s.job_fields.empty()) j["job_fields"] = to_json(s.job_fields);
    if (!(s.tenants == tenants_config{})) j["tenants"] = to_json(s.tenants);
    if (!(s.spot == spot_config{})) j["spot"] = to_json(s.spot);
    if (!(s.deadlines == deadlines_config{})) j["deadlines"] = to_json(s.deadlines);
    if (!s.observation.features.empty()) j["observation"]["features"] = s.observation.features;  // written when set
    if (!s.observation.exclude.empty()) j["observation"]["exclude"] = s.observation.exclude;
    const auto& r = s.reward;
    j["reward"] = {{"jct", r.jct}, {"makespan", r.makespan}, {"comm", r.comm}, {"placement", r.placement}, {"time_scale", r.time_scale}};
    for (const auto& [k, v] : {std::pair{"deadline_miss", r.deadline_miss}, {"wasted", r.wasted}, {"unfairness", r.unfairness}})
        if (v != 0) j["reward"][k] = v;  // written when set: other scenarios' JSON is unchanged
    for (const auto& [k, v] : r.terms) j["reward"][k] = v;
    return j;
}

}  // namespace gpuplace
