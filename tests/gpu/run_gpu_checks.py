#!/usr/bin/env python3
"""Every GPU acceptance check of the capture agent, in one go, inside a time limit, with figures.

Usage: run_gpu_checks.py [--build-dir DIR] [--device-dir DIR] [--only NAME,...]
                         [--deadline-s S] [--steps N] [--overhead-pairs N]

Needs a CUDA GPU, python3 with PyTorch, and the workloads gpt_train.py and gloo_ranks.py
(--device-dir; default ../shared/device beside the checkout). Exits 77 (skipped) without a GPU.

--build-dir names a folder holding libvramscope_capture.so, vramscope-run and
vramscope-capture-summary (a build tree, whose capture/ folder holds them, or a flat folder of the
three). The script never builds with --build-dir; without it, it builds the capture folder alone
(cmake -S capture -B build/gpu-capture: no GUI, no Qt).

Default checks, in this order (names for --only): versions, plain, per_tensor, leak, device_oom,
kill, gloo, overhead, injection_probe. Extra checks, run only when named in --only: oom (gpt_train.py's capped leak), nccl.
Each prints one PASS/FAIL/INFO line with its figures and the seconds it took. A global deadline
(--deadline-s, default 450 s from the start) skips the checks that no longer fit, with a SKIP line,
and cuts a command that would run past it. The exit code is 1 when a check failed, else 0.

Figures compared against: the ones gpt_train.py prints (PyTorch's own max_memory_reserved /
max_memory_allocated and median step time), the leak size 2 x 8 x 1024 x 32000 bf16 values =
1,048,576,000 bytes per iteration, and PyTorch's out-of-memory message.
Standard library only; python 3.8 or newer.
"""
import argparse
import glob
import json
import os
import re
import signal
import shutil
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
TOOL_FILES = {"agent": "libvramscope_capture.so", "run": "vramscope-run",
              "summary": "vramscope-capture-summary"}

results = []  # (name, "PASS" | "FAIL" | "INFO" | "SKIP", figures)


class OutOfTime(Exception):
    """A command was not started, or was cut, because the global deadline came."""


