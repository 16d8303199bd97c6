#pragma once
// A deterministic synthetic training job, for tests, demos and benchmarks. Library
// vramscope::synth (analysis/synth/, linking trace_write only), not part of vramscope::analysis.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// Parameters of the synthetic job. Every figure is exact, so tests can derive expected values
/// from these numbers alone, with the formulas below.
///
/// The job: `ranks` processes, one GPU each, running data-parallel training in lock step. Let
///   n = ranks, N = iterations, A = activationsPerIteration, a = activationBytes,
///   W = weightBytes, O = optimizerBytes, L = leakBytesPerIteration, g = segmentBytes,
///   d = computeKernelNs, K = computeKernelsPerIteration, h = hostGapNs (all integers, ns/bytes).
/// Phases (integer division throughout):
///   F = (K / 2) * d            forward: the first K / 2 compute kernels
///   B = (K - K / 2) * d        backward: the remaining kernels
///   C = K * d                  compute per iteration; kernels run back to back, no gaps
///   D = ceil(allReduceBytes * 2 * (n - 1) / n / busBandwidthBytesPerS * 1e9), evaluated in
///       double left to right, when n > 1; D = 0 when n == 1 (NCCL runs no kernel for one rank).
///       busBw = algBw * 2(n-1)/n for all-reduce (nccl-tests doc/PERFORMANCE.md), so the time is
///       bytes * 2(n-1)/n / busBw.
///   v = n > 1 ? min(max(allReduceOverlapNs, 0), B, D) : 0   overlap of the all-reduce with
///   backward s = stragglerDelayNs when 0 <= stragglerRank < n, else 0; s_r = s on the straggler
///   rank, else 0 P = s + C - v + D + h      iteration period S_i = 3'000'000 + h + i * P job-wide
///   start of iteration i (i = 0 .. N-1) S_i(r) = S_i + s_r                   start of iteration i
///   on rank r (the straggler is late) E_i = S_i + s + C - v + D            end of iteration i on
///   every rank (all-reduce done)
/// Per rank r:
///   memory (level Allocated, kind Pool, stream 7): weights W at t = 1'000'000 ns, optimizer state
///     O at t = 2'000'000 ns, never freed. In iteration i: activation j (j = 0 .. A-1) allocated at
///     S_i(r) + j * (F / A) and freed at S_i(r) + F + (A - j) * (B / A) (a sawtooth); on a leaking
///     rank (leakRank == r or leakRank == -1) L bytes allocated at S_i(r) + F, never freed.
///     No two events of one level share a time.
///   reserved (level Reserved, kind Device): after every allocated-level alloc, reserved grows to
///     the smallest multiple of g covering allocated (one segment event of the difference, at the
///     same time); it never shrinks.
///   kernels: compute kernel k of iteration i on stream 7 over [S_i(r) + k d, S_i(r) + (k+1) d),
///     launched 5'000 ns before its start; with n > 1, one NCCL all-reduce kernel on stream 13
///     over [S_i(r) + C - v, E_i) (ranks that are on time wait in it for the straggler) and one
///     CollectiveEvent with the same interval, function "AllReduce", seqNumber i, bytes
///     allReduceBytes, rank r, nranks n and one communicatorHash shared by all ranks.
///   ranges (NVTX, host thread): "iteration i" (RangeKind::Iteration, depth 0) over
///     [S_i(r), E_i); "forward" [S_i(r), S_i(r) + F) and "backward" [S_i(r) + F, S_i(r) + C)
///     (RangeKind::Nvtx, depth 1).
/// Hence, per rank r with leak bytes L_r (L or 0):
///   peak allocated = W + O + A * a + N * L_r
///   peak time      = S_{N-1}(r) + F when L_r > 0, else S_0(r) + (A - 1) * (F / A)
///   peak reserved  = ceil(peak allocated / g) * g, first reached at the first allocated-level
///                    alloc after which allocated > peak reserved - g
///   per iteration: compute C, communication s - s_r + D, overlapped v, kernel-busy
///     [S_i(r), E_i), idle gap before iteration i+1: h + s_r (host gap); idle over the trace
///     (first kernel start to last kernel end, minus busy) = (N - 1) * (h + s_r).
/// With trainingPhases (roles of memory, memory_roles.h), per rank, on top of the above; let
/// E_i(r) = E_i, I = inputBytes, T = optimizerTempBytes, f = F / A (forward step):
///   weights are made by module construction (stack frames `_apply` in torch/nn/modules/
///     module.py), and the optimizer state O is not made at 2 ms but in iteration 0's optimizer
///     step, at E_0 + 2, by `_init_group` (torch/optim/adamw.py);
///   ranges: "backward" ends at S_i(r) + C + 1 (so that it holds the last activation's free, at
///     S_i(r) + C when A divides B), and "optimizer" (Nvtx, depth 1) spans [E_i + 1, E_i + h / 2);
///   gradient: W bytes allocated at S_i(r) + F + 1 (in backward), freed at E_i + 5;
///   optimizer temporary: T bytes allocated at E_i + 3, freed at E_i + 4;
///   forward temporary (A >= 2): a / 2 bytes allocated at S_i(r) + f / 2, freed at S_i(r) + f / 2 +
///   1; input: I bytes allocated at S_i(r) - h / 4 (outside every range) with an `aten::to`
///     operator frame, freed at S_i(r) + F + 2.
///   It needs h >= 12 and f >= 4. Peak allocated (no leak) = 2W + O + A * a + I, first at
///   S_1(r) + F + 1 (iteration 0 has no optimizer state yet); roles then: parameters W,
///   gradients W, optimizer state O, activations A * a, inputs I, temporaries 0.
/// With slowDownStepNs = x > 0 (slow_down.h), iteration i gets G_i = i * x more of one part
/// (slowDownPart): AllReduce: D_i = D + G_i (every rank's all-reduce kernel and collective; needs
/// n > 1); HostGap: the host gap after iteration i is h + G_i; Straggler: the straggler starts
/// s_i = s + G_i late (needs 0 <= stragglerRank < n; the others wait s_i in the all-reduce).
/// Then P_i = P + G_i, S_i = 3'000'000 + h + i * P + x * i * (i - 1) / 2, S_i(r) = S_i + s_i on
/// the straggler, and E_i = S_i + s_i + C - v + D_i (s_i = s, D_i = D where the part is not
/// the one that grows): the period from S_i to S_{i+1} is P + G_i on every rank but a growing
/// straggler, whose own is P + G_{i+1}.
/// The seed changes no time and no size: only addresses, device UUIDs, the communicator hash,
/// the job id, and which made-up layer and kernel names are used.
/// The part of the iteration that SyntheticJobSpec::slowDownStepNs makes grow.
enum class SyntheticSlowDown { AllReduce, HostGap, Straggler };

