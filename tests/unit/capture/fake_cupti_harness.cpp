// Runs the built capture agent whole, without a GPU, over the fake CUPTI, the fake driver and the
// fake NVML (tests/unit/capture/fake_cupti/): maps what a job would have mapped before the driver
// calls the agent (a libcudart, a libcupti, NVML) by full path with RTLD_GLOBAL, loads the agent
// as the CUDA driver does for CUDA_INJECTION64_PATH, calls InitializeInjection and plays one
// scenario: records delivered through the fake's buffers (fake_cupti_plan.h), API callbacks,
// signals. The trace is written by the agent (VRAMSCOPE_OUTPUT names where); what the fakes saw
// goes to $FAKECUPTI_LOG, with the harness's own "harness ..." lines.
//
//   fake_cupti_harness [--cudart PATH]... [--cupti PATH] [--cupti-found NAME] [--nvml PATH]
//                      AGENT FAKE_CUDA SCENARIO [ARG]
//
// --cupti maps a fake libcupti before the agent starts (as PyTorch's wheels do at import);
// --cupti-found names one the agent must load itself (the harness then finds it with
// RTLD_NOLOAD, "harness cupti_loaded=0|1"). Scenarios: roundtrip, settings, exit_flushes,
// sigterm, kill, undecodable, oom_retried, oom_twice, oom_last, other_user, step_aside,
// nvtx VERSION, forced_mid_run, fill_buffers, late, enable_fails, vmm, nvml, in_flight_at_exit.
// Exit codes: 0 when the scenario ran to its end, 100+ when a library or symbol is missing, 3 when
// a signal that should have ended the process did not.

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fake_cupti/fake_cupti_control.h"
#include "fake_cupti/fake_cupti_plan.h"
#include "fake_cupti/fake_log.h"

namespace plan = vramscope::test::fake_plan;
using vramscope::fake::logLine;
using vramscope::fake::monotonicNs;
using vramscope::fake::threadId;