class Deadline:
    """Seconds left until the end of the whole run (time.monotonic based)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()


DEADLINE = Deadline(450)


def report(name, passed, figures):
    """passed: True, False, or None for a figure that is shown and not judged."""
    tag = {True: "PASS", False: "FAIL", None: "INFO"}[passed]
    results.append((name, tag, figures))
    print(f"[{tag}] {name}: {figures}", flush=True)


class Completed:
    def __init__(self, returncode, stdout, seconds):
        self.returncode, self.stdout, self.seconds = returncode, stdout, seconds


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(cmd, timeout, env=None):
    """Runs cmd (stdout and stderr together) in its own process group, so that a timeout kills
    vramscope-run and the job under it. The timeout is cut to what the deadline leaves."""
    allowed = min(timeout, DEADLINE.left() - 3)
    if allowed <= 0:
        raise OutOfTime(f"no time left to start {os.path.basename(cmd[0])}")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=allowed)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, _ = proc.communicate()
        if allowed < timeout:
            raise OutOfTime(f"{' '.join(cmd[:6])} ... cut at the deadline after {allowed:.0f} s; "
                            f"output: {out[-400:]}")
        raise RuntimeError(f"{' '.join(cmd[:6])} ... ran past its {timeout} s limit; "
                           f"output: {out[-400:]}")
    return Completed(proc.returncode, out, time.monotonic() - t0)


def have_gpu():
    if shutil.which("nvidia-smi") is None:
        return False, "no nvidia-smi: no NVIDIA GPU on this machine"
    try:
        smi = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return False, "nvidia-smi -L did not answer in 30 s"
    if smi.returncode != 0:
        return False, "nvidia-smi finds no GPU: " + smi.stdout.strip()[-200:]
    p = run([sys.executable, "-c", "import torch; print(torch.cuda.is_available(), "
             "torch.__version__, torch.version.cuda)"], 120)
    if p.returncode != 0 or not p.stdout.startswith("True"):
        return False, "PyTorch with CUDA is not available: " + p.stdout.strip()[-200:]
    print(f"GPU: {smi.stdout.strip()}; PyTorch, CUDA: {p.stdout.split(None, 1)[1].strip()}",
          flush=True)
    return True, ""


def find_tools(build_dir):
    """The three files in DIR/capture/ (a build tree) or DIR itself (a flat folder)."""
    tools = {}
    for key, name in TOOL_FILES.items():
        for sub in ("capture", ""):
            path = os.path.join(build_dir, sub, name)
            if os.path.exists(path):
                tools[key] = os.path.abspath(path)
                break
    return tools


def build_capture_alone():
    folder = os.path.join(SRC, "build", "gpu-capture")
    jobs = str(os.cpu_count() or 4)
    for cmd in (["cmake", "-S", os.path.join(SRC, "capture"), "-B", folder,
                 "-DCMAKE_BUILD_TYPE=RelWithDebInfo"],
                ["cmake", "--build", folder, "-j", jobs]):
        p = run(cmd, 1800)
        if p.returncode != 0:
            print(p.stdout[-3000:])
            raise SystemExit(f"command failed ({p.returncode}): {' '.join(cmd)}")
    return find_tools(folder)


def library_notes(agent):
    """ldd lines of the agent that resolve to nothing, for the log (PyTorch may still bring them)."""
    if shutil.which("ldd") is None:
        return ""
    p = run(["ldd", agent], 30)
    return "; ".join(l.strip() for l in p.stdout.splitlines() if "not found" in l)


def summary(tools, path):
    p = run([tools["summary"], path], 120)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": p.stdout.strip()[-300:]}


def device0(s):
    return (s.get("devices") or [{}])[0]


def torch_line(output):
    m = re.search(r"mode=\S+ steps=(\d+) median_step_ms=([\d.]+) max_memory_allocated=(\d+) "
                  r"max_memory_reserved=(\d+)", output)
    if not m:
        return None
    return {"steps": int(m.group(1)), "median_step_ms": float(m.group(2)),
            "max_allocated": int(m.group(3)), "max_reserved": int(m.group(4))}


def trace_files(folder):
    """The traces in folder, without the ring dumps the agent writes beside a trace on SIGTERM or
    an out-of-memory failure (OUTPUT-ring-<seconds>.vscope): those hold only the newest frames."""
    return sorted(f for f in glob.glob(os.path.join(folder, "*.vscope"))
                  if not re.search(r"-ring-\d+\.vscope$", f))


class Context:
    """What every check needs: the tools, a scratch folder, the workloads and the options."""

    def __init__(self, tools, work, dev, options):
        self.tools, self.work, self.dev, self.options = tools, work, dev, options

    def gpt(self, mode, steps):
        return [sys.executable, os.path.join(self.dev, "gpt_train.py"), mode, "--steps",
                str(steps)]

    def traced(self, name, command, timeout, per_tensor=False, env=None, job=None):
        """Runs command under vramscope-run into WORK/name/ (file names from the command, or
        from `job`); returns (Completed, the trace files written)."""
        out = os.path.join(self.work, name)
        cmd = [self.tools["run"], "-o", out, "--flush-ms", str(FLUSH_MS)]
        if job:
            cmd += ["--job", job]
        if per_tensor:
            cmd.append("--per-tensor")
        p = run(cmd + ["--"] + command, timeout, env=env)
        return p, trace_files(out)


def environment_without_alloc_conf(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")}
    env.update(extra)
    return env


# --- the checks -----------------------------------------------------------------------------

def check_plain(ctx):
    steps = ctx.options.steps
    p, files = ctx.traced("plain", ctx.gpt("plain", steps), 90,
                          env=environment_without_alloc_conf())
    t = torch_line(p.stdout)
    if not t or not files:
        report("plain", False, f"no PyTorch figures or no trace (exit {p.returncode}): "
                               f"{p.stdout[-600:]}")
        return
    s = summary(ctx.tools, files[0])
    peak = device0(s).get("peak_reserved_bytes", 0)
    ratio = peak / t["max_reserved"] if t["max_reserved"] else 0
    iters = len(s.get("iterations", []))
    lost = s.get("data_loss_count", -1)
    report("plain", 1.0 <= ratio <= 1.03 and iters == t["steps"] and lost == 0,
           f"trace peak reserved {peak} B vs torch max_memory_reserved {t['max_reserved']} B "
           f"(ratio {ratio:.4f}, want 1.00-1.03); iteration ranges {iters} vs steps "
           f"{t['steps']}; data loss {lost} {s.get('data_loss')}; kernels {s.get('kernels')}, "
           f"memory events {s.get('memory_events')}, ranges {s.get('ranges')} (max depth "
           f"{s.get('max_range_depth')}); device static {device0(s).get('device_static_bytes')} B; "
           f"device {device0(s).get('name')} {device0(s).get('total_memory_bytes')} B; "
           f"median step {t['median_step_ms']} ms; run {p.seconds:.0f} s")


BACKEND_PROBE = (
    "import os, torch\n"
    "torch.cuda.init()\n"
    "x = torch.empty(1 << 20, device='cuda')\n"
    "print('allocator_backend=' + torch.cuda.memory.get_allocator_backend())\n"
    "for k in ('PYTORCH_ALLOC_CONF', 'PYTORCH_CUDA_ALLOC_CONF'):\n"
    "    print(k + '=' + os.environ.get(k, '<unset>'))\n")


def probe_backend(ctx, name, env):
    """The allocator backend and the two settings a one-line job sees under --per-tensor."""
    p, _ = ctx.traced(name, [sys.executable, "-c", BACKEND_PROBE], 60, per_tensor=True, env=env,
                      job="probe")
    seen = dict(re.findall(r"^(allocator_backend|PYTORCH_ALLOC_CONF|PYTORCH_CUDA_ALLOC_CONF)=(.*)$",
                           p.stdout, re.M))
    warnings = [l.strip()[:200] for l in p.stdout.splitlines() if "Warning" in l]
    return p.returncode, seen, warnings


def check_per_tensor(ctx):
    # 1. Neither name set: vramscope-run sets PYTORCH_ALLOC_CONF alone.
    rc1, seen1, warn1 = probe_backend(ctx, "probe_unset", environment_without_alloc_conf())
    ok1 = (rc1 == 0 and seen1.get("allocator_backend") == "cudaMallocAsync"
           and seen1.get("PYTORCH_ALLOC_CONF") == "backend:cudaMallocAsync")
    # 2. The older name set with another backend and another option: both names leave equal.
    older = "backend:native,max_split_size_mb:128"
    rc2, seen2, warn2 = probe_backend(
        ctx, "probe_older", environment_without_alloc_conf(PYTORCH_CUDA_ALLOC_CONF=older))
    want2 = "backend:cudaMallocAsync,max_split_size_mb:128"
    ok2 = (rc2 == 0 and seen2.get("allocator_backend") == "cudaMallocAsync"
           and seen2.get("PYTORCH_ALLOC_CONF") == want2
           and seen2.get("PYTORCH_CUDA_ALLOC_CONF") == want2)
    # 3. The workload: every tensor is a CUDA allocation, so the allocated peak is PyTorch's.
    steps = ctx.options.steps
    p, files = ctx.traced("per_tensor", ctx.gpt("plain", steps), 90, per_tensor=True,
                          env=environment_without_alloc_conf())
    t = torch_line(p.stdout)
    probes = (f"probe with nothing set: exit {rc1}, {seen1}, warnings {warn1}; probe with "
              f"PYTORCH_CUDA_ALLOC_CONF={older}: exit {rc2}, {seen2} (want both {want2}), "
              f"warnings {warn2}")
    if not t or not files:
        report("per_tensor", False, f"{probes}; workload: no figures or trace (exit "
                                    f"{p.returncode}): {p.stdout[-600:]}")
        return
    s = summary(ctx.tools, files[0])
    peak = device0(s).get("peak_allocated_bytes", 0)
    ratio = peak / t["max_allocated"] if t["max_allocated"] else 0
    settings = s.get("header", {}).get("capture_settings", {})
    report("per_tensor", ok1 and ok2 and abs(ratio - 1) <= 0.02,
           f"{probes}; trace peak allocated {peak} B vs torch max_memory_allocated "
           f"{t['max_allocated']} B (ratio {ratio:.4f}, want within 2 %); trace settings "
           f"PYTORCH_ALLOC_CONF={settings.get('PYTORCH_ALLOC_CONF')}; memory events "
           f"{s.get('memory_events')}; data loss {s.get('data_loss_count')}; median step "
           f"{t['median_step_ms']} ms")


def slope(values):
    """Least-squares slope of values against their index (bytes per iteration)."""
    n = len(values)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, sum(values) / n
    return (sum((x - mx) * (y - my) for x, y in enumerate(values))
            / sum((x - mx) ** 2 for x in range(n)))


def check_leak(ctx):
    p, files = ctx.traced("leak", ctx.gpt("leak", 8), 90, env=environment_without_alloc_conf())
    if not files:
        report("leak", False, f"no trace (exit {p.returncode}): {p.stdout[-600:]}")
        return
    s = summary(ctx.tools, files[0])
    reserved = [it["reserved_at_end"] for it in s.get("iterations", [])]
    per_iter = slope(reserved[1:])  # the first iteration also builds the optimizer state
    ratio = per_iter / LEAK_BYTES_PER_ITERATION
    report("leak", len(reserved) >= 4 and 0.85 <= ratio <= 1.25,
           f"reserved at iteration ends {reserved}; rise {per_iter:.0f} B/iteration vs leaked "
           f"{LEAK_BYTES_PER_ITERATION} B (ratio {ratio:.3f}, want 0.85-1.25)")


def parse_size(text):
    """PyTorch's 'Tried to allocate 1.50 GiB' as (bytes, unit bytes), or None."""
    m = re.search(r"Tried to allocate ([\d.]+) (GiB|MiB|KiB|bytes|B)", text)
    if not m:
        return None
    unit = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "bytes": 1, "B": 1}[m.group(2)]
    return float(m.group(1)) * unit, unit


