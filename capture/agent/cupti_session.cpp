#include "cupti_session.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
// cupti.h brings the API parameter structs of the allocation calls (cudaMalloc_v3020_params, ...)
// from generated_cuda_meta.h and generated_cuda_runtime_api_meta.h.

#include <atomic>
#include <cstdlib>

#include "agent.h"
#include "cupti_api.h"
#include "cupti_record_layouts.h"

namespace vramscope::capture {

namespace {

Agent* g_agent = nullptr;
CUpti_SubscriberHandle g_subscriber = nullptr;
RecordLayout g_layout = RecordLayout::Cuda13;

/// Runtime allocation calls in progress on this thread: the driver calls a cudaMalloc makes
/// underneath are then neither failures nor successes of their own.
thread_local int t_runtimeAllocDepth = 0;

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    *maxNumRecords = 0;
    *buffer = g_agent->buffers().take();  // zeroed on the flush thread, never here
    *size = *buffer != nullptr ? ActivityBufferPool::kBufferBytes : 0;  // 0: CUPTI drops, counts
    g_agent->noteBufferActivity();
}

/// Converts every record of a completed buffer; a walk CUPTI stops early (an incomplete or
/// unknown record: CUPTI_ERROR_INVALID_KIND) is counted with the bytes it left unread.
void walkBuffer(uint8_t* buffer, size_t validSize, uint64_t dropped) {
    const CuptiApi& api = cupti();
    CUpti_Activity* record = nullptr;
    size_t readEnd = 0;  // end of the last record read
    bool cut = false;
    g_agent->staging().addRecords(dropped, [&]() -> const CUpti_Activity* {
        if (validSize == 0 || cut) {
            return nullptr;
        }
        const CUptiResult rc = api.activityGetNextRecord(buffer, validSize, &record);
        if (rc == CUPTI_SUCCESS) {
            const auto at = static_cast<size_t>(reinterpret_cast<uint8_t*>(record) - buffer);
            if (at + convertedBytes(record->kind) > validSize) {
                cut = true;  // a stride that leaves less than the fields the converter reads
                return nullptr;
            }
            const size_t bytes = recordBytes(g_layout, record->kind);
            readEnd = at + (bytes != 0 ? bytes : convertedBytes(record->kind));
            return record;
        }
        cut = rc != CUPTI_ERROR_MAX_LIMIT_REACHED;
        return nullptr;
    });
    if (cut) {
        g_agent->staging().noteUndecodedBuffer(validSize > readEnd ? validSize - readEnd : 0);
    }
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t* buffer, size_t size,
                              size_t validSize) {
    if (buffer == nullptr) {
        return;
    }
    try {
        size_t dropped = 0;
        if (cupti().activityGetNumDroppedRecords(ctx, streamId, &dropped) != CUPTI_SUCCESS) {
            dropped = 0;
        }
        walkBuffer(buffer, validSize, dropped);
    } catch (...) {
        // Never let anything cross into CUPTI; the buffer goes back all the same.
    }
    g_agent->buffers().give(buffer, size);
    g_agent->noteBufferActivity();
}

struct AllocRequest {
    bool isAllocation = false;
    uint64_t bytes = 0;
    CUstream stream = nullptr;
    bool perThreadStream = false;
};

AllocRequest runtimeRequest(CUpti_CallbackId cbid, const void* params) {
    AllocRequest r;
    r.isAllocation = true;
    switch (cbid) {
        case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
            r.bytes = static_cast<const cudaMalloc_v3020_params*>(params)->size;
            break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
            r.bytes = static_cast<const cudaMallocManaged_v6000_params*>(params)->size;
            break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020: {
            auto* p = static_cast<const cudaMallocPitch_v3020_params*>(params);
            r.bytes = static_cast<uint64_t>(p->width) * p->height;
            break;
        }
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020: {
            auto* p = static_cast<const cudaMallocAsync_v11020_params*>(params);
            r.bytes = p->size;
            r.stream = reinterpret_cast<CUstream>(p->hStream);
            r.perThreadStream = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020;
            break;
        }
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020: {
            auto* p = static_cast<const cudaMallocFromPoolAsync_v11020_params*>(params);
            r.bytes = p->size;
            r.stream = reinterpret_cast<CUstream>(p->stream);
            r.perThreadStream =
                cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020;
            break;
        }
        default:
            r.isAllocation = false;
    }
    return r;
}

AllocRequest driverRequest(CUpti_CallbackId cbid, const void* params) {
    AllocRequest r;
    r.isAllocation = true;
    switch (cbid) {
        case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
            r.bytes = static_cast<const cuMemAlloc_v2_params*>(params)->bytesize;
            break;
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
            r.bytes = static_cast<const cuMemAllocManaged_params*>(params)->bytesize;
            break;
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
            auto* p = static_cast<const cuMemAllocPitch_v2_params*>(params);
            r.bytes = static_cast<uint64_t>(p->WidthInBytes) * p->Height;
            break;
        }
        case CUPTI_DRIVER_TRACE_CBID_cuMemCreate:
            r.bytes = static_cast<const cuMemCreate_params*>(params)->size;
            break;
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
            auto* p = static_cast<const cuMemAllocAsync_params*>(params);
            r.bytes = p->bytesize;
            r.stream = p->hStream;
            r.perThreadStream = cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz;
            break;
        }
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz: {
            auto* p = static_cast<const cuMemAllocFromPoolAsync_params*>(params);
            r.bytes = p->bytesize;
            r.stream = p->hStream;
            r.perThreadStream = cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz;
            break;
        }
        default:
            r.isAllocation = false;
    }
    return r;
}

