#!/usr/bin/env python3
"""Checks `vramscope-cli export --format csv|speedscope` with Python's own csv and json modules.

Expected values never come from vramscope: for the synthetic job from the formulas documented in
analysis/synthetic_job.h (SyntheticJobSpec's defaults), for the real Kineto file from its raw JSON
(read here with exact decimals). speedscope files are checked against the facts of speedscope's
file format and, when the npm package `speedscope` is found (VRAMSCOPE_SPEEDSCOPE_DIR, else
`npm root -g`), against its file-format-schema.json with the jsonschema module and through
speedscope's own importer run in node (speedscope_import.mjs). Nothing is downloaded.

usage: export_check.py --cli PATH --workdir DIR --realdata DIR
exit: 0 passed, 1 failed, 77 when the real input is missing (the synthetic checks passed).
"""
import argparse
import collections
import csv
import decimal
import gzip
import json
import math
import os
import subprocess
import sys

FAILURES = []

BERT = "AMD-AGI_TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"

# SyntheticJobSpec defaults (analysis/synthetic_job.h).
W, O = 4 << 30, 8 << 30
A, ACT = 24, 256 << 20
SEG = 2 << 30
K, KD = 48, 400_000
H = 1_000_000
ALLREDUCE = 512 << 20
BUS_BW = 100e9
STRAGGLER_DELAY = 2_000_000


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(cli, *args, expect=0):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    check(p.returncode == expect,
          f"{' '.join(args)}: exit {p.returncode}, wanted {expect}; stderr: {p.stderr.strip()}")
    return p


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    for r in body:
        check(len(r) == len(header), f"{path}: row {r} has {len(r)} fields, header {len(header)}")
    return [dict(zip(header, r)) for r in body], header


class Speedscope:
    """The npm package speedscope when installed (VRAMSCOPE_SPEEDSCOPE_DIR, else `npm root -g`):
    its file-format-schema.json (checked with the jsonschema module when present) and its own
    importer, run headless in node by speedscope_import.mjs."""

    def __init__(self, package_dir=""):
        self.dir, self.schema, self.node = None, None, None
        dirs = [package_dir, os.environ.get("VRAMSCOPE_SPEEDSCOPE_DIR", "")]
        try:
            root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True,
                                  timeout=30)
            if root.returncode == 0:
                dirs.append(os.path.join(root.stdout.strip(), "speedscope"))
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.dir = next((d for d in dirs if d and os.path.isdir(os.path.join(d, "dist"))), None)
        if self.dir is None:
            print("note: the npm package speedscope is not installed: neither its schema nor its "
                  "importer is checked")
            return
        schema = os.path.join(self.dir, "dist", "release", "file-format-schema.json")
        try:
            import jsonschema  # noqa: F401
            with open(schema) as f:
                self.schema = json.load(f)
            print("checking speedscope files against", schema)
        except (ImportError, OSError) as e:
            print("note: speedscope's schema is not checked:", e)
        try:
            if subprocess.run(["node", "--version"], capture_output=True).returncode == 0:
                self.node = "node"
        except OSError:
            pass
        if self.node is None:
            print("note: node is missing: speedscope's importer is not run")

    def check(self, path, total):
        if self.schema is not None:
            import jsonschema
            with open(path) as f:
                doc = json.load(f)
            try:
                jsonschema.validate(doc, self.schema)
            except jsonschema.ValidationError as e:
                check(False, f"{path}: not valid against speedscope's schema: {e.message}")
        if self.node is None:
            return
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "speedscope_import.mjs")
        p = subprocess.run([self.node, script, self.dir, path], capture_output=True, text=True,
                           timeout=120)
        if p.returncode == 77:
            print("note: speedscope's importer could not be reached:", p.stderr.strip())
            return
        check(p.returncode == 0, f"{path}: speedscope's importer refused it: {p.stderr.strip()}")
        if p.returncode == 0:
            got = json.loads(p.stdout)
            print("speedscope's importer read", os.path.basename(path), got["unit"], got["total"])
            check(got["unit"] == "bytes" and got["total"] == total,
                  f"{path}: speedscope imported {got}, wanted {total} bytes")


