#!/usr/bin/env bash
# Builds the C++ test suite (only the doctest executable: no examples, programs, benchmarks or
# Python module) with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ and runs it, then
# the threaded tests under ThreadSanitizer.
# Fails (non-zero exit) when the build fails, a test fails, or a sanitizer reports anything, even a
# report that did not stop the test. See docs/reliability.md.
#
#   bash scripts/sanitize.sh                 default compiler (CXX, else c++)
#   CXX=clang++ bash scripts/sanitize.sh     clang
#   GPUPLACE_PROPERTY_CASES=2000 ...         more property-test cases (default: the small test default)
#   bash scripts/sanitize.sh --build-only    builds the sanitized suite and stops (scripts/test.sh builds
#                                            it ahead, in the background)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${GPUPLACE_ASAN_DIR:-build-asan}
JOBS=${GPUPLACE_JOBS:-2}
start=$(date +%s)
BUILD_ONLY=0
for a in "$@"; do
  case "$a" in
    --build-only) BUILD_ONLY=1 ;;
    *) echo "sanitize.sh: unknown argument \"$a\" (takes --build-only)" >&2; exit 2 ;;
  esac
done

printf '\n==> C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (%s/)\n' "$BUILD"
GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
# -O0: sanitized -O1 compiles 4x slower (216 s vs 52 s for tests/env_test.cpp) and the suite still runs in seconds;
# -g1 (line tables: reports keep file:line) compiles ~20% faster than -g; _GLIBCXX_ASSERTIONS adds bounds checks to
# std::vector / std::span operator[] (libstdc++), which ASan alone misses inside a vector's capacity.
cmake -S . -B "$BUILD" "${GEN[@]}" \
  -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1 -D_GLIBCXX_ASSERTIONS" \
  -DGPUPLACE_SANITIZE=address,undefined \
  -DGPUPLACE_BUILD_TESTS=ON -DGPUPLACE_BUILD_EXAMPLES=OFF -DGPUPLACE_BUILD_APPS=OFF \
  -DGPUPLACE_BUILD_BENCHMARKS=OFF -DGPUPLACE_BUILD_PYTHON=OFF >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target gpuplace_tests
if [ "$BUILD_ONLY" = 1 ]; then
  printf '==> sanitized suite built (%ss)\n' "$(( $(date +%s) - start ))"
  exit 0
fi

# Every report goes to a log file as well as failing the process: a report swallowed by a test
# harness (or printed by a child process) still fails this stage.
LOGS="$ROOT/$BUILD/sanitizer-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:log_path=$LOGS/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$LOGS/ubsan"
export LSAN_OPTIONS="log_path=$LOGS/lsan"

# Prints every report in $LOGS and fails the stage if there is any.
report_logs() {
  if compgen -G "$LOGS/*" >/dev/null; then
    printf '\n==> sanitizer reports:\n'
    for f in "$LOGS"/*; do
      printf -- '--- %s\n' "$f"
      cat "$f"
    done
    status=1
  fi
}

# The suite runs in shards, $JOBS at a time: doctest's --first/--last cut the test cases (in their
# file order) into 8 ranges a core, so that the longest cases do not leave a core idle at the end
# (one process: 426 s; 16 shards two at a time: ~4 min). Each shard's output is kept apart and
# printed after it ends; a shard that fails fails the stage.
status=0
n=$("$BUILD/tests/gpuplace_tests" --count --no-version=true | sed -n 's/.*passing the current filters: *\([0-9][0-9]*\).*/\1/p')
[ "${n:-0}" -gt 0 ] || { echo "sanitize.sh: could not count the test cases of $BUILD/tests/gpuplace_tests" >&2; exit 1; }
shards=$(( JOBS * 8 )); [ "$shards" -gt "$n" ] && shards=$n
size=$(( (n + shards - 1) / shards ))
printf '%s test cases in %s shards of %s, %s at a time\n' "$n" "$shards" "$size" "$JOBS"
export BUILD size shards
seq 0 $(( shards - 1 )) | xargs -P "$JOBS" -I{} bash -c '
  k={}; range="--first=$(( k * size + 1 ))"; [ "$k" -lt $(( shards - 1 )) ] && range="$range --last=$(( (k + 1) * size ))"
  "$BUILD/tests/gpuplace_tests" --no-version=true --minimal=true $range > "$BUILD/shard-$k.log" 2>&1
  echo $? > "$BUILD/shard-$k.rc"' || true
for k in $(seq 0 $(( shards - 1 ))); do
  rc=$(cat "$BUILD/shard-$k.rc" 2>/dev/null || echo missing)
  if [ "$rc" != 0 ]; then
    last=$(( (k + 1) * size )); [ "$last" -gt "$n" ] && last=$n
    printf '\n==> shard %s (test cases %s to %s): exit %s\n' "$k" $(( k * size + 1 )) "$last" "$rc"
    status=1
  fi
  cat "$BUILD/shard-$k.log"
done
rm -f "$BUILD"/shard-*.rc

report_logs
# ThreadSanitizer on the tests that run threads (the worker pool, its shared queue, the vector env
# with 1-8 threads): a data race fails the stage. ASan and TSan do not mix, so this is a second,
# small build (two test files, ~30 s).
if [ "$status" -eq 0 ]; then
  printf '\n==> threaded tests under ThreadSanitizer (%s/tsan_tests)\n' "$BUILD"
  "${CXX:-c++}" -std=c++20 -O0 -g1 -fsanitize=thread -I include -I tests tests/main.cpp tests/thread_pool_test.cpp \
    tests/vector_env_test.cpp -o "$BUILD/tsan_tests" -pthread
  TSAN_OPTIONS="halt_on_error=1:log_path=$LOGS/tsan" "$BUILD/tsan_tests" --no-version=true --minimal=true || status=$?
  report_logs
fi
if [ "$status" -ne 0 ]; then
  printf '\n==> sanitizer stage FAILED (exit %s) after %ss\n' "$status" "$(( $(date +%s) - start ))"
  exit 1
fi
printf '==> sanitizer stage passed: no reports, %ss\n' "$(( $(date +%s) - start ))"
