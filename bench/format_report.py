#!/usr/bin/env python3
"""Measures Python's json.load on the Kineto JSON that format_bench wrote and prints one table
with format_bench's figures (.vscope compressed and raw) beside the JSON ones.

Usage: format_report.py RESULTS.json KINETO.json
  RESULTS.json  written by `format_bench --results`
  KINETO.json   the Kineto / Chrome-trace JSON format_bench wrote (the same events)
Times are process CPU time (time.process_time), best of 2 runs, so other load on the machine
does not count.
"""
import json
import sys
import time


def python_parse_rate(path):
    best = None
    events = 0
    for _ in range(2):
        t0 = time.process_time()
        with open(path, "rb") as f:
            doc = json.load(f)
        dt = time.process_time() - t0
        events = len(doc["traceEvents"])
        del doc
        best = dt if best is None else min(best, dt)
    return events, events / best


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        r = json.load(f)
    events, py_rate = python_parse_rate(sys.argv[2])
    if events != int(r["json_events"]):
        print(f"expected {int(r['json_events'])} JSON events, found {events}", file=sys.stderr)
        return 1

    def m(v):
        return f"{v / 1e6:.1f} M/s" if v >= 1e6 else f"{v / 1e6:.2f} M/s"

    rows = [
        ("events", f"{int(r['events']):,}", f"{int(r['events']):,}",
         f"{int(r['json_events']):,} (first of them)"),
        ("memory events / kernels", f"{int(r['memory_events']):,} / {int(r['kernel_events']):,}",
         "same",
         f"{int(r['json_memory_events']):,} / {int(r['json_kernel_events']):,}"),
        ("file size", f"{r['zstd_file_bytes'] / 1e6:.1f} MB", f"{r['raw_file_bytes'] / 1e6:.1f} MB",
         f"{r['json_file_bytes'] / 1e6:.1f} MB"),
        ("bytes / memory event", f"{r['zstd_bytes_per_memory_event']:.2f}",
         f"{r['raw_bytes_per_memory_event']:.2f}", f"{r['json_bytes_per_memory_event']:.1f}"),
        ("bytes / kernel event", f"{r['zstd_bytes_per_kernel_event']:.2f}",
         f"{r['raw_bytes_per_kernel_event']:.2f}", f"{r['json_bytes_per_kernel_event']:.1f}"),
        ("bytes / event (all)", f"{r['zstd_bytes_per_event']:.2f}", f"{r['raw_bytes_per_event']:.2f}",
         f"{r['json_bytes_per_event']:.1f}"),
        ("read, from memory (events/s)", m(r["zstd_read_events_per_s"]),
         m(r["raw_read_events_per_s"]), f"simdjson DOM {m(r['json_simdjson_events_per_s'])}"),
        ("read, from file (events/s)", m(r["zstd_read_file_events_per_s"]),
         m(r["raw_read_file_events_per_s"]), f"python json.load {m(py_rate)}"),
        ("write (events/s)", m(r["zstd_write_events_per_s"]), m(r["raw_write_events_per_s"]), "-"),
    ]
    head = ("", ".vscope (zstd)", ".vscope (raw)", "Kineto JSON")
    widths = [max(len(str(row[i])) for row in rows + [head]) for i in range(4)]
    line = "+".join("-" * (w + 2) for w in widths)
    fmt = lambda row: "|".join(f" {str(c):<{w}} " for c, w in zip(row, widths))
    print(line)
    print(fmt(head))
    print(line)
    for row in rows:
        print(fmt(row))
    print(line)
    print("Speeds: CPU time of one single-threaded process (one core), best of several runs.")
    print("Targets: under 8 bytes per memory or kernel event; over 30 M events/s read.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
