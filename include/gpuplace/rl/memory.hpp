#pragma once
/// \file rl/memory.hpp
/// keep_freed_memory(): makes the C library keep freed memory for reuse instead of returning it to
/// the system. Training the per_gpu network allocates and frees matrices of a few MB whose sizes
/// change with every minibatch (only the valid GPUs are scored); by default glibc returns such
/// blocks to the system when they are freed and the next allocation faults their pages in again
/// (1.3 M page faults in 30 s of the main job's training, 11 k with this; runs 7-9% faster).
/// It changes a process-wide setting, so the library never calls it by itself: programs do
/// (gpuplace-train, `python -m gpuplace train`).

#include <cstddef>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gpuplace::rl {

/// Blocks up to 32 MiB come from the heap, and up to `keep_bytes` of freed memory at its top stay
/// there. Returns false where the C library is not glibc (nothing is changed).
inline bool keep_freed_memory(std::size_t keep_bytes = std::size_t{512} << 20) {
#if defined(__GLIBC__)
    const int keep = keep_bytes > std::size_t{1} << 30 ? 1 << 30 : static_cast<int>(keep_bytes);
    return mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, keep) == 1;
#else
    (void)keep_bytes;
    return false;
#endif
}

}  // namespace gpuplace::rl
