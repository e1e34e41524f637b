#pragma once
// Shared helpers of the fuzzers in fuzz/: a check that aborts with a message (libFuzzer then
// saves the input as a crash artifact), and the size caps that keep a fuzzed input from asking for
// millions of GPUs or jobs (the library accepts such sizes; fuzzing them only measures malloc).

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, ...)                                                              \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                             \
            std::fprintf(stderr, "\n");                                                    \
            std::abort();                                                                  \
        }                                                                                  \
    } while (0)

namespace gpuplace::fuzz {

/// Largest cluster a fuzzed scenario may build.
inline constexpr std::size_t max_gpus = 512;
/// Largest number of jobs a fuzzed workload may generate per episode.
inline constexpr std::size_t max_jobs = 400;
/// Steps a scenario fuzz input may take after reset().
inline constexpr std::size_t max_steps = 64;

}  // namespace gpuplace::fuzz
