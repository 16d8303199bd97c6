#!/usr/bin/env python3
"""Replays a PyTorch CUDA memory snapshot's own trace and prints per-device figures.

Used by the snapshot importer's tests as an independent reference: it shares no code with the
importer. The pickle is read with an Unpickler that refuses every global (so no code can run):
memory snapshots hold only plain data.

Rules (the same documented semantics the importer follows):
- allocated level: 'alloc' adds its size; 'free_completed' (or the early name 'free') removes the
  live block at that address. free_requested is only intent and is ignored.
- a free of an address the trace never touched was allocated before recording began: it is alive
  from the start. A free of an address already freed is ignored. An alloc at a live address
  first closes the old block.
- blocks alive at the dump (state active_allocated / active_pending_free) that the replay does not
  hold at the end were alive from the start too (size: requested_size, else size).
- reserved level: segment_alloc / segment_map reserve [addr, addr+size); segment_free /
  segment_unmap release it. Released bytes the trace never reserved or released were reserved
  from the start; dump segments' bytes the replay does not hold at the end likewise.

Output, one line per device:
  device D entries N allocs A preexisting_blocks P preexisting_segments S
  peak_allocated X peak_reserved Y final_allocated F min_allocated M
and one line per oom entry: oom device D size S device_free F

With --annotations, only the snapshot's external_annotations, one line each, in file order:
  annotation device D stage START|END time_us T name NAME

With --alive-across A B (Unix microseconds, the snapshot's clock), per device the blocks made
before A (trace allocs with time_us < A, and blocks alive from the start) and not freed before B
(freed at time_us >= B, or never), one line per block size:
  alive_across device D size S count C

With --oom-state, each oom line is followed by what was alive when the allocation failed (after
every entry before the oom in file order, before any after it):
  oom_state device D allocated A reserved R live_blocks N
  oom_live_size device D size S count C     (one line per block size alive, trace allocs only)
  oom_segments device D segments N largest_free_block L segment_free F
live_blocks counts blocks made by the trace's own allocs and still alive, plus blocks alive from
the start that are freed after the oom or still alive at the dump. oom_segments is rebuilt
backwards, the other way round from the importer's forward replay: the dump's segments and live
blocks (size: requested_size, else size), with every entry after the oom undone (a free brings its
block back, an alloc removes it, segment frees and allocs likewise); L is the longest range inside
one segment that no live block covers, F all such ranges together.
"""
import gzip
import io
import pickle
import sys


class DataOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing global {module}.{name}")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return DataOnlyUnpickler(io.BytesIO(raw)).load()


class Intervals:
    """Disjoint [start, end) ranges as a sorted list; small inputs only."""

    def __init__(self):
        self.r = []

    def uncovered(self, a, b):
        out, cur = [], a
        for s, e in self.r:
            if e <= cur or s >= b:
                continue
            if s > cur:
                out.append((cur, s))
            cur = max(cur, e)
        if cur < b:
            out.append((cur, b))
        return out

    def add(self, a, b):
        keep = []
        for s, e in self.r:
            if e < a or s > b:
                keep.append((s, e))
            else:
                a, b = min(a, s), max(b, e)
        keep.append((a, b))
        self.r = sorted(keep)

    def remove(self, a, b):
        keep = []
        for s, e in self.r:
            if e <= a or s >= b:
                keep.append((s, e))
                continue
            if s < a:
                keep.append((s, a))
            if e > b:
                keep.append((b, e))
        self.r = sorted(keep)


def span(rs):
    return sum(e - s for s, e in rs)


