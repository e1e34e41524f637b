// gpuplace::compiled: the optional compiled part of gpuplace (include/gpuplace/compiled.hpp). Its
// users compile with GPUPLACE_COMPILED (the target's interface defines it): their headers declare
// the cold code defined here once (impl/*_inl.hpp) and leave the default env types to the
// instantiations below (impl/extern_templates.hpp).
#ifndef GPUPLACE_COMPILED
#error "src/compiled/gpuplace.cpp is compiled with GPUPLACE_COMPILED (the gpuplace_compiled target)"
#endif

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

#include <gpuplace/json/impl/colocation_inl.hpp>
#include <gpuplace/json/impl/comm_inl.hpp>
#include <gpuplace/json/impl/information_inl.hpp>
#include <gpuplace/json/impl/presets_inl.hpp>
#include <gpuplace/json/impl/report_inl.hpp>
#include <gpuplace/json/impl/scenario_inl.hpp>
#include <gpuplace/json/impl/tenancy_inl.hpp>
#include <gpuplace/json/impl/topology_inl.hpp>
#include <gpuplace/json/impl/workload_inl.hpp>
#include <gpuplace/json/impl/zoo_inl.hpp>
#include <gpuplace/impl/topology_levels_inl.hpp>
#include <gpuplace/impl/trace_inl.hpp>
#include <gpuplace/impl/workload_source_inl.hpp>

namespace gpuplace {
template class basic_simulator<TrainingJob>;
template class basic_env<TreeTopology, TrainingJob, comm_model>;
template class basic_vector_env<basic_env<TreeTopology, TrainingJob, comm_model>>;
}  // namespace gpuplace
