#!/usr/bin/env bash
# GUI opening benchmark (issue 16 acceptance): time to first picture and resident memory of the
# viewer on a 10-million-event .vscope from `synth` with summaries, against the same file without
# them (the baseline, in the same command); then the viewer opening a job index of RANKS ranks.
# Figures come from the GUI's own instrumentation (app/gui/open_benchmark.h, on when
# VRAMSCOPE_BENCH_OPEN is set: "bench-open STAGE ms=T rss_kb=R hwm_kb=H" after each picture is
# drawn; VmRSS / VmHWM of /proc/self/status).
#
# Usage: bench/run_gui_open_bench.sh [EVENTS] [RANKS] [EVENTS_PER_RANK]
#   defaults 10000000, 1024, 100000 (RANKS 0 skips the index part).
# Environment: BUILD_DIR (default build/dev), WORK (default a fresh temporary folder, removed),
# BUDGET_BYTES (the viewer's memory budget; default its own, a quarter of RAM).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
events="${1:-10000000}"
ranks="${2:-1024}"
per="${3:-100000}"
build="${BUILD_DIR:-$root/build/dev}"
cmake --build "$build" -j2 --target vramscope vramscope-cli strip_summaries >/dev/null
cli="$build/app/cli/vramscope-cli"
gui="$build/app/gui/vramscope"
if [[ -z "${WORK:-}" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
else
  work="$WORK"
  mkdir -p "$work"
fi
# A settings folder of its own, so the user's memory budget is not read or changed.
export XDG_CONFIG_HOME="$work/config"
mkdir -p "$XDG_CONFIG_HOME/vramscope"
if [[ -n "${BUDGET_BYTES:-}" ]]; then
  printf '[memory]\nbudgetBytes=%s\n' "$BUDGET_BYTES" >"$XDG_CONFIG_HOME/vramscope/vramscope.conf"
fi
export QT_QPA_PLATFORM=offscreen VRAMSCOPE_BENCH_OPEN=exit

open_gui() { "$gui" "$1" 2>&1 | grep '^bench-open' || true; }
field() { sed -nE "s/^bench-open $2 .*$3=([0-9]+).*/\1/p" <<<"$1" | head -1; }

"$cli" synth --ranks 1 --events "$events" -o "$work/one" >/dev/null
file="$(ls "$work"/one/*.vscope | head -1)"
"$build/bench/strip_summaries" "$file" "$work/plain.vscope"
n=$("$cli" info --json "$file" 2>/dev/null |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["traces"][0]["events"]["memory"]["total"])' ||
  true)
echo "file: $(stat -c %s "$file") bytes with summaries, $(stat -c %s "$work/plain.vscope") without (${n:-?} memory events)"
ours=$(open_gui "$file")
base=$(open_gui "$work/plain.vscope")
echo "with summaries:    $(tr '\n' ';' <<<"$ours")"
echo "without summaries: $(tr '\n' ';' <<<"$base")"
first_ours=$(field "$ours" overview ms)
first_base=$(field "$base" detail ms)
rss_over=$(field "$ours" overview rss_kb)
if [[ -n "$first_ours" && -n "$first_base" ]]; then
  echo "first picture: ${first_ours} ms against ${first_base} ms: $(echo "scale=1; $first_base / ($first_ours + 0.001)" | bc)x sooner"
  echo "resident once the summaries are drawn: $((rss_over / 1024)) MiB against $(( $(field "$base" detail rss_kb) / 1024 )) MiB with every event (baseline)"
fi
if [[ -n "$(field "$ours" detail rss_kb)" && -n "$n" && "$n" -gt 0 ]]; then
  echo "resident after detail: $(echo "scale=1; $(field "$ours" detail rss_kb) * 1024 / $n" | bc) B per event (baseline $(echo "scale=1; $(field "$base" detail rss_kb) * 1024 / $n" | bc))"
fi

if [[ "$ranks" -gt 0 ]]; then
  "$cli" synth --ranks "$ranks" --events "$((ranks * per))" -o "$work/job" >/dev/null
  "$cli" summarize --quiet "$work/job" -o "$work/job.vscope-index" >/dev/null
  idx=$(open_gui "$work/job.vscope-index")
  echo "job index of $ranks ranks ($(stat -c %s "$work/job.vscope-index") bytes): $idx"
  echo "  baseline, every rank file read by the viewer: not run (needs ~$((ranks * per * 100 / 1000000000)) GB)"
fi
