#!/usr/bin/env bash
# The sanitizer stage of CI (`packaging/dev.sh sanitize [SECONDS]`, run by .ci/run after
# `packaging/dev.sh test`): the asan preset (clang, AddressSanitizer + UBSan + LeakSanitizer,
# -Werror) builds the libraries, the CLI, their unit, golden and sweep tests, the fuzz regression
# replay and the libFuzzer targets (no GUI, no capture agent, no benchmarks: only what this stage
# runs), runs the tests, then every fuzz target for SECONDS (default 10; long fuzzing is
# `packaging/dev.sh fuzz`, tests/fuzz/README.md).
#   packaging/sanitize.sh [SECONDS]
# Any sanitizer report fails the stage: UB aborts (-fno-sanitize-recover=undefined), ASan halts
# at the first error, leaks fail the test that leaked.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${1:-${VRAMSCOPE_FUZZ_SECONDS:-10}}
if ! [[ $fuzz_seconds =~ ^[0-9]+$ ]]; then
  echo "usage: packaging/sanitize.sh [SECONDS]   (seconds each fuzzer runs; default 10)" >&2
  exit 2
fi
stage_start=$SECONDS

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
build_s=$((SECONDS - stage_start))
echo "sanitize: asan build took $build_s s"

export ASAN_OPTIONS=halt_on_error=1:print_stacktrace=1:detect_leaks=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=print_suppressions=0:suppressions=$PWD/packaging/lsan.supp
test_start=$SECONDS
# The GPU checks need the agent, which this build leaves out; the tests are slower under the
# sanitizers, hence the longer timeout.
ctest --preset asan -j "$jobs" --timeout 1200 -LE gpu
tests_s=$((SECONDS - test_start))
echo "sanitize: sanitized tests took $tests_s s"

fuzz_start=$SECONDS
tests/fuzz/run.sh all "$fuzz_seconds"
fuzz_s=$((SECONDS - fuzz_start))
echo "sanitize: fuzzing took $fuzz_s s ($fuzz_seconds s per target)"
echo "sanitize: build $build_s s, tests $tests_s s, fuzzing $fuzz_s s, stage $((SECONDS - stage_start)) s"
