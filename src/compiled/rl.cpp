// gpuplace::rl_compiled: the reference PPO's float types compiled once (rl/impl/extern_templates.hpp);
// its users compile with GPUPLACE_RL_COMPILED and GPUPLACE_COMPILED (it links gpuplace::compiled).
#ifndef GPUPLACE_RL_COMPILED
#error "src/compiled/rl.cpp is compiled with GPUPLACE_RL_COMPILED (the gpuplace_rl_compiled target)"
#endif

#include <gpuplace/rl/rl.hpp>

namespace gpuplace::rl {
template class basic_mlp<float>;
template class basic_actor_critic<float>;
template class basic_masked_categorical<float>;
template basic_checkpoint<float> checkpoint_from_json<float>(const gpuplace::detail::json&, std::string_view);
template basic_checkpoint<float> parse_checkpoint<float>(std::string_view, std::string_view);
template basic_checkpoint<float> load_checkpoint<float>(const std::string&);
template basic_checkpoint<float> load_model<float>(const std::string&);
}  // namespace gpuplace::rl
