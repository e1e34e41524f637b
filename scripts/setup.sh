#!/usr/bin/env bash
# Sets up everything gpuplace needs on a fresh Debian machine: system packages (C++ dependencies),
# a Python virtual environment in .venv with the gpuplace package, and a Release build in build/.
#   scripts/setup.sh            C++ build + Python package with its test and RL extras
#   GPUPLACE_NO_PYTHON=1 ...    C++ only
#   GPUPLACE_EXTRA_PKGS="clang" more Debian packages (scripts/test.sh: clang for the fuzzers)
#   GPUPLACE_CORES=host ...     the Python package's core for this CPU only (default here: all variants)
#   GPUPLACE_ARCH=portable ...  programs for any x86-64 CPU (default: x86-64-v3 where the CPU runs it;
#                               x86-64-v4 for AVX-512 CPUs: a faster C++ PPO that rounds differently)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${GPUPLACE_JOBS:-2}

step() { printf '\n==> %s\n' "$*"; }

# 1. System packages (Debian). Only what is missing is installed.
pkgs=(g++ libeigen3-dev nlohmann-json3-dev doctest-dev libbenchmark-dev libcli11-dev coinor-libclp-dev pkgconf python3-venv ${GPUPLACE_EXTRA_PKGS:-})
command -v cmake >/dev/null 2>&1 || pkgs+=(cmake)
command -v ninja >/dev/null 2>&1 || pkgs+=(ninja-build)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  step "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. C++: configure and build tests, examples, programs and benchmarks.
# GPUPLACE_ARCH (default x86-64-v3): the CPU the programs are compiled for. x86-64-v3 (AVX2, FMA)
# trains the C++ PPO about twice as fast as portable code, to the same numbers on every CPU that
# runs it (docs/performance.md); on a CPU without it the build stays portable (CMake says so).
# portable, x86-64-v4 (AVX-512) or native also work.
ARCH=${GPUPLACE_ARCH:-x86-64-v3}
step "building C++ (build/, Release, GPUPLACE_ARCH=$ARCH)"
GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
# GPUPLACE_RELEASE_FLAGS: scripts/test.sh builds the examples and programs at -O1 (they only have to
# run correctly there, and -O3 doubles their compile time); everything else gets -O3.
cmake -S . -B build "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=${GPUPLACE_RELEASE_FLAGS:--O3 -DNDEBUG}" \
  "-DGPUPLACE_ARCH=$ARCH" ${GPUPLACE_CMAKE_ARGS:-} | grep -E '^-- gpuplace:' || true
cmake --build build -j "$JOBS"

# 3. Python: a virtual environment with the bindings and their extras.
if [ -z "${GPUPLACE_NO_PYTHON:-}" ] && [ -f python/pyproject.toml ]; then
  step "installing the Python package into .venv"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  # torch==2.13.0 first: this exact CPU build is available locally (any other version pulls CUDA).
  .venv/bin/python -m pip install -q "torch==2.13.0"
  # rllib: Ray RLlib/Tune (tests/python/test_rllib.py); it pins gymnasium==1.2.2, which SB3 and the bindings run under too.
  # GPUPLACE_CORES=all: every CPU variant of the core (pip's default is this machine's alone), so that
  # scripts/test.sh runs the Python tests under each one this CPU runs.
  # Not on a terminal (CI, a pipe): pip's verbose output through scripts/pip_progress.py, a line per
  # build phase and at least every 20 s with the compile steps done of the total (the whole output
  # in .venv/pip-install.log); pip -q alone prints nothing for the minutes the core compiles.
  if [ -t 1 ]; then
    GPUPLACE_CORES="${GPUPLACE_CORES:-all}" .venv/bin/python -m pip install -q "${ROOT}/python[sb3,plot,test,rllib,experiments]"
  else
    GPUPLACE_CORES="${GPUPLACE_CORES:-all}" .venv/bin/python -m pip install -v "${ROOT}/python[sb3,plot,test,rllib,experiments]" 2>&1 |
      .venv/bin/python scripts/pip_progress.py --log .venv/pip-install.log
  fi
fi
step "setup done"
