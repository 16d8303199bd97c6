#include "cupti_session.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
// cupti.h brings the API parameter structs of the allocation calls (cudaMalloc_v3020_params, ...)
// from generated_cuda_meta.h and generated_cuda_runtime_api_meta.h.

#include <cstdlib>

#include "agent.h"
#include "device_facts.h"

namespace vramscope::capture {

namespace {

Agent* g_agent = nullptr;
CUpti_SubscriberHandle g_subscriber = nullptr;

/// Runtime allocation calls in progress on this thread: the driver call a failing cudaMalloc
/// makes underneath is then not reported a second time.
thread_local int t_runtimeAllocDepth = 0;

std::string resultText(CUptiResult rc) {
    const char* text = nullptr;
    if (cuptiGetResultString(rc, &text) != CUPTI_SUCCESS || text == nullptr) {
        return "CUPTI error " + std::to_string(static_cast<int>(rc));
    }
    return text;
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    try {
        g_agent->requestBuffer(buffer, size, maxNumRecords);
    } catch (...) {
        *buffer = nullptr;  // CUPTI drops records and counts them
        *size = 0;
    }
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t* buffer, size_t size,
                              size_t validSize) {
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, streamId, &dropped) != CUPTI_SUCCESS) {
        dropped = 0;
    }
    try {
        g_agent->completeBuffer(buffer, size, validSize, static_cast<uint32_t>(dropped));
    } catch (...) {
        std::free(buffer);
    }
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

void reportOom(const CUpti_CallbackData& info, const AllocRequest& request) {
    trace::OomEvent e;
    e.timestampNs = cuptiNowNs();
    e.requestedBytes = request.bytes;
    uint32_t device = 0;
    if (info.context != nullptr && cuptiGetDeviceId(info.context, &device) == CUPTI_SUCCESS) {
        e.device = static_cast<trace::DeviceIndex>(device);
    }
    uint32_t streamId = 0;
    if (request.stream != nullptr && info.context != nullptr &&
        cuptiGetStreamIdEx(info.context, request.stream, request.perThreadStream ? 1 : 0,
                           &streamId) == CUPTI_SUCCESS) {
        e.stream = streamId;
    }
    e.freeBytes = currentDeviceFreeBytes();
    g_agent->recordOom(e);
}

void CUPTIAPI apiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
    try {
        const auto& info = *static_cast<const CUpti_CallbackData*>(data);
        if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
            if (info.callbackSite == CUPTI_API_ENTER) {
                ++t_runtimeAllocDepth;
                return;
            }
            --t_runtimeAllocDepth;
            if (info.functionReturnValue == nullptr ||
                *static_cast<const cudaError_t*>(info.functionReturnValue) !=
                    cudaErrorMemoryAllocation) {
                return;
            }
            const AllocRequest r = runtimeRequest(cbid, info.functionParams);
            if (r.isAllocation) {
                reportOom(info, r);
            }
        } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
            if (info.callbackSite == CUPTI_API_ENTER || t_runtimeAllocDepth > 0 ||
                info.functionReturnValue == nullptr ||
                *static_cast<const CUresult*>(info.functionReturnValue) !=
                    CUDA_ERROR_OUT_OF_MEMORY) {
                return;
            }
            const AllocRequest r = driverRequest(cbid, info.functionParams);
            if (r.isAllocation) {
                reportOom(info, r);
            }
        }
    } catch (...) {
        // Never let anything cross into the CUDA call that is being traced.
    }
}

bool enableOomCallbacks() {
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
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
        CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
    };
    bool ok = true;
    for (CUpti_CallbackId id : kRuntime) {
        ok = cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id) ==
                 CUPTI_SUCCESS &&
             ok;
    }
    for (CUpti_CallbackId id : kDriver) {
        ok =
            cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS &&
            ok;
    }
    return ok;
}

