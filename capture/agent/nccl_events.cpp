#include "nccl_events.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace vramscope::capture {

namespace {

// Drop reasons, in NcclRecorder::m_dropped order.
constexpr std::array<const char*, 6> kDropReasons = {
    "collectives: no free event handle",
    "point-to-point operations: no free event handle",
    "kernel-channel events: no free event handle",
    "proxy operations: no free event handle",
    "finished operations: the queue to the writer was full",
    "communicators: more than the table holds"};
constexpr size_t kDropColl = 0;
constexpr size_t kDropP2p = 1;
constexpr size_t kDropKernelCh = 2;
constexpr size_t kDropProxyOp = 3;
constexpr size_t kDropFinished = 4;
constexpr size_t kDropCommunicators = 5;

// profiler.h event type bits.
constexpr int kBitColl = 1 << 1;
constexpr int kBitP2p = 1 << 2;
constexpr int kBitProxyOp = 1 << 3;
constexpr int kBitKernelCh = 1 << 6;

void copyName(std::array<char, NcclFinishedOp::kNameChars>& to, const char* from) {
    to.fill('\0');
    if (from != nullptr) {
        // strnlen bounds the read: NCCL's names are static literals, but a bad pointer must not
        // make us read past a short buffer either.
        const size_t n = strnlen(from, to.size() - 1);
        std::memcpy(to.data(), from, n);
    }
}

std::string_view nameOf(const std::array<char, NcclFinishedOp::kNameChars>& a) {
    return {a.data(), strnlen(a.data(), a.size())};
}

bool isRooted(std::string_view function) {
    return function == "Broadcast" || function == "Reduce" || function == "Gather" ||
           function == "Scatter";
}

}  // namespace

uint32_t ncclDatatypeBytes(std::string_view t) {
    if (t == "ncclInt8" || t == "ncclChar" || t == "ncclUint8" || t == "ncclFloat8e4m3" ||
        t == "ncclFloat8e5m2") {
        return 1;
    }
    if (t == "ncclFloat16" || t == "ncclHalf" || t == "ncclBfloat16") {
        return 2;
    }
    if (t == "ncclInt32" || t == "ncclInt" || t == "ncclUint32" || t == "ncclFloat32" ||
        t == "ncclFloat") {
        return 4;
    }
    if (t == "ncclInt64" || t == "ncclUint64" || t == "ncclFloat64" || t == "ncclDouble") {
        return 8;
    }
    return 0;
}

std::optional<NcclEventMask> parseNcclEventMask(std::string_view text) {
    if (text == "off") {
        return NcclEventMask::Off;
    }
    if (text == "coll") {
        return NcclEventMask::Coll;
    }
    if (text == "full") {
        return NcclEventMask::Full;
    }
    return std::nullopt;
}

int ncclActivationBits(NcclEventMask mask) {
    switch (mask) {
        case NcclEventMask::Off:
            return 0;
        case NcclEventMask::Coll:
            return kBitColl | kBitP2p | kBitKernelCh;
        case NcclEventMask::Full:
            return kBitColl | kBitP2p | kBitKernelCh | kBitProxyOp;
    }
    return 0;
}

const char* toString(NcclEventMask mask) {
    switch (mask) {
        case NcclEventMask::Off:
            return "off";
        case NcclEventMask::Coll:
            return "coll";
        case NcclEventMask::Full:
            return "full";
    }
    return "coll";
}

enum class NcclRecorder::SlotKind : uint8_t { Free, Operation, KernelChannel, ProxyOp };

struct NcclRecorder::Comm {
    uint64_t hash = 0;
    int32_t rank = -1;
    int32_t nranks = 0;
    int32_t device = -1;
    bool finalized = false;
};

struct NcclRecorder::Slot {
    SlotKind kind = SlotKind::Free;
    uint32_t nextFree = 0;  ///< 1-based, 0 = end of the free list
    Comm* comm = nullptr;
    Slot* parent = nullptr;  ///< sub-events: their operation (nullptr once it was written)
    // operation
    NcclFinishedOp op;
    bool hostStopped = false;
    bool channelsLost = false;  ///< a kernel-channel event found no free handle
    uint32_t liveChildren = 0;
    uint32_t channelsStopped = 0;
    uint32_t stopsObserved = 0;  ///< kernel-channel stops seen by kernelChannelStopped
    uint64_t gpuFirst = 0;       ///< earliest channel start pTimer, 0 = none
    uint64_t gpuLast = 0;        ///< latest channel stop pTimer, 0 = none
    int64_t proxyFirst = std::numeric_limits<int64_t>::max();
    int64_t proxyLast = std::numeric_limits<int64_t>::min();
    int64_t hostStart = 0;
    int64_t hostStop = 0;
    // sub-events
    uint64_t gpuStart = 0;
    uint64_t gpuStop = 0;
    int64_t hostChildStart = 0;
};

