#!/usr/bin/env python3
"""Compile and link time per target of the last build in a Ninja build folder.

    build_times.py BUILD_DIR [--top N] [--since EPOCH_MS]

Reads BUILD_DIR/.ninja_log (format v5: start ms, end ms, mtime, output, command hash, one line
per output) and prints the N targets (default 10) whose steps took the most time, summed over
their objects, precompiled headers and link, with the count of steps, then the sum over all
targets and the build's wall time. A target is the CMakeFiles/<target>.dir folder an object lies
in, or the output itself for links and custom commands. Times are each step's own wall time, so
with several jobs at once their sum exceeds the build's wall time.

Only the entries of the last build that compiled something are counted: ninja appends one entry
as each step ends and restarts its clock for every run, so a run begins where the end time goes
backwards.
"""

import argparse
import collections
import os
import re
import sys


def last_build(lines):
    """The (start_ms, end_ms, output) entries of the most recent ninja run that compiled
    something (a later run that found everything up to date is passed over)."""
    runs = [[]]
    for line in lines:
        if line.startswith("#"):
            continue
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 5:
            continue
        start, end, output = int(parts[0]), int(parts[1]), parts[3]
        if runs[-1] and end < runs[-1][-1][1]:
            runs.append([])  # a new ninja run began
        runs[-1].append((start, end, output))
    for run in reversed(runs):
        if any(out.endswith(".o") for _, _, out in run):
            return run
    return runs[-1]


def target_of(output):
    m = re.search(r"CMakeFiles/([^/]+)\.dir/", output)
    if m:
        return m.group(1)
    return output


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    log = os.path.join(args.build_dir, ".ninja_log")
    try:
        with open(log, encoding="utf-8") as f:
            entries = last_build(f)
    except OSError as e:
        print(f"build_times: cannot read {log}: {e.strerror}", file=sys.stderr)
        return 2
    if not entries:
        print(f"build_times: {log} records no build step", file=sys.stderr)
        return 1
    seconds = collections.Counter()
    steps = collections.Counter()
    seen = set()
    for start, end, output in entries:
        # One step may list several outputs (an object and its .d file, a link and its
        # ctest include): count each (start, end, target) once.
        key = (start, end, target_of(output))
        if key in seen:
            continue
        seen.add(key)
        seconds[key[2]] += (end - start) / 1000.0
        steps[key[2]] += 1
    wall = (max(e for _, e, _ in entries) - min(s for s, _, _ in entries)) / 1000.0
    print(f"slowest {min(args.top, len(seconds))} of {len(seconds)} targets "
          f"(seconds summed over each target's steps):")
    for target, s in seconds.most_common(args.top):
        print(f"  {s:7.1f} s  {steps[target]:4d} steps  {target}")
    print(f"  {sum(seconds.values()):7.1f} s  {sum(steps.values()):4d} steps  all targets; "
          f"wall time {wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