namespace {

[[noreturn]] void fail(int code, const std::string& what) {
    std::fprintf(stderr, "harness: %s\n", what.c_str());
    std::fflush(stderr);
    std::_Exit(code);
}

/// A line on stderr in one write, so that it keeps its place among the agent's lines.
void say(const std::string& line) {
    const std::string text = "harness: " + line + "\n";
    const ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
    (void)ignored;
}

/// Sleeps `ms` to the end, even when a signal cuts a sleep short.
void sleepMs(int ms) {
    timespec left{ms / 1000, (ms % 1000) * 1'000'000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

void* openGlobal(const char* path) {
    void* h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (h == nullptr) {
        fail(100, std::string("cannot load ") + path + ": " + dlerror());
    }
    return h;
}

template <class Fn>
Fn symbol(void* lib, const char* name) {
    void* s = dlsym(lib, name);
    if (s == nullptr) {
        fail(101, std::string("missing symbol ") + name);
    }
    return reinterpret_cast<Fn>(s);
}

struct Fake {
    FakeSetVersionFn setVersion = nullptr;
    FakeSetFlushDelayFn setFlushDelay = nullptr;
    FakeDeliverFn deliver = nullptr;
    FakeCompleteInFlightFn completeInFlight = nullptr;
    FakeAtContextDestroyFn atContextDestroy = nullptr;
    FakeReplaceCallbacksFn replaceCallbacks = nullptr;
    FakeFailEnableFn failEnable = nullptr;
    FakeApiCallFn apiCall = nullptr;
    FakeApiCallNestedFn apiCallNested = nullptr;
};
Fake g_fake;
/// The run's base on CUPTI's clock (fake_cupti_plan.h): every plan time is relative to it.
uint64_t g_base = 0;

void bindFake(void* cupti) {
    g_fake.setVersion = symbol<FakeSetVersionFn>(cupti, "fakecupti_set_version");
    g_fake.setFlushDelay = symbol<FakeSetFlushDelayFn>(cupti, "fakecupti_set_flush_delay_ms");
    g_fake.deliver = symbol<FakeDeliverFn>(cupti, "fakecupti_deliver");
    g_fake.completeInFlight = symbol<FakeCompleteInFlightFn>(cupti, "fakecupti_complete_in_flight");
    g_fake.atContextDestroy = symbol<FakeAtContextDestroyFn>(cupti, "fakecupti_at_context_destroy");
    g_fake.replaceCallbacks =
        symbol<FakeReplaceCallbacksFn>(cupti, "fakecupti_replace_buffer_callbacks");
    g_fake.failEnable = symbol<FakeFailEnableFn>(cupti, "fakecupti_fail_enable");
    g_fake.apiCall = symbol<FakeApiCallFn>(cupti, "fakecupti_api_call");
    g_fake.apiCallNested = symbol<FakeApiCallNestedFn>(cupti, "fakecupti_api_call_nested");
}

uint64_t realtimeNs() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

CUpti_ActivityKernel10 kernelRecord(int i) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = g_base + plan::kernelStartNs(i);
    k.end = g_base + plan::kernelEndNs(i);
    k.completed = k.end;
    k.queued = g_base + plan::kernelQueuedNs(i);
    k.submitted = k.queued + 500;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = plan::kernelStream(i);
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = 128;
    k.blockY = k.blockZ = 1;
    k.correlationId = plan::kernelCorrelation(i);
    k.gridId = i;
    // NOTE(cupti): records of one kernel share the name pointer, owned by CUPTI; here the plan's.
    k.name = plan::kKernelNames[i % plan::kKernelNameCount];
    return k;
}

CUpti_ActivityMemory4 memoryRecord(int k, bool release) {
    CUpti_ActivityMemory4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                                    : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 5'000u + static_cast<uint32_t>(k) * 2 + (release ? 1u : 0u);
    m.address = plan::allocationAddress(k);
    m.bytes = plan::allocationBytes(k);
    m.timestamp = g_base + (release ? plan::releaseNs(k) : plan::allocationNs(k));
    m.processId = static_cast<uint32_t>(getpid());
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = CUPTI_INVALID_STREAM_ID;
    m.isAsync = 0;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    return m;
}

/// The plan's NVTX ranges as START/END markers, in time order.
std::vector<CUpti_ActivityMarker2> markerRecords() {
    struct Edge {
        uint64_t t;
        int range;
        bool start;
    };
    std::vector<Edge> edges;
    for (int r = 0; r < plan::kRangeCount; ++r) {
        edges.push_back({plan::kRanges[r].startNs, r, true});
        edges.push_back({plan::kRanges[r].endNs, r, false});
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
    std::vector<CUpti_ActivityMarker2> out;
    for (const Edge& e : edges) {
        CUpti_ActivityMarker2 m{};
        m.kind = CUPTI_ACTIVITY_KIND_MARKER;
        m.flags = e.start ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
        m.timestamp = g_base + e.t;
        m.id = plan::kRanges[e.range].id;
        m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        m.objectId.pt.processId = static_cast<uint32_t>(getpid());
        m.objectId.pt.threadId = plan::kNvtxThread;
        // NOTE(cupti): an END marker carries no name; the START one names the range.
        m.name = e.start ? plan::kRanges[e.range].name : nullptr;
        m.domain = nullptr;
        out.push_back(m);
    }
    return out;
}

template <class Record>
std::vector<const CUpti_Activity*> pointersTo(const std::vector<Record>& records) {
    std::vector<const CUpti_Activity*> pointers;
    for (const Record& r : records) {
        pointers.push_back(reinterpret_cast<const CUpti_Activity*>(&r));
    }
    return pointers;
}

template <class Record>
size_t deliver(const std::vector<Record>& records, bool complete) {
    const auto pointers = pointersTo(records);
    return g_fake.deliver(pointers.data(), pointers.size(), complete ? 1 : 0);
}

size_t deliverKernels(int from, int to, bool complete) {
    std::vector<CUpti_ActivityKernel10> k;
    for (int i = from; i < to; ++i) {
        k.push_back(kernelRecord(i));
    }
    return deliver(k, complete);
}

void deliverRoundTrip() {
    for (int batch = 0; batch < 10; ++batch) {
        deliverKernels(batch * plan::kKernels / 10, (batch + 1) * plan::kKernels / 10, true);
        sleepMs(20);
    }
    std::vector<CUpti_ActivityMemory4> memory;
    for (int k = 0; k < plan::kAllocations; ++k) {
        memory.push_back(memoryRecord(k, false));
    }
    for (int k = 0; k < plan::kAllocations; ++k) {
        memory.push_back(memoryRecord(k, true));
    }
    deliver(memory, true);
    deliver(markerRecords(), true);
}

/// cudaMalloc as cudart makes it: the runtime call with cuMemAlloc_v2 underneath, both failing
/// or both succeeding.
int cudaMallocCall(uint64_t bytes, cudaError_t result) {
    void* ptr = nullptr;
    cudaMalloc_v3020_params p{&ptr, static_cast<size_t>(bytes)};
    CUdeviceptr dptr = 0;
    cuMemAlloc_v2_params d{&dptr, static_cast<size_t>(bytes)};
    const int driverResult = result == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    return g_fake.apiCallNested(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc", &p, result,
                                CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2", &d,
                                driverResult, 0);
}

int cudaFreeCall(uint64_t address) {
    cudaFree_v3020_params p{reinterpret_cast<void*>(address)};
    return g_fake.apiCall(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
                          "cudaFree", &p, cudaSuccess, 0);
}

/// One cudaMalloc and one cudaFree that succeed, with their MEMORY2 records, `k` naming which.
void allocateAndFree(int k) {
    cudaMallocCall(plan::allocationBytes(k % plan::kAllocations), cudaSuccess);
    deliver(std::vector<CUpti_ActivityMemory4>{memoryRecord(k % plan::kAllocations, false)}, true);
    cudaFreeCall(plan::allocationAddress(k % plan::kAllocations));
    deliver(std::vector<CUpti_ActivityMemory4>{memoryRecord(k % plan::kAllocations, true)}, true);
}

/// Raises `sig` at this process and waits for it to end the process; 3 when it does not.
[[noreturn]] void dieBy(int sig) {
    logLine("harness signal=%d tid=%ld t_ns=%lld", sig, threadId(),
            static_cast<long long>(monotonicNs()));
    kill(getpid(), sig);
    sleepMs(10'000);
    logLine("harness survived signal=%d", sig);
    fail(3, "the process outlived signal " + std::to_string(sig));
}

int playOom(const std::string& scenario) {
    logLine("harness api_thread tid=%ld", threadId());
    cudaMallocCall(plan::kOomRequestBytes, cudaErrorMemoryAllocation);
    if (scenario == "oom_retried") {
        // PyTorch's caching allocator frees its cached blocks, then asks again.
        cudaFreeCall(plan::allocationAddress(0));
        cudaMallocCall(plan::kOomRequestBytes, cudaSuccess);
    } else if (scenario == "oom_twice") {
        cudaMallocCall(plan::kOomRequestBytes, cudaErrorMemoryAllocation);
    }
    sleepMs(300);
    return 0;
}

/// Kernels still running when an allocation fails; the GPU finishes them 300 ms later.
int playForcedMidRun() {
    deliverKernels(0, plan::kInFlightKernels, false);
    cudaMallocCall(plan::kOomRequestBytes, cudaErrorMemoryAllocation);
    sleepMs(300);
    g_fake.completeInFlight();
    sleepMs(300);
    return 0;
}

/// 12,000 kernels a second on one thread whose current buffer always holds one in flight, then
/// SIGKILL 500 ms after the last batch.
[[noreturn]] void playFillBuffers() {
    for (int batch = 0; batch < plan::kFillBatches; ++batch) {
        g_fake.completeInFlight();  // the GPU finished the previous batch's last kernel
        const int first = batch * plan::kFillPerBatch;
        deliverKernels(first, first + plan::kFillPerBatch - 1, true);
        deliverKernels(first + plan::kFillPerBatch - 1, first + plan::kFillPerBatch, false);
        logLine("harness batch=%d t_ns=%lld", batch, static_cast<long long>(monotonicNs()));
        sleepMs(plan::kFillPeriodMs);
    }
    sleepMs(500);
    dieBy(SIGKILL);
}

/// Allocations during the run, their frees completed only when the context is destroyed at exit.
int playLate() {
    std::vector<CUpti_ActivityMemory4> allocs;
    std::vector<CUpti_ActivityMemory4> frees;
    for (int k = 0; k < plan::kAllocations; ++k) {
        allocs.push_back(memoryRecord(k, false));
        frees.push_back(memoryRecord(k, true));
    }
    deliver(allocs, true);
    const auto pointers = pointersTo(frees);
    g_fake.atContextDestroy(pointers.data(), pointers.size());
    sleepMs(200);
    return 0;
}

/// PyTorch's expandable segments: create and map kVmmPages pages, then unmap and release one.
int playVmm() {
    for (int page = 0; page < plan::kVmmPages; ++page) {
        CUmemGenericAllocationHandle handle = plan::vmmHandle(page);  // what the driver returns
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        cuMemCreate_params create{&handle, plan::kVmmPageBytes, &prop, 0};
        g_fake.apiCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
                       "cuMemCreate", &create, CUDA_SUCCESS, 0);
        cuMemMap_params map{plan::kVmmBase + page * plan::kVmmPageBytes, plan::kVmmPageBytes, 0,
                            plan::vmmHandle(page), 0};
        g_fake.apiCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemMap, "cuMemMap",
                       &map, CUDA_SUCCESS, 0);
        sleepMs(10);
    }
    cuMemUnmap_params unmap{plan::kVmmBase + plan::kVmmUnmapped * plan::kVmmPageBytes,
                            plan::kVmmPageBytes};
    g_fake.apiCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, "cuMemUnmap",
                   &unmap, CUDA_SUCCESS, 0);
    cuMemRelease_params release{plan::vmmHandle(plan::kVmmUnmapped)};
    g_fake.apiCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemRelease, "cuMemRelease",
                   &release, CUDA_SUCCESS, 0);
    sleepMs(200);
    return 0;
}