def judge_oom_trace(name, tools, files, output, judged=True):
    size = parse_size(output)
    if not files or size is None:
        report(name, False if judged else None, f"no trace or no OOM message: {output[-600:]}")
        return
    s = summary(tools, files[0])
    ooms = s.get("ooms", [])
    if not ooms:
        report(name, False if judged else None,
               f"PyTorch reported 'Tried to allocate {size[0]:.0f} B' but the trace has no OOM "
               "event (no CUDA call failed: a per-process memory fraction refuses inside the "
               "caching allocator)")
        return
    last = ooms[-1]
    # PyTorch prints two decimals of the unit; the caching allocator rounds a request up to
    # 2 MiB before calling cudaMalloc.
    tolerance = 0.005 * size[1] + (2 << 20)
    ok = abs(last["requested_bytes"] - size[0]) <= tolerance
    report(name, ok if judged else None,
           f"last OOM event requested {last['requested_bytes']} B (free {last['free_bytes']} B) vs "
           f"PyTorch 'Tried to allocate' {size[0]:.0f} B (tolerance {tolerance:.0f} B); "
           f"{len(ooms)} OOM event(s); within 1 s of the trace's last event: "
           f"{last['timestamp_ns'] >= s.get('last_event_ns', 0) - 10**9}")


def check_device_oom(ctx):
    code = ("import torch\n"
            "total = torch.cuda.get_device_properties(0).total_memory\n"
            "x = torch.ones(1 << 20, device='cuda')\n"
            "try:\n"
            "    torch.empty(int(total * 1.5), dtype=torch.uint8, device='cuda')\n"
            "except torch.OutOfMemoryError as e:\n"
            "    print('OutOfMemoryError:', str(e).splitlines()[0][:200], flush=True)\n")
    p, files = ctx.traced("device_oom", [sys.executable, "-c", code], 60,
                          env=environment_without_alloc_conf(), job="device_oom")
    judge_oom_trace("device_oom", ctx.tools, files, p.stdout)


