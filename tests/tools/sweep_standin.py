#!/usr/bin/env python3
"""A stand-in training job for vramscope-run --sweep tests: no GPU, no PyTorch.

It reads its batch from the environment variable the sweep sets, and behaves like a PyTorch job
whose peak grows with the batch:
  - peak = W + O + A * a with a = batch * bytes_per_sample (vramscope-cli synth's job, one rank:
    W = 4 GiB weights, O = 8 GiB optimizer state, A = 24 activations per iteration, see
    analysis/synthetic_job.h), on an 80 GiB GPU (synth's header capacity);
  - when that peak fits, it writes the trace with `vramscope-cli synth --activation-bytes a` into
    $VRAMSCOPE_OUTPUT as $VRAMSCOPE_JOB-rank0.vscope (the name the capture agent gives rank 0 in
    the directory vramscope-run hands it) and exits 0;
  - when it does not, the activation that no longer fits fails as in PyTorch: the message
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ..." on stderr and exit 1
    (with --oom-trace FILE it instead copies FILE, a trace holding an OOM event, as its trace and
    exits 1 without the message);
  - with --fail-at V it fails at batch V for another reason (a ValueError, exit 3).
With bytes_per_sample = 32 MiB and batches that are multiples of 8, 24 * a is a multiple of
the 2 GiB reserved segments, so the peak reserved equals the peak allocated and batch-fit's
line is exact: peak = 12 GiB + 768 MiB x batch.
"""
import argparse
import os
import shutil
import subprocess
import sys

GIB = 1 << 30
MIB = 1 << 20
WEIGHTS = 4 * GIB
OPTIMIZER = 8 * GIB
ACTIVATIONS = 24
CAPACITY = 80 * GIB


def pytorch_size(size):
    """c10's format_size (CUDACachingAllocator.cpp): two decimals, binary units."""
    if size <= 1024:
        return "%d bytes" % size
    if size <= MIB:
        return "%.2f KiB" % (size / 1024.0)
    if size <= GIB:
        return "%.2f MiB" % (size / MIB)
    return "%.2f GiB" % (size / GIB)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True, help="vramscope-cli")
    ap.add_argument("--var", default="BATCH", help="the swept environment variable")
    ap.add_argument("--batch", help="the batch from the command line ({BATCH}); must agree")
    ap.add_argument("--bytes-per-sample", type=int, default=32 * MIB)
    ap.add_argument("--fail-at", type=int)
    ap.add_argument("--oom-trace")
    args = ap.parse_args()

    text = os.environ.get(args.var)
    if text is None:
        print("stand-in: %s is not set" % args.var, file=sys.stderr)
        return 4
    if args.batch is not None and args.batch != text:
        print("stand-in: --batch %s disagrees with %s=%s" % (args.batch, args.var, text),
              file=sys.stderr)
        return 5
    batch = int(text)
    out_dir = os.environ["VRAMSCOPE_OUTPUT"]
    job = os.environ["VRAMSCOPE_JOB"]
    if args.fail_at is not None and batch == args.fail_at:
        print("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
              "ValueError: the stand-in was told to fail at %s=%d" % (args.var, batch),
              file=sys.stderr)
        return 3

    activation = batch * args.bytes_per_sample
    base = WEIGHTS + OPTIMIZER
    if base + ACTIVATIONS * activation > CAPACITY:
        if args.oom_trace:
            shutil.copyfile(args.oom_trace, os.path.join(out_dir, job + "-rank0.vscope"))
            return 1
        fitted = (CAPACITY - base) // activation  # activations that still fit
        free = CAPACITY - base - fitted * activation
        sys.stderr.write(
            "Traceback (most recent call last):\n"
            "  File \"train.py\", line 40, in forward\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU 0 has a total "
            "capacity of %s of which %s is free. Of the allocated memory %s is allocated by "
            "PyTorch.\n" % (pytorch_size(activation), pytorch_size(CAPACITY), pytorch_size(free),
                            pytorch_size(base + fitted * activation)))
        return 1

    subprocess.run([args.cli, "synth", "--ranks", "1", "--iterations", "3",
                    "--activation-bytes", str(activation),
                    "-o", os.path.join(out_dir, job + ".vscope")],
                   check=True, stdout=subprocess.DEVNULL)
    print("stand-in: %s=%d, peak %d bytes" % (args.var, batch, base + ACTIVATIONS * activation))
    return 0


if __name__ == "__main__":
    sys.exit(main())
