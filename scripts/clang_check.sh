#!/usr/bin/env bash
# Builds the trajectory, observation and topology-conformance tests with clang, optimised (-O2) for
# this CPU (-march=native), in build-clang/, and runs them. The test suite proper is built with the
# default compiler at -O0 / -O1; this stage checks the code a researcher's optimised clang build
# runs: the same episodes bit for bit (tests/trajectory_hashes.inc), and no fault (an aligned
# vector store Clang emitted where GCC emitted an unaligned one crashed only here).
#
#   bash scripts/clang_check.sh                 clang++
#   GPUPLACE_CLANG_CXX=clang++-16 bash ...      another clang
#
# Exits non-zero when a build fails or a test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${GPUPLACE_CLANG_DIR:-build-clang}
CXX_CHECK=${GPUPLACE_CLANG_CXX:-clang++}
JOBS=${GPUPLACE_JOBS:-2}
start=$(date +%s)

printf '\n==> optimised clang build: trajectory, observation and topology tests (%s/)\n' "$BUILD"
if ! command -v "$CXX_CHECK" >/dev/null 2>&1; then
  echo "clang_check.sh: $CXX_CHECK not found; install clang (Debian: apt-get install clang)" >&2
  exit 1
fi
mkdir -p "$BUILD"
# the flags of the library's optimised builds (CMakeLists.txt): no contraction into FMA, so that
# every build gives the same bits
FLAGS=(-std=c++20 -O2 -DNDEBUG -march=native -ffp-contract=off -I"$ROOT/include"
       "-DGPUPLACE_SOURCE_DIR=\"$ROOT\"" "-DGPUPLACE_DATA_DIR=\"$ROOT/data\"")
sources=(main trajectory_test observation_test topology_conformance_test)
printf '%s\n' "${sources[@]}" | xargs -P "$JOBS" -I{} "$CXX_CHECK" "${FLAGS[@]}" -c "tests/{}.cpp" -o "$BUILD/{}.o"
objects=(); for s in "${sources[@]}"; do objects+=("$BUILD/$s.o"); done
"$CXX_CHECK" "${objects[@]}" -o "$BUILD/clang_tests"
"$BUILD/clang_tests"
printf '==> optimised clang build passed in %ss\n' "$(( $(date +%s) - start ))"
