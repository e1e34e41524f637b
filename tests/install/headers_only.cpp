// Compiled by tests/install/CMakeLists.txt against the installed package: the umbrella header and
// the env's headers pull in neither a JSON library nor Eigen (gpuplace/json.hpp and gpuplace/rl/
// do, for the programs that include them).
#include <gpuplace/gpuplace.hpp>

#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "gpuplace/gpuplace.hpp includes nlohmann/json"
#endif
#ifdef EIGEN_WORLD_VERSION
#error "gpuplace/gpuplace.hpp includes Eigen"
#endif

int main() { return 0; }