def check_speedscope(path, speedscope):
    with open(path) as f:
        doc = json.load(f)
    check(doc.get("$schema") == "https://www.speedscope.app/file-format-schema.json",
          f"{path}: $schema")
    frames = doc["shared"]["frames"]
    check(all(isinstance(fr.get("name"), str) for fr in frames), f"{path}: frame names")
    check(len(doc["profiles"]) == 1, f"{path}: one profile")
    p = doc["profiles"][0]
    check(p["type"] == "sampled" and p["unit"] == "bytes", f"{path}: sampled profile in bytes")
    check(len(p["samples"]) == len(p["weights"]), f"{path}: a weight per sample")
    for s in p["samples"]:
        check(len(s) > 0 and all(0 <= i < len(frames) for i in s),
              f"{path}: sample {s} indexes outside {len(frames)} frames")
    check(all(w > 0 for w in p["weights"]), f"{path}: positive weights")
    check(p["endValue"] == sum(p["weights"]), f"{path}: endValue = sum of weights")
    speedscope.check(path, sum(p["weights"]))
    return sum(p["weights"])


def synthetic_checks(cli, work, schema):
    job = os.path.join(work, "synth")
    n, iters = 2, 5
    run(cli, "synth", "--ranks", str(n), "--iterations", str(iters), "--straggler-rank", "1",
        "-o", job)
    files = [os.path.join(job, f"rank{r}.vscope") for r in range(n)]
    # The formulas of synthetic_job.h.
    peak = W + O + A * ACT
    peak_reserved = math.ceil(peak / SEG) * SEG
    d = math.ceil(ALLREDUCE * 2 * (n - 1) / n / BUS_BW * 1e9)
    c = K * KD

    out = os.path.join(work, "synth-memory.csv")
    run(cli, "export", *files, "--format", "csv", "--table", "memory", "-o", out)
    rows, header = read_csv(out)
    check(header == ["rank", "device", "time_ns", "trace_time_ns", "allocated_bytes",
                     "reserved_bytes"],
          f"memory header {header}")
    for r in range(n):
        mine = [x for x in rows if x["rank"] == str(r)]
        # Allocated events: W, O and A allocs + A frees per iteration, no two at one time; the
        # reserved segments come at the times of allocs, so they add no row.
        check(len(mine) == 2 + iters * A * 2, f"synthetic rank {r}: {len(mine)} memory rows")
        check(max(int(x["allocated_bytes"]) for x in mine) == peak, f"rank {r} peak allocated")
        check(max(int(x["reserved_bytes"] or 0) for x in mine) == peak_reserved,
              f"rank {r} peak reserved")
        times = [int(x["time_ns"]) for x in mine]
        check(times == sorted(times), f"rank {r}: rows in time order")

    out = os.path.join(work, "synth-memory-points.csv")
    run(cli, "export", *files, "--format", "csv", "--table", "memory", "--points", "7", "-o", out)
    reduced, _ = read_csv(out)
    for r in range(n):
        mine = [x for x in reduced if x["rank"] == str(r)]
        check(0 < len(mine) <= 14, f"rank {r}: {len(mine)} rows for --points 7")
        check(max(int(x["allocated_bytes"]) for x in mine) == peak, f"rank {r}: --points peak")
        full = {tuple(x.values()) for x in rows}
        check(all(tuple(x.values()) in full for x in mine), f"rank {r}: --points rows are steps")

    out = os.path.join(work, "synth-collectives.csv")
    run(cli, "export", *files, "--format", "csv", "--table", "collectives", "-o", out)
    rows, _ = read_csv(out)
    check(len(rows) == n * iters, f"{len(rows)} collective rows, wanted {n * iters}")
    for x in rows:
        check(x["function"] == "AllReduce" and int(x["bytes"]) == ALLREDUCE, f"collective {x}")
        on_time = x["rank"] == "0"
        check(int(x["wait_ns"]) == (STRAGGLER_DELAY if on_time else 0), f"wait in {x}")
        check(x["straggler"] == ("0" if on_time else "1"), f"straggler in {x}")
        check(int(x["end_ns"]) - int(x["start_ns"]) == d + (STRAGGLER_DELAY if on_time else 0),
              f"collective duration in {x}")
    check(sorted({x["sequence"] for x in rows}) == [str(i) for i in range(iters)], "sequences")

    out = os.path.join(work, "synth-gaps.csv")
    run(cli, "export", *files, "--format", "csv", "--table", "gaps", "-o", out)
    rows, _ = read_csv(out)
    for r in range(n):
        mine = [int(x["duration_ns"]) for x in rows if x["rank"] == str(r)]
        s_r = STRAGGLER_DELAY if r == 1 else 0
        check(mine == [H + s_r] * (iters - 1), f"rank {r} gaps {mine}")
    for x in rows:
        check(int(x["end_ns"]) - int(x["start_ns"]) == int(x["duration_ns"]), f"gap {x}")

    out = os.path.join(work, "synth-iterations.csv")
    run(cli, "export", *files, "--format", "csv", "--table", "iterations", "-o", out)
    rows, _ = read_csv(out)
    check(len(rows) == n * iters, f"{len(rows)} iteration rows")
    for x in rows:
        s_r = STRAGGLER_DELAY if x["rank"] == "1" else 0
        check(int(x["duration_ns"]) == STRAGGLER_DELAY + c + d - s_r, f"iteration {x}")
        check(int(x["peak_allocated_bytes"]) == peak, f"iteration peak {x}")

    out = os.path.join(work, "synth.speedscope.json")
    run(cli, "export", files[0], "--format", "speedscope", "--at", "peak", "-o", out)
    check(check_speedscope(out, schema) == peak, "synthetic speedscope weights = peak")
    # flame --format speedscope writes the same file.
    p = run(cli, "flame", files[0], "--format", "speedscope")
    with open(out) as f:
        check(json.loads(p.stdout) == json.load(f), "flame --format speedscope = export")


