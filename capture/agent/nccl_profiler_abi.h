#pragma once
// The NCCL profiler plugin ABI, as NCCL reads it from a plugin library: the function tables
// ncclProfiler_v4 / _v5 / _v6 and the event descriptors and state arguments they pass.
//
// Declared here in our own words from NCCL's public plugin headers (Apache-2.0), which fix the
// layouts; only the facts are taken (field order and types, enum values, call signatures):
//   - v4: NCCL 2.27, plugins/profiler/example/nccl/profiler_v4.h (ncclProfiler_v4_t,
//         ncclProfilerEventDescr_v4_t, ncclProfilerEventStateArgs_v4_t);
//   - v5: NCCL 2.28, plugins/profiler/example/nccl/profiler_v5.h (ncclProfiler_v5_t, ...);
//   - v6: NCCL 2.29, plugins/profiler/example/nccl/profiler_v6.h (v5 plus the copy-engine
//         descriptors ceColl, ceCollSync, ceCollBatch);
//   - event types and states: plugins/profiler/example/nccl/profiler.h;
//   - ncclResult_t: nccl/err.h; the logger: nccl/common.h.
// NCCL probes the plugin newest first (src/plugin/profiler.cc: getNcclProfiler_v6, then v5,
// then v4) by dlsym of the exported table's name.
//
// Only the x86-64 / aarch64 LP64 layout is supported: the static_asserts below are the offsets
// the C rules give there (natural alignment, pointers and size_t 8 bytes, int and pid_t 4, bool
// 1, an enum int-sized), worked out by hand in the comments. A header change on NCCL's side that
// moves a field breaks the build here rather than the reading of a job's events.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace vramscope::capture::nccl_abi {

/// ncclResult_t (nccl/err.h): a C enum, int-sized; 0 is ncclSuccess. The plugin returns
/// kSuccess from every entry point, even when recording failed (the job must not notice).
using Result = int;
inline constexpr Result kSuccess = 0;

/// ncclDebugLogger_t (nccl/common.h): level, subsystem flags, file, line, printf format.
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                             const char* fmt, ...);
/// ncclDebugLogLevel NCCL_LOG_INFO and subsystem NCCL_INIT (nccl/common.h).
inline constexpr int kLogInfo = 3;
inline constexpr unsigned long kLogSubsystemInit = 1;

/// Event type bits (profiler.h): the descriptor's `type`, and the activation mask init returns.
enum EventType : uint32_t {
    kEventGroup = 1u << 0,
    kEventColl = 1u << 1,
    kEventP2p = 1u << 2,
    kEventProxyOp = 1u << 3,
    kEventProxyStep = 1u << 4,
    kEventProxyCtrl = 1u << 5,
    kEventKernelCh = 1u << 6,
    kEventNetPlugin = 1u << 7,
    kEventGroupApi = 1u << 8,       // v5
    kEventCollApi = 1u << 9,        // v5
    kEventP2pApi = 1u << 10,        // v5
    kEventKernelLaunch = 1u << 11,  // v5
    kEventCeColl = 1u << 12,        // v6
    kEventCeSync = 1u << 13,        // v6
    kEventCeBatch = 1u << 14,       // v6
};

/// ncclProfilerEventState_t values the plugin reacts to (profiler.h); the type is an int-sized
/// C enum in every version.
using EventState = int;
/// recordEventState of a kernel-channel event: its argument carries the channel's stop pTimer.
inline constexpr EventState kStateKernelChStop = 22;
/// Proxy operation progress (v4+): the proxy op is moving data.
inline constexpr EventState kStateProxyOpInProgress = 19;

// --- descriptor parts shared by every version (the same field order in v4, v5, v6) ---

/// ncclProfileColl: one collective as the host enqueued it (src/plugin/profiler.cc
/// ncclProfilerStartTaskEvents: seqNumber = comm->seqNumber[func], func = ncclFuncToString,
/// count = the per-rank element count, datatype = ncclDatatypeToString, algo / proto =
/// ncclAlgoToString / ncclProtoToString). Layout: seqNumber 0, func 8, sendBuff 16, recvBuff 24,
/// count 32, root 40 (+4 padding), datatype 48, nChannels 56, nWarps 57 (+6), algo 64, proto 72;
/// 80 bytes in v4, where it ends.
struct CollDescrCore {
    uint64_t seqNumber;
    const char* func;
    const void* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
};
static_assert(offsetof(CollDescrCore, count) == 32 && offsetof(CollDescrCore, root) == 40 &&
              offsetof(CollDescrCore, datatype) == 48 && offsetof(CollDescrCore, nChannels) == 56 &&
              offsetof(CollDescrCore, algo) == 64 && sizeof(CollDescrCore) == 80);

/// ncclProfileColl in v5 / v6: v4's fields, then parentGroup (the group event's handle) at 80.
struct CollDescrV5 {
    CollDescrCore core;
    void* parentGroup;
};
static_assert(offsetof(CollDescrV5, parentGroup) == 80 && sizeof(CollDescrV5) == 88);

