#include "vramscope/analysis/synthetic_job.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "vramscope/trace/trace_file.h"

namespace vramscope::analysis {

using trace::KernelCategory;
using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;
using trace::RangeKind;
using trace::StackId;
using trace::StringId;
using trace::TraceData;

namespace {

constexpr int64_t kWeightsTimeNs = 1'000'000;
constexpr int64_t kOptimizerTimeNs = 2'000'000;
constexpr int64_t kFirstIterationNs = 3'000'000;  // plus hostGapNs
constexpr int64_t kLaunchLeadNs = 5'000;
constexpr uint64_t kComputeStream = 7;
constexpr uint64_t kNcclStream = 13;
constexpr uint64_t kAlignBytes = 512;  // the caching allocator's block rounding

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// a fixed, documented generator, so output does not depend on the standard library.
uint64_t splitMix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t alignUp(uint64_t v) {
    return (v + kAlignBytes - 1) / kAlignBytes * kAlignBytes;
}

std::string hex(uint64_t v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(v));
    return buf;
}

/// The timing quantities of the spec's documentation, computed once.
struct Timing {
    int64_t forwardNs = 0;    // F
    int64_t backwardNs = 0;   // B
    int64_t computeNs = 0;    // C
    int64_t allReduceNs = 0;  // D
    int64_t overlapNs = 0;    // v
    int64_t stragglerNs = 0;  // s
    int64_t periodNs = 0;     // P
    int64_t fwdStepNs = 0;    // F / A
    int64_t bwdStepNs = 0;    // B / A
};

Timing timingOf(const SyntheticJobSpec& spec) {
    Timing t;
    const int64_t k = spec.computeKernelsPerIteration;
    const int n = spec.ranks;
    t.forwardNs = (k / 2) * spec.computeKernelNs;
    t.backwardNs = (k - k / 2) * spec.computeKernelNs;
    t.computeNs = k * spec.computeKernelNs;
    if (n > 1) {
        // busBw = algBw * 2(n-1)/n for all-reduce (nccl-tests doc/PERFORMANCE.md).
        t.allReduceNs =
            static_cast<int64_t>(std::ceil(static_cast<double>(spec.allReduceBytes) * 2 * (n - 1) /
                                           n / spec.busBandwidthBytesPerS * 1e9));
        t.overlapNs =
            std::min({std::max<int64_t>(spec.allReduceOverlapNs, 0), t.backwardNs, t.allReduceNs});
    }
    if (spec.stragglerRank >= 0 && spec.stragglerRank < n) {
        t.stragglerNs = spec.stragglerDelayNs;
    }
    t.periodNs = t.stragglerNs + t.computeNs - t.overlapNs + t.allReduceNs + spec.hostGapNs;
    t.fwdStepNs = t.forwardNs / spec.activationsPerIteration;
    t.bwdStepNs = t.backwardNs / spec.activationsPerIteration;
    return t;
}

/// Interned names and stacks one rank uses.
struct Names {
    StackId weights{0};
    StackId optimizer{0};
    StackId leak{0};
    // trainingPhases: module construction, optimizer state, gradient, temporaries, input.
    StackId constructed{0};
    StackId optimizerState{0};
    StackId optimizerTemp{0};
    StackId forwardTemp{0};
    StackId input{0};
    StringId optimizerRange = 0;
    std::vector<StackId> activation;  // per activation index
    std::vector<StringId> kernel;     // per compute kernel index
    StringId ncclKernel = 0;
    StringId allReduce = 0;
    StringId datatype = 0;
    StringId algorithm = 0;
    StringId protocol = 0;
    StringId forward = 0;
    StringId backward = 0;
};

Names internNames(TraceData& data, const SyntheticJobSpec& spec, uint64_t pick) {
    auto frame = [&](const char* name, const char* file, int line) {
        return data.internFrame({data.intern(name), data.intern(file), line});
    };
    const auto main = frame("main", "train.py", 88);
    const auto trainStep = frame("train_step", "train.py", 41);
    const auto forward = frame("forward", "model.py", 57);
    Names n;
    n.weights = data.internStack(
        {frame("Linear.__init__", "layers.py", 8), frame("build_model", "model.py", 20), main});
    n.optimizer = data.internStack({frame("AdamW.__init__", "optim.py", 33), main});
    n.leak = data.internStack({frame("log_metrics", "train.py", 70), trainStep, main});
    if (spec.trainingPhases) {
        const auto step = frame("step", "/usr/lib/python3/site-packages/torch/optim/adamw.py", 209);
        n.constructed = data.internStack(
            {frame("_apply", "/usr/lib/python3/site-packages/torch/nn/modules/module.py", 915),
             frame("build_model", "model.py", 20), main});
        n.optimizerState = data.internStack(
            {frame("_init_group", "/usr/lib/python3/site-packages/torch/optim/adamw.py", 150), step,
             trainStep, main});
        n.optimizerTemp =
            data.internStack({frame("_multi_tensor_adamw",
                                    "/usr/lib/python3/site-packages/torch/optim/adamw.py", 480),
                              step, trainStep, main});
        n.forwardTemp = data.internStack(
            {frame("gelu", "/usr/lib/python3/site-packages/torch/nn/functional.py", 1700), forward,
             trainStep, main});
        n.input = data.internStack({frame("aten::to", "", 0), trainStep, main});
        n.optimizerRange = data.intern("optimizer");
    }
    const std::array<trace::FrameId, 4> layers = {
        frame("Embedding.forward", "layers.py", 12), frame("Attention.forward", "layers.py", 23),
        frame("MLP.forward", "layers.py", 61), frame("LayerNorm.forward", "layers.py", 95)};
    const size_t layerPick = pick % layers.size();
    for (int j = 0; j < spec.activationsPerIteration; ++j) {
        const auto leaf = layers[(static_cast<size_t>(j) + layerPick) % layers.size()];
        n.activation.push_back(data.internStack({leaf, forward, trainStep, main}));
    }
    static constexpr std::array<const char*, 6> kForward = {
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
        "vectorized_elementwise_kernel<4, GeluFunctor>",
        "cunn_SoftMaxForward<8, float>",
        "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>>",
        "layer_norm_fwd_kernel<bf16>",
        "elementwise_kernel<128, 4, AddFunctor>"};
    static constexpr std::array<const char*, 5> kBackward = {
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64",
        "flash_bwd_dq_dk_dv_kernel<Flash_bwd_kernel_traits<128, 64>>",
        "layer_norm_bwd_kernel<bf16>", "vectorized_elementwise_kernel<4, GeluBackwardFunctor>",
        "reduce_kernel<512, 1, SumFunctor>"};
    const size_t kernelPick = (pick >> 8) % 7;
    const int half = spec.computeKernelsPerIteration / 2;
    for (int k = 0; k < spec.computeKernelsPerIteration; ++k) {
        const auto i = static_cast<size_t>(k) + kernelPick;
        n.kernel.push_back(data.intern(k < half ? kForward[i % kForward.size()]
                                                : kBackward[i % kBackward.size()]));
    }
    n.ncclKernel =
        data.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage)");
    n.allReduce = data.intern("AllReduce");
    n.datatype = data.intern("bfloat16");
    n.algorithm = data.intern("Ring");
    n.protocol = data.intern("LL");
    n.forward = data.intern("forward");
    n.backward = data.intern("backward");
    return n;
}