def check_oom(ctx):
    p, files = ctx.traced("oom", ctx.gpt("oom", 30), 90, env=environment_without_alloc_conf())
    judge_oom_trace("oom", ctx.tools, files, p.stdout, judged=False)


def check_gloo(ctx):
    p, files = ctx.traced("gloo", [sys.executable, os.path.join(ctx.dev, "gloo_ranks.py"),
                                   "--ranks", "4", "--steps", "20"], 120)
    ranks = []
    for f in files:
        s = summary(ctx.tools, f)
        h = s.get("header", {})
        ranks.append((os.path.basename(f), h.get("rank"), h.get("world_size"),
                      len(s.get("iterations", []))))
    names_ok = [os.path.basename(f) for f in files] == [
        f"gloo_ranks-rank{r}.vscope" for r in range(4)]
    ok = (p.returncode == 0 and names_ok and sorted(r[1] for r in ranks) == [0, 1, 2, 3]
          and all(r[2] == 4 and r[3] == 20 for r in ranks))
    report("gloo", ok, f"exit {p.returncode}; files (name, rank, world size, iterations; want "
                       f"ranks 0-3 of 4, 20 each): {ranks}; run {p.seconds:.0f} s"
                       + ("" if ok else f"; output: {p.stdout[-600:]}"))


def children_of(pid):
    kids = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # the field after the state is the parent pid
            kids.append(int(stat.split("/")[2]))
    return kids