int32_t deviceOf(const CUpti_CallbackData& info) {
    uint32_t device = 0;
    if (info.context != nullptr && cupti().getDeviceId(info.context, &device) == CUPTI_SUCCESS) {
        return static_cast<int32_t>(device);
    }
    return 0;
}

/// A failed allocation call: kept on its thread until it is retried or judged an OOM. No driver
/// call here (free memory comes from NVML on the flush thread).
void allocationFailed(const CUpti_CallbackData& info, const AllocRequest& request) {
    FailedAllocation f;
    f.timestampNs = cuptiNowNs();
    f.requestedBytes = request.bytes;
    f.device = deviceOf(info);
    uint32_t streamId = 0;
    if (request.stream != nullptr && info.context != nullptr &&
        cupti().getStreamIdEx(info.context, request.stream, request.perThreadStream ? 1 : 0,
                              &streamId) == CUPTI_SUCCESS) {
        f.stream = streamId;
    }
    g_agent->allocationFailures().failed(f, steadyNowNs());
}

void allocationSucceeded() {
    g_agent->allocationFailures().succeeded();
    g_agent->noteAllocationCall();
}

/// cuMemCreate / cuMemMap / cuMemUnmap / cuMemRelease that succeeded: reserved memory of the
/// driver's VMM (PyTorch's expandable segments).
void virtualMemoryCall(const CUpti_CallbackData& info, CUpti_CallbackId cbid) {
    std::vector<trace::MemoryEvent> events;
    switch (cbid) {
        case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
            const auto* p = static_cast<const cuMemCreate_params*>(info.functionParams);
            const bool onDevice =
                p->prop != nullptr && p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
            if (p->handle != nullptr) {
                g_agent->vmm().created(*p->handle, p->size, onDevice ? p->prop->location.id : -1);
            }
            return;
        }
        case CUPTI_DRIVER_TRACE_CBID_cuMemRelease:
            g_agent->vmm().released(
                static_cast<const cuMemRelease_params*>(info.functionParams)->handle);
            return;
        case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
            const auto* p = static_cast<const cuMemMap_params*>(info.functionParams);
            g_agent->vmm().mapped(p->ptr, p->size, p->handle, deviceOf(info), cuptiNowNs(), events);
            break;
        }
        case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
            const auto* p = static_cast<const cuMemUnmap_params*>(info.functionParams);
            g_agent->vmm().unmapped(p->ptr, p->size, cuptiNowNs(), events);
            break;
        }
        default:
            return;
    }
    if (!events.empty()) {
        g_agent->staging().addMemory(events);
    }
}

bool isVirtualMemoryCall(CUpti_CallbackId cbid) {
    return cbid == CUPTI_DRIVER_TRACE_CBID_cuMemCreate ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuMemRelease ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuMemMap || cbid == CUPTI_DRIVER_TRACE_CBID_cuMemUnmap;
}

