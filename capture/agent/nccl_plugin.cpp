// The NCCL profiler plugin entry points of libvramscope_capture.so: the exported function tables
// ncclProfiler_v6 (NCCL 2.29+), ncclProfiler_v5 (2.28) and ncclProfiler_v4 (2.27), which NCCL
// finds by dlsym when NCCL_PROFILER_PLUGIN names this library, newest first.
//
// Every entry point returns ncclSuccess and lets no exception out: a failure to record leaves the
// job exactly as it would be without the plugin. The calls come from NCCL's host threads
// (communicator init, collective and P2P events) and its proxy threads (kernel-channel and proxy
// events); they only touch NcclRecorder (bounded, one short lock, no I/O).

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "agent.h"
#include "nccl_events.h"
#include "nccl_profiler_abi.h"

namespace abi = vramscope::capture::nccl_abi;
using vramscope::capture::NcclEventMask;
using vramscope::capture::NcclOpDescr;
using vramscope::capture::NcclRecorder;

namespace {

constexpr const char* kPluginName = "vramscope " VRAMSCOPE_VERSION;

std::atomic<NcclRecorder*> g_recorder{nullptr};

NcclEventMask configuredMask() {
    static const NcclEventMask mask = [] {
        const char* value = std::getenv(vramscope::capture::kEnvNccl);
        if (value == nullptr || *value == '\0') {
            return NcclEventMask::Coll;
        }
        if (auto parsed = vramscope::capture::parseNcclEventMask(value)) {
            return *parsed;
        }
        vramscope::capture::printNotice(std::string(vramscope::capture::kEnvNccl) + "=" + value +
                                        " is not off, coll or full; recording coll");
        return NcclEventMask::Coll;
    }();
    return mask;
}

/// The CUDA device current on this thread, only when the process already initialised CUDA:
/// libcuda is looked up with RTLD_NOLOAD (never loaded by us) and cuCtxGetDevice answers
/// CUDA_ERROR_NOT_INITIALIZED before cuInit, so no driver is started here. -1 = unknown.
int currentDeviceIfCudaRuns() {
    void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (cuda == nullptr) {
        return -1;
    }
    int device = -1;
    using CtxGetDevice = int (*)(int*);  // CUresult cuCtxGetDevice(CUdevice*); CUdevice is int
    if (auto fn = reinterpret_cast<CtxGetDevice>(dlsym(cuda, "cuCtxGetDevice"))) {
        if (fn(&device) != 0) {
            device = -1;
        }
    }
    dlclose(cuda);
    return device;
}

abi::Result initCommon(void** context, int* eActivationMask, uint64_t commId, const char* commName,
                       int nNodes, int nranks, int rank, abi::DebugLogger logfn) noexcept {
    try {
        if (context != nullptr) {
            *context = nullptr;
        }
        if (eActivationMask != nullptr) {
            *eActivationMask = 0;
        }
        if (context == nullptr || eActivationMask == nullptr) {
            return abi::kSuccess;
        }
        const NcclEventMask mask = configuredMask();
        if (mask == NcclEventMask::Off) {
            return abi::kSuccess;
        }
        NcclRecorder* recorder = vramscope::capture::Agent::instance().ncclRecorder(mask, rank);
        if (recorder == nullptr) {
            return abi::kSuccess;
        }
        g_recorder.store(recorder, std::memory_order_release);
        void* ctx = recorder->initCommunicator(commId, commName, nNodes, nranks, rank,
                                               currentDeviceIfCudaRuns());
        if (ctx == nullptr) {
            return abi::kSuccess;
        }
        *context = ctx;
        *eActivationMask = vramscope::capture::ncclActivationBits(recorder->mask());
        if (logfn != nullptr) {
            logfn(abi::kLogInfo, abi::kLogSubsystemInit, __FILE__, __LINE__,
                  "PROFILER/Plugin: %s records communicator %llx rank %d of %d (events %s)",
                  kPluginName, static_cast<unsigned long long>(commId), rank, nranks,
                  vramscope::capture::toString(recorder->mask()));
        }
    } catch (...) {
        if (context != nullptr) {
            *context = nullptr;
        }
        if (eActivationMask != nullptr) {
            *eActivationMask = 0;
        }
    }
    return abi::kSuccess;
}

const abi::CollDescrCore& collOf(const abi::EventDescrV4& d) {
    return d.coll;
}
const abi::CollDescrCore& collOf(const abi::EventDescrV5& d) {
    return d.coll.core;
}
const abi::CollDescrCore& collOf(const abi::EventDescrV6& d) {
    return d.coll.core;
}
const abi::P2pDescrCore& p2pOf(const abi::EventDescrV4& d) {
    return d.p2p;
}
const abi::P2pDescrCore& p2pOf(const abi::EventDescrV5& d) {
    return d.p2p.core;
}
const abi::P2pDescrCore& p2pOf(const abi::EventDescrV6& d) {
    return d.p2p.core;
}

template <class Descr>
abi::Result startCommon(void* context, void** eHandle, Descr* d) noexcept {
    if (eHandle == nullptr) {
        return abi::kSuccess;
    }
    *eHandle = nullptr;
    NcclRecorder* recorder = g_recorder.load(std::memory_order_acquire);
    if (recorder == nullptr || d == nullptr) {
        return abi::kSuccess;
    }
    try {
        const uint64_t type = d->type;
        if (type == abi::kEventColl) {
            const abi::CollDescrCore& c = collOf(*d);
            NcclOpDescr op;
            op.function = c.func;
            op.datatype = c.datatype;
            op.algorithm = c.algo;
            op.protocol = c.proto;
            op.seqNumber = static_cast<int64_t>(c.seqNumber);
            op.count = c.count;
            op.rootOrPeer = c.root;
            op.channels = c.nChannels;
            *eHandle = recorder->startOperation(context, op);
        } else if (type == abi::kEventP2p) {
            const abi::P2pDescrCore& p = p2pOf(*d);
            NcclOpDescr op;
            op.pointToPoint = true;
            op.function = p.func;
            op.datatype = p.datatype;
            op.count = p.count;
            op.rootOrPeer = p.peer;
            op.channels = p.nChannels;
            *eHandle = recorder->startOperation(context, op);
        } else if (type == abi::kEventKernelCh) {
            *eHandle = recorder->startKernelChannel(context, d->parentObj, d->kernelCh.channelId,
                                                    d->kernelCh.pTimer);
        } else if (type == abi::kEventProxyOp) {
            *eHandle = recorder->startProxyOp(context, d->parentObj, d->proxyOp.pid);
        }
        // Every other type (group events NCCL starts regardless of the mask, API events, proxy
        // steps, copy-engine events) gets no handle: NCCL skips stop / record for a null one.
    } catch (...) {
        *eHandle = nullptr;
    }
    return abi::kSuccess;
}

abi::Result initV4(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                   int nNodes, int nranks, int rank, abi::DebugLogger logfn) {
    return initCommon(context, eActivationMask, commHash, commName, nNodes, nranks, rank, logfn);
}

abi::Result initV5(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                   int nNodes, int nranks, int rank, abi::DebugLogger logfn) {
    return initCommon(context, eActivationMask, commId, commName, nNodes, nranks, rank, logfn);
}

abi::Result startV4(void* context, void** eHandle, abi::EventDescrV4* eDescr) {
    return startCommon(context, eHandle, eDescr);
}
abi::Result startV5(void* context, void** eHandle, abi::EventDescrV5* eDescr) {
    return startCommon(context, eHandle, eDescr);
}
abi::Result startV6(void* context, void** eHandle, abi::EventDescrV6* eDescr) {
    return startCommon(context, eHandle, eDescr);
}

abi::Result stopEvent(void* eHandle) {
    try {
        if (NcclRecorder* recorder = g_recorder.load(std::memory_order_acquire)) {
            recorder->stop(eHandle);
        }
    } catch (...) {
    }
    return abi::kSuccess;
}

abi::Result recordEventState(void* eHandle, abi::EventState eState,
                             abi::EventStateArgs* eStateArgs) {
    try {
        NcclRecorder* recorder = g_recorder.load(std::memory_order_acquire);
        if (recorder != nullptr && eState == abi::kStateKernelChStop && eStateArgs != nullptr) {
            recorder->kernelChannelStopped(eHandle, eStateArgs->kernelCh.pTimer);
        }
    } catch (...) {
    }
    return abi::kSuccess;
}

abi::Result finalize(void* context) {
    try {
        if (NcclRecorder* recorder = g_recorder.load(std::memory_order_acquire)) {
            recorder->finalizeCommunicator(context);
        }
    } catch (...) {
    }
    return abi::kSuccess;
}

}  // namespace

// Data symbols with C linkage (a braced extern "C" block: "extern" on an initialised variable
// would only warn).
extern "C" {
/// NCCL 2.29+ (profiler_v6.h).
__attribute__((visibility("default"))) abi::ProfilerV6 ncclProfiler_v6 = {
    kPluginName, initV5, startV6, stopEvent, recordEventState, finalize};
/// NCCL 2.28 (profiler_v5.h).
__attribute__((visibility("default"))) abi::ProfilerV5 ncclProfiler_v5 = {
    kPluginName, initV5, startV5, stopEvent, recordEventState, finalize};
/// NCCL 2.27 (profiler_v4.h).
__attribute__((visibility("default"))) abi::ProfilerV4 ncclProfiler_v4 = {
    kPluginName, initV4, startV4, stopEvent, recordEventState, finalize};
}