def check_kill(ctx):
    out = os.path.join(ctx.work, "kill")
    cmd = [ctx.tools["run"], "-o", out, "--flush-ms", str(FLUSH_MS), "--"] + ctx.gpt(
        "plain", 100000)
    if DEADLINE.left() < 60:
        raise OutOfTime("less than 60 s left")
    with open(os.path.join(ctx.work, "kill.log"), "w") as log:
        launcher = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    env=environment_without_alloc_conf(), start_new_session=True)
    try:
        # Wait until the written file holds some iterations, then kill the job mid-run.
        waited_until = time.monotonic() + 60
        iterations = 0
        while time.monotonic() < waited_until and launcher.poll() is None and iterations < 40:
            time.sleep(1)
            files = trace_files(out)
            if files:
                iterations = len(summary(ctx.tools, files[0]).get("iterations", []))
        child = children_of(launcher.pid)
        if not child:
            report("kill", False, f"the traced process was not found (launcher exit "
                                  f"{launcher.poll()}, {iterations} iterations seen)")
            return
        kill_wall_ns = time.time_ns()
        os.kill(child[0], signal.SIGKILL)
        launcher.wait(timeout=30)
    finally:
        kill_group(launcher)
    files = trace_files(out)
    s = summary(ctx.tools, files[0]) if files else {"error": "no file"}
    if "error" in s:
        report("kill", False, f"the file does not open: {s['error']}")
        return
    h, iters = s["header"], s.get("iterations", [])
    if not iters:
        report("kill", False, "the file opens but holds no iteration")
        return
    last_end = max(it["end_ns"] for it in iters)
    last_wall = h["wall_clock_anchor_ns"] + (last_end - h["anchor_trace_ns"])
    gap_ms = (kill_wall_ns - last_wall) / 1e6
    step_ms = statistics.median(
        [(b["end_ns"] - a["end_ns"]) / 1e6 for a, b in zip(iters, iters[1:])] or [0])
    allowed = FLUSH_MS + 2 * step_ms + 300
    report("kill", gap_ms <= allowed and launcher.returncode == 137,
           f"launcher exit {launcher.returncode} (want 137); file complete={s.get('complete')} "
           f"({s.get('read_summary')}); {len(iters)} iterations; the last ended {gap_ms:.0f} ms "
           f"before the kill (flush {FLUSH_MS} ms, step {step_ms:.1f} ms, allowed "
           f"{allowed:.0f} ms)")


def median_step(cmd, env=None):
    p = run(cmd, 90, env=env)
    t = torch_line(p.stdout)
    return (t["median_step_ms"] if t else None), p.seconds


def where_the_time_goes(ctx, workload, steps, base_ms):
    """The agent's own figures from the last traced run, then single diagnostic runs (each
    changing one thing) while the deadline allows: indicative, not judged."""
    files = trace_files(os.path.join(ctx.work, "overhead", "last"))
    notes = []
    if files:
        s = summary(ctx.tools, files[-1])
        settings = s.get("header", {}).get("capture_settings", {})
        per_step = {k: round(s.get(k, 0) / steps, 1)
                    for k in ("kernels", "memcpys", "memsets", "memory_events", "ranges")}
        notes.append(f"records per step {per_step}; settings flush_ms={settings.get('flush_ms')} "
                     f"oom_events={settings.get('oom_events')} activity_kinds="
                     f"{settings.get('activity_kinds')}; data loss {s.get('data_loss')}")
    runner = [ctx.tools["run"], "-o", os.path.join(ctx.work, "overhead_diag"), "--flush-ms"]
    diagnostics = [
        ("flush every 1000 ms", runner + ["1000", "--"] + workload, None),
        ("no OOM callbacks", runner + [str(FLUSH_MS), "--"] + workload,
         environment_without_alloc_conf(VRAMSCOPE_OOM_CALLBACKS="0")),
        ("no NVTX injection", runner + [str(FLUSH_MS), "--", "env", "-u",
                                        "NVTX_INJECTION64_PATH"] + workload, None),
    ]
    for label, cmd, env in diagnostics:
        if DEADLINE.left() < 40:
            notes.append(f"{label}: not run (deadline)")
            continue
        ms, _ = median_step(cmd, env or environment_without_alloc_conf())
        notes.append(f"{label}: {ms / base_ms:.4f}" if ms else f"{label}: no step time")
    return "; where the time goes: " + "; ".join(notes)


