#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (build-fuzz/) and runs each one.
#
#   bash scripts/fuzz.sh --ci          every fuzzer replays its whole corpus (fuzz/corpus/<name>/),
#                                      then fuzzes for GPUPLACE_FUZZ_SECONDS (default 12) seconds;
#                                      new inputs go to a scratch directory, the checkout stays clean
#   bash scripts/fuzz.sh [name ...]    the longer campaign: GPUPLACE_FUZZ_SECONDS (default 600) per
#                                      fuzzer, then new inputs are merged (minimised) into fuzz/corpus/
#   bash scripts/fuzz.sh --build-only  builds the fuzzers and stops (scripts/test.sh builds them
#                                      ahead, in the background)
#
# Exits non-zero when a fuzzer finds a crash, a sanitizer report or a failed check; the input is
# saved in build-fuzz/artifacts/ (turn it into a test in tests/regression_test.cpp). See
# docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${GPUPLACE_FUZZ_DIR:-build-fuzz}
JOBS=${GPUPLACE_JOBS:-2}
CI=0
BUILD_ONLY=0
names=()
for a in "$@"; do
  case "$a" in
    --ci) CI=1 ;;
    --build-only) BUILD_ONLY=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) names+=("$a") ;;
  esac
done
if [ "$CI" = 1 ]; then SECONDS_EACH=${GPUPLACE_FUZZ_SECONDS:-12}; else SECONDS_EACH=${GPUPLACE_FUZZ_SECONDS:-600}; fi
CXX_FUZZ=${GPUPLACE_FUZZ_CXX:-clang++}
start=$(date +%s)

printf '\n==> fuzzing (%s, %ss per fuzzer)\n' "$([ "$CI" = 1 ] && echo CI run || echo campaign)" "$SECONDS_EACH"
if ! command -v "$CXX_FUZZ" >/dev/null 2>&1; then
  echo "fuzz.sh: $CXX_FUZZ not found; install clang (Debian: apt-get install clang)" >&2
  exit 1
fi
GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
cmake -S fuzz -B "$BUILD" "${GEN[@]}" -DCMAKE_CXX_COMPILER="$CXX_FUZZ" >/dev/null
targets=()
if ((${#names[@]})); then
  for n in "${names[@]}"; do targets+=("${n}_fuzzer"); done
  cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}"
else
  cmake --build "$BUILD" -j "$JOBS"
  for f in fuzz/*_fuzzer.cpp; do
    n=$(basename "$f" _fuzzer.cpp)
    [ -x "$BUILD/${n}_fuzzer" ] && names+=("$n")
  done
fi

if [ "$BUILD_ONLY" = 1 ]; then
  printf '==> fuzzers built (%ss)\n' "$(( $(date +%s) - start ))"
  exit 0
fi

ART="$ROOT/$BUILD/artifacts"
mkdir -p "$ART"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# One fuzzer: its report to stdout, its summary line to $BUILD/<name>.summary, non-zero if it failed.
fuzz_one() {
  local n=$1
  local exe="$BUILD/${n}_fuzzer"
  corpus="fuzz/corpus/$n"
  mkdir -p "$corpus"
  dict=(); [ -f "fuzz/$n.dict" ] && dict=(-dict="fuzz/$n.dict")
  log="$BUILD/$n.log"
  scratch="$BUILD/new/$n"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  # -rss_limit_mb / -malloc_limit_mb: an input that asks for gigabytes is a finding too
  opts=(-max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1
        -artifact_prefix="$ART/$n-" "${dict[@]}")
  [ "$CI" = 1 ] && opts+=(-seed=1)   # CI: the same mutation sequence every run (reproducible failures)
  printf -- '--- %s: ' "$n"
  status=0
  # 1. every corpus input once (the regression run), 2. fuzzing, new inputs into the scratch dir
  "$exe" -runs=0 "${opts[@]}" "$corpus" >"$log" 2>&1 || status=$?
  if [ "$status" = 0 ]; then "$exe" "${opts[@]}" "$scratch" "$corpus" >>"$log" 2>&1 || status=$?; fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  line="$n: ${runs:-?} runs, ${speed:-?} exec/s, coverage ${cov:-?} edges, $(ls "$corpus" | wc -l) corpus inputs"
  if [ "$status" != 0 ]; then
    echo "FAILED (exit $status)"
    grep -E 'FUZZ_CHECK|ERROR|SUMMARY|uncaught|terminate|Test unit written' "$log" | head -20 || true
    echo "    full log: $log"
    line="$line: FAILED"
  else
    echo "${runs:-?} runs, ${speed:-?} exec/s, cov ${cov:-?}"
    if [ "$CI" = 0 ] && [ -n "$(ls -A "$scratch")" ]; then
      # keep only inputs that add coverage
      "$exe" -merge=1 "${dict[@]}" "$corpus" "$scratch" >>"$log" 2>&1 || true
    fi
  fi
  echo "$line" > "$BUILD/$n.summary"
  [ "$status" = 0 ]
}
# The fuzzers run $JOBS at a time (each is one process on one core), each one's report printed
# after it ends, in name order.
export -f fuzz_one
export BUILD ART CI SECONDS_EACH
for n in "${names[@]}"; do rm -f "$BUILD/$n.out" "$BUILD/$n.summary"; done
printf '%s\n' "${names[@]}" | xargs -P "$JOBS" -I{} bash -c 'fuzz_one "$1" > "$BUILD/$1.out" 2>&1' _ {} || true
failed=()
summary=()
for n in "${names[@]}"; do
  cat "$BUILD/$n.out"
  line=$(cat "$BUILD/$n.summary" 2>/dev/null || echo "$n: no summary: FAILED")
  summary+=("$line")
  case "$line" in *FAILED) failed+=("$n") ;; esac
done

printf '\n==> fuzzing summary (%ss)\n' "$(( $(date +%s) - start ))"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  printf 'fuzzers that failed: %s (inputs in %s)\n' "${failed[*]}" "$ART"
  exit 1
fi