/// ncclProfileP2p: func ("Send" / "Recv") 0, buff 8, datatype 16, count 24, peer 32,
/// nChannels 36 (+3); 40 bytes in v4.
struct P2pDescrCore {
    const char* func;
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
};
static_assert(offsetof(P2pDescrCore, peer) == 32 && offsetof(P2pDescrCore, nChannels) == 36 &&
              sizeof(P2pDescrCore) == 40);

/// ncclProfileP2p in v5 / v6: then parentGroup at 40.
struct P2pDescrV5 {
    P2pDescrCore core;
    void* parentGroup;
};
static_assert(offsetof(P2pDescrV5, parentGroup) == 40 && sizeof(P2pDescrV5) == 48);

/// ncclProfileProxyOp: pid of the process that owns the parent event (a proxy can serve another
/// process; its parentObj is then not ours to read) 0, channelId 4, peer 8, nSteps 12,
/// chunkSize 16, isSend 20; 24 bytes.
struct ProxyOpDescr {
    pid_t pid;
    uint8_t channelId;
    int peer;
    int nSteps;
    int chunkSize;
    int isSend;
};
static_assert(offsetof(ProxyOpDescr, peer) == 8 && sizeof(ProxyOpDescr) == 24);

/// ncclProfileKernelCh: the channel and its start time from the GPU globaltimer (ns), read by
/// the proxy thread from the kernel's work counters (profiler.cc ncclProfilerStartKernelChEvent).
/// channelId 0 (+7), pTimer 8; 16 bytes.
struct KernelChDescr {
    uint8_t channelId;
    uint64_t pTimer;
};
static_assert(offsetof(KernelChDescr, pTimer) == 8 && sizeof(KernelChDescr) == 16);

/// ncclProfileCollApi (v5 / v6), not enabled by us; declared for the union's size only.
struct CollApiDescr {
    const char* func;
    size_t count;
    const char* datatype;
    int root;
    void* stream;
    bool graphCaptured;
};
static_assert(sizeof(CollApiDescr) == 48);

/// ncclProfileCeColl (v6), not enabled by us: seqNumber 0 ... datatype 48, syncStrategy 56,
/// intraBatchSync 64 (+3), batchSize 68, numBatches 72, ceSeqNum 76, stream 80; 88 bytes.
struct CeCollDescr {
    uint64_t seqNumber;
    const char* func;
    const void* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    const char* syncStrategy;
    bool intraBatchSync;
    uint32_t batchSize;
    uint32_t numBatches;
    uint32_t ceSeqNum;
    void* stream;
};
static_assert(offsetof(CeCollDescr, batchSize) == 68 && offsetof(CeCollDescr, stream) == 80 &&
              sizeof(CeCollDescr) == 88);

// --- small union members, named so that the layouts are standard C++ ---

/// v5/v6 groupApi: graphCaptured 0, groupDepth 4 (8 bytes).
struct GroupApiDescr {
    bool graphCaptured;
    int groupDepth;
};
static_assert(sizeof(GroupApiDescr) == 8);

/// v5 p2pApi: func 0, count 8, datatype 16, stream 24, graphCaptured 32 (40 bytes).
struct P2pApiDescr {
    const char* func;
    size_t count;
    const char* datatype;
    void* stream;
    bool graphCaptured;
};
static_assert(sizeof(P2pApiDescr) == 40);

/// v5 kernelLaunch: the stream of the launch (8 bytes).
struct KernelLaunchDescr {
    void* stream;
};
static_assert(sizeof(KernelLaunchDescr) == 8);

/// netPlugin: id 0, data 8 (16 bytes).
struct NetPluginDescr {
    int64_t id;
    void* data;
};
static_assert(sizeof(NetPluginDescr) == 16);

/// v6 ceCollSync: isComplete 0, nRanks 4 (8 bytes).
struct CeCollSyncDescr {
    bool isComplete;
    int nRanks;
};
static_assert(sizeof(CeCollSyncDescr) == 8);

/// v6 ceCollBatch: numOps 0, totalBytes 8, useIntraSync 16 (24 bytes).
struct CeCollBatchDescr {
    int numOps;
    size_t totalBytes;
    bool useIntraSync;
};
static_assert(sizeof(CeCollBatchDescr) == 24);

// --- the descriptors ---

/// ncclProfilerEventDescr_v4_t (NCCL 2.27): type is one byte there. type 0 (+7), parentObj 8,
/// rank 16 (+4), the union at 24 (8-aligned); the largest member is coll (80): 104 bytes.
struct EventDescrV4 {
    uint8_t type;
    void* parentObj;
    int rank;
    union {
        CollDescrCore coll;
        P2pDescrCore p2p;
        ProxyOpDescr proxyOp;
        int proxyStepStep;
        KernelChDescr kernelCh;
        NetPluginDescr netPlugin;
    };
};
static_assert(offsetof(EventDescrV4, parentObj) == 8 && offsetof(EventDescrV4, rank) == 16 &&
              offsetof(EventDescrV4, coll) == 24 && offsetof(EventDescrV4, kernelCh) == 24 &&
              sizeof(EventDescrV4) == 104);

