#pragma once
// The NCCL profiler plugin's event assembly: communicators, collectives and point-to-point
// operations built from NCCL's start / stop / state events, with their execution interval.
//
// Thread-safe: NCCL calls from its host threads (collective and P2P events) and its proxy threads
// (kernel-channel and proxy-op events) at once; one mutex guards the event pool and is never held
// during I/O (the writer thread only swaps the finished operations out under it). Memory is
// bounded: event handles come from a fixed pool allocated at the first communicator, finished
// operations wait in a bounded list; what does not fit is dropped and counted, never waited for.
// No CUDA and no NCCL headers: the version-specific descriptors are translated by nccl_plugin.cpp.

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::capture {

/// Bytes per element of an NCCL datatype as NCCL names it in profiler descriptors
/// (src/collectives.cc ncclDatatypeToString; sizes from src/include/collectives.h ncclTypeSize):
/// ncclInt8 / ncclChar / ncclUint8 / ncclFloat8e4m3 / ncclFloat8e5m2 1, ncclFloat16 / ncclBfloat16
/// 2, ncclInt32 / ncclUint32 / ncclFloat32 4, ncclInt64 / ncclUint64 / ncclFloat64 8; 0 for any
/// other name. NOTE(nccl): ncclDatatypeToString has no case for ncclUint8 (it returns "Unknown"),
/// so uint8 messages arrive with unknown size.
uint32_t ncclDatatypeBytes(std::string_view datatype);

/// Which events the plugin asks NCCL for (VRAMSCOPE_NCCL).
enum class NcclEventMask : uint8_t {
    Off,   ///< nothing (init returns an empty mask)
    Coll,  ///< collectives, P2P and kernel channels (the default)
    Full,  ///< Coll plus proxy operations (a host-side timing fallback, more events)
};

/// "off" | "coll" | "full" (case-sensitive); nullopt for anything else.
std::optional<NcclEventMask> parseNcclEventMask(std::string_view text);
/// The NCCL activation bits of `mask` (profiler.h event types): Coll = ncclProfileColl |
/// ncclProfileP2p | ncclProfileKernelCh (2 | 4 | 64); Full adds ncclProfileProxyOp (8).
int ncclActivationBits(NcclEventMask mask);
const char* toString(NcclEventMask mask);

/// A collective or point-to-point operation's descriptor, version-neutral (the fields of
/// ncclProfileColl / ncclProfileP2p). Strings may be null.
struct NcclOpDescr {
    bool pointToPoint = false;
    const char* function = nullptr;   ///< "AllReduce", ..., "Send", "Recv"
    const char* datatype = nullptr;   ///< "ncclFloat32", ...
    const char* algorithm = nullptr;  ///< collectives only: "RING", "TREE", ...
    const char* protocol = nullptr;   ///< collectives only: "LL", "LL128", "SIMPLE"
    int64_t seqNumber = -1;           ///< collectives only (NCCL gives P2P none)
    uint64_t count = 0;               ///< elements (per rank for AllGather / ReduceScatter)
    int32_t rootOrPeer = -1;          ///< collective root, P2P peer
    uint32_t channels = 0;
};

/// A finished operation, waiting for the writer thread.
struct NcclFinishedOp {
    static constexpr size_t kNameChars = 24;
    uint64_t communicatorHash = 0;
    int32_t rank = -1;
    int32_t nranks = 0;
    int32_t device = -1;  ///< the communicator's GPU, -1 = unknown
    bool pointToPoint = false;
    std::array<char, kNameChars> function{};
    std::array<char, kNameChars> datatype{};
    std::array<char, kNameChars> algorithm{};
    std::array<char, kNameChars> protocol{};
    int64_t seqNumber = -1;
    uint64_t bytes = 0;  ///< count x datatype size, 0 = unknown
    int32_t peer = -1;   ///< root of a rooted collective or P2P peer, -1 = none
    uint32_t channels = 0;
    int64_t enqueueNs = 0;  ///< host time of the Coll / P2p start event, trace clock
    int64_t startNs = 0;    ///< execution interval, trace clock
    int64_t endNs = 0;
    trace::CollectiveTiming timing = trace::CollectiveTiming::Unknown;
};

/// What the writer takes out per round.
struct NcclTaken {
    std::vector<NcclFinishedOp> ops;
    std::vector<trace::Communicator> communicators;  ///< created since the last take
    /// Events dropped since the last take, per reason (a sentence naming the event kind and
    /// why: no free handle, the finished list full, too many communicators).
    std::vector<std::pair<std::string, uint64_t>> dropped;
};

struct NcclRecorderOptions {
    size_t poolSlots = 8192;         ///< event handles (operations waiting + live sub-events)
    size_t maxFinished = 65536;      ///< finished operations waiting for the writer
    size_t maxCommunicators = 1024;  ///< communicators per process
    NcclEventMask mask = NcclEventMask::Coll;
};

class NcclRecorder {
public:
    /// `hostNowNs` is the trace clock (the agent's: CUPTI's, or CLOCK_MONOTONIC without CUPTI).
    using Clock = int64_t (*)();
    NcclRecorder(NcclRecorderOptions options, Clock hostNowNs);
    ~NcclRecorder();
    NcclRecorder(const NcclRecorder&) = delete;
    NcclRecorder& operator=(const NcclRecorder&) = delete;

    /// A communicator (ncclProfiler init). Returns its context, or nullptr when the table is full
    /// (counted). `device` -1 = unknown.
    void* initCommunicator(uint64_t hash, const char* name, int nNodes, int nranks, int rank,
                           int device);
    /// ncclProfiler finalize: operations still waiting for kernel channels are written with the
    /// best timing they have; later events of the communicator are ignored. Twice is harmless.
    void finalizeCommunicator(void* context);

    /// ncclProfileColl / ncclProfileP2p start. Returns the handle NCCL passes back, nullptr when
    /// the context is unknown or finalized, or the pool is exhausted (counted). A full pool
    /// first gives up the oldest operation that only waits for channel stops (written as is).
    void* startOperation(void* context, const NcclOpDescr& descr);
    /// ncclProfileKernelCh start: `parent` is the operation's handle (eDescr->parentObj), `gpuNs`
    /// the channel's start pTimer. nullptr when the parent is not ours.
    void* startKernelChannel(void* context, void* parent, uint8_t channel, uint64_t gpuNs);
    /// ncclProfileProxyOp start; `pid` is the descriptor's (a parent of another process is not
    /// ours). nullptr when the parent is not ours.
    void* startProxyOp(void* context, void* parent, pid_t pid);
    /// recordEventState(ncclProfilerKernelChStop): the channel's stop pTimer. Also one
    /// observation for the GPU-to-trace clock offset (see gpuToTraceOffsetNs).
    void kernelChannelStopped(void* handle, uint64_t gpuNs);
    /// stopEvent of any handle this recorder gave out; unknown or stale handles are ignored.
    void stop(void* handle);

    /// Writer side: moves finished operations, new communicators and drop counts into `out`
    /// (cleared first). `final` first finishes every operation still waiting.
    void takeInto(NcclTaken& out, bool final);

    /// The offset added to GPU globaltimer ns to get trace ns: the minimum over kernel-channel
    /// stops (the first one reported of each operation) of (host time when NCCL reported the
    /// stop - the stop's pTimer). The host sees a stop
    /// only after it happened, so every observation is the true offset plus a non-negative delay
    /// and the minimum is the tightest bound; converted times are late by at most the smallest
    /// delay seen. nullopt before the first stop.
    std::optional<int64_t> gpuToTraceOffsetNs() const;
    /// Handles in use (tests).
    size_t slotsInUse() const;
    /// The rank of the first communicator, -1 before one (the file's rank when the environment
    /// gave none).
    int32_t firstCommunicatorRank() const;
    NcclEventMask mask() const { return m_options.mask; }

private:
    struct Comm;
    struct Slot;
    enum class SlotKind : uint8_t;

    Slot* slotOf(void* handle) const;
    Comm* commOf(void* context) const;
    Slot* allocLocked(SlotKind kind);
    /// With the pool full: writes the oldest operation that only waits for kernel-channel stops
    /// (stopped on the host, no live sub-event), freeing its handle. False when there is none.
    bool evictOldestWaitingLocked();
    void freeLocked(Slot* slot);
    void maybeFinishLocked(Slot* op);
    void finishLocked(Slot* op);
    void countDropLocked(size_t reason);

    const NcclRecorderOptions m_options;
    const Clock m_now;
    mutable std::mutex m_mutex;
    std::unique_ptr<Slot[]> m_slots;  ///< allocated at the first communicator
    uint32_t m_freeHead = 0;          ///< 1-based index of the first free slot, 0 = none
    size_t m_inUse = 0;
    std::unique_ptr<Comm[]> m_comms;
    size_t m_commCount = 0;
    std::vector<NcclFinishedOp> m_finished;
    std::vector<trace::Communicator> m_newComms;
    std::array<uint64_t, 6> m_dropped{};
    bool m_haveOffset = false;
    int64_t m_offsetNs = 0;
};

/// Appends what the writer took to `out`: one CollectiveEvent per operation (strings through
/// `intern`, which returns ids of `out`'s string table), the communicators, and one DataLoss
/// (nccl_events_dropped) per drop reason. `enqueueLeadNs` = start - enqueue, at least 0; `peer`
/// = the P2P peer, or the root of Broadcast / Reduce / Gather / Scatter; device 0 when the
/// communicator's GPU is unknown (NCCL runs one GPU per rank).
void appendNcclTaken(const NcclTaken& taken, trace::TraceData& out,
                     const std::function<trace::StringId(std::string_view)>& intern);

}  // namespace vramscope::capture
