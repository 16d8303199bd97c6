// Cost of the agent's NCCL profiler callbacks, as NCCL calls them: per operation one collective
// start + stop and 8 kernel channels (start, recordEventState KernelChStop, stop), through the
// built library's ncclProfiler_v5 table (dlopen + dlsym, as NCCL loads it), against the same
// calls into a table of empty functions in the same run. Prints ns per operation for both and
// their ratio (median of 7 rounds of 100000 operations). Needs no GPU: without CUDA injection the
// agent records NCCL events only, into a temporary directory.
//
//   nccl_plugin_bench [AGENT.so]

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "capture/agent/nccl_profiler_abi.h"

namespace abi = vramscope::capture::nccl_abi;

namespace {

constexpr int kChannels = 8;
constexpr int kOpsPerRound = 100'000;
constexpr int kRounds = 7;

abi::Result emptyInit(void** context, uint64_t, int* mask, const char*, int, int, int,
                      abi::DebugLogger) {
    static int dummy = 0;
    *context = &dummy;
    *mask = 0;
    return abi::kSuccess;
}
abi::Result emptyStart(void*, void** h, abi::EventDescrV5*) {
    static int dummy = 0;
    *h = &dummy;
    return abi::kSuccess;
}
abi::Result emptyStop(void*) {
    return abi::kSuccess;
}
abi::Result emptyRecord(void*, abi::EventState, abi::EventStateArgs*) {
    return abi::kSuccess;
}
abi::Result emptyFinalize(void*) {
    return abi::kSuccess;
}
abi::ProfilerV5 g_empty = {"empty", emptyInit, emptyStart, emptyStop, emptyRecord, emptyFinalize};

/// One round: kOpsPerRound operations; returns ns per operation.
double round(abi::ProfilerV5* table, void* ctx, uint64_t seq0) {
    abi::ProfilerV5* volatile held = table;  // read back through a volatile: no call folded away
    abi::ProfilerV5* t = held;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kOpsPerRound; ++i) {
        abi::EventDescrV5 coll{};
        coll.type = abi::kEventColl;
        coll.coll.core.seqNumber = seq0 + static_cast<uint64_t>(i);
        coll.coll.core.func = "AllReduce";
        coll.coll.core.datatype = "ncclBfloat16";
        coll.coll.core.count = 1 << 20;
        coll.coll.core.nChannels = kChannels;
        coll.coll.core.algo = "RING";
        coll.coll.core.proto = "SIMPLE";
        void* h = nullptr;
        t->startEvent(ctx, &h, &coll);
        t->stopEvent(h);
        void* ch[kChannels] = {};
        const uint64_t gpu = 1'000'000'000ull + static_cast<uint64_t>(i) * 10'000ull;
        for (int c = 0; c < kChannels; ++c) {
            abi::EventDescrV5 k{};
            k.type = abi::kEventKernelCh;
            k.parentObj = h;
            k.kernelCh.channelId = static_cast<uint8_t>(c);
            k.kernelCh.pTimer = gpu + static_cast<uint64_t>(c);
            t->startEvent(ctx, &ch[c], &k);
        }
        for (int c = 0; c < kChannels; ++c) {
            abi::EventStateArgs a{};
            a.kernelCh.pTimer = gpu + 5'000 + static_cast<uint64_t>(c);
            t->recordEventState(ch[c], abi::kStateKernelChStop, &a);
            t->stopEvent(ch[c]);
        }
    }
    const auto ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    return ns / kOpsPerRound;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const std::string agent = argc > 1 ? argv[1] : VRAMSCOPE_BENCH_AGENT_PATH;
    char dir[] = "/tmp/vramscope-nccl-bench-XXXXXX";
    if (mkdtemp(dir) == nullptr) {
        return 1;
    }
    setenv("VRAMSCOPE_OUTPUT", dir, 1);
    setenv("VRAMSCOPE_JOB", "bench", 1);
    void* lib = dlopen(agent.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::fprintf(stderr, "nccl_plugin_bench: %s\n", dlerror());
        return 1;
    }
    auto* ours = static_cast<abi::ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
    if (ours == nullptr) {
        std::fprintf(stderr, "nccl_plugin_bench: no ncclProfiler_v5 in %s\n", agent.c_str());
        return 1;
    }
    void* ctx = nullptr;
    int mask = 0;
    ours->init(&ctx, 0x1234, &mask, "bench", 1, 8, 0, nullptr);
    void* emptyCtx = nullptr;
    int emptyMask = 0;
    g_empty.init(&emptyCtx, 0, &emptyMask, "bench", 1, 8, 0, nullptr);
    if (ctx == nullptr) {
        std::fprintf(stderr, "nccl_plugin_bench: the agent gave no context\n");
        return 1;
    }
    std::vector<double> base, plugin;
    for (int r = 0; r < kRounds; ++r) {
        base.push_back(round(&g_empty, emptyCtx, 0));
        plugin.push_back(round(ours, ctx, static_cast<uint64_t>(r) * kOpsPerRound));
    }
    const double b = median(base);
    const double p = median(plugin);
    std::printf(
        "operation = 1 collective start+stop + %d kernel channels (start, KernelChStop, "
        "stop): %d callbacks\n",
        kChannels, 2 + 3 * kChannels);
    std::printf("empty table:   %8.1f ns per operation\n", b);
    std::printf("vramscope:     %8.1f ns per operation (%.1f ns per callback)\n", p,
                p / (2 + 3 * kChannels));
    std::printf("ratio:         %8.1f x the empty table; %.1f ns added per operation\n", p / b,
                p - b);
    ours->finalize(ctx);
    return 0;
}