def check_overhead(ctx):
    """Alternating pairs of the same workload without and with the agent. A traced run only
    counts when it wrote a trace with kernels in it: an agent that records nothing costs
    nothing, and that must not pass for low overhead."""
    steps = 50
    workload = ctx.gpt("plain", steps)
    env = environment_without_alloc_conf()
    without, with_agent, ratios, pair_s, empty = [], [], [], 0.0, []
    for i in range(ctx.options.overhead_pairs):
        # keep room for one more pair and the diagnostics after it
        if i >= 2 and DEADLINE.left() < 1.3 * pair_s + 60:
            print(f"      overhead: stopping after {i} pairs ({DEADLINE.left():.0f} s left)",
                  flush=True)
            break
        out = os.path.join(ctx.work, "overhead", f"pair{i}")
        traced_cmd = [ctx.tools["run"], "-o", out, "--flush-ms", str(FLUSH_MS), "--"] + workload
        t0 = time.monotonic()
        # alternate the order so that drift (clocks, temperature) hits both sides alike
        order = (workload, traced_cmd) if i % 2 == 0 else (traced_cmd, workload)
        first, _ = median_step(order[0], env)
        second, _ = median_step(order[1], env)
        plain, agent = (first, second) if i % 2 == 0 else (second, first)
        pair_s = time.monotonic() - t0
        files = trace_files(out)
        kernels = summary(ctx.tools, files[0]).get("kernels", 0) if files else 0
        if not kernels:
            empty.append(f"pair {i}: {len(files)} trace files, {kernels} kernels")
            continue
        if os.path.isdir(out):
            last = os.path.join(ctx.work, "overhead", "last")
            shutil.rmtree(last, ignore_errors=True)
            shutil.copytree(out, last)
        if plain and agent:
            without.append(plain)
            with_agent.append(agent)
            ratios.append(agent / plain)
    if empty:
        report("overhead", False, "a traced run wrote no trace or one without kernels, so its "
                                  f"step time says nothing of the agent's cost: {empty}")
        return
    if len(ratios) < 2:
        report("overhead", False, f"fewer than two pairs gave step times ({ratios})")
        return
    med = statistics.median(ratios)
    base = statistics.median(without)
    figures = (f"median ratio {med:.4f} over {len(ratios)} alternating pairs (target <= 1.01); "
               f"ratios {[round(r, 4) for r in ratios]} (spread {min(ratios):.4f}-"
               f"{max(ratios):.4f}); step ms without {without}, with {with_agent}; median "
               f"without {base:.2f} ms, with {statistics.median(with_agent):.2f} ms; "
               f"{pair_s:.0f} s per pair; every traced run wrote a trace with kernels")
    if med > 1.01:
        figures += where_the_time_goes(ctx, workload, steps, base)
    report("overhead", med <= 1.01, figures)


VERSIONS_PROBE = r"""
import json, os, torch
x = torch.ones(1 << 20, device="cuda")
torch.cuda.synchronize()
nccl = ".".join(map(str, torch.cuda.nccl.version())) if hasattr(torch.cuda, "nccl") else None
mapped = {}
with open("/proc/self/maps") as f:
    for line in f:
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        for lib in ("libcupti", "libcudart", "libnccl", "libcuda.so", "libnvidia-ml"):
            if os.path.basename(path).startswith(lib):
                mapped.setdefault(lib, set()).add(path)
print("versions " + json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda,
      "nccl": nccl, "driver_cuda": torch._C._cuda_getDriverVersion()
      if hasattr(torch._C, "_cuda_getDriverVersion") else None,
      "mapped": {k: sorted(v) for k, v in mapped.items()}}), flush=True)
"""


def probe_versions(ctx, traced):
    """Runs VERSIONS_PROBE bare or under vramscope-run; returns (its JSON, trace files, output)."""
    script = os.path.join(ctx.work, "versions_probe.py")
    with open(script, "w") as f:
        f.write(VERSIONS_PROBE)
    command = [sys.executable, script]
    if traced:
        p, files = ctx.traced("versions", command, 90, env=environment_without_alloc_conf(),
                              job="versions")
    else:
        p, files = run(command, 90, env=environment_without_alloc_conf()), []
    m = re.search(r"^versions (\{.*\})$", p.stdout, flags=re.M)
    return (json.loads(m.group(1)) if m else None), files, p


def check_versions(ctx):
    """Which torch, CUDA, NCCL and CUPTI the job runs with, and which libcupti, libcudart and
    libnccl it mapped, bare and under the agent; judged: the traced run wrote a trace with
    kernels, and the agent bound the libcupti the job mapped (when its header says which)."""
    bare, _, pb = probe_versions(ctx, traced=False)
    traced, files, pt = probe_versions(ctx, traced=True)
    if not bare or not traced:
        report("versions", False, f"the probe printed nothing (exit {pb.returncode} bare, "
                                  f"{pt.returncode} traced): {pt.stdout[-600:]}")
        return
    s = summary(ctx.tools, files[0]) if files else {}
    settings = s.get("header", {}).get("capture_settings", {})
    bound = settings.get("cupti_library")
    mapped_cupti = traced["mapped"].get("libcupti", [])
    same = bound is None or any(os.path.realpath(bound) == os.path.realpath(m)
                                for m in mapped_cupti)
    cupti = {k: v for k, v in settings.items() if k.startswith("cupti") or k.startswith("cuda")}
    report("versions", bool(files) and s.get("kernels", 0) > 0 and same,
           f"torch {bare['torch']}, CUDA {bare['cuda']}, NCCL {bare['nccl']}, driver CUDA "
           f"{bare['driver_cuda']}; mapped bare {bare['mapped']}; mapped traced "
           f"{traced['mapped']}; agent's CUPTI settings {cupti}; trace files {len(files)}, "
           f"kernels {s.get('kernels')}; bound libcupti is the mapped one: {same}")


