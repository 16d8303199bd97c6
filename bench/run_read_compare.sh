#!/usr/bin/env bash
# .vscope read speed of this tree against a baseline commit's reader, on the same files, and
# against importing the same events as Kineto JSON. Prints M events/s per CPU-second of one core
# (best of 5 reads, the process pinned to one CPU) and the ratios.
#
# Usage: bench/run_read_compare.sh [EVENTS] [JSON_EVENTS]
#   EVENTS       events in the synthetic trace of bench/format_bench.cpp (default 10000000)
#   JSON_EVENTS  how many of them are also written as Kineto JSON (default 1000000)
# Environment:
#   BASE_COMMIT  the baseline reader (default d00a8af, the reader before the read-path work)
#   BASE_DIR     its worktree (default /tmp/base-<commit>; made with git worktree if missing)
#   BUILD_DIR    this tree's bench build (default build/bench); the baseline builds in
#                $BASE_DIR/build/bench
#   WORK_DIR     where the files go (default a temporary directory, removed at the end)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
events="${1:-10000000}"
json_events="${2:-1000000}"
base_commit="${BASE_COMMIT:-d00a8af}"
base="${BASE_DIR:-/tmp/base-$base_commit}"
build="${BUILD_DIR:-$root/build/bench}"
work="${WORK_DIR:-}"
if [[ -z "$work" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi

configure() {  # configure SOURCE BUILD
  if [[ ! -f "$2/CMakeCache.txt" ]]; then
    cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DVRAMSCOPE_BUILD_GUI=OFF -DVRAMSCOPE_BUILD_CAPTURE=OFF -DVRAMSCOPE_BUILD_TESTS=OFF >/dev/null
  fi
}
if [[ ! -d "$base" ]]; then
  git -C "$root" worktree add --detach "$base" "$base_commit" >/dev/null
fi
configure "$root" "$build"
configure "$base" "$base/build/bench"
cmake --build "$build" -j2 --target format_bench kineto_import_bench >/dev/null
cmake --build "$base/build/bench" -j2 --target format_bench >/dev/null

pin=()
if command -v taskset >/dev/null; then
  pin=(taskset -c 0)
fi
# The files: written once by this tree's format_bench (the format is the same for both).
"$build/bench/format_bench" --events "$events" --json-events "$json_events" --dir "$work" |
  sed 's/^/  /'

rate() {  # rate BINARY FILE -> M events/s
  "${pin[@]}" "$1" --read-only "$2" | sed -n 's/.*: \([0-9.]*\) M events\/s/\1/p'
}
echo
printf '%-28s %12s %12s %8s\n' "file" "baseline" "this tree" "ratio"
for tag in zstd raw; do
  file="$work/format_bench_$tag.vscope"
  old="$(rate "$base/build/bench/format_bench" "$file")"
  new="$(rate "$build/bench/format_bench" "$file")"
  printf '%-28s %9s M/s %9s M/s %7.2fx\n' "format_bench_$tag.vscope" "$old" "$new" \
    "$(echo "$new / $old" | bc -l)"
  eval "new_$tag=$new"
done

# The same first JSON_EVENTS events as Kineto JSON, imported by this tree's importer.
json="$work/format_bench_kineto.json"
out="$("${pin[@]}" "$build/bench/kineto_import_bench" "$json" --repeat 3)"
json_events_done="$(sed -n 's/^events_imported //p' <<<"$out")"
json_s="$(sed -n 's/^import_s_best //p' <<<"$out")"
json_peak="$(sed -n 's/^peak_rss_added_bytes_per_event //p' <<<"$out")"
json_rate="$(echo "$json_events_done / $json_s / 1000000" | bc -l)"
echo
printf 'kineto json import: %s events in %s s = %.2f M events/s (wall, best of 3), peak RSS added %s B/event\n' \
  "$json_events_done" "$json_s" "$json_rate" "$json_peak"
# shellcheck disable=SC2154  # set by eval above
printf '.vscope zstd read / kineto json import: %.0fx\n' "$(echo "$new_zstd / $json_rate" | bc -l)"