struct SyntheticJobSpec {
    int ranks = 2;
    int iterations = 10;
    uint64_t seed = 1;
    uint64_t capacityBytes = 80ull << 30;     ///< per GPU (an 80 GiB part), header only
    uint64_t weightBytes = 4ull << 30;        ///< allocated once at start, per rank
    uint64_t optimizerBytes = 8ull << 30;     ///< allocated once at start, per rank
    int activationsPerIteration = 24;         ///< activation tensors allocated in forward
    uint64_t activationBytes = 256ull << 20;  ///< size of each activation tensor
    uint64_t leakBytesPerIteration = 0;       ///< kept alive every iteration (on leakRank)
    int leakRank = 0;                         ///< rank that leaks; -1 = all ranks
    uint64_t segmentBytes = 2ull << 30;       ///< reserved granularity (caching allocator)
    int64_t computeKernelNs = 400'000;        ///< duration of one compute kernel
    int computeKernelsPerIteration = 48;
    uint64_t allReduceBytes = 512ull << 20;  ///< gradient all-reduce message per iteration
    double busBandwidthBytesPerS = 100e9;    ///< NCCL bus bandwidth
    int stragglerRank = -1;                  ///< rank that starts each iteration late; -1 none
    int64_t stragglerDelayNs = 2'000'000;
    int64_t hostGapNs = 1'000'000;   ///< idle gap between iterations (host-bound)
    int64_t allReduceOverlapNs = 0;  ///< all-reduce starts this long before backward ends
    int gpusPerNode = 8;             ///< local rank = device index = rank % gpusPerNode
    /// For benchmarks only: irregular data that compresses like a real trace. Each compute kernel
    /// ends up to d/4 early; each activation alloc comes up to (F/A)/4 late and each free up to
    /// (B/A)/4 early; each activation lies at a random 512-byte-aligned offset within 1 MiB of
    /// its slot. Sizes, event counts and order stay as above, so the peak bytes still follow the
    /// formulas; the times of events (and of the peaks) no longer do exactly.
    bool benchmarkNoise = false;
    /// Training phases with known roles (see above): gradients, optimizer step, inputs,
    /// temporaries.
    bool trainingPhases = false;
    uint64_t inputBytes = 64ull << 20;           ///< per iteration, with trainingPhases
    uint64_t optimizerTempBytes = 128ull << 20;  ///< per optimizer step, with trainingPhases