INJECTION_PROBE = ("import torch\n"
                   "x = torch.ones(4, device='cuda')\n"
                   "print('probe: cuda works, sum', float(x.sum()), flush=True)\n")


def check_injection_probe(ctx):
    """What the driver does with a CUDA_INJECTION64_PATH it cannot load (a missing file, a file
    that is not a library, a library with a missing dependency): whether the job still runs and
    what it prints. Shown, not judged: vramscope-run test-loads the agent first so that a user
    never meets this, and the figures say why that matters."""
    bad_elf = os.path.join(ctx.work, "not_a_library.so")
    with open(bad_elf, "w") as f:
        f.write("this is not an ELF file\n")
    missing_dep = os.path.join(ctx.work, "missing_dependency.so")
    src = os.path.join(ctx.work, "missing_dependency.c")
    with open(src, "w") as f:
        f.write("extern int vramscope_no_such_symbol(void);\n"
                "int InitializeInjection(void) { return vramscope_no_such_symbol(); }\n")
    cases = [("missing file", os.path.join(ctx.work, "no_such_agent.so")), ("not ELF", bad_elf)]
    if shutil.which("cc") and run(["cc", "-shared", "-fPIC", "-o", missing_dep, src,
                                   "-Wl,--no-undefined", "-Wl,--unresolved-symbols=ignore-all"],
                                  30).returncode == 0:
        cases.append(("unresolved symbol", missing_dep))
    figures = []
    for label, path in cases:
        env = environment_without_alloc_conf(CUDA_INJECTION64_PATH=path)
        p = run([sys.executable, "-c", INJECTION_PROBE], 60, env=env)
        lines = [l for l in p.stdout.splitlines() if l.strip()][-2:]
        figures.append(f"{label}: exit {p.returncode}, cuda works "
                       f"{'probe: cuda works' in p.stdout}, last lines {lines}")
    report("injection_probe", None, "; ".join(figures))


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


def check_nccl(ctx):
    """One-rank NCCL with NCCL_DEBUG=INFO: NCCL's log names our plugin, and the trace holds the
    communicator's init. A one-rank communicator turns collectives into a copy, so no collective
    event is expected: that figure is shown, not judged."""
    script = os.path.join(ctx.work, "nccl_one_rank.py")
    with open(script, "w") as f:
        f.write(NCCL_ONE_RANK)
    env = dict(os.environ, NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,ENV", RANK="0",
               WORLD_SIZE="1")
    p, files = ctx.traced("nccl", [sys.executable, script,
                                   os.path.join(ctx.work, "nccl_rendezvous")], 120, env=env,
                        job="nccl_one_rank")
    loaded = re.search(r"Successfully loaded external profiler plugin \S*libvramscope_capture\.so",
                       p.stdout) is not None
    ours = re.search(r"PROFILER/Plugin: (vramscope \S+) records communicator (\w+) rank (\d+) "
                     r"of (\d+)", p.stdout)
    comms, collectives = [], None
    for f in files:
        s = summary(ctx.tools, f)
        comms += s.get("communicators", [])
        collectives = s.get("collectives")
    comm_ok = any(c.get("nranks") == 1 and c.get("rank") == 0 for c in comms)
    ok = p.returncode == 0 and loaded and ours is not None and comm_ok
    report("nccl", ok, f"exit {p.returncode}; plugin loaded {loaded}; our line "
                       f"{ours.group(0) if ours else None}; communicators {comms}; collective "
                       f"events {collectives} (one rank: none expected)")
    if not ok:
        print("\n".join(l for l in p.stdout.splitlines() if "rofiler" in l or "vramscope" in l
                        or "PROFILER" in l)[-3000:])


