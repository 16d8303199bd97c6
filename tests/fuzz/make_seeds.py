#!/usr/bin/env python3
"""Builds the seed corpus of one fuzz target into a folder (in the build tree, never the repo).

Seeds come from the real inputs in ../shared/realdata and the repository's own test inputs:
small files as they are, larger ones cut (the first 64 KiB of a decompressed JSON) or reduced to
a few records of each kind (a snapshot pickle re-pickled with its first entries, an Nsight
Systems export with the first rows of the tables the importer reads), so that every seed is
small enough for many executions a second and still reaches the importer's logic.

usage: make_seeds.py TARGET OUTDIR --source DIR --realdata DIR
"""
import argparse
import gzip
import io
import pathlib
import pickle
import sqlite3
import sys
import tarfile
import tempfile

CUT_BYTES = 64 * 1024
WHOLE_BYTES = 128 * 1024


def read_plain(path, limit=None):
    """The bytes of `path`, gunzipped when its name ends in .gz, at most `limit` of them."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read() if limit is None else f.read(limit)


class DataOnlyUnpickler(pickle.Unpickler):
    """Refuses every class lookup: the real snapshots are plain data (realdata/README.md)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused {module}.{name}")


def reduced_snapshot(data, entries=40, segments=4):
    """The snapshot with its first few segments and trace entries per device."""
    if isinstance(data, dict):
        out = dict(data)
        if isinstance(out.get("segments"), list):
            out["segments"] = out["segments"][:segments]
        if isinstance(out.get("device_traces"), list):
            out["device_traces"] = [t[:entries] if isinstance(t, list) else t
                                    for t in out["device_traces"]]
        if isinstance(out.get("external_annotations"), list):
            out["external_annotations"] = out["external_annotations"][:entries]
        return out
    return data


def seeds_kineto(source, realdata):
    for p in sorted((source / "tests/golden/input").glob("*.json")):
        yield p.name, p.read_bytes()
    for p in sorted(realdata.rglob("*.json.gz")) + sorted(realdata.rglob("*.json")):
        yield p.name + ".head", read_plain(p, CUT_BYTES)
    for p in sorted(realdata.rglob("*.tar.gz")):
        with tarfile.open(p, "r:gz") as tar:
            for member in tar:
                if member.isfile() and member.name.endswith(".json"):
                    yield pathlib.Path(member.name).name + ".head", tar.extractfile(member).read(
                        CUT_BYTES)
                    break


def seeds_snapshot(source, realdata):
    paths = sorted(realdata.rglob("*.pickle")) + sorted(realdata.rglob("*.pickle.gz"))
    for p in paths:
        raw = read_plain(p)
        if len(raw) <= WHOLE_BYTES:
            yield p.name, raw
        yield p.name + ".head", raw[:CUT_BYTES]
        try:
            data = DataOnlyUnpickler(io.BytesIO(raw)).load()
        except Exception as e:  # a snapshot that is not plain data just gives no reduced seed
            print(f"make_seeds: {p.name}: not reduced ({e})", file=sys.stderr)
            continue
        small = reduced_snapshot(data)
        for protocol in (2, 4, 5):
            yield f"{p.name}.reduced.p{protocol}", pickle.dumps(small, protocol=protocol)


# The tables (and their rows) the Nsight Systems importer reads; the profiled user's environment
# (TARGET_INFO_SYSTEM_ENV) and process command lines are never copied.
NSYS_TABLES = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
               "CUPTI_ACTIVITY_KIND_RUNTIME", "CUDA_GPU_MEMORY_USAGE_EVENTS", "NVTX_EVENTS",
               "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME", "MPI_RANKS", "ThreadNames",
               "EXPORT_META_DATA", "META_DATA_EXPORT", "StringIds"]


def reduced_nsys(path, rows):
    src = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    with tempfile.TemporaryDirectory() as tmp:
        out_path = pathlib.Path(tmp) / "seed.sqlite"
        dst = sqlite3.connect(out_path)
        dst.execute("PRAGMA page_size=512")
        for name, sql in src.execute("SELECT name, sql FROM sqlite_master WHERE type='table'"):
            if name not in NSYS_TABLES or sql is None:
                continue
            dst.execute(sql)
            # Strings stay short: a few in real exports hold kilobytes behind a NUL
            where, limit = ("WHERE length(CAST(value AS BLOB)) < 256", rows * 20) \
                if name == "StringIds" else ("", rows)
            cur = src.execute(f'SELECT * FROM "{name}" {where} LIMIT {limit}')
            marks = ",".join("?" * len(cur.description))
            dst.executemany(f'INSERT INTO "{name}" VALUES ({marks})', cur.fetchall())
        dst.commit()
        dst.execute("VACUUM")
        dst.close()
        return out_path.read_bytes()


def seeds_nsys(source, realdata):
    for p in sorted(realdata.rglob("*.sqlite")):
        for rows in (4, 30):
            yield f"{p.name}.rows{rows}", reduced_nsys(p, rows)


def seeds_vscope(source, realdata):
    for p in sorted((source / "resources/sample").glob("*.vscope")):
        raw = p.read_bytes()
        yield p.name, raw[:WHOLE_BYTES]
        yield p.name + ".cut", raw[: len(raw) // 2]


def seeds_report(source, realdata):
    """Every other target's seeds (the end-to-end target guesses the format from the content),
    each small one also gzipped, and one tar holding a Kineto seed, as openJob meets them."""
    first_json = None
    for kind in ("vscope", "kineto", "snapshot", "nsys"):
        for name, data in globals()["seeds_" + kind](source, realdata):
            yield f"{kind}.{name}", data
            if len(data) <= CUT_BYTES:
                yield f"{kind}.{name}.gz", gzip.compress(data, mtime=0)
            if kind == "kineto" and first_json is None:
                first_json = data
    if first_json is not None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo("rank0.json")
            info.size = len(first_json)
            tar.addfile(info, io.BytesIO(first_json))
        yield "kineto.rank0.tar", buf.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target", choices=["vscope", "kineto", "snapshot", "nsys", "report"])
    ap.add_argument("outdir", type=pathlib.Path)
    ap.add_argument("--source", type=pathlib.Path, required=True)
    ap.add_argument("--realdata", type=pathlib.Path, required=True)
    args = ap.parse_args()
    if not args.realdata.is_dir():
        print(f"make_seeds: {args.realdata} is missing; seeds from the repository only",
              file=sys.stderr)
    args.outdir.mkdir(parents=True, exist_ok=True)
    count = 0
    for name, data in globals()["seeds_" + args.target](args.source, args.realdata):
        (args.outdir / name).write_bytes(data)
        count += 1
    print(f"make_seeds: {args.target}: {count} seeds in {args.outdir}")


if __name__ == "__main__":
    main()