void fillHeader(TraceData& data, const SyntheticJobSpec& spec, int rank, uint64_t jobHash) {
    auto& h = data.header;
    h.formatMajor = trace::kFormatMajor;
    h.formatMinor = trace::kFormatMinor;
    h.producer = "vramscope synth";
    h.host = "node" + std::to_string(rank / spec.gpusPerNode);
    h.pid = 10'000 + rank;
    h.rank = trace::RankId{rank};
    h.localRank = trace::RankId{rank % spec.gpusPerNode};
    h.worldSize = spec.ranks;
    h.jobId = "synthetic-" + hex(jobHash, 16);
    h.clockDomain = "synthetic";
    h.wallClockAnchorNs = 1'700'000'000'000'000'000;  // 2023-11-14, a fixed made-up start
    h.anchorTraceNs = 0;
    uint64_t state = jobHash ^ (0x5bd1e995ull * static_cast<uint64_t>(rank + 1));
    const uint64_t a = splitMix64(state);
    const uint64_t b = splitMix64(state);
    trace::DeviceInfo device;
    device.index = trace::DeviceIndex{toInt(h.localRank)};  // one GPU per local rank
    device.uuid = "GPU-" + hex(a >> 32, 8) + "-" + hex((a >> 16) & 0xffff, 4) + "-" +
                  hex(a & 0xffff, 4) + "-" + hex(b >> 48, 4) + "-" + hex(b & 0xffffffffffffull, 12);
    device.name = "Synthetic GPU";
    device.totalMemoryBytes = spec.capacityBytes;
    h.devices.push_back(device);
    auto setting = [&](const char* key, const std::string& value) {
        h.captureSettings.emplace_back(std::string("synth.") + key, value);
    };
    setting("ranks", std::to_string(spec.ranks));
    setting("iterations", std::to_string(spec.iterations));
    setting("seed", std::to_string(spec.seed));
    setting("leak_bytes_per_iteration", std::to_string(spec.leakBytesPerIteration));
    setting("leak_rank", std::to_string(spec.leakRank));
    setting("straggler_rank", std::to_string(spec.stragglerRank));
}