void runtimeCallback(CUpti_CallbackId cbid, const CUpti_CallbackData& info) {
    if (info.callbackSite == CUPTI_API_ENTER) {
        ++t_runtimeAllocDepth;
        return;
    }
    --t_runtimeAllocDepth;
    const AllocRequest r = runtimeRequest(cbid, info.functionParams);
    if (!r.isAllocation || info.functionReturnValue == nullptr) {
        return;
    }
    const auto rc = *static_cast<const cudaError_t*>(info.functionReturnValue);
    if (rc == cudaErrorMemoryAllocation) {
        allocationFailed(info, r);
    } else if (rc == cudaSuccess) {
        allocationSucceeded();
    }
}

void driverCallback(CUpti_CallbackId cbid, const CUpti_CallbackData& info) {
    if (info.callbackSite == CUPTI_API_ENTER || info.functionReturnValue == nullptr) {
        return;
    }
    const auto rc = *static_cast<const CUresult*>(info.functionReturnValue);
    if (rc == CUDA_SUCCESS && isVirtualMemoryCall(cbid)) {
        virtualMemoryCall(info, cbid);
    }
    if (t_runtimeAllocDepth > 0) {
        return;  // the runtime call around it reports the outcome
    }
    const AllocRequest r = driverRequest(cbid, info.functionParams);
    if (!r.isAllocation) {
        return;
    }
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
        allocationFailed(info, r);
    } else if (rc == CUDA_SUCCESS) {
        allocationSucceeded();
    }
}

void CUPTIAPI apiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
    try {
        const auto& info = *static_cast<const CUpti_CallbackData*>(data);
        if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
            runtimeCallback(cbid, info);
        } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
            driverCallback(cbid, info);
        }
    } catch (...) {
        // Never let anything cross into the CUDA call that is being traced.
    }
}

/// Enables the allocation callbacks; how many of how many CUPTI accepted.
std::pair<int, int> enableCallbacks() {
    static constexpr CUpti_CallbackId kRuntime[] = {
        CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
    };
    static constexpr CUpti_CallbackId kDriver[] = {
        CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
        CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
        CUPTI_DRIVER_TRACE_CBID_cuMemMap,
        CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
    };
    const CuptiApi& api = cupti();
    int ok = 0;
    for (CUpti_CallbackId id : kRuntime) {
        ok += api.enableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id) == CUPTI_SUCCESS;
    }
    for (CUpti_CallbackId id : kDriver) {
        ok += api.enableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS;
    }
    return {ok, static_cast<int>(std::size(kRuntime) + std::size(kDriver))};
}

/// The settings CUPTI reads before a context exists, each outcome into `s.settings`.
void earlySettings(CuptiStart& s) {
    const CuptiApi& api = cupti();
    auto note = [&](const char* key, bool available, CUptiResult rc) {
        s.settings.emplace_back(key, available ? cuptiResultName(rc) : "not in this CUPTI");
    };
    // NOTE(cupti): with ZEROED_OUT_ACTIVITY_BUFFER CUPTI trusts the client to hand zeroed
    // buffers, instead of clearing each one on the thread that asks for it.
    uint8_t one = 1;
    size_t oneSize = sizeof(one);
    note("cupti_zeroed_buffers", api.activitySetAttribute != nullptr,
         api.activitySetAttribute != nullptr
             ? api.activitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &oneSize,
                                        &one)
             : CUPTI_ERROR_NOT_SUPPORTED);
    note("cupti_thread_id_type", api.setThreadIdType != nullptr,
         api.setThreadIdType != nullptr ? api.setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
                                        : CUPTI_ERROR_NOT_SUPPORTED);
    // NOTE(cupti): latency timestamps (queued, submitted) must be asked for before CUDA creates
    // a context (docs/DESIGN.md "Capture: CUDA injection and CUPTI"); InitializeInjection runs
    // inside cuInit, before any.
    note("cupti_latency_timestamps", api.activityEnableLatencyTimestamps != nullptr,
         api.activityEnableLatencyTimestamps != nullptr ? api.activityEnableLatencyTimestamps(1)
                                                        : CUPTI_ERROR_NOT_SUPPORTED);
}

