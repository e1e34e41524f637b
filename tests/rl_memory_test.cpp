// rl/memory.hpp: keep_freed_memory() takes glibc's settings (a program's choice, never the
// library's), and memory allocated and freed after it is still usable.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include <gpuplace/rl/memory.hpp>

TEST_CASE("rl memory: keep_freed_memory() applies on glibc, blocks of changing sizes still allocate and free") {
    const bool kept = gpuplace::rl::keep_freed_memory();
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    CHECK(kept);  // (a sanitizer's allocator ignores mallopt)
#else
    (void)kept;
#endif
    CHECK(gpuplace::rl::keep_freed_memory(std::size_t{5} << 30) == kept);  // above 1 GiB: capped, still taken
    // sizes as the per_gpu network's matrices change from one minibatch to the next
    for (std::size_t mb : {3, 9, 5, 17, 2, 24, 11}) {
        std::vector<float> v(mb << 18, 1.0f);  // mb MiB
        v[v.size() - 1] = 2.0f;
        CHECK(v.front() + v.back() == 3.0f);
    }
}