/// ncclProfilerEventDescr_v5_t (NCCL 2.28): type is uint64_t; the union gains the API events
/// (groupApi, collApi, p2pApi, kernelLaunch) and coll / p2p gain parentGroup. type 0,
/// parentObj 8, rank 16 (+4), union at 24; largest member coll (88): 112 bytes.
struct EventDescrV5 {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        GroupApiDescr groupApi;
        CollApiDescr collApi;
        P2pApiDescr p2pApi;
        KernelLaunchDescr kernelLaunch;
        CollDescrV5 coll;
        P2pDescrV5 p2p;
        ProxyOpDescr proxyOp;
        int proxyStepStep;
        KernelChDescr kernelCh;
        NetPluginDescr netPlugin;
    };
};
static_assert(offsetof(EventDescrV5, coll) == 24 && offsetof(EventDescrV5, kernelCh) == 24 &&
              sizeof(EventDescrV5) == 112);

/// ncclProfilerEventDescr_v6_t (NCCL 2.29): v5 plus the copy-engine members (ceColl 88 bytes,
/// ceCollSync, ceCollBatch), so the union stays 88 bytes: 112 bytes.
struct EventDescrV6 {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        GroupApiDescr groupApi;
        CollApiDescr collApi;
        CollDescrV5 coll;
        P2pDescrV5 p2p;
        ProxyOpDescr proxyOp;
        int proxyStepStep;
        KernelChDescr kernelCh;
        NetPluginDescr netPlugin;
        CeCollDescr ceColl;
        CeCollSyncDescr ceCollSync;
        CeCollBatchDescr ceCollBatch;
    };
};
static_assert(offsetof(EventDescrV6, coll) == 24 && offsetof(EventDescrV6, ceColl) == 24 &&
              sizeof(EventDescrV6) == 112);

/// ncclProfilerEventStateArgs_v4_t = _v5_t = _v6_t: a union of 8-byte members (proxyStep
/// transSize, proxyCtrl appendedProxyOps, netPlugin data, kernelCh pTimer = the channel's stop
/// time from the GPU globaltimer, ns).
union EventStateArgs {
    size_t proxyStepTransSize;
    int proxyCtrlAppendedProxyOps;
    void* netPluginData;
    struct {
        uint64_t pTimer;
    } kernelCh;
};
static_assert(sizeof(EventStateArgs) == 8);

// --- the function tables (exported under the names ncclProfiler_v4 / _v5 / _v6) ---

/// ncclProfiler_v4_t: init(context, eActivationMask, commName, commHash, nNodes, nranks, rank,
/// logfn): note the mask comes before the name and the hash after it.
struct ProfilerV4 {
    const char* name;
    Result (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                   int nNodes, int nranks, int rank, DebugLogger logfn);
    Result (*startEvent)(void* context, void** eHandle, EventDescrV4* eDescr);
    Result (*stopEvent)(void* eHandle);
    Result (*recordEventState)(void* eHandle, EventState eState, EventStateArgs* eStateArgs);
    Result (*finalize)(void* context);
};

/// ncclProfiler_v5_t: init(context, commId, eActivationMask, commName, nNodes, nranks, rank,
/// logfn): the communicator id comes second.
struct ProfilerV5 {
    const char* name;
    Result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                   int nNodes, int nranks, int rank, DebugLogger logfn);
    Result (*startEvent)(void* context, void** eHandle, EventDescrV5* eDescr);
    Result (*stopEvent)(void* eHandle);
    Result (*recordEventState)(void* eHandle, EventState eState, EventStateArgs* eStateArgs);
    Result (*finalize)(void* context);
};

/// ncclProfiler_v6_t: v5's signatures over the v6 descriptor.
struct ProfilerV6 {
    const char* name;
    Result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                   int nNodes, int nranks, int rank, DebugLogger logfn);
    Result (*startEvent)(void* context, void** eHandle, EventDescrV6* eDescr);
    Result (*stopEvent)(void* eHandle);
    Result (*recordEventState)(void* eHandle, EventState eState, EventStateArgs* eStateArgs);
    Result (*finalize)(void* context);
};
// name 0, init 8, startEvent 16, stopEvent 24, recordEventState 32, finalize 40.
static_assert(offsetof(ProfilerV4, finalize) == 40 && sizeof(ProfilerV4) == 48);
static_assert(offsetof(ProfilerV5, finalize) == 40 && sizeof(ProfilerV5) == 48);
static_assert(offsetof(ProfilerV6, finalize) == 40 && sizeof(ProfilerV6) == 48);

}  // namespace vramscope::capture::nccl_abi
