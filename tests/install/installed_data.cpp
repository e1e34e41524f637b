// Compiled by tests/install/CMakeLists.txt against the installed package and run with GPUPLACE_DATA
// unset: the data folder is the install prefix's, and a shipped model and the philly preset (its
// trace files) load from it. Prints the data folder.
#include <cstdio>
#include <memory>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/rl/rl.hpp>

int main() {
    std::printf("%s\n", gpuplace::data_dir().c_str());
    const auto model = gpuplace::rl::load_model("philly");
    gpuplace::env env(gpuplace::preset_scenario("philly"));
    env.reset(1);
    gpuplace::rl::network_policy policy(std::make_shared<const decltype(model.network)>(model.network));
    int steps = 0;
    for (; !env.done() && steps < 200; ++steps) (void)env.step(policy.act(env));
    std::printf("%d steps\n", steps);
    return steps > 0 ? 0 : 1;
}