int playOtherUser() {
    for (int k = 0; k < 15; ++k) {
        allocateAndFree(k);
        sleepMs(20);
    }
    g_fake.replaceCallbacks();
    say("buffer callbacks replaced");
    for (int k = 0; k < 200; ++k) {  // 4 s more of calls whose records the agent never sees
        allocateAndFree(k);
        sleepMs(20);
    }
    return 0;
}

int runScenario(const std::string& scenario, void* agent) {
    if (scenario == "roundtrip" || scenario == "enable_fails") {
        deliverRoundTrip();
        sleepMs(200);
        return 0;
    }
    if (scenario == "settings" || scenario == "step_aside") {
        sleepMs(200);
        return 0;
    }
    if (scenario == "nvml") {
        sleepMs(400);  // a few flush periods of samples
        return 0;
    }
    if (scenario == "exit_flushes") {
        // Slow flushes while the job exits: the exit's flushes must not overlap the periodic ones.
        g_fake.setFlushDelay(20);
        for (int batch = 0; batch < 10; ++batch) {
            deliverKernels(batch * 50, (batch + 1) * 50, true);
            sleepMs(60);
        }
        // The last ones still running, then finished as the job ends (it synchronises), but in a
        // buffer no periodic flush has taken yet: only the exit's flushes return them.
        deliverKernels(500, plan::kKernels, false);
        g_fake.completeInFlight();
        return 0;
    }
    if (scenario == "in_flight_at_exit") {
        // Never finished: the exit's forced flush hands them back incomplete.
        deliverKernels(0, plan::kInFlightKernels, false);
        deliver(std::vector<CUpti_ActivityMemory4>{memoryRecord(0, false)}, false);
        return 0;
    }
    if (scenario == "sigterm" || scenario == "kill") {
        sleepMs(400);  // a few periodic flushes first
        deliverKernels(0, 100, true);
        if (scenario == "kill") {
            sleepMs(500);
            dieBy(SIGKILL);
        }
        dieBy(SIGTERM);
    }
    if (scenario == "undecodable") {
        std::vector<CUpti_ActivityKernel10> k;
        for (int i = 0; i < 16; ++i) {
            k.push_back(kernelRecord(i));
        }
        k[10] = {};
        k[10].kind = CUPTI_ACTIVITY_KIND_INVALID;  // a record the walk cannot decode
        deliver(k, true);  // one buffer: 10 good records, the bad one, 5 more
        sleepMs(200);
        return 0;
    }
    if (scenario == "oom_retried" || scenario == "oom_twice" || scenario == "oom_last") {
        return playOom(scenario);
    }
    if (scenario == "forced_mid_run") {
        return playForcedMidRun();
    }
    if (scenario == "fill_buffers") {
        playFillBuffers();
    }
    if (scenario == "late") {
        return playLate();
    }
    if (scenario == "vmm") {
        return playVmm();
    }
    if (scenario == "other_user") {
        return playOtherUser();
    }
    if (scenario == "nvtx") {
        using NvtxInitFn = int (*)(const void*);
        auto init = symbol<NvtxInitFn>(agent, "InitializeInjectionNvtx2");
        static int exportTableStandIn = 0;  // NVTX's export-table getter; never called by the fake
        const int result = init(&exportTableStandIn);
        logLine("harness nvtx_result=%d", result);
        sleepMs(100);
        return 0;
    }
    fail(2, "unknown scenario " + scenario);
}

