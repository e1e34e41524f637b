#pragma once
/// \file json.hpp
/// JSON forms of scenarios and their parts (topology, communication model, model zoo, workload,
/// co-location) and of results (metrics, evaluation reports), with nlohmann::json; one header per
/// concept in json/, this one includes them all:
///  - reading: every key optional unless said, unknown keys and bad values are ConfigErrors naming
///    the JSON path and the value (e.g. "config /topology/racks: value 0 out of range [1, 65536]");
///  - writing: to_json(x), which the reader reads back to the same value;
///  - nlohmann's hooks: `json j = x;` and `j.get<T>()` work for these types (json/adl.hpp), and a
///    user type with its own to_json / from_json (or an adl_serializer) nests inside them;
///  - scenario files and text: load_scenario(), parse_scenario() (json/scenario.hpp: the layer that
///    reads the files a scenario names); the presets (json/presets.hpp, data/presets.hpp).
/// The rest of the library does not parse JSON, so that it is cheap to include.

#include "json/adl.hpp"
#include "json/colocation.hpp"
#include "json/comm.hpp"
#include "json/information.hpp"
#include "json/parse.hpp"
#include "json/presets.hpp"
#include "json/report.hpp"
#include "json/scenario.hpp"
#include "json/tenancy.hpp"
#include "json/topology.hpp"
#include "json/workload.hpp"
#include "json/zoo.hpp"