# (name, check, seconds it is expected to need on the H200: skipped when less is left)
DEFAULT_CHECKS = [
    ("versions", check_versions, 25),
    ("plain", check_plain, 35),
    ("per_tensor", check_per_tensor, 50),
    ("leak", check_leak, 35),
    ("device_oom", check_device_oom, 25),
    ("kill", check_kill, 60),
    ("gloo", check_gloo, 60),
    ("overhead", check_overhead, 80),
    ("injection_probe", check_injection_probe, 20),
]
EXTRA_CHECKS = [("oom", check_oom, 40), ("nccl", check_nccl, 40)]


def parse_arguments():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="checks: " + ", ".join(n for n, _, _ in DEFAULT_CHECKS) + "; extra (only with "
               "--only): " + ", ".join(n for n, _, _ in EXTRA_CHECKS) + ". Exits 77 without a GPU.")
    ap.add_argument("--build-dir", default="",
                    help="folder with libvramscope_capture.so, vramscope-run and "
                         "vramscope-capture-summary (itself or its capture/); never built")
    ap.add_argument("--device-dir", default="",
                    help="folder with gpt_train.py and gloo_ranks.py (default ../shared/device)")
    ap.add_argument("--only", default="", help="comma-separated check names")
    ap.add_argument("--deadline-s", type=float, default=450,
                    help="seconds for the whole run; checks that no longer fit are skipped")
    ap.add_argument("--steps", type=int, default=30, help="gpt_train.py steps for plain and "
                                                          "per_tensor (about 59 ms each)")
    ap.add_argument("--overhead-pairs", type=int, default=5,
                    help="most alternating with/without pairs (fewer when time runs short)")
    a = ap.parse_args()
    known = {n for n, _, _ in DEFAULT_CHECKS + EXTRA_CHECKS}
    a.only = [n for n in a.only.split(",") if n]
    unknown = [n for n in a.only if n not in known]
    if unknown:
        ap.error(f"unknown check(s) {unknown}; known: {sorted(known)}")
    return a


def main():
    global DEADLINE
    started = time.monotonic()
    a = parse_arguments()
    DEADLINE = Deadline(a.deadline_s)
    ok, why = have_gpu()
    if not ok:
        print(f"skipped: {why}", flush=True)
        return SKIP
    dev = a.device_dir or os.path.join(SRC, "..", "shared", "device")
    if not os.path.exists(os.path.join(dev, "gpt_train.py")):
        print(f"skipped: gpt_train.py not found in {dev} (pass --device-dir)")
        return SKIP
    if a.build_dir:
        tools = find_tools(a.build_dir)
    else:
        print("no --build-dir: building the capture folder alone", flush=True)
        tools = build_capture_alone()
    missing = [TOOL_FILES[k] for k in TOOL_FILES if k not in tools]
    if missing:
        print(f"[FAIL] tools: {missing} not found in {a.build_dir or 'build/gpu-capture'} "
              "(or its capture/)")
        return 1
    print(f"tools: {tools}\nworkloads: {os.path.abspath(dev)}\ndeadline: {a.deadline_s:.0f} s",
          flush=True)
    notes = library_notes(tools["agent"])
    if notes:
        print(f"note: the agent's libraries not found by ldd (PyTorch may bring them): {notes}")
    work = tempfile.mkdtemp(prefix="vramscope-gpu-")
    ctx = Context(tools, work, dev, a)
    chosen = [c for c in DEFAULT_CHECKS + EXTRA_CHECKS if c[0] in a.only] if a.only \
        else DEFAULT_CHECKS
    for name, check, needs_s in chosen:
        left = DEADLINE.left()
        if left < needs_s:
            results.append((name, "SKIP", "deadline"))
            print(f"[SKIP] {name}: not started, {left:.0f} s left of the {a.deadline_s:.0f} s "
                  f"deadline and it needs about {needs_s} s", flush=True)
            continue
        t0 = time.monotonic()
        try:
            check(ctx)
        except OutOfTime as e:
            results.append((name, "SKIP", str(e)))
            print(f"[SKIP] {name}: cut by the deadline: {e}", flush=True)
        except Exception as e:  # one broken check must not hide the others' figures
            report(name, False, f"raised {type(e).__name__}: {e}")
        print(f"      ({name} took {time.monotonic() - t0:.0f} s; {DEADLINE.left():.0f} s left)",
              flush=True)
    count = {tag: [n for n, t, _ in results if t == tag] for tag in ("PASS", "FAIL", "SKIP")}
    print(f"summary: {len(count['PASS'])} passed, {len(count['FAIL'])} failed "
          f"{count['FAIL']}, {len(count['SKIP'])} skipped {count['SKIP']} in "
          f"{time.monotonic() - started:.0f} s; traces kept in {work}", flush=True)
    return 1 if count["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
