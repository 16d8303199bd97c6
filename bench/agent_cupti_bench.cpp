// The capture agent's cost on the job's threads, over the fake CUPTI (tests/unit/capture/
// fake_cupti/; no GPU needed): per API callback (a cudaMalloc that succeeds, ENTER and EXIT, as
// CUPTI calls the subscriber) and per activity record (kernel records written into the agent's
// buffers and handed back by cuptiActivityFlushAll(0) on this thread, so the agent's walk and
// conversion run here), each against an empty callback on the same path in the same run: the
// fake's own call to a function that does nothing, and empty buffer callbacks that only walk the
// records with cuptiActivityGetNextRecord. The ratio agent / empty is the figure to watch; the
// empty run is what CUPTI itself costs on that path.
//
//   agent_cupti_bench [--benchmark_filter=...]
//
// The agent runs as in a job: InitializeInjection with the fakes mapped, its flush and writer
// threads running, the trace written into a temporary directory (removed at the end).

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fake_cupti/fake_cupti_control.h"

namespace {

constexpr int kRecordsPerIteration = 1000;

struct Fake {
    FakeDeliverFn deliver = nullptr;
    FakeApiCallFn apiCall = nullptr;
    FakeApiCallToFn apiCallTo = nullptr;
    FakeGetBufferCallbacksFn getBuffers = nullptr;
    FakeSetBufferCallbacksFn setBuffers = nullptr;
    decltype(&::cuptiActivityFlushAll) flushAll = nullptr;
    decltype(&::cuptiActivityGetNextRecord) nextRecord = nullptr;
};
Fake g_fake;
std::string g_dir;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "agent_cupti_bench: %s\n", what.c_str());
    std::exit(2);
}

void* openGlobal(const char* path) {
    void* h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (h == nullptr) {
        fail(std::string("cannot load ") + path + ": " + dlerror());
    }
    return h;
}

template <class Fn>
Fn need(void* lib, const char* name) {
    void* s = dlsym(lib, name);
    if (s == nullptr) {
        fail(std::string("missing ") + name);
    }
    return reinterpret_cast<Fn>(s);
}

/// Maps the fakes, starts the agent as the driver would, and keeps the fake's controls.
void startAgent() {
    char pattern[] = "/tmp/vramscope-cupti-bench-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
        fail("cannot make a temporary directory");
    }
    g_dir = pattern;
    setenv("VRAMSCOPE_OUTPUT", g_dir.c_str(), 1);
    setenv("VRAMSCOPE_LIVE", "0", 1);
    setenv("VRAMSCOPE_JOB", "bench", 1);
    unsetenv("FAKECUPTI_LOG");
    openGlobal(VRAMSCOPE_BENCH_FAKE_CUDA);
    openGlobal(VRAMSCOPE_BENCH_FAKE_CUDART);
    openGlobal(VRAMSCOPE_BENCH_FAKE_NVML);
    void* cupti = openGlobal(VRAMSCOPE_BENCH_FAKE_CUPTI);
    g_fake.deliver = need<FakeDeliverFn>(cupti, "fakecupti_deliver");
    g_fake.apiCall = need<FakeApiCallFn>(cupti, "fakecupti_api_call");
    g_fake.apiCallTo = need<FakeApiCallToFn>(cupti, "fakecupti_api_call_to");
    g_fake.getBuffers = need<FakeGetBufferCallbacksFn>(cupti, "fakecupti_get_buffer_callbacks");
    g_fake.setBuffers = need<FakeSetBufferCallbacksFn>(cupti, "fakecupti_set_buffer_callbacks");
    g_fake.flushAll = need<decltype(&::cuptiActivityFlushAll)>(cupti, "cuptiActivityFlushAll");
    g_fake.nextRecord =
        need<decltype(&::cuptiActivityGetNextRecord)>(cupti, "cuptiActivityGetNextRecord");
    void* agent = dlopen(VRAMSCOPE_BENCH_AGENT_PATH, RTLD_NOW | RTLD_LOCAL);
    if (agent == nullptr) {
        fail(std::string("cannot load the agent: ") + dlerror());
    }
    need<int (*)()>(agent, "InitializeInjection")();
}