NcclRecorder::NcclRecorder(NcclRecorderOptions options, Clock hostNowNs)
    : m_options(options), m_now(hostNowNs) {}

NcclRecorder::~NcclRecorder() = default;

NcclRecorder::Slot* NcclRecorder::slotOf(void* handle) const {
    if (handle == nullptr || !m_slots) {
        return nullptr;
    }
    // Handles are addresses inside our pool; anything else (another plugin's or another
    // process's object, a stale pointer from NCCL) is recognised by range, never dereferenced.
    const auto base = reinterpret_cast<uintptr_t>(m_slots.get());
    const auto p = reinterpret_cast<uintptr_t>(handle);
    if (p < base || p >= base + m_options.poolSlots * sizeof(Slot) ||
        (p - base) % sizeof(Slot) != 0) {
        return nullptr;
    }
    Slot* s = &m_slots[(p - base) / sizeof(Slot)];
    return s->kind == SlotKind::Free ? nullptr : s;
}

NcclRecorder::Comm* NcclRecorder::commOf(void* context) const {
    if (context == nullptr || !m_comms) {
        return nullptr;
    }
    const auto base = reinterpret_cast<uintptr_t>(m_comms.get());
    const auto p = reinterpret_cast<uintptr_t>(context);
    if (p < base || p >= base + m_commCount * sizeof(Comm) || (p - base) % sizeof(Comm) != 0) {
        return nullptr;
    }
    Comm* c = &m_comms[(p - base) / sizeof(Comm)];
    return c->finalized ? nullptr : c;
}

NcclRecorder::Slot* NcclRecorder::allocLocked(SlotKind kind) {
    if (m_freeHead == 0) {
        return nullptr;
    }
    Slot* s = &m_slots[m_freeHead - 1];
    m_freeHead = s->nextFree;
    *s = Slot{};
    s->kind = kind;
    ++m_inUse;
    return s;
}

bool NcclRecorder::evictOldestWaitingLocked() {
    // Only operations NCCL is done with on the host and whose sub-events are all over, that
    // wait for channel stops which may never come: the oldest of them is written as it is.
    Slot* oldest = nullptr;
    for (size_t i = 0; i < m_options.poolSlots; ++i) {
        Slot& s = m_slots[i];
        if (s.kind == SlotKind::Operation && s.hostStopped && s.liveChildren == 0 &&
            (oldest == nullptr || s.hostStart < oldest->hostStart)) {
            oldest = &s;
        }
    }
    if (oldest == nullptr) {
        return false;
    }
    finishLocked(oldest);
    return true;
}

void NcclRecorder::freeLocked(Slot* s) {
    s->kind = SlotKind::Free;
    s->nextFree = m_freeHead;
    m_freeHead = static_cast<uint32_t>(s - m_slots.get()) + 1;
    --m_inUse;
}

void NcclRecorder::countDropLocked(size_t reason) {
    ++m_dropped[reason];
}

void* NcclRecorder::initCommunicator(uint64_t hash, const char* name, int nNodes, int nranks,
                                     int rank, int device) {
    const int64_t now = m_now();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_slots) {
        m_slots = std::make_unique<Slot[]>(m_options.poolSlots);
        for (size_t i = 0; i < m_options.poolSlots; ++i) {
            m_slots[i].nextFree = i + 1 < m_options.poolSlots ? static_cast<uint32_t>(i + 2) : 0;
        }
        m_freeHead = m_options.poolSlots > 0 ? 1 : 0;
        m_comms = std::make_unique<Comm[]>(m_options.maxCommunicators);
    }
    if (m_commCount >= m_options.maxCommunicators) {
        countDropLocked(kDropCommunicators);
        return nullptr;
    }
    Comm& c = m_comms[m_commCount++];
    c = Comm{hash, rank, nranks, device, false};
    trace::Communicator info;
    info.hash = hash;
    info.rank = trace::RankId{rank};
    info.nranks = nranks;
    info.nodes = nNodes;
    if (name != nullptr) {
        info.name.assign(name, strnlen(name, 256));
    }
    info.initNs = now;
    info.device = trace::DeviceIndex{device};
    m_newComms.push_back(std::move(info));
    return &c;
}

void NcclRecorder::finalizeCommunicator(void* context) {
    std::lock_guard<std::mutex> lock(m_mutex);
    Comm* c = commOf(context);
    if (c == nullptr) {
        return;  // unknown, or finalized before
    }
    for (size_t i = 0; i < m_options.poolSlots; ++i) {
        Slot& s = m_slots[i];
        if (s.kind == SlotKind::Operation && s.comm == c) {
            finishLocked(&s);
        }
    }
    c->finalized = true;
}