void* boundCuptiHandle() {
    Dl_info info{};
    // The address of a libcupti function names the file this library was bound to.
    if (dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) == 0 ||
        info.dli_fname == nullptr) {
        return nullptr;
    }
    return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

}  // namespace

uint32_t builtCuptiVersion() {
    return CUPTI_API_VERSION;
}

bool cuptiVersionCompatible(uint32_t built, uint32_t runtime) {
    // Before CUDA 13 the version was a small counter (v28 = 12.9 Update 1); from 13.0 on it is
    // MMmmpp (cupti_version.h).
    if (built < 100000 || runtime < 100000) {
        return built == runtime;
    }
    return built / 10000 == runtime / 10000;
}

CuptiStart startCupti(Agent& agent, bool wantOomCallbacks) {
    CuptiStart s;
    g_agent = &agent;
    if (cuptiGetVersion(&s.version) != CUPTI_SUCCESS) {
        s.error = "cannot read the CUPTI version";
        return s;
    }
    if (!cuptiVersionCompatible(CUPTI_API_VERSION, s.version)) {
        s.error = "the process uses CUPTI API version " + std::to_string(s.version) +
                  " but the agent was built for " + std::to_string(CUPTI_API_VERSION) +
                  " (rebuild vramscope against the CUDA toolkit the job uses)";
        return s;
    }
    if (wantOomCallbacks) {
        const CUptiResult rc = cuptiSubscribe(&g_subscriber, apiCallback, nullptr);
        if (rc == CUPTI_SUCCESS) {
            s.oomCallbacks = enableOomCallbacks();
        } else if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
            g_subscriber = nullptr;
            s.warning =
                "another CUPTI tool (torch.profiler, Nsight, cuda-gdb, ...) holds the callback "
                "API; recording activity records only, without out-of-memory events";
        } else {
            s.error = "CUPTI could not start: " + resultText(rc);
            return s;
        }
    }
    CUptiResult rc = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
    if (rc != CUPTI_SUCCESS) {
        s.error = "cannot register CUPTI activity buffers: " + resultText(rc);
        return s;
    }
    // NOTE(cupti): CONCURRENT_KERNEL, never KERNEL (KERNEL serialises kernel execution).
    static constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_MEMORY2,
                                                    CUPTI_ACTIVITY_KIND_MEMORY_POOL,
                                                    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                    CUPTI_ACTIVITY_KIND_MEMCPY,
                                                    CUPTI_ACTIVITY_KIND_MEMSET,
                                                    CUPTI_ACTIVITY_KIND_MARKER};
    for (CUpti_ActivityKind kind : kKinds) {
        rc = cuptiActivityEnable(kind);
        if (rc != CUPTI_SUCCESS) {
            for (CUpti_ActivityKind k : kKinds) {
                cuptiActivityDisable(k);
            }
            s.error = "cannot enable CUPTI activity kind " +
                      std::to_string(static_cast<int>(kind)) + ": " + resultText(rc);
            return s;
        }
    }
    s.ok = true;
    return s;
}

void flushCupti(bool forced) {
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

int64_t cuptiNowNs() {
    uint64_t t = 0;
    if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS) {
        return 0;
    }
    return static_cast<int64_t>(t);
}

int forwardNvtxInitialization(const void* getExportTable) {
    using InitFn = int (*)(const void*);
    void* handle = boundCuptiHandle();
    if (handle == nullptr) {
        return 0;
    }
    auto init = reinterpret_cast<InitFn>(dlsym(handle, "InitializeInjectionNvtx2"));
    return init == nullptr ? 0 : init(getExportTable);
}

int forwardNvtxExtensionInitialization(void* moduleInfo) {
    using InitFn = int (*)(void*);
    void* handle = boundCuptiHandle();
    if (handle == nullptr) {
        return 0;
    }
    auto init = reinterpret_cast<InitFn>(dlsym(handle, "InitializeInjectionNvtxExtension"));
    return init == nullptr ? 0 : init(moduleInfo);
}

}  // namespace vramscope::capture