void CUPTIAPI emptyCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
    benchmark::DoNotOptimize(data);
}

void callOnce(bool agent) {
    void* ptr = nullptr;
    cudaMalloc_v3020_params p{&ptr, 1 << 20};
    if (agent) {
        g_fake.apiCall(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
                       "cudaMalloc", &p, cudaSuccess, 0);
    } else {
        g_fake.apiCallTo(emptyCallback, CUPTI_CB_DOMAIN_RUNTIME_API,
                         CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc", &p, cudaSuccess,
                         0);
    }
}

void BM_AllocationCallback(benchmark::State& state) {
    const bool agent = state.range(0) == 1;
    for (auto _ : state) {
        callOnce(agent);
    }
    state.SetLabel(agent ? "agent" : "empty callback");
}
BENCHMARK(BM_AllocationCallback)->Arg(0)->Arg(1);

// --- records ---
alignas(8) uint8_t g_emptyBuffer[256 << 10];

void CUPTIAPI emptyRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    *buffer = g_emptyBuffer;
    *size = sizeof(g_emptyBuffer);
    *maxNumRecords = 0;
}

void CUPTIAPI emptyCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize) {
    CUpti_Activity* record = nullptr;
    size_t n = 0;
    while (g_fake.nextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
        ++n;
    }
    benchmark::DoNotOptimize(n);
}

std::vector<CUpti_ActivityKernel10> kernels() {
    static const char* const kNames[] = {"_Z6matmulPfS_S_i", "elementwise_add",
                                         "ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
    std::vector<CUpti_ActivityKernel10> out(kRecordsPerIteration);
    for (int i = 0; i < kRecordsPerIteration; ++i) {
        CUpti_ActivityKernel10& k = out[static_cast<size_t>(i)];
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = 1'700'000'000'000'000'000ull + static_cast<uint64_t>(i) * 10'000;
        k.end = k.start + 5'000;
        k.queued = k.start - 1'000;
        k.streamId = 7;
        k.correlationId = static_cast<uint32_t>(i);
        k.name = kNames[i % 3];
    }
    return out;
}

void BM_KernelRecords(benchmark::State& state) {
    const bool agent = state.range(0) == 1;
    static const std::vector<CUpti_ActivityKernel10> records = kernels();
    std::vector<const CUpti_Activity*> pointers;
    for (const auto& r : records) {
        pointers.push_back(reinterpret_cast<const CUpti_Activity*>(&r));
    }
    CUpti_BuffersCallbackRequestFunc agentRequested = nullptr;
    CUpti_BuffersCallbackCompleteFunc agentCompleted = nullptr;
    g_fake.getBuffers(&agentRequested, &agentCompleted);
    if (!agent) {
        g_fake.flushAll(0);  // the agent's buffers go back to the agent first
        g_fake.setBuffers(emptyRequested, emptyCompleted);
    }
    for (auto _ : state) {
        g_fake.deliver(pointers.data(), pointers.size(), 1);
        g_fake.flushAll(0);  // this thread's buffer comes back here: the walk runs on it
    }
    if (!agent) {
        g_fake.flushAll(0);
        g_fake.setBuffers(agentRequested, agentCompleted);
    }
    state.SetItemsProcessed(state.iterations() * kRecordsPerIteration);
    state.SetLabel(agent ? "agent" : "empty callbacks");
}
BENCHMARK(BM_KernelRecords)->Arg(0)->Arg(1);

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    startAgent();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::error_code ignored;
    std::filesystem::remove_all(g_dir, ignored);
    std::fflush(stdout);
    std::_Exit(0);  // the agent's exit handlers would write the trace of the run; not measured
}
