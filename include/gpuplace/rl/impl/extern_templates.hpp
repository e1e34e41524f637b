#pragma once
/// \file rl/impl/extern_templates.hpp
/// With GPUPLACE_RL_COMPILED (the CMake target gpuplace::rl_compiled defines it, as
/// gpuplace::compiled defines GPUPLACE_COMPILED; compiled.hpp): the reference PPO's float types the
/// library instantiates once (src/compiled/rl.cpp), declared here so that a program that includes
/// rl/rl.hpp does not instantiate them again: the MLP, the actor-critic, the masked categorical and
/// the checkpoint readers. rl/rl.hpp includes this.

#ifdef GPUPLACE_RL_COMPILED

#include <string>
#include <string_view>

#include "../actor_critic.hpp"
#include "../categorical.hpp"
#include "../checkpoint.hpp"
#include "../mlp.hpp"

namespace gpuplace::rl {
extern template class basic_mlp<float>;
extern template class basic_actor_critic<float>;
extern template class basic_masked_categorical<float>;
extern template basic_checkpoint<float> checkpoint_from_json<float>(const gpuplace::detail::json&, std::string_view);
extern template basic_checkpoint<float> parse_checkpoint<float>(std::string_view, std::string_view);
extern template basic_checkpoint<float> load_checkpoint<float>(const std::string&);
extern template basic_checkpoint<float> load_model<float>(const std::string&);
}  // namespace gpuplace::rl

#endif
