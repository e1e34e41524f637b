// gpuplace-train: trains the reference PPO on a scenario (src/training_run/: restarts, validation,
// the best network kept, a run folder that resumes), then (with --compare) evaluates it against
// every heuristic on held-out seeds, prints the table and writes plots (`python3 -m gpuplace plot
// OUT`, from the installed Python package).
//   gpuplace-train --help
// Ctrl-C (SIGINT) or SIGTERM: the current iteration finishes, the state is saved and the program
// exits with 130 / 143; `gpuplace-train --out DIR --resume` continues. A second signal exits at once
// (the files on disk are always whole: every write is atomic). The program: apps/lib/train_program.cpp.
#include "lib/train_program.hpp"

int main(int argc, char** argv) { return gpuplace::apps::train_main(argc, argv); }
