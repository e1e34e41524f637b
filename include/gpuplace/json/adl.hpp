#pragma once
/// \file json/adl.hpp
/// nlohmann::json's hooks (argument-dependent to_json / from_json) for gpuplace's types, so that
/// they nest in a user's JSON like any other value:
///
///     gpuplace::json j = scenario;                 // to_json(const scenario&)
///     auto s = j.get<gpuplace::scenario>();        // scenario_from_json()
///     struct experiment { std::string name; gpuplace::scenario s; };   // a user's type whose own
///     void to_json(json& j, const experiment& e) { j = {{"name", e.name}, {"scenario", e.s}}; }
///
/// and the other way round, a user's type plugs into gpuplace's readers through its own hooks:
/// comm_from_json<C>() reads a user's comm model C with C's from_json(const json&, C&) when it has
/// one (json/comm.hpp). Errors name the JSON path from the document's root ("config /racks: ...").

#include <concepts>

#include "colocation.hpp"
#include "comm.hpp"
#include "parse.hpp"
#include "report.hpp"
#include "scenario.hpp"
#include "topology.hpp"
#include "workload.hpp"
#include "zoo.hpp"

namespace gpuplace {

/// to_json(j, x) for every gpuplace type that has a to_json(x) (found by nlohmann through ADL).
template <class T>
    requires requires(const T& v) {
        { to_json(v) } -> std::same_as<json>;
    }
void to_json(json& j, const T& v) {
    j = to_json(v);
}

inline void from_json(const json& j, topology_config& c) { c = topology_config_from_json(j, ""); }
inline void from_json(const json& j, comm_config& c) { c = comm_config_from_json(j, ""); }
inline void from_json(const json& j, ModelZoo& z) { z = zoo_from_json(j, ""); }
inline void from_json(const json& j, colocation_config& c) { c = colocation_from_json(j, ""); }
inline void from_json(const json& j, workload_config& w) { w = workload_from_json(j, ""); }
inline void from_json(const json& j, scenario& s) { s = scenario_from_json(j); }

}  // namespace gpuplace
