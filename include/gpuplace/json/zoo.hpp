#pragma once
/// \file json/zoo.hpp
/// JSON form of a model zoo (gpuplace/model_zoo.hpp): zoo_from_json(), load_zoo() (a zoo file),
/// to_json().

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "../compiled.hpp"
#include "../model_zoo.hpp"
#include "parse.hpp"

namespace gpuplace {

/// Reads a zoo: {"gpu_type", "reference": {node_bandwidth, network_bandwidth, node_latency,
/// network_latency}, "models": [{"name", "memory_gb", "throughput": {"<gpus>": [consolidated,
/// spread], ...}}, ...], "colocation": {"<model>": {"<other>": [self, other]}}, "types": [{"gpu_type",
/// "models": [{"name", "throughput"}, ...], "colocation"}, ...]} ("source", "license" and "notes"
/// are allowed and ignored). A type under "types" lists the reference type's models in
/// order (their memory is the reference type's). Errors name the JSON path.
[[nodiscard]] GPUPLACE_INLINE ModelZoo zoo_from_json(const detail::json& j, std::string_view path = "/zoo");

namespace detail {
/// A zoo's models and co-location pairs (what zoo_from_json() reads, and each entry of "types").
[[nodiscard]] GPUPLACE_INLINE ModelZoo zoo_models_from_json(const json& j, std::string_view path, measurement_cluster ref,
                                                   const std::string& gpu_type, const ModelZoo* reference);
}  // namespace detail

/// Reads a zoo file ("$GPUPLACE_DATA/..." allowed); errors name the file. ModelZoo::load() and
/// an env whose scenario names a zoo file (zoo_config::read_file) call it.
[[nodiscard]] GPUPLACE_INLINE ModelZoo load_zoo(const std::string& path);

namespace detail {
/// ModelZoo::load()'s reader (model_zoo.hpp declares it).
struct zoo_file_reader {
    [[nodiscard]] static ModelZoo read(const std::string& path) { return load_zoo(path); }
};
}  // namespace detail

/// The JSON that zoo_from_json() reads back to an equal zoo.
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const ModelZoo& z);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/zoo_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
