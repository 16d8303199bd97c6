#!/usr/bin/env bash
# Runs the built libFuzzer targets for a bounded time each; builds nothing.
#   tests/fuzz/run.sh TARGET|all SECONDS      TARGET: vscope kineto snapshot nsys report
# Build them first: cmake --preset asan && cmake --build --preset asan --target fuzzers
# Each target runs with its dictionary (dict/TARGET.dict) on a corpus folder in the build tree,
# seeded at every run from ../shared/realdata and the repository's test inputs (make_seeds.py).
# A crash, leak, sanitizer report, slow input (-timeout) or memory blow-up (-rss_limit_mb) is a
# finding: libFuzzer writes the input under BUILD/fuzz/artifacts/TARGET/ and this script exits 1.
# Minimize it (fuzz_TARGET -minimize_crash=1 -runs=10000 FILE), fix the reader and commit the
# input under tests/fuzz/regressions/TARGET/ (fuzz_regression_test replays it).
# Environment: VRAMSCOPE_FUZZ_BUILD_DIR (default build/asan), VRAMSCOPE_REALDATA_DIR (default
# ../shared/realdata), VRAMSCOPE_FUZZ_RSS_MB (2048), VRAMSCOPE_FUZZ_TIMEOUT_S (per input, 10).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
all_targets=(vscope kineto snapshot nsys report)

if [ $# -ne 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: tests/fuzz/run.sh TARGET|all SECONDS   (TARGET: ${all_targets[*]})" >&2
  exit 2
fi
if [ "$1" = all ]; then
  targets=("${all_targets[@]}")
elif [[ " ${all_targets[*]} " == *" $1 "* ]]; then
  targets=("$1")
else
  echo "run.sh: unknown target '$1' (${all_targets[*]} or all)" >&2
  exit 2
fi
seconds=$2
build=${VRAMSCOPE_FUZZ_BUILD_DIR:-$source_dir/build/asan}
realdata=${VRAMSCOPE_REALDATA_DIR:-$source_dir/../shared/realdata}
rss_mb=${VRAMSCOPE_FUZZ_RSS_MB:-2048}
timeout_s=${VRAMSCOPE_FUZZ_TIMEOUT_S:-10}
work=$build/fuzz
# Loud sanitizers: stop at the first report, with a stack; leaks count (libFuzzer checks them).
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

status=0
summary=()
for t in "${targets[@]}"; do
  bin=$build/tests/fuzz/fuzz_$t
  if [ ! -x "$bin" ]; then
    echo "run.sh: $bin is not built (cmake --build --preset asan --target fuzzers)" >&2
    exit 2
  fi
  seeds=$work/seeds/$t
  corpus=$work/corpus/$t
  artifacts=$work/artifacts/$t
  log=$work/logs/$t.log
  rm -rf "$seeds"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  python3 "$here/make_seeds.py" "$t" "$seeds" --source "$source_dir" --realdata "$realdata"
  dict=$here/dict/$t.dict
  if [ "$t" = report ]; then
    # The end-to-end target sees every format: its dictionary is all of theirs.
    dict=$work/report.dict
    cat "$here"/dict/{vscope,kineto,snapshot,nsys}.dict >"$dict"
  fi
  echo "run.sh: fuzzing $t for $seconds s (log: $log)"
  rc=0
  "$bin" -max_total_time="$seconds" -dict="$dict" -rss_limit_mb="$rss_mb" \
    -timeout="$timeout_s" -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "$corpus" "$seeds" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  line="$t: ${execs:-?} executions in $seconds s, peak RSS ${peak:-?} MB, corpus $(find "$corpus" -type f | wc -l) inputs"
  if [ "$rc" -ne 0 ]; then
    status=1
    line="$line: FINDING (exit $rc), input under $artifacts/"
    grep -E "ERROR: |runtime error|SUMMARY: |Test unit written" "$log" | head -8 || true
  fi
  echo "run.sh: $line"
  summary+=("$line")
done
echo "run.sh: summary"
printf '  %s\n' "${summary[@]}"
exit $status