void* NcclRecorder::startOperation(void* context, const NcclOpDescr& d) {
    const int64_t now = m_now();
    std::lock_guard<std::mutex> lock(m_mutex);
    Comm* c = commOf(context);
    if (c == nullptr) {
        return nullptr;
    }
    Slot* s = allocLocked(SlotKind::Operation);
    if (s == nullptr && evictOldestWaitingLocked()) {
        s = allocLocked(SlotKind::Operation);
    }
    if (s == nullptr) {
        countDropLocked(d.pointToPoint ? kDropP2p : kDropColl);
        return nullptr;
    }
    s->comm = c;
    s->hostStart = now;
    NcclFinishedOp& op = s->op;
    op.communicatorHash = c->hash;
    op.rank = c->rank;
    op.nranks = c->nranks;
    op.device = c->device;
    op.pointToPoint = d.pointToPoint;
    copyName(op.function, d.function);
    copyName(op.datatype, d.datatype);
    copyName(op.algorithm, d.algorithm);
    copyName(op.protocol, d.protocol);
    op.seqNumber = d.seqNumber;
    const uint32_t elementBytes = ncclDatatypeBytes(nameOf(op.datatype));
    op.bytes = elementBytes > 0 && d.count <= std::numeric_limits<uint64_t>::max() / elementBytes
                   ? d.count * elementBytes
                   : 0;
    op.peer = d.pointToPoint || isRooted(nameOf(op.function)) ? d.rootOrPeer : -1;
    op.channels = d.channels;
    op.enqueueNs = now;
    return s;
}

void* NcclRecorder::startKernelChannel(void* context, void* parent, uint8_t channel,
                                       uint64_t gpuNs) {
    (void)channel;
    std::lock_guard<std::mutex> lock(m_mutex);
    Slot* p = slotOf(parent);
    if (commOf(context) == nullptr || p == nullptr || p->kind != SlotKind::Operation) {
        return nullptr;
    }
    Slot* s = allocLocked(SlotKind::KernelChannel);
    if (s == nullptr) {
        countDropLocked(kDropKernelCh);
        p->channelsLost = true;
        return nullptr;
    }
    s->parent = p;
    s->gpuStart = gpuNs;
    ++p->liveChildren;
    if (gpuNs != 0 && (p->gpuFirst == 0 || gpuNs < p->gpuFirst)) {
        p->gpuFirst = gpuNs;
    }
    return s;
}

void* NcclRecorder::startProxyOp(void* context, void* parent, pid_t pid) {
    const int64_t now = m_now();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (pid != getpid()) {
        return nullptr;  // the parent handle lives in another process
    }
    Slot* p = slotOf(parent);
    if (commOf(context) == nullptr || p == nullptr || p->kind != SlotKind::Operation) {
        return nullptr;
    }
    Slot* s = allocLocked(SlotKind::ProxyOp);
    if (s == nullptr) {
        countDropLocked(kDropProxyOp);
        return nullptr;
    }
    s->parent = p;
    s->hostChildStart = now;
    ++p->liveChildren;
    return s;
}

void NcclRecorder::kernelChannelStopped(void* handle, uint64_t gpuNs) {
    std::lock_guard<std::mutex> lock(m_mutex);
    Slot* s = slotOf(handle);
    if (s == nullptr || s->kind != SlotKind::KernelChannel || gpuNs == 0) {
        return;
    }
    s->gpuStop = gpuNs;
    // One clock observation per operation (its first channel stop) is enough for the minimum
    // and keeps the clock reads off the other channels' callbacks.
    if (s->parent == nullptr || s->parent->stopsObserved++ > 0) {
        return;
    }
    const int64_t observed = m_now() - static_cast<int64_t>(gpuNs);
    if (!m_haveOffset || observed < m_offsetNs) {
        m_offsetNs = observed;
        m_haveOffset = true;
    }
}

void NcclRecorder::stop(void* handle) {
    std::lock_guard<std::mutex> lock(m_mutex);
    Slot* s = slotOf(handle);
    if (s == nullptr) {
        return;
    }
    if (s->kind == SlotKind::Operation) {
        if (!s->hostStopped) {
            s->hostStopped = true;
            s->hostStop = m_now();  // a vDSO clock read: no system call under the lock
            maybeFinishLocked(s);
        }
        return;
    }
    Slot* p = s->parent;
    if (p != nullptr) {
        if (s->kind == SlotKind::KernelChannel) {
            ++p->channelsStopped;  // over, with or without a GPU timer value
            p->gpuLast = std::max(p->gpuLast, s->gpuStop);
        } else {
            p->proxyFirst = std::min(p->proxyFirst, s->hostChildStart);
            p->proxyLast = std::max(p->proxyLast, m_now());
        }
        --p->liveChildren;
    }
    freeLocked(s);
    if (p != nullptr) {
        maybeFinishLocked(p);
    }
}

