#!/usr/bin/env bash
# Kineto JSON import benchmark: import speed in MB/s of uncompressed JSON on one core, beside
# Python's json.load of the same uncompressed file, and peak resident memory per imported event.
#
# Usage: bench/run_kineto_bench.sh [TRACE.json[.gz]] [REPEAT]
#   TRACE   default: ../shared/realdata/.../df_index_resolver.json.gz (53.7 MB unpacked)
#   REPEAT  imports timed (default 5; best and median are printed)
# Environment: BUILD_DIR (default build/bench). Both programs are pinned to one CPU with taskset
# when it is available.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
trace="${1:-$root/../shared/realdata/facebookresearch_HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz}"
repeat="${2:-5}"
build="${BUILD_DIR:-$root/build/bench}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVRAMSCOPE_BUILD_GUI=OFF -DVRAMSCOPE_BUILD_CAPTURE=OFF -DVRAMSCOPE_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target kineto_import_bench >/dev/null

# The same uncompressed bytes for both readers.
json="$work/trace.json"
if [[ "$(head -c2 "$trace" | od -An -tx1 | tr -d ' ')" == "1f8b" ]]; then
  gzip -dc "$trace" >"$json"
else
  cp "$trace" "$json"
fi
pin=()
if command -v taskset >/dev/null; then
  pin=(taskset -c 0)
fi

echo "trace: $trace"
echo "== vramscope importKinetoJson (simdjson On-Demand), one core"
"${pin[@]}" "$build/bench/kineto_import_bench" "$json" --repeat "$repeat" | tee "$work/ours.txt"
echo "== python3 json.load (the standard library), one core"
"${pin[@]}" python3 - "$json" "$repeat" <<'PY' | tee "$work/python.txt"
import json, os, resource, sys, time
path, repeat = sys.argv[1], int(sys.argv[2])
mb = os.path.getsize(path) / 1e6
times = []
cpu = []
for _ in range(repeat):
    start, cpu_start = time.perf_counter(), time.process_time()
    with open(path, "rb") as f:
        doc = json.load(f)
    times.append(time.perf_counter() - start)
    cpu.append(time.process_time() - cpu_start)
    events = len(doc["traceEvents"] if isinstance(doc, dict) else doc)
    del doc
times.sort()
cpu.sort()
print(f"input_mb {mb:.1f}")
print(f"json_events {events}")
print(f"load_s_best {times[0]:.3f}")
print(f"load_mb_per_s_best {mb / times[0]:.1f}")
print(f"load_mb_per_s_median {mb / times[len(times) // 2]:.1f}")
print(f"load_mb_per_cpu_s_best {mb / cpu[0]:.1f}")
print(f"peak_rss_mb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.1f}")
PY
for clock in s cpu_s; do
  ours="$(awk -v k="import_mb_per_${clock}_best" '$1==k{print $2}' "$work/ours.txt")"
  theirs="$(awk -v k="load_mb_per_${clock}_best" '$1==k{print $2}' "$work/python.txt")"
  echo "== summary (MB per ${clock/_/ }): vramscope $ours vs python json.load $theirs" \
    "($(python3 -c "print(f'{$ours / $theirs:.1f}')")x; target > 150 MB/s)"
done