def bert_checks(cli, work, path, schema):
    with gzip.open(path, "rt") as f:
        raw = json.load(f, parse_float=decimal.Decimal)
    events = raw["traceEvents"] if isinstance(raw, dict) else raw
    mem = [e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1]
    peak = max(int(e["args"]["Total Allocated"]) for e in mem)
    peak_reserved = max(int(e["args"]["Total Reserved"]) for e in mem)
    ts = sorted({int(e["ts"] * 1000) for e in mem})  # ns, exact from the decimal text

    out = os.path.join(work, "bert-memory.csv")
    run(cli, "export", path, "--format", "csv", "--table", "memory", "-o", out)
    rows, _ = read_csv(out)
    check(len(rows) == len(ts), f"bert: {len(rows)} memory rows, {len(ts)} event times")
    check(max(int(x["allocated_bytes"]) for x in rows) == peak, "bert: peak Total Allocated")
    check(max(int(x["reserved_bytes"]) for x in rows) == peak_reserved, "bert: Total Reserved")
    times = [int(x["time_ns"]) for x in rows]
    check([t - times[0] for t in times] == [t - ts[0] for t in ts], "bert: time steps")
    # trace_time_ns is the trace's own clock: Kineto's ts plus the file's baseTimeNanoseconds.
    base = int(raw.get("baseTimeNanoseconds", 0)) if isinstance(raw, dict) else 0
    check([int(x["trace_time_ns"]) for x in rows] == [t + base for t in ts],
          "bert: trace_time_ns = ts + baseTimeNanoseconds")
    # ... and a time from that column goes straight into --at: the live set at the peak row.
    peak_row = max(rows, key=lambda x: int(x["allocated_bytes"]))
    out = os.path.join(work, "bert-at-peak.speedscope.json")
    run(cli, "export", path, "--format", "speedscope", "--at", peak_row["trace_time_ns"], "-o", out)
    with open(out) as f:
        weights = sum(sum(p["weights"]) for p in json.load(f)["profiles"])
    check(weights == peak, f"bert: speedscope at the CSV's peak row = {weights}, peak {peak}")

    out = os.path.join(work, "bert-memory-points.csv")
    run(cli, "export", path, "--format", "csv", "--table", "memory", "--points", "10", "-o", out)
    reduced, _ = read_csv(out)
    check(len(reduced) <= 20, f"bert: {len(reduced)} rows for --points 10")
    check(max(int(x["allocated_bytes"]) for x in reduced) == peak, "bert: --points keeps peak")
    check(max(int(x["reserved_bytes"]) for x in reduced) == peak_reserved,
          "bert: --points keeps the reserved peak")

    out = os.path.join(work, "bert-gaps.csv")
    run(cli, "export", path, "--format", "csv", "--table", "gaps", "-o", out)
    rows, _ = read_csv(out)
    kernels = {e["name"] for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    check(len(rows) > 0, "bert: idle gaps")
    check(any("," in x["kernel_before"] for x in rows), "bert: a kernel name with a comma")
    for x in rows:
        check(x["kernel_before"] in kernels and x["kernel_after"] in kernels,
              f"bert: gap kernels {x['kernel_before']!r}, {x['kernel_after']!r} not in the file")
        check(int(x["end_ns"]) - int(x["start_ns"]) == int(x["duration_ns"]) > 0, f"gap {x}")

    # One rank: no collectives. A clear message, and no file.
    out = os.path.join(work, "bert-collectives.csv")
    p = run(cli, "export", path, "--format", "csv", "--table", "collectives", "-o", out, expect=3)
    check("no collective" in p.stderr, f"bert collectives message: {p.stderr.strip()}")
    check(not os.path.exists(out) and
          not any(f.startswith(os.path.basename(out) + ".partial")
                  for f in os.listdir(os.path.dirname(out) or ".")), "no collectives file")

    # speedscope just after the producer's peak (midway to the next memory event): the live
    # bytes then, replayed here by address (an alloc adds its Bytes, a free removes the block at
    # its address) on top of what was alive before the trace began (the first event's Total
    # Allocated less its own Bytes); they must also equal the producer's Total Allocated then.
    by_time = sorted(mem, key=lambda e: e["ts"])
    first = by_time[0]
    before = int(first["args"]["Total Allocated"]) - int(first["args"]["Bytes"])
    peak_i = max(range(len(by_time)), key=lambda i: (int(by_time[i]["args"]["Total Allocated"]), -i))
    while peak_i + 1 < len(by_time) and by_time[peak_i + 1]["ts"] == by_time[peak_i]["ts"]:
        peak_i += 1
    alive = {}
    for e in by_time[:peak_i + 1]:
        b, addr = int(e["args"]["Bytes"]), e["args"]["Addr"]
        if b > 0:
            alive[addr] = b
        else:
            alive.pop(addr, None)
    live = before + sum(alive.values())
    check(live == int(by_time[peak_i]["args"]["Total Allocated"]), "bert: replay = producer")
    # --at with a unit counts from the GPU's first memory event (the trace's clock adds Kineto's
    # base time, which the file's ts leave out).
    mid = (by_time[peak_i]["ts"] + by_time[peak_i + 1]["ts"]) * 1000 / 2
    at = int(mid - first["ts"] * 1000)
    out = os.path.join(work, "bert.speedscope.json")
    run(cli, "export", path, "--format", "speedscope", "--at", f"{at}ns", "-o", out)
    check(check_speedscope(out, schema) == live, f"bert: speedscope weights = {live} live bytes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--realdata", required=True)
    ap.add_argument("--speedscope-dir", default="",
                    help="the npm package speedscope (else VRAMSCOPE_SPEEDSCOPE_DIR, npm root -g)")
    ap.add_argument("--require-speedscope", action="store_true",
                    help="exit 77 (skipped) unless speedscope's own importer can be run")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    schema = Speedscope(a.speedscope_dir)
    if a.require_speedscope and (schema.dir is None or schema.node is None):
        print("skipped: speedscope's importer cannot be run here (package or node missing)")
        return 77
    synthetic_checks(a.cli, a.workdir, schema)
    bert = os.path.join(a.realdata, BERT)
    missing = not os.path.exists(bert)
    if missing:
        print("real input missing:", bert)
    else:
        bert_checks(a.cli, a.workdir, bert, schema)
    if FAILURES:
        print(f"{len(FAILURES)} checks failed")
        return 1
    if missing:
        required = os.environ.get("VRAMSCOPE_REQUIRE_REALDATA", "") not in ("", "0")
        return 1 if required else 77
    print("all export checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
