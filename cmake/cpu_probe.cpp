// Run by CMakeLists.txt when GPUPLACE_ARCH is x86-64-v3: exits 0 when this CPU runs x86-64-v3
// code (then the project's programs are compiled for it), 1 otherwise.
#include <gpuplace/detail/cpu.hpp>

int main() { return gpuplace::detail::has_x86_64_v3() ? 0 : 1; }