void subscribe(CuptiStart& s, bool wantCallbacks) {
    if (!wantCallbacks) {
        s.settings.emplace_back("cupti_subscribe", "off (VRAMSCOPE_OOM_CALLBACKS=0)");
        return;
    }
    const CUptiResult rc = cupti().subscribe(&g_subscriber, apiCallback, nullptr);
    s.settings.emplace_back("cupti_subscribe", cuptiResultName(rc));
    if (rc == CUPTI_SUCCESS) {
        const auto [enabled, all] = enableCallbacks();
        s.settings.emplace_back("cupti_callbacks",
                                std::to_string(enabled) + " of " + std::to_string(all));
        s.oomCallbacks = enabled > 0;
        return;
    }
    g_subscriber = nullptr;
    s.notices.push_back(
        rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
            ? "another CUPTI tool (torch.profiler, Nsight, cuda-gdb, ...) holds the callback API; "
              "recording activity records only, without out-of-memory events or expandable "
              "segments"
            : "CUPTI refused the allocation callbacks (" + cuptiResultName(rc) +
                  "); recording activity records only, without out-of-memory events");
}

}  // namespace

CuptiStart startCupti(Agent& agent, bool wantCallbacks) {
    CuptiStart s;
    g_agent = &agent;
    const CuptiBinding& binding = cuptiBinding();
    g_layout = binding.release.major == 12 ? RecordLayout::Cuda12 : RecordLayout::Cuda13;
    const CuptiApi& api = binding.api;
    earlySettings(s);
    subscribe(s, wantCallbacks);
    const CUptiResult registered = api.activityRegisterCallbacks(bufferRequested, bufferCompleted);
    s.settings.emplace_back("cupti_register_callbacks", cuptiResultName(registered));
    if (registered != CUPTI_SUCCESS) {
        s.error = "cannot register CUPTI activity buffers: " + cuptiResultName(registered);
        return s;
    }
    // NOTE(cupti): CONCURRENT_KERNEL, never KERNEL (KERNEL serialises kernel execution).
    static constexpr std::pair<CUpti_ActivityKind, const char*> kKinds[] = {
        {CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2"},
        {CUPTI_ACTIVITY_KIND_MEMORY_POOL, "MEMORY_POOL"},
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
        {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
        {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
        {CUPTI_ACTIVITY_KIND_MARKER, "MARKER"},
    };
    std::string refused;
    for (const auto& [kind, name] : kKinds) {
        const CUptiResult rc = api.activityEnable(kind);
        s.settings.emplace_back(std::string("cupti_enable_") + name, cuptiResultName(rc));
        std::string& list = rc == CUPTI_SUCCESS ? s.enabledKinds : refused;
        list += (list.empty() ? "" : ", ") + std::string(name) +
                (rc == CUPTI_SUCCESS ? "" : " (" + cuptiResultName(rc) + ")");
    }
    if (s.enabledKinds.empty()) {
        s.error = "CUPTI enabled no activity kind: " + refused;
        return s;
    }
    if (!refused.empty()) {
        s.notices.push_back("CUPTI refused activity kind(s) " + refused +
                            "; they are not recorded, everything else is");
    }
    s.ok = true;
    return s;
}

void flushCupti(bool forced) {
    cupti().activityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

int64_t cuptiNowNs() {
    const CuptiBinding& b = cuptiBinding();
    uint64_t t = 0;
    if (!b.ok || b.api.getTimestamp(&t) != CUPTI_SUCCESS) {
        return 0;
    }
    return static_cast<int64_t>(t);
}

int forwardNvtxInitialization(const void* getExportTable) {
    const CuptiBinding& b = cuptiBinding();
    if (!b.ok || b.api.nvtxInitialize == nullptr) {
        return 0;
    }
    if (!b.release.nvtxAllowed) {
        static std::atomic<bool> said{false};
        if (!said.exchange(true)) {
            printNotice("NVTX ranges are off: CUPTI " + b.release.name +
                        " crashes under NVTX injection (NVTX issue 125); CUPTI 13.0 Update 1 "
                        "and later record them");
        }
        return 0;
    }
    return b.api.nvtxInitialize(getExportTable);
}

int forwardNvtxExtensionInitialization(void* moduleInfo) {
    const CuptiBinding& b = cuptiBinding();
    if (!b.ok || b.api.nvtxExtensionInitialize == nullptr || !b.release.nvtxAllowed) {
        return 0;
    }
    return b.api.nvtxExtensionInitialize(moduleInfo);
}

}  // namespace vramscope::capture