    // --- host memory (the host-memory rule) ---
    /// A HostResidentBytes counter on the host of every rank, "host resident bytes", with H =
    /// hostBaseBytes, G = hostGrowthBytesPerIteration, b = hostBatchBytes; in iteration i:
    /// H + i G at S_i(r), H + i G + b at the middle of the iteration (a batch in flight) and
    /// H + (i + 1) G at three quarters of it. So iteration i's baseline is H + i G, its peak
    /// H + i G + b, the growth G per iteration, the peak H + (N - 1) G + b.
    bool hostCounter = false;
    uint64_t hostBaseBytes = 2ull << 30;
    uint64_t hostGrowthBytesPerIteration = 0;
    uint64_t hostBatchBytes = 256ull << 20;
    /// Slow-down (see above): each iteration lasts this much longer than the one before, in the
    /// part slowDownPart; 0 = steady.
    int64_t slowDownStepNs = 0;
    SyntheticSlowDown slowDownPart = SyntheticSlowDown::AllReduce;
};

/// Empty when `spec` can be generated; otherwise a sentence naming the bad parameter. Needs
/// ranks >= 1, iterations >= 0, activationsPerIteration >= 1, computeKernelsPerIteration >= 2,
/// computeKernelNs >= 1, (K / 2) * d >= A (so F / A >= 1 and B / A >= 1), segmentBytes >= 1,
/// busBandwidthBytesPerS > 0, non-negative delays and gaps, leakRank >= -1, gpusPerNode >= 1, and
/// ranks * iterations small enough to stay well inside int64 nanoseconds; with trainingPhases
/// also hostGapNs >= 12 and F / A >= 4, and no benchmarkNoise; slowDownStepNs >= 0, and with it
/// above 0 ranks > 1 for AllReduce and a straggler rank for Straggler.
std::string validateSyntheticJobSpec(const SyntheticJobSpec& spec);

/// Generates one TraceData per rank, in rank order (header rank/world size set, one device per
/// rank, NVTX ranges, memory events at both levels with stacks, compute and NCCL all-reduce
/// kernels with matching collectives), as described at SyntheticJobSpec. Same spec, same output,
/// byte for byte. Empty when validateSyntheticJobSpec(spec) is not empty.
std::vector<trace::TraceData> generateSyntheticJob(const SyntheticJobSpec& spec);

/// Generates rank `rank` only (0 <= rank < spec.ranks); identical to
/// generateSyntheticJob(spec)[rank] without building the other ranks. An empty TraceData when the
/// spec or rank is invalid.
trace::TraceData generateSyntheticRank(const SyntheticJobSpec& spec, int rank);

/// Events (memory, kernels, collectives, ranges) one iteration adds on `rank`, not counting the
/// reserved-segment events (at most one per allocation, in practice only while memory grows).
uint64_t syntheticEventsPerIteration(const SyntheticJobSpec& spec, int rank);

/// For benchmarks: the number of iterations that makes the whole job hold about `events` events
/// (all ranks together; rounded up to whole iterations, at least 1).
int iterationsForEventCount(const SyntheticJobSpec& spec, uint64_t events);

}  // namespace vramscope::analysis
