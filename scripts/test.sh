#!/usr/bin/env bash
# Sets up everything (scripts/setup.sh) and runs every test: the C++ doctest suite and the examples
# through ctest, then the Python tests through pytest (under each optimised build of the core this CPU
# runs). Exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# The benchmarks are built and run by their own commands (benchmarks/README.md), not by the tests.
# clang (with libFuzzer) is needed by the optimised clang and fuzzing stages.
extra=""; [ -z "${GPUPLACE_QUICK:-}" ] && extra="clang"
GPUPLACE_EXTRA_PKGS="${GPUPLACE_EXTRA_PKGS:-$extra}" GPUPLACE_RELEASE_FLAGS="${GPUPLACE_RELEASE_FLAGS:--O1 -DNDEBUG}" \
  GPUPLACE_CMAKE_ARGS="${GPUPLACE_CMAKE_ARGS:--DGPUPLACE_BUILD_BENCHMARKS=OFF}" bash scripts/setup.sh
# The reliability stages' two long builds (the suite under ASan + UBSan at -O0, the fuzzers) start
# here in the background, niced, on what the tests leave of the cores (pytest runs on one); their
# stages below find them built. The build's output goes to build-asan/background-build.log.
bg=""
if [ -z "${GPUPLACE_QUICK:-}" ]; then
  mkdir -p build-asan
  # setsid gives the builds a process group to stop them by and, on Linux, a scheduler autogroup of
  # their own, which takes the nice value too: otherwise the kernel shares the cores equally between
  # the builds and the tests, and the tests run 1.6 to 1.7 times slower
  setsid bash -c 'echo 19 > /proc/self/autogroup 2>/dev/null || true
    exec nice -n 19 bash -c "bash scripts/sanitize.sh --build-only && bash scripts/fuzz.sh --build-only"' \
    > build-asan/background-build.log 2>&1 &
  bg=$!
  # a failing stage stops the builds (their process group; the process itself if it has none yet)
  trap 'if [ -n "$bg" ]; then kill -- "-$bg" 2>/dev/null || kill "$bg" 2>/dev/null || true; fi' EXIT
fi
printf '\n==> C++ tests (ctest)\n'
ctest --test-dir build --output-on-failure -j "${GPUPLACE_JOBS:-2}"
if [ -z "${GPUPLACE_NO_PYTHON:-}" ] && [ -d tests/python ] && [ -x .venv/bin/python ]; then
  best=$(.venv/bin/python -c 'import gpuplace; print(gpuplace.core_variant)')
  printf '\n==> Python tests (pytest, core %s)\n' "$best"
  .venv/bin/python -m pytest -q tests/python
  # Again under every other optimised build of the core this CPU runs (an AVX-512 machine runs the
  # x86-64-v4 and the x86-64-v3 core): the torch and C++ networks must agree under each.
  for core in x86-64-v4 x86-64-v3; do
    [ "$core" = "$best" ] && continue
    GPUPLACE_CORE=$core .venv/bin/python -c 'import gpuplace' 2>/dev/null || continue
    printf '\n==> Python tests (pytest, core %s)\n' "$core"
    GPUPLACE_CORE=$core .venv/bin/python -m pytest -q tests/python
  done
fi
# Reliability stages: the trajectory tests built by an optimised clang, C++ tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, and a short fuzzing run over every fuzzer's corpus
# (skip with GPUPLACE_QUICK=1).
if [ -n "$bg" ]; then
  printf '\n==> the background builds (build-asan/background-build.log)\n'
  if ! wait "$bg"; then
    bg=""
    tail -n 60 build-asan/background-build.log
    printf '==> the sanitizer or fuzzer build FAILED\n'
    exit 1
  fi
  bg=""
  grep -- '==> .* built' build-asan/background-build.log || true
fi
if [ -z "${GPUPLACE_QUICK:-}" ]; then
  bash scripts/clang_check.sh
  [ -f scripts/sanitize.sh ] && bash scripts/sanitize.sh
  [ -f scripts/fuzz.sh ] && bash scripts/fuzz.sh --ci
fi
printf '\n==> all tests passed in %ss\n' "$(( $(date +%s) - start ))"
