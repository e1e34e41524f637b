#pragma once
// apps/lib/train_program.hpp: gpuplace-train's program as a function, so that a test program runs
// the same program with faults injected through its seams (apps/testdata/train_faults.cpp).

#include <cstddef>
#include <functional>
#include <string_view>

#include <gpuplace/atomic_file.hpp>

namespace gpuplace::apps {

/// What a test injects into a training run (rl::run_options' seams); empty in gpuplace-train.
struct train_seams {
    std::function<void(std::string_view event, std::size_t n)> on_event;  ///< rl::run_options::on_event
    write_observer on_write;                                               ///< rl::run_options::on_write
};

/// gpuplace-train's main(): parses the command line, trains (or loads) and compares. Returns the
/// exit status (0; 1 for an error, 2 for a usage error; 128 + signal when stopped by SIGINT/SIGTERM).
int train_main(int argc, char** argv, const train_seams& seams = {});

}  // namespace gpuplace::apps