struct Options {
    std::vector<std::string> cudarts;
    std::string cupti;       ///< mapped before the agent starts
    std::string cuptiFound;  ///< loaded by the agent
    std::string nvml;
    std::vector<std::string> positional;
};

Options parseOptions(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--cudart" && hasValue) {
            o.cudarts.push_back(argv[++i]);
        } else if (a == "--cupti" && hasValue) {
            o.cupti = argv[++i];
        } else if (a == "--cupti-found" && hasValue) {
            o.cuptiFound = argv[++i];
        } else if (a == "--nvml" && hasValue) {
            o.nvml = argv[++i];
        } else {
            o.positional.push_back(a);
        }
    }
    if (o.positional.size() < 3) {
        fail(2,
             "usage: fake_cupti_harness [--cudart PATH]... [--cupti PATH] [--cupti-found NAME] "
             "[--nvml PATH] AGENT FAKE_CUDA SCENARIO [ARG]");
    }
    return o;
}

/// What a scenario sets in the fake before the agent starts.
void beforeStart(const std::string& scenario, const char* arg) {
    if (scenario == "nvtx") {
        if (arg == nullptr) {
            fail(2, "nvtx needs a CUPTI version");
        }
        g_fake.setVersion(static_cast<uint32_t>(std::strtoul(arg, nullptr, 10)));
    }
    if (scenario == "enable_fails") {
        g_fake.failEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL, CUPTI_ERROR_NOT_COMPATIBLE);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parseOptions(argc, argv);
    const std::string scenario = o.positional[2];
    const char* arg = o.positional.size() > 3 ? o.positional[3].c_str() : nullptr;
    g_base = (realtimeNs() - 60'000'000'000ull) / 1'000'000 * 1'000'000;
    logLine("harness base_ns=%llu", static_cast<unsigned long long>(g_base));
    openGlobal(o.positional[1].c_str());  // libcuda.so.1
    for (const std::string& cudart : o.cudarts) {
        openGlobal(cudart.c_str());  // the job's own CUDA runtime, mapped before cuInit
    }
    if (!o.nvml.empty()) {
        openGlobal(o.nvml.c_str());
    }
    if (!o.cupti.empty()) {
        bindFake(openGlobal(o.cupti.c_str()));
        beforeStart(scenario, arg);
    }
    void* agent = dlopen(o.positional[0].c_str(), RTLD_NOW | RTLD_LOCAL);
    if (agent == nullptr) {
        fail(102, std::string("cannot load the agent: ") + dlerror());
    }
    using InitFn = int (*)();
    auto initialize = symbol<InitFn>(agent, "InitializeInjection");
    logLine("harness main_thread tid=%ld", threadId());
    const int initResult = initialize();
    logLine("harness initialized result=%d", initResult);
    if (!o.cuptiFound.empty()) {
        void* found = dlopen(o.cuptiFound.c_str(), RTLD_NOW | RTLD_NOLOAD);
        logLine("harness cupti_loaded=%d", found != nullptr ? 1 : 0);
        if (found == nullptr) {
            say("the agent did not load " + o.cuptiFound);
            return 0;
        }
        bindFake(found);
    }
    if (g_fake.deliver == nullptr && scenario != "step_aside") {
        fail(2, "scenario " + scenario + " needs a fake libcupti");
    }
    const int code = runScenario(scenario, agent);
    say("exiting");
    logLine("harness exiting tid=%ld t_ns=%lld", threadId(), static_cast<long long>(monotonicNs()));
    return code;
}
