#pragma once
/// \file impl/extern_templates.hpp
/// With GPUPLACE_COMPILED (compiled.hpp): the env types gpuplace::compiled instantiates once
/// (src/compiled/gpuplace.cpp), declared here so that a program that includes the umbrella header
/// does not instantiate them again: the env (every comm model),
/// its simulator and its vector env. gpuplace.hpp includes this.

#ifdef GPUPLACE_COMPILED

#include "../comm.hpp"
#include "../env.hpp"
#include "../job.hpp"
#include "../simulator.hpp"
#include "../topology.hpp"
#include "../vector_env.hpp"

namespace gpuplace {
extern template class basic_simulator<TrainingJob>;
extern template class basic_env<TreeTopology, TrainingJob, comm_model>;
extern template class basic_vector_env<basic_env<TreeTopology, TrainingJob, comm_model>>;
}  // namespace gpuplace

#endif
