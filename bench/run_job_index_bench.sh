#!/usr/bin/env bash
# Job index benchmark (issue 16 acceptance: a synthetic 1,024-rank job of 100 k events per rank).
# Synthesises the job, summarises every rank file on its own (xargs -P, as a cluster would run it),
# merges the per-file indexes, then reads the merged index against reading every rank file in
# full (the baseline, in the same command). Prints summarize time per rank, index size, and the
# time and peak resident memory of both reads, with their ratios.
#
# Usage: bench/run_job_index_bench.sh [RANKS] [EVENTS_PER_RANK] [PARALLEL]
#   defaults 1024, 100000, 2. Needs disk for RANKS x ~1 MB and, for the baseline, memory for
#   every event of the job at once (~60 B an event: 6 GB at the defaults).
# Environment: BUILD_DIR (default build/dev), WORK (default a fresh temporary folder, removed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
ranks="${1:-1024}"
per="${2:-100000}"
parallel="${3:-2}"
build="${BUILD_DIR:-$root/build/dev}"
cmake --build "$build" -j2 --target vramscope-cli job_index_bench >/dev/null
cli="$build/app/cli/vramscope-cli"
bench="$build/bench/job_index_bench"
if [[ -z "${WORK:-}" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
else
  work="$WORK"
  mkdir -p "$work"
fi
now() { date +%s.%N; }

t0=$(now)
"$cli" synth --ranks "$ranks" --events "$((ranks * per))" --noise -o "$work/run" >/dev/null
t1=$(now)
ls "$work"/run/rank*.vscope | xargs -P "$parallel" -I{} "$cli" summarize --quiet {} -o {}.vscope-index >/dev/null
t2=$(now)
"$cli" summarize --merge "$work"/run/*.vscope-index -o "$work/job.vscope-index" >/dev/null
t3=$(now)

index_bytes=$(stat -c %s "$work/job.vscope-index")
rank_bytes=$(du -cb "$work"/run/rank*.vscope | tail -1 | cut -f1)
echo "job: $ranks ranks x ~$per events (synth --noise: $(echo "$t1 - $t0" | bc) s)"
echo "summarize: $(echo "scale=4; ($t2 - $t1) / $ranks" | bc) s per rank wall ($parallel in parallel), merge $(echo "$t3 - $t2" | bc) s"
echo "index: $index_bytes bytes ($(echo "scale=1; $index_bytes / $ranks" | bc) per rank; rank files $rank_bytes bytes)"
ours=$("$bench" index "$work/job.vscope-index")
base=$("$bench" ranks "$work"/run/rank*.vscope)
echo "$ours"
echo "$base"
secs() { sed -E 's/.* ([0-9.]+) s,.*/\1/' <<<"$1"; }
rss() { sed -E 's/.*peak RSS ([0-9.]+) MiB/\1/' <<<"$1"; }
echo "ratio (full read / index): time $(echo "scale=1; $(secs "$base") / $(secs "$ours")" | bc)x, peak RSS $(echo "scale=1; $(rss "$base") / $(rss "$ours")" | bc)x"