/// Appends memory events for one allocated-level alloc or free, growing reserved as needed.
class MemoryWriter {
public:
    MemoryWriter(TraceData& data, const SyntheticJobSpec& spec, trace::DeviceIndex device,
                 uint64_t base)
        : m_data(data), m_spec(spec), m_device(device), m_base(base) {}

    void alloc(int64_t t, uint64_t offset, uint64_t size, StackId stack, uint32_t range) {
        m_allocated += size;
        const uint64_t g = m_spec.segmentBytes;
        const uint64_t needed = (m_allocated + g - 1) / g * g;
        if (needed > m_reserved) {
            m_data.memory.append({t, m_base + m_reserved, needed - m_reserved, MemoryAction::Alloc,
                                  MemoryLevel::Reserved, MemoryKind::Device, m_device,
                                  kComputeStream, stack, range});
            m_reserved = needed;
        }
        m_data.memory.append({t, m_base + offset, size, MemoryAction::Alloc, MemoryLevel::Allocated,
                              MemoryKind::Pool, m_device, kComputeStream, stack, range});
    }

    void free(int64_t t, uint64_t offset, uint64_t size, StackId stack, uint32_t range) {
        m_allocated -= size;
        m_data.memory.append({t, m_base + offset, size, MemoryAction::Free, MemoryLevel::Allocated,
                              MemoryKind::Pool, m_device, kComputeStream, stack, range});
    }

private:
    TraceData& m_data;
    const SyntheticJobSpec& m_spec;
    trace::DeviceIndex m_device;
    uint64_t m_base;
    uint64_t m_allocated = 0;
    uint64_t m_reserved = 0;
};

bool leaks(const SyntheticJobSpec& spec, int rank) {
    return spec.leakBytesPerIteration > 0 && (spec.leakRank == -1 || spec.leakRank == rank);
}

/// The host counter's three samples of iteration `i` over [start, end) (see hostCounter).
void appendHostMemory(TraceData& data, const SyntheticJobSpec& spec, int i, int64_t start,
                      int64_t end) {
    const trace::StringId name = data.intern("host resident bytes");
    const double base =
        double(spec.hostBaseBytes) + double(i) * double(spec.hostGrowthBytesPerIteration);
    const int64_t span = end - start;
    data.counters.append(
        {start, name, trace::kHostDevice, trace::CounterKind::HostResidentBytes, base});
    data.counters.append({start + span / 2, name, trace::kHostDevice,
                          trace::CounterKind::HostResidentBytes,
                          base + double(spec.hostBatchBytes)});
    data.counters.append({start + 3 * span / 4, name, trace::kHostDevice,
                          trace::CounterKind::HostResidentBytes,
                          base + double(spec.hostGrowthBytesPerIteration)});
}

