#!/usr/bin/env python3
"""Every GPU acceptance check of the capture agent, in one go, with the figures printed.

Usage: run_gpu_checks.py [--build-dir DIR] [--device-dir DIR] [--only NAME,...] [--overhead-pairs N]

Needs a CUDA GPU, python3 with PyTorch, and the workloads gpt_train.py and gloo_ranks.py
(--device-dir, default ../shared/device beside the checkout). Exits 77 (skipped) without a GPU.

Builds what it needs when --build-dir lacks it: first the whole project without the GUI
  cmake -S . -B build/gpu -DVRAMSCOPE_BUILD_GUI=OFF -DVRAMSCOPE_BUILD_TESTS=OFF
        -DVRAMSCOPE_BUILD_BENCHMARKS=OFF
(which also gives vramscope-cli), and where that cannot configure (no simdjson, libarchive or
nlohmann-json) the capture folder alone: cmake -S capture -B build/gpu-capture.

Checks (names for --only): plain, per_tensor, leak, oom, device_oom, gloo, kill, overhead,
nccl.
Figures compared against are the ones gpt_train.py prints (PyTorch's own max_memory_reserved /
max_memory_allocated), the leak size 2 x 8 x 1024 x 32000 bf16 values = 1,048,576,000 bytes per
iteration, and PyTorch's out-of-memory message.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
SKIP = 77
LEAK_BYTES_PER_ITERATION = 2 * 8 * 1024 * 32000 * 2  # two micro-batches of bf16 logits
FLUSH_MS = 200

results = []  # (name, passed or None for "not checked", figures)


def report(name, passed, figures):
    results.append((name, passed, figures))
    tag = {True: "PASS", False: "FAIL", None: "INFO"}[passed]
    print(f"[{tag}] {name}: {figures}", flush=True)


def run(cmd, timeout=900, env=None, check=False):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, env=env)
    if check and p.returncode != 0:
        print(p.stdout)
        raise SystemExit(f"command failed ({p.returncode}): {' '.join(cmd)}")
    return p


def have_gpu():
    if shutil.which("nvidia-smi") is None or run(["nvidia-smi", "-L"]).returncode != 0:
        return False, "nvidia-smi finds no GPU"
    p = run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"])
    if p.returncode != 0 or "True" not in p.stdout:
        return False, "PyTorch with CUDA is not available: " + p.stdout.strip()[-200:]
    return True, ""


def find_tools(build_dir):
    cand = {
        "agent": ["capture/libvramscope_capture.so"],
        "run": ["capture/vramscope-run"],
        "summary": ["capture/vramscope-capture-summary"],
        "cli": ["app/cli/vramscope-cli"],
    }
    tools = {}
    for key, rels in cand.items():
        for rel in rels:
            for base in (build_dir, os.path.join(build_dir, "..")):
                path = os.path.join(base, rel)
                if os.path.exists(path):
                    tools[key] = os.path.abspath(path)
    # a standalone capture build puts everything at its top
    for key, name in (("agent", "libvramscope_capture.so"), ("run", "vramscope-run"),
                      ("summary", "vramscope-capture-summary")):
        path = os.path.join(build_dir, name)
        if key not in tools and os.path.exists(path):
            tools[key] = os.path.abspath(path)
    return tools


def build(build_dir):
    tools = find_tools(build_dir) if build_dir else {}
    if all(k in tools for k in ("agent", "run", "summary")):
        return tools
    jobs = str(os.cpu_count() or 4)
    full = os.path.join(SRC, "build", "gpu")
    cfg = run(["cmake", "-S", SRC, "-B", full, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
               "-DVRAMSCOPE_BUILD_GUI=OFF", "-DVRAMSCOPE_BUILD_TESTS=OFF",
               "-DVRAMSCOPE_BUILD_BENCHMARKS=OFF"])
    if cfg.returncode == 0:
        run(["cmake", "--build", full, "-j", jobs, "--target", "vramscope_capture",
             "vramscope-run", "vramscope-capture-summary"], timeout=1800, check=True)
        if run(["cmake", "--build", full, "-j", jobs, "--target", "vramscope-cli"],
               timeout=1800).returncode != 0:
            print("note: vramscope-cli did not build; figures come from vramscope-capture-summary")
        return find_tools(full)
    print("note: the whole project does not configure here (" +
          cfg.stdout.strip().splitlines()[-1][:200] + "); building capture/ alone")
    alone = os.path.join(SRC, "build", "gpu-capture")
    run(["cmake", "-S", os.path.join(SRC, "capture"), "-B", alone,
         "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], check=True)
    run(["cmake", "--build", alone, "-j", jobs], timeout=1800, check=True)
    return find_tools(alone)


def summary(tools, path):
    p = run([tools["summary"], path])
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": p.stdout.strip()[-300:]}


def cli_figures(tools, path):
    """devices[] of `vramscope-cli report FILE --json`, or None without the CLI."""
    if "cli" not in tools:
        return None
    p = run([tools["cli"], "report", path, "--json"])
    try:
        return json.loads(p.stdout).get("devices")
    except ValueError:
        return None


def torch_line(output):
    m = re.search(r"mode=\S+ steps=(\d+) median_step_ms=([\d.]+) max_memory_allocated=(\d+) "
                  r"max_memory_reserved=(\d+)", output)
    if not m:
        return None
    return {"steps": int(m.group(1)), "median_step_ms": float(m.group(2)),
            "max_allocated": int(m.group(3)), "max_reserved": int(m.group(4))}


def traced(tools, out_dir, args, per_tensor=False, extra_env=None, timeout=900):
    cmd = [tools["run"], "-o", out_dir, "--flush-ms", str(FLUSH_MS)]
    if per_tensor:
        cmd.append("--per-tensor")
    env = dict(os.environ, **(extra_env or {}))
    p = run(cmd + ["--"] + args, env=env, timeout=timeout)
    files = sorted(glob.glob(os.path.join(out_dir, "*.vscope")))
    return p, files


def device0(s):
    devs = s.get("devices") or [{}]
    return devs[0]


def check_plain(tools, work, dev, steps):
    p, files = traced(tools, os.path.join(work, "plain"),
                      [sys.executable, os.path.join(dev, "gpt_train.py"), "plain", "--steps",
                       str(steps)])
    t = torch_line(p.stdout)
    if not t or not files:
        report("plain", False, f"no PyTorch figures or no trace (exit {p.returncode}): "
                               f"{p.stdout[-600:]}")
        return
    s = summary(tools, files[0])
    peak = device0(s).get("peak_reserved_bytes", 0)
    ratio = peak / t["max_reserved"] if t["max_reserved"] else 0
    iters = len(s.get("iterations", []))
    lost = s.get("data_loss_count", -1)
    cli = cli_figures(tools, files[0])
    cli_peak = cli[0].get("peak_reserved_bytes") if cli else None
    ok = 1.0 <= ratio <= 1.03 and iters == t["steps"] and lost == 0
    if cli_peak is not None:
        ok = ok and 1.0 <= cli_peak / t["max_reserved"] <= 1.03
    report("plain", ok,
           f"trace peak reserved {peak} B vs torch max_memory_reserved {t['max_reserved']} B "
           f"(ratio {ratio:.4f}, want 1.00-1.03); cli peak_reserved {cli_peak}; "
           f"iteration ranges {iters} vs steps {t['steps']}; data loss {lost}; "
           f"kernels {s.get('kernels')}, memory events {s.get('memory_events')}, "
           f"ranges {s.get('ranges')} (max depth {s.get('max_range_depth')}), "
           f"device static {device0(s).get('device_static_bytes')} B, "
           f"device {device0(s).get('name')} {device0(s).get('total_memory_bytes')} B")


def check_per_tensor(tools, work, dev, steps):
    p, files = traced(tools, os.path.join(work, "per_tensor"),
                      [sys.executable, os.path.join(dev, "gpt_train.py"), "plain", "--steps",
                       str(steps)], per_tensor=True)
    t = torch_line(p.stdout)
    if not t or not files:
        report("per_tensor", False, f"no figures or trace (exit {p.returncode}): {p.stdout[-600:]}")
        return
    s = summary(tools, files[0])
    peak = device0(s).get("peak_allocated_bytes", 0)
    ratio = peak / t["max_allocated"] if t["max_allocated"] else 0
    cli = cli_figures(tools, files[0])
    cli_peak = cli[0].get("peak_allocated_bytes") if cli else None
    ok = abs(ratio - 1) <= 0.02 and (cli_peak is None or abs(cli_peak / t["max_allocated"] - 1)
                                     <= 0.02)
    report("per_tensor", ok,
           f"trace peak allocated {peak} B vs torch max_memory_allocated {t['max_allocated']} B "
           f"(ratio {ratio:.4f}, want within 2 %); cli peak_allocated {cli_peak}; "
           f"memory events {s.get('memory_events')}; data loss {s.get('data_loss_count')}")


def slope(values):
    n = len(values)
    if n < 2:
        return 0.0
    xs = range(n)
    mx, my = (n - 1) / 2, sum(values) / n
    return sum((x - mx) * (y - my) for x, y in zip(xs, values)) / sum((x - mx) ** 2 for x in xs)


def check_leak(tools, work, dev):
    steps = 8
    p, files = traced(tools, os.path.join(work, "leak"),
                      [sys.executable, os.path.join(dev, "gpt_train.py"), "leak", "--steps",
                       str(steps)])
    if not files:
        report("leak", False, f"no trace (exit {p.returncode}): {p.stdout[-600:]}")
        return
    s = summary(tools, files[0])
    reserved = [it["reserved_at_end"] for it in s.get("iterations", [])]
    per_iter = slope(reserved[1:])  # the first iteration also builds the optimizer state
    ratio = per_iter / LEAK_BYTES_PER_ITERATION
    report("leak", 0.85 <= ratio <= 1.25,
           f"reserved at iteration ends {reserved}; rise {per_iter:.0f} B/iteration vs leaked "
           f"{LEAK_BYTES_PER_ITERATION} B (ratio {ratio:.3f}, want 0.85-1.25)")


def parse_size(text):
    m = re.search(r"Tried to allocate ([\d.]+) (GiB|MiB|KiB|bytes|B)", text)
    if not m:
        return None
    unit = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "bytes": 1, "B": 1}[m.group(2)]
    return float(m.group(1)) * unit, unit


def check_oom_trace(name, tools, files, output):
    size = parse_size(output)
    if not files or size is None:
        report(name, False, f"no trace or no OOM message: {output[-600:]}")
        return
    s = summary(tools, files[0])
    ooms = s.get("ooms", [])
    if not ooms:
        report(name, False,
               f"PyTorch reported 'Tried to allocate {size[0]:.0f} B' but the trace has no OOM "
               "event: the allocation never reached CUDA (PyTorch's per-process memory fraction "
               "refuses it inside the caching allocator), so no CUDA call failed")
        return
    last = ooms[-1]
    # PyTorch prints two decimals of the unit; the caching allocator rounds a request up to
    # 2 MiB before calling cudaMalloc.
    tolerance = 0.005 * size[1] + (2 << 20)
    ok = abs(last["requested_bytes"] - size[0]) <= tolerance
    report(name, ok,
           f"last OOM event requested {last['requested_bytes']} B (free {last['free_bytes']} B) vs "
           f"PyTorch 'Tried to allocate' {size[0]:.0f} B (tolerance {tolerance:.0f} B); "
           f"{len(ooms)} OOM event(s); it is the trace's last event: "
           f"{last['timestamp_ns'] >= s.get('last_event_ns', 0) - 10**9}")


def check_oom(tools, work, dev):
    p, files = traced(tools, os.path.join(work, "oom"),
                      [sys.executable, os.path.join(dev, "gpt_train.py"), "oom", "--steps", "60"])
    check_oom_trace("oom", tools, files, p.stdout)


def check_device_oom(tools, work):
    code = ("import torch\n"
            "total = torch.cuda.get_device_properties(0).total_memory\n"
            "x = torch.ones(1 << 20, device='cuda')\n"
            "try:\n"
            "    torch.empty(int(total * 1.5), dtype=torch.uint8, device='cuda')\n"
            "except torch.OutOfMemoryError as e:\n"
            "    print('OutOfMemoryError:', str(e).splitlines()[0][:200], flush=True)\n")
    p, files = traced(tools, os.path.join(work, "device_oom"), [sys.executable, "-c", code])
    check_oom_trace("device_oom", tools, files, p.stdout)


def check_gloo(tools, work, dev):
    out = os.path.join(work, "gloo")
    p, files = traced(tools, out, [sys.executable, os.path.join(dev, "gloo_ranks.py"), "--ranks",
                                   "4", "--steps", "20"])
    ranks = []
    for f in files:
        s = summary(tools, f)
        h = s.get("header", {})
        ranks.append((os.path.basename(f), h.get("rank"), h.get("world_size"),
                      len(s.get("iterations", []))))
    names_ok = sorted(os.path.basename(f) for f in files) == [
        f"gloo_ranks-rank{r}.vscope" for r in range(4)]
    ok = (p.returncode == 0 and names_ok and sorted(r[1] for r in ranks) == [0, 1, 2, 3]
          and all(r[2] == 4 for r in ranks))
    report("gloo", ok, f"exit {p.returncode}; files (name, rank, world size, iterations): {ranks}")


def check_kill(tools, work, dev):
    out = os.path.join(work, "kill")
    cmd = [tools["run"], "-o", out, "--flush-ms", str(FLUSH_MS), "--", sys.executable,
           os.path.join(dev, "gpt_train.py"), "plain", "--steps", "100000"]
    launcher = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not glob.glob(os.path.join(out, "*.vscope")):
        time.sleep(0.5)
    time.sleep(15)  # let it run some iterations
    child = run(["pgrep", "-P", str(launcher.pid)]).stdout.split()
    if not child:
        report("kill", False, "the traced process was not found")
        launcher.kill()
        return
    kill_wall_ns = time.time_ns()
    os.kill(int(child[0]), signal.SIGKILL)
    launcher.wait(timeout=60)
    files = glob.glob(os.path.join(out, "*.vscope"))
    s = summary(tools, files[0]) if files else {"error": "no file"}
    if "error" in s:
        report("kill", False, f"the file does not open: {s['error']}")
        return
    h = s["header"]
    iters = s.get("iterations", [])
    if not iters:
        report("kill", False, "the file opens but holds no iteration")
        return
    last_end = max(it["end_ns"] for it in iters)
    last_wall = h["wall_clock_anchor_ns"] + (last_end - h["anchor_trace_ns"])
    gap_ms = (kill_wall_ns - last_wall) / 1e6
    step_ms = statistics.median(
        [(b["end_ns"] - a["end_ns"]) / 1e6 for a, b in zip(iters, iters[1:])] or [0])
    allowed = FLUSH_MS + 2 * step_ms + 300
    report("kill", gap_ms <= allowed,
           f"launcher exit {launcher.returncode} (want 137); file complete={s.get('complete')} "
           f"({s.get('read_summary')}); {len(iters)} iterations; last iteration ended "
           f"{gap_ms:.0f} ms before the kill (flush {FLUSH_MS} ms, step {step_ms:.1f} ms, "
           f"allowed {allowed:.0f} ms)")


def median_step(args, env=None):
    p = run(args, env=env)
    t = torch_line(p.stdout)
    return t["median_step_ms"] if t else None


def check_overhead(tools, work, dev, pairs):
    workload = [sys.executable, os.path.join(dev, "gpt_train.py"), "plain", "--steps", "40"]
    traced_cmd = [tools["run"], "-o", os.path.join(work, "overhead"), "--flush-ms",
                  str(FLUSH_MS), "--"] + workload
    plain, agent, ratios = [], [], []
    for i in range(pairs):
        # alternate the order so that drift (clocks, temperature) hits both sides alike
        first, second = (workload, traced_cmd) if i % 2 == 0 else (traced_cmd, workload)
        a = median_step(first)
        b = median_step(second)
        without, with_agent = (a, b) if i % 2 == 0 else (b, a)
        if without and with_agent:
            plain.append(without)
            agent.append(with_agent)
            ratios.append(with_agent / without)
    if not ratios:
        report("overhead", False, "no step times were printed")
        return
    med = statistics.median(ratios)
    figures = (f"median ratio {med:.4f} over {len(ratios)} alternating pairs (target <= 1.01); "
               f"ratios {[round(r, 4) for r in ratios]} (spread {min(ratios):.4f}-"
               f"{max(ratios):.4f}); median step without {statistics.median(plain):.2f} ms, "
               f"with {statistics.median(agent):.2f} ms")
    if med > 1.01:
        # Where the time goes: the same run without NVTX forwarding, and without OOM callbacks.
        env_no_nvtx = dict(os.environ)
        no_nvtx = median_step([tools["run"], "-o", os.path.join(work, "ovh_nonvtx"), "--",
                               "env", "-u", "NVTX_INJECTION64_PATH"] + workload, env_no_nvtx)
        no_oom = median_step(traced_cmd, dict(os.environ, VRAMSCOPE_OOM_CALLBACKS="0"))
        base = statistics.median(plain)
        figures += (f"; without NVTX injection {no_nvtx / base if no_nvtx else float('nan'):.4f}, "
                    f"without OOM callbacks {no_oom / base if no_oom else float('nan'):.4f}")
    report("overhead", med <= 1.01, figures)


NCCL_ONE_RANK = r"""
import os, sys, torch, torch.distributed as dist
torch.cuda.set_device(0)
dist.init_process_group("nccl", init_method="file://" + sys.argv[1], rank=0, world_size=1,
                        device_id=torch.device("cuda", 0))
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"nccl_one_rank all_reduce={x[0].item()} nccl={torch.cuda.nccl.version()}", flush=True)
dist.destroy_process_group()
"""


def check_nccl(tools, work):
    """One-rank NCCL under vramscope-run with NCCL_DEBUG=INFO: NCCL's log names our plugin (its
    path and our INFO line with the version), and the trace holds the communicator's init. A
    one-rank communicator turns collectives into a copy (DESIGN.md NCCL facts), so no collective
    event is expected: the figure is reported, not checked."""
    out = os.path.join(work, "nccl")
    os.makedirs(out, exist_ok=True)
    script = os.path.join(work, "nccl_one_rank.py")
    with open(script, "w") as f:
        f.write(NCCL_ONE_RANK)
    env = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,ENV", "RANK": "0", "WORLD_SIZE": "1"}
    p, files = traced(tools, out, [sys.executable, script, os.path.join(work, "nccl_rendezvous")],
                      extra_env=env, timeout=600)
    log = p.stdout
    loaded = re.search(r"Successfully loaded external profiler plugin \S*libvramscope_capture\.so",
                       log) is not None
    ours = re.search(r"PROFILER/Plugin: (vramscope \S+) records communicator (\w+) rank (\d+) "
                     r"of (\d+)", log)
    version = re.search(r"NCCL version (\S+)", log)
    comms, collectives, clock = [], None, None
    for f in files:
        s = summary(tools, f)
        comms += s.get("communicators", [])
        collectives = s.get("collectives")
        clock = s.get("header", {}).get("clock_domain")
    comm_ok = any(c.get("nranks") == 1 and c.get("rank") == 0 for c in comms)
    ok = p.returncode == 0 and loaded and ours is not None and comm_ok
    report("nccl", ok,
           f"exit {p.returncode}; NCCL {version.group(1) if version else '?'}; plugin loaded "
           f"{loaded}; our line {ours.group(0) if ours else None}; communicators in the trace "
           f"{comms}; collective events {collectives} (one rank: none expected); clock {clock}; "
           f"files {[os.path.basename(f) for f in files]}")
    if not ok:
        print("\n".join(l for l in log.splitlines() if "PROFILER" in l or "vramscope" in l
                        or "profiler" in l)[-3000:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="")
    ap.add_argument("--device-dir", default="")
    ap.add_argument("--only", default="")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--overhead-pairs", type=int, default=5)
    a = ap.parse_args()

    ok, why = have_gpu()
    if not ok:
        print(f"skipped: {why}")
        return SKIP
    dev = a.device_dir or next((d for d in (os.path.join(SRC, "..", "shared", "device"),
                                            os.path.join(SRC, "shared", "device"))
                                if os.path.exists(os.path.join(d, "gpt_train.py"))), "")
    if not dev:
        print("skipped: gpt_train.py not found (pass --device-dir)")
        return SKIP
    tools = build(a.build_dir)
    missing = [k for k in ("agent", "run", "summary") if k not in tools]
    if missing:
        print(f"build did not produce {missing}")
        return 1
    print(f"tools: {tools}\nworkloads: {os.path.abspath(dev)}", flush=True)
    work = tempfile.mkdtemp(prefix="vramscope-gpu-")
    only = set(filter(None, a.only.split(",")))
    checks = [
        ("plain", lambda: check_plain(tools, work, dev, a.steps)),
        ("per_tensor", lambda: check_per_tensor(tools, work, dev, a.steps)),
        ("leak", lambda: check_leak(tools, work, dev)),
        ("oom", lambda: check_oom(tools, work, dev)),
        ("device_oom", lambda: check_device_oom(tools, work)),
        ("gloo", lambda: check_gloo(tools, work, dev)),
        ("kill", lambda: check_kill(tools, work, dev)),
        ("overhead", lambda: check_overhead(tools, work, dev, a.overhead_pairs)),
        ("nccl", lambda: check_nccl(tools, work)),
    ]
    for name, fn in checks:
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            fn()
        except Exception as e:  # one broken check must not hide the others' figures
            report(name, False, f"raised {type(e).__name__}: {e}")
        print(f"      ({name} took {time.time() - t0:.0f} s)", flush=True)
    failed = [n for n, p, _ in results if p is False]
    print(f"{sum(1 for _, p, _ in results if p)} passed, {len(failed)} failed", flush=True)
    print(f"traces kept in {work}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