def replay(entries, segments):
    """First pass: find what was alive at the start. Second: running sums from that start."""
    live, seen = {}, set()
    res_live, res_seen = Intervals(), Intervals()
    start_alloc = start_res = 0
    pre_blocks = pre_segs = 0
    steps = []  # (level, delta) in file order
    allocs = 0
    ooms = []  # per oom entry: steps before it, live trace blocks then, pre-existing freed so far
    for e in entries:
        act = e.get("action")
        if act == "oom":
            ooms.append({"steps": len(steps), "live": dict(live), "pre_freed": pre_blocks})
        elif act == "alloc":
            allocs += 1
            a, s = e["addr"], e["size"]
            seen.add(a)
            if a in live:
                steps.append(("a", -live[a]))
            live[a] = s
            steps.append(("a", s))
        elif act in ("free_completed", "free"):
            a = e["addr"]
            if a in live:
                steps.append(("a", -live.pop(a)))
            elif a not in seen:
                seen.add(a)
                start_alloc += e["size"]
                pre_blocks += 1
                steps.append(("a", -e["size"]))
        elif act in ("segment_alloc", "segment_map"):
            a, b = e["addr"], e["addr"] + e["size"]
            res_live.add(a, b)
            res_seen.add(a, b)
            steps.append(("r", e["size"]))
        elif act in ("segment_free", "segment_unmap"):
            a, b = e["addr"], e["addr"] + e["size"]
            held = e["size"] - span(res_live.uncovered(a, b))
            fresh = 0
            for gs, ge in res_live.uncovered(a, b):
                for ns, ne in res_seen.uncovered(gs, ge):
                    fresh += ne - ns
                    pre_segs += 1
            start_res += fresh
            res_live.remove(a, b)
            res_seen.add(a, b)
            steps.append(("r", -(held + fresh)))
    for seg in segments:
        base = seg["address"]
        for gs, ge in res_live.uncovered(base, base + seg["total_size"]):
            start_res += ge - gs
            pre_segs += 1
        offset = 0
        for blk in seg.get("blocks", []):
            addr = blk.get("address", base + offset)
            offset += blk["size"]
            if blk["state"] in ("active_allocated", "active_pending_free") and addr not in live:
                live[addr] = blk.get("requested_size", blk["size"])
                start_alloc += live[addr]
                pre_blocks += 1
    cur = {"a": start_alloc, "r": start_res}
    peak = dict(cur)
    low = start_alloc
    states = []
    for k, (level, delta) in enumerate(steps + [(None, 0)]):
        while len(states) < len(ooms) and ooms[len(states)]["steps"] == k:
            o = ooms[len(states)]
            # Alive from the start and not yet freed: every pre-existing block minus those
            # whose free came before the oom.
            alive_from_start = pre_blocks - o["pre_freed"]
            states.append({"allocated": cur["a"], "reserved": cur["r"],
                           "live_blocks": len(o["live"]) + alive_from_start,
                           "live": o["live"]})
        if level is None:
            break
        cur[level] += delta
        peak[level] = max(peak[level], cur[level])
        if level == "a":
            low = min(low, cur[level])
    return {
        "entries": len(entries), "allocs": allocs, "preexisting_blocks": pre_blocks,
        "preexisting_segments": pre_segs, "peak_allocated": peak["a"],
        "peak_reserved": peak["r"], "final_allocated": cur["a"], "min_allocated": low,
    }, states


def free_space_at(entries, k, segments):
    """Segments and free ranges when entry k happened, from the dump backwards (see above)."""
    segs, blocks = {}, {}
    for seg in segments:
        segs[seg["address"]] = seg["total_size"]
        offset = 0
        for blk in seg.get("blocks", []):
            addr = blk.get("address", seg["address"] + offset)
            offset += blk["size"]
            if blk["state"] in ("active_allocated", "active_pending_free"):
                blocks[addr] = blk.get("requested_size", blk["size"])
    for e in reversed(entries[k + 1:]):
        act = e.get("action")
        if act in ("free_completed", "free"):
            blocks[e["addr"]] = e["size"]
        elif act == "alloc":
            blocks.pop(e["addr"], None)
        elif act in ("segment_free", "segment_unmap"):
            segs[e["addr"]] = e["size"]
        elif act in ("segment_alloc", "segment_map"):
            segs.pop(e["addr"], None)
    largest = total = 0
    ordered = sorted(blocks.items())
    for base, size in segs.items():
        cursor, end = base, base + size
        for addr, bsize in ordered:
            if addr + bsize <= base or addr >= end:
                continue
            if addr > cursor:
                largest, total = max(largest, addr - cursor), total + addr - cursor
            cursor = max(cursor, min(end, addr + bsize))
        if end > cursor:
            largest, total = max(largest, end - cursor), total + end - cursor
    return len(segs), largest, total