/// Kernels of one iteration on one rank, in start-time order.
void appendKernels(TraceData& data, const SyntheticJobSpec& spec, const Timing& tm,
                   const Names& names, int64_t start, int64_t end, trace::DeviceIndex device,
                   uint64_t& correlation, uint64_t* noise) {
    const int64_t commStart = start + tm.computeNs - tm.overlapNs;
    const bool withComm = spec.ranks > 1;
    bool commDone = !withComm;
    auto comm = [&] {
        data.kernels.append({commStart, end, device, kNcclStream, names.ncclKernel,
                             KernelCategory::Communication, commStart - kLaunchLeadNs, 0,
                             correlation++});
        commDone = true;
    };
    for (int k = 0; k < spec.computeKernelsPerIteration; ++k) {
        const int64_t ks = start + k * spec.computeKernelNs;
        if (!commDone && commStart <= ks) {
            comm();
        }
        const int64_t early =
            noise != nullptr
                ? static_cast<int64_t>(splitMix64(*noise) %
                                       static_cast<uint64_t>(spec.computeKernelNs / 4 + 1))
                : 0;
        data.kernels.append({ks, ks + spec.computeKernelNs - early, device, kComputeStream,
                             names.kernel[static_cast<size_t>(k)], KernelCategory::Compute,
                             ks - kLaunchLeadNs, 0, correlation++});
    }
    if (!commDone) {
        comm();
    }
}

}  // namespace

std::string validateSyntheticJobSpec(const SyntheticJobSpec& spec) {
    if (spec.ranks < 1 || spec.ranks > 1'000'000) {
        return "ranks must be between 1 and 1000000";
    }
    if (spec.iterations < 0) {
        return "iterations must not be negative";
    }
    if (spec.activationsPerIteration < 1) {
        return "activationsPerIteration must be at least 1";
    }
    if (spec.computeKernelsPerIteration < 2 || spec.computeKernelNs < 1) {
        return "computeKernelsPerIteration must be at least 2 and computeKernelNs at least 1";
    }
    if (spec.computeKernelNs > 1'000'000'000'000 ||
        (spec.computeKernelsPerIteration / 2) * spec.computeKernelNs <
            spec.activationsPerIteration) {
        return "the forward pass ((computeKernelsPerIteration / 2) * computeKernelNs ns) must "
               "last at least one ns per activation, and a kernel at most 1000 s";
    }
    if (spec.segmentBytes < 1) {
        return "segmentBytes must be at least 1";
    }
    if (!(spec.busBandwidthBytesPerS > 0) || !std::isfinite(spec.busBandwidthBytesPerS)) {
        return "busBandwidthBytesPerS must be a positive number";
    }
    if (spec.stragglerDelayNs < 0 || spec.hostGapNs < 0 || spec.allReduceOverlapNs < 0) {
        return "delays, gaps and overlaps must not be negative";
    }
    if (spec.trainingPhases &&
        (spec.hostGapNs < 12 || spec.benchmarkNoise ||
         (spec.computeKernelsPerIteration / 2) * spec.computeKernelNs /
                 spec.activationsPerIteration <
             4 ||
         spec.inputBytes > (uint64_t{1} << 50) || spec.optimizerTempBytes > (uint64_t{1} << 50))) {
        return "trainingPhases needs hostGapNs >= 12, a forward step (F / A) of at least 4 ns, no "
               "benchmark noise, and input and temporary sizes of at most 1 PiB";
    }
    if (spec.leakRank < -1 || spec.gpusPerNode < 1) {
        return "leakRank must be -1 or a rank, and gpusPerNode at least 1";
    }
    constexpr uint64_t kMaxBytes = uint64_t{1} << 50;  // 1 PiB: keeps every sum inside int64
    if (spec.weightBytes > kMaxBytes || spec.optimizerBytes > kMaxBytes ||
        spec.activationBytes > kMaxBytes || spec.leakBytesPerIteration > kMaxBytes ||
        spec.allReduceBytes > kMaxBytes || spec.segmentBytes > kMaxBytes ||
        spec.hostBaseBytes > kMaxBytes || spec.hostGrowthBytesPerIteration > kMaxBytes ||
        spec.hostBatchBytes > kMaxBytes) {
        return "byte sizes must be at most 1 PiB";
    }
    const double period =
        static_cast<double>(spec.computeKernelsPerIteration) *
            static_cast<double>(spec.computeKernelNs) +
        static_cast<double>(spec.hostGapNs) + static_cast<double>(spec.stragglerDelayNs) +
        static_cast<double>(spec.allReduceBytes) * 2 / spec.busBandwidthBytesPerS * 1e9;
    const double bytes = static_cast<double>(spec.activationBytes) * spec.activationsPerIteration +
                         static_cast<double>(spec.leakBytesPerIteration) * spec.iterations;
    if (spec.slowDownStepNs < 0 || spec.slowDownStepNs > 1'000'000'000'000) {
        return "slowDownStepNs must be between 0 and 1000 s";
    }
    if (spec.slowDownStepNs > 0 && spec.slowDownPart == SyntheticSlowDown::AllReduce &&
        spec.ranks < 2) {
        return "a growing all-reduce needs at least 2 ranks";
    }
    if (spec.slowDownStepNs > 0 && spec.slowDownPart == SyntheticSlowDown::Straggler &&
        (spec.stragglerRank < 0 || spec.stragglerRank >= spec.ranks)) {
        return "a growing straggler delay needs a straggler rank";
    }
    const double growth =
        static_cast<double>(spec.slowDownStepNs) * spec.iterations * (spec.iterations + 1.0) / 2;
    if (period * (spec.iterations + 1.0) + growth > 4e18 || bytes > 4e18) {
        return "the job is too long or too large for int64 nanoseconds and bytes";
    }
    return {};
}