void NcclRecorder::maybeFinishLocked(Slot* op) {
    if (!op->hostStopped || op->liveChildren > 0) {
        return;
    }
    // NOTE(nccl): the Coll / P2p stop means "enqueued"; the operation is over when every channel
    // it runs on has reported its kernel-channel stop (as NCCL's inspector decides it: channels
    // completed == started == nChannels). Without kernel-channel events it is written at its stop.
    const bool expectChannels = (ncclActivationBits(m_options.mask) & kBitKernelCh) != 0 &&
                                op->op.channels > 0 && !op->channelsLost;
    if (expectChannels && op->channelsStopped < op->op.channels) {
        return;
    }
    finishLocked(op);
}

void NcclRecorder::finishLocked(Slot* s) {
    NcclFinishedOp& op = s->op;
    if (s->channelsStopped > 0 && s->gpuFirst != 0 && s->gpuLast >= s->gpuFirst && m_haveOffset) {
        op.startNs = static_cast<int64_t>(s->gpuFirst) + m_offsetNs;
        op.endNs = static_cast<int64_t>(s->gpuLast) + m_offsetNs;
        op.timing = trace::CollectiveTiming::KernelChannels;
    } else if (s->proxyFirst <= s->proxyLast) {
        op.startNs = s->proxyFirst;
        op.endNs = s->proxyLast;
        op.timing = trace::CollectiveTiming::Proxy;
    } else {
        op.startNs = s->hostStart;
        op.endNs = s->hostStopped ? s->hostStop : s->hostStart;
        op.timing = trace::CollectiveTiming::Host;
    }
    if (m_finished.size() < m_options.maxFinished) {
        m_finished.push_back(op);
    } else {
        countDropLocked(kDropFinished);
    }
    if (s->liveChildren > 0) {
        // Forced (finalize, exit): sub-events still open lose their parent and are freed at
        // their own stop.
        for (size_t i = 0; i < m_options.poolSlots; ++i) {
            if (m_slots[i].kind != SlotKind::Free && m_slots[i].parent == s) {
                m_slots[i].parent = nullptr;
            }
        }
    }
    freeLocked(s);
}

void NcclRecorder::takeInto(NcclTaken& out, bool final) {
    out.ops.clear();
    out.communicators.clear();
    out.dropped.clear();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (final && m_slots) {
        for (size_t i = 0; i < m_options.poolSlots; ++i) {
            if (m_slots[i].kind == SlotKind::Operation) {
                finishLocked(&m_slots[i]);
            }
        }
    }
    // Swapping hands the writer's emptied vector back, so the job side reuses its capacity.
    std::swap(out.ops, m_finished);
    std::swap(out.communicators, m_newComms);
    for (size_t i = 0; i < m_dropped.size(); ++i) {
        if (m_dropped[i] > 0) {
            out.dropped.emplace_back(kDropReasons[i], m_dropped[i]);
            m_dropped[i] = 0;
        }
    }
}

std::optional<int64_t> NcclRecorder::gpuToTraceOffsetNs() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_haveOffset ? std::optional<int64_t>(m_offsetNs) : std::nullopt;
}

size_t NcclRecorder::slotsInUse() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_inUse;
}

int32_t NcclRecorder::firstCommunicatorRank() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_commCount > 0 ? m_comms[0].rank : -1;
}

void appendNcclTaken(const NcclTaken& taken, trace::TraceData& out,
                     const std::function<trace::StringId(std::string_view)>& intern) {
    for (const NcclFinishedOp& op : taken.ops) {
        trace::CollectiveEvent e;
        e.startNs = op.startNs;
        e.endNs = op.endNs;
        e.device = trace::DeviceIndex{op.device >= 0 ? op.device : 0};
        e.communicatorHash = op.communicatorHash;
        e.rank = trace::RankId{op.rank};
        e.nranks = op.nranks;
        e.function = intern(nameOf(op.function));
        e.seqNumber = op.seqNumber;
        e.bytes = op.bytes;
        const auto optional = [&](const std::array<char, NcclFinishedOp::kNameChars>& a) {
            const std::string_view s = nameOf(a);
            return s.empty() ? trace::StringId{0} : intern(s);
        };
        e.datatype = optional(op.datatype);
        e.algorithm = optional(op.algorithm);
        e.protocol = optional(op.protocol);
        e.channels = op.channels;
        e.enqueueLeadNs = std::max<int64_t>(0, op.startNs - op.enqueueNs);
        e.peer = op.peer;
        e.timing = op.timing;
        out.collectives.append(e);
    }
    for (const trace::Communicator& c : taken.communicators) {
        out.communicators.push_back(c);
    }
    for (const auto& [reason, count] : taken.dropped) {
        out.dataLoss.push_back({trace::LossCounter::NcclEventsDropped, count, reason, 0, 0});
    }
}

}  // namespace vramscope::capture