def alive_across(entries, segments, a_us, b_us):
    """Block sizes made before a_us and alive at b_us (see the module docstring)."""
    live = {}  # addr -> (size, alloc time_us, or None when alive from the start)
    seen, kept = set(), {}

    def close(size, made, freed):
        if (made is None or made < a_us) and (freed is None or freed >= b_us):
            kept[size] = kept.get(size, 0) + 1

    for e in entries:
        act, t = e.get("action"), e.get("time_us")
        if act == "alloc":
            seen.add(e["addr"])
            if e["addr"] in live:
                close(*live.pop(e["addr"]), t)
            live[e["addr"]] = (e["size"], t)
        elif act in ("free_completed", "free"):
            if e["addr"] in live:
                close(*live.pop(e["addr"]), t)
            elif e["addr"] not in seen:
                seen.add(e["addr"])
                close(e["size"], None, t)
    for size, made in live.values():
        close(size, made, None)
    for seg in segments:
        offset = 0
        for blk in seg.get("blocks", []):
            addr = blk.get("address", seg["address"] + offset)
            offset += blk["size"]
            if blk["state"] in ("active_allocated", "active_pending_free") and addr not in live:
                close(blk.get("requested_size", blk["size"]), None, None)
    return kept


def main():
    args = sys.argv[1:]
    oom_state = "--oom-state" in args
    annotations = "--annotations" in args
    across = None
    if "--alive-across" in args:
        k = args.index("--alive-across")
        across = (int(args[k + 1]), int(args[k + 2]))
        del args[k:k + 3]
    args = [a for a in args if a not in ("--oom-state", "--annotations")]
    snap = load(args[0])
    if isinstance(snap, list):
        snap = {"segments": snap}
    if annotations:
        for a in snap.get("external_annotations", []):
            print(f"annotation device {a.get('device')} stage {a.get('stage')} "
                  f"time_us {a.get('time_us')} name {a.get('name')}")
        return
    traces = snap.get("device_traces", [])
    segments = snap.get("segments", [])
    devices = sorted({d for d, t in enumerate(traces) if t} | {s["device"] for s in segments})
    for d in devices:
        entries = traces[d] if d < len(traces) else []
        if across:
            kept = alive_across(entries, [s for s in segments if s["device"] == d], *across)
            for size in sorted(kept):
                print(f"alive_across device {d} size {size} count {kept[size]}")
            continue
        r, states = replay(entries, [s for s in segments if s["device"] == d])
        print(f"device {d} " + " ".join(f"{k} {v}" for k, v in r.items()))
        oom_at = [k for k, e in enumerate(entries) if e.get("action") == "oom"]
        dev_segments = [s for s in segments if s["device"] == d]
        for k, st in zip(oom_at, states):
            e = entries[k]
            print(f"oom device {d} size {e['size']} device_free {e.get('device_free', 0)}")
            if oom_state:
                print(f"oom_state device {d} allocated {st['allocated']} "
                      f"reserved {st['reserved']} live_blocks {st['live_blocks']}")
                sizes = {}
                for size in st["live"].values():
                    sizes[size] = sizes.get(size, 0) + 1
                for size in sorted(sizes):
                    print(f"oom_live_size device {d} size {size} count {sizes[size]}")
                n, largest, total = free_space_at(entries, k, dev_segments)
                print(f"oom_segments device {d} segments {n} largest_free_block {largest} "
                      f"segment_free {total}")


if __name__ == "__main__":
    main()