uint64_t syntheticEventsPerIteration(const SyntheticJobSpec& spec, int rank) {
    uint64_t events = 2ull * static_cast<uint64_t>(std::max(spec.activationsPerIteration, 0)) +
                      static_cast<uint64_t>(std::max(spec.computeKernelsPerIteration, 0)) + 3;
    if (spec.ranks > 1) {
        events += 2;  // the NCCL kernel and its collective
    }
    if (leaks(spec, rank)) {
        events += 1;
    }
    if (spec.hostCounter) {
        events += 3;  // the host counter's samples
    }
    if (spec.trainingPhases) {
        // Input, gradient and optimizer temporary (alloc and free each), the forward temporary
        // (with two or more activations), and the optimizer range.
        events += 7 + (spec.activationsPerIteration >= 2 ? 2 : 0);
    }
    return events;
}

int iterationsForEventCount(const SyntheticJobSpec& spec, uint64_t events) {
    uint64_t perIteration = 0;
    for (int r = 0; r < spec.ranks; ++r) {
        perIteration += syntheticEventsPerIteration(spec, r);
    }
    if (perIteration == 0) {
        return 1;
    }
    const uint64_t iterations = (events + perIteration - 1) / perIteration;
    return static_cast<int>(std::clamp<uint64_t>(iterations, 1, 1'000'000'000));
}

TraceData generateSyntheticRank(const SyntheticJobSpec& spec, int rank) {
    TraceData data;
    if (!validateSyntheticJobSpec(spec).empty() || rank < 0 || rank >= spec.ranks) {
        return data;
    }
    uint64_t state = spec.seed;
    const uint64_t jobHash = splitMix64(state);
    const uint64_t communicatorHash = splitMix64(state);
    uint64_t rankState = jobHash + static_cast<uint64_t>(rank);
    const uint64_t pick = splitMix64(rankState);
    // Device pointers in a made-up 47-bit range, 2 MiB aligned as CUDA segments are.
    const uint64_t base = 0x7f0000000000ull + ((splitMix64(rankState) % 4096) << 21);

    fillHeader(data, spec, rank, jobHash);
    const Names names = internNames(data, spec, pick);
    const Timing tm = timingOf(spec);
    const trace::DeviceIndex device = data.header.devices[0].index;
    const int64_t rankDelay = spec.stragglerRank == rank ? tm.stragglerNs : 0;
    const auto threadId = static_cast<uint64_t>(data.header.pid);
    const auto a = static_cast<uint64_t>(spec.activationsPerIteration);
    const bool leaky = leaks(spec, rank);
    const auto iterations = static_cast<uint64_t>(spec.iterations);

    data.memory.reserve(4 + iterations * (2 * a + 2));
    data.kernels.reserve(iterations * static_cast<uint64_t>(spec.computeKernelsPerIteration + 1));

    MemoryWriter mem(data, spec, device, base);
    const uint64_t optimizerOffset = alignUp(spec.weightBytes);
    const uint64_t activationOffset = optimizerOffset + alignUp(spec.optimizerBytes);
    const uint64_t leakOffset = activationOffset + a * (alignUp(spec.activationBytes) +
                                                        (spec.benchmarkNoise ? 1u << 20 : 0));
    // trainingPhases: gradient, input and the temporaries get their own slots after the leak's.
    const uint64_t gradientOffset = leakOffset + iterations * alignUp(spec.leakBytesPerIteration);
    const uint64_t inputOffset = gradientOffset + alignUp(spec.weightBytes);
    const uint64_t optimizerTempOffset = inputOffset + alignUp(spec.inputBytes);
    const uint64_t forwardTempOffset = optimizerTempOffset + alignUp(spec.optimizerTempBytes);
    const bool phases = spec.trainingPhases;
    mem.alloc(kWeightsTimeNs, 0, spec.weightBytes, phases ? names.constructed : names.weights, 0);
    if (!phases) {
        mem.alloc(kOptimizerTimeNs, optimizerOffset, spec.optimizerBytes, names.optimizer, 0);
    }

    uint64_t noiseState = pick ^ 0xa0761d6478bd642full;
    uint64_t* noise = spec.benchmarkNoise ? &noiseState : nullptr;
    // Benchmark noise: a random value in [0, bound), 0 without noise.
    auto jitter = [&](uint64_t bound) -> uint64_t {
        return noise != nullptr && bound > 0 ? splitMix64(*noise) % bound : 0;
    };
    const uint64_t slotBytes = alignUp(spec.activationBytes) + (spec.benchmarkNoise ? 1u << 20 : 0);
    std::vector<uint64_t> slotOffset(a, 0);

    uint64_t correlation = 1;
    for (int i = 0; i < spec.iterations; ++i) {
        // Slow-down: G_i more of one part (SyntheticJobSpec), sum of G_j over j < i before S_i.
        const int64_t grow = i * spec.slowDownStepNs;
        const int64_t lateBy =
            spec.slowDownPart == SyntheticSlowDown::Straggler ? grow : 0;  // s_i - s
        const int64_t longerBy =
            spec.slowDownPart == SyntheticSlowDown::AllReduce ? grow : 0;  // D_i - D
        const int64_t jobStart = kFirstIterationNs + spec.hostGapNs + i * tm.periodNs +
                                 spec.slowDownStepNs * (int64_t(i) * (i - 1) / 2);
        const int64_t start = jobStart + rankDelay + (spec.stragglerRank == rank ? lateBy : 0);
        const int64_t end = jobStart + tm.stragglerNs + lateBy + tm.computeNs - tm.overlapNs +
                            tm.allReduceNs + longerBy;
        const auto firstRange = static_cast<uint32_t>(data.ranges.size());
        const uint32_t forwardRange = firstRange + 2;  // 1-based ids of the ranges below
        const uint32_t backwardRange = firstRange + 3;
        data.ranges.append({start, end, data.intern("iteration " + std::to_string(i)), 0, threadId,
                            trace::kHostDevice, RangeKind::Iteration});
        data.ranges.append({start, start + tm.forwardNs, names.forward, 1, threadId,
                            trace::kHostDevice, RangeKind::Nvtx});
        // With phases, backward also holds the last activation's free at its very end.
        data.ranges.append({start + tm.forwardNs, start + tm.computeNs + (phases ? 1 : 0),
                            names.backward, 1, threadId, trace::kHostDevice, RangeKind::Nvtx});

        if (phases) {
            mem.alloc(start - spec.hostGapNs / 4, inputOffset, spec.inputBytes, names.input, 0);
        }
        for (uint64_t j = 0; j < a; ++j) {
            if (phases && j == 1) {
                // Between activations 0 and 1 (f >= 4 leaves room): made and freed in forward.
                const int64_t t = start + tm.fwdStepNs / 2;
                mem.alloc(t, forwardTempOffset, spec.activationBytes / 2, names.forwardTemp,
                          forwardRange);
                mem.free(t + 1, forwardTempOffset, spec.activationBytes / 2, names.forwardTemp,
                         forwardRange);
            }
            slotOffset[j] = jitter(2048) * kAlignBytes;
            const auto late = static_cast<int64_t>(jitter(static_cast<uint64_t>(tm.fwdStepNs / 4)));
            mem.alloc(start + static_cast<int64_t>(j) * tm.fwdStepNs + late,
                      activationOffset + j * slotBytes + slotOffset[j], spec.activationBytes,
                      names.activation[j], forwardRange);
        }
        if (leaky) {
            mem.alloc(start + tm.forwardNs,
                      leakOffset + static_cast<uint64_t>(i) * alignUp(spec.leakBytesPerIteration),
                      spec.leakBytesPerIteration, names.leak, backwardRange);
        }
        if (phases) {
            mem.alloc(start + tm.forwardNs + 1, gradientOffset, spec.weightBytes, StackId{0},
                      backwardRange);  // made by the autograd engine: no Python stack
            mem.free(start + tm.forwardNs + 2, inputOffset, spec.inputBytes, StackId{0},
                     backwardRange);
        }
        for (uint64_t k = 0; k < a; ++k) {
            const uint64_t j = a - 1 - k;  // backward frees in reverse order
            const auto early =
                static_cast<int64_t>(jitter(static_cast<uint64_t>(tm.bwdStepNs / 4)));
            mem.free(start + tm.forwardNs + static_cast<int64_t>(a - j) * tm.bwdStepNs - early,
                     activationOffset + j * slotBytes + slotOffset[j], spec.activationBytes,
                     names.activation[j], backwardRange);
        }

        if (phases) {
            const auto optimizerRange = static_cast<uint32_t>(data.ranges.size()) + 1;
            data.ranges.append({end + 1, end + spec.hostGapNs / 2, names.optimizerRange, 1,
                                threadId, trace::kHostDevice, RangeKind::Nvtx});
            if (i == 0) {
                mem.alloc(end + 2, optimizerOffset, spec.optimizerBytes, names.optimizerState,
                          optimizerRange);
            }
            mem.alloc(end + 3, optimizerTempOffset, spec.optimizerTempBytes, names.optimizerTemp,
                      optimizerRange);
            mem.free(end + 4, optimizerTempOffset, spec.optimizerTempBytes, names.optimizerTemp,
                     optimizerRange);
            mem.free(end + 5, gradientOffset, spec.weightBytes, StackId{0}, optimizerRange);
        }
        appendKernels(data, spec, tm, names, start, end, device, correlation, noise);
        if (spec.ranks > 1) {
            trace::CollectiveEvent c;
            c.startNs = start + tm.computeNs - tm.overlapNs;
            c.endNs = end;
            c.device = device;
            c.stream = kNcclStream;
            c.communicatorHash = communicatorHash;
            c.rank = trace::RankId{rank};
            c.nranks = spec.ranks;
            c.function = names.allReduce;
            c.seqNumber = i;
            c.bytes = spec.allReduceBytes;
            c.datatype = names.datatype;
            c.algorithm = names.algorithm;
            c.protocol = names.protocol;
            c.timing = trace::CollectiveTiming::Kernel;  // the collective is its kernel's interval
            data.collectives.append(c);
        }
        if (spec.hostCounter) {
            appendHostMemory(data, spec, i, start, end);
        }
    }
    return data;
}

std::vector<TraceData> generateSyntheticJob(const SyntheticJobSpec& spec) {
    std::vector<TraceData> out;
    if (!validateSyntheticJobSpec(spec).empty()) {
        return out;
    }
    out.reserve(static_cast<size_t>(spec.ranks));
    for (int r = 0; r < spec.ranks; ++r) {
        out.push_back(generateSyntheticRank(spec, r));
    }
    return out;
}

}  // namespace vramscope::analysis
