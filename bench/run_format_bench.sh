#!/usr/bin/env bash
# Builds and runs the .vscope format benchmark and prints one table: bytes per event and read
# speed of a synthetic 10-million-event trace as .vscope (zstd and raw) beside the same events
# as Kineto JSON (size, simdjson DOM and Python json.load parse rates).
#
# Usage: bench/run_format_bench.sh [EVENTS] [JSON_EVENTS]
#   EVENTS       events in the synthetic trace (default 10000000)
#   JSON_EVENTS  how many of them are also written as Kineto JSON (default 1000000; ~430 MB)
# Environment: BUILD_DIR (default build/bench), WORK_DIR for the files written (default a
# temporary directory, removed at the end).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
events="${1:-10000000}"
json_events="${2:-1000000}"
build="${BUILD_DIR:-$root/build/bench}"
work="${WORK_DIR:-}"
if [[ -z "$work" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVRAMSCOPE_BUILD_GUI=OFF -DVRAMSCOPE_BUILD_CAPTURE=OFF -DVRAMSCOPE_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target format_bench >/dev/null

"$build/bench/format_bench" --events "$events" --json-events "$json_events" --dir "$work" \
  --results "$work/results.json"
echo
python3 "$here/format_report.py" "$work/results.json" "$work/format_bench_kineto.json"
