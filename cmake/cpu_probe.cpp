// Run by CMakeLists.txt when GPUPLACE_ARCH is x86-64-v3 or x86-64-v4, with that level as its
// argument: exits 0 when this CPU runs code compiled for it (then the project's programs are
// compiled for it), 1 otherwise.
#include <cstring>

#include <gpuplace/cpu.hpp>

int main(int argc, char** argv) {
    const bool v4 = argc > 1 && std::strcmp(argv[1], "x86-64-v4") == 0;
    return (v4 ? gpuplace::has_x86_64_v4() : gpuplace::has_x86_64_v3()) ? 0 : 1;
}
