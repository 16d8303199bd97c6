#pragma once
// In-memory form of one rank's trace: the header plus column-wise event tables.
//
// This is the single representation that the .vscope reader, every importer (PyTorch memory
// snapshot, Kineto JSON) and the capture agent's writer share. It is plain data: no Qt, no CUDA,
// no behaviour beyond appending rows and interning strings.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "vramscope/trace/data_loss.h"

namespace vramscope::trace {

/// Time in nanoseconds in the file's clock domain (see FileHeader::clockDomain).
using TimestampNs = int64_t;
/// Index into TraceData::strings. 0 is always the empty string ("no name").
using StringId = uint32_t;

// Ids are scoped enums with no enumerators: each is a distinct type that is as cheap as its
// integer, compares, hashes and keys a map, but does not convert to another id or to an integer,
// so passing a rank where a device index is expected does not compile. Make one with
// `DeviceIndex{3}`; get the integer back with toInt() where an integer is the point (printing,
// indexing a table, a protobuf field).

/// Index into TraceData::frames.
enum class FrameId : uint32_t {};
/// Index into TraceData::stacks. 0 is always the empty stack ("no stack").
enum class StackId : uint32_t {};
/// Device index as the producer numbers it (CUDA ordinal). -1 = host / no device.
enum class DeviceIndex : int32_t {};
/// Rank of a process in its job (torch.distributed's global rank, or the local rank on its host
/// where a field says so). -1 = unknown. Not a position in a list of ranks: that is a size_t.
enum class RankId : int32_t {};

/// The ids above, for toInt().
template <typename T>
concept StrongId = std::is_same_v<T, FrameId> || std::is_same_v<T, StackId> ||
    std::is_same_v<T, DeviceIndex> || std::is_same_v<T, RankId>;

/// The integer an id stands for (uint32_t for frame and stack ids, int32_t for devices and ranks).
template <StrongId Id>
constexpr std::underlying_type_t<Id> toInt(Id id) noexcept {
    return static_cast<std::underlying_type_t<Id>>(id);
}

inline constexpr RankId kUnknownRank{-1};
inline constexpr DeviceIndex kHostDevice{-1};

/// Which of the two levels of GPU memory an event belongs to (docs/DESIGN.md "Two levels of GPU
/// memory").
enum class MemoryLevel : uint8_t {
    Reserved =
        0,  ///< driver-level segments: cudaMalloc, PyTorch segment_alloc, Kineto Total Reserved
    Allocated = 1,  ///< tensor-level blocks: cudaMallocAsync, PyTorch allocator blocks
};

enum class MemoryAction : uint8_t { Alloc = 0, Free = 1 };

/// Where the memory lives, after CUPTI's CUpti_ActivityMemoryKind and PyTorch's pools.
enum class MemoryKind : uint8_t {
    Unknown = 0,
    Device = 1,        ///< plain device allocation (cudaMalloc / segment)
    DeviceStatic = 2,  ///< module globals: counted toward the device total, noise on a timeline
    Pool = 3,          ///< stream-ordered pool allocation (cudaMallocAsync)
    Managed = 4,
    Pinned = 5,
    Pageable = 6,
    PreExisting = 7,  ///< synthetic: memory alive before recording began (importers reconstruct it)
};

/// Kernel categories used by compute/communication/idle breakdowns.
enum class KernelCategory : uint8_t {
    Compute = 0,
    Communication = 1,  ///< NCCL / RCCL kernels
    Memcpy = 2,
    Memset = 3,
};

/// Meaning of a counter series. AllocatedBytes and ReservedBytes are GPU memory (on a device >=
/// 0); the Host kinds are the process's host memory (on kHostDevice) and never a GPU's.
enum class CounterKind : uint8_t {
    Generic = 0,
    AllocatedBytes = 1,  ///< the producer's own total allocated bytes (e.g. Kineto Total Allocated)
    ReservedBytes = 2,   ///< the producer's own total reserved bytes (e.g. Kineto Total Reserved)
    /// The process's resident host memory, bytes (the capture agent: /proc/self/statm resident
    /// pages x page size).
    HostResidentBytes = 3,
    /// The CPU allocator's total allocated bytes (Kineto `[memory]` of Device Type 0: Total
    /// Allocated, or the running sum of Bytes where the file has no totals).
    HostAllocatedBytes = 4,
    /// GPU memory this process holds on the device, bytes, as the driver's NVML reports it
    /// (nvmlDeviceGetComputeRunningProcesses, usedGpuMemory): the CUDA context, library
    /// workspaces, NCCL buffers and the allocator's segments together. A sample on a device the
    /// process never allocated on is a stray context. The capture agent samples it each flush
    /// period.
    ProcessGpuUsedBytes = 5,
    /// The device's used memory, bytes, all processes together (NVML nvmlDeviceGetMemoryInfo,
    /// used), sampled with ProcessGpuUsedBytes.
    DeviceGpuUsedBytes = 6,
};

/// Whether a counter of `kind` is GPU memory (AllocatedBytes, ReservedBytes): what the memory
/// timelines and every GPU analysis read. Host and generic counters are not.
constexpr bool isGpuMemoryCounter(CounterKind kind) noexcept {
    return kind == CounterKind::AllocatedBytes || kind == CounterKind::ReservedBytes;
}

/// Whether a counter of `kind` is the driver's view of GPU memory (ProcessGpuUsedBytes,
/// DeviceGpuUsedBytes): memory the allocator does not see included, so never summed with the
/// AllocatedBytes / ReservedBytes series.
constexpr bool isDriverGpuMemoryCounter(CounterKind kind) noexcept {
    return kind == CounterKind::ProcessGpuUsedBytes || kind == CounterKind::DeviceGpuUsedBytes;
}

/// Whether a counter of `kind` is host memory (HostResidentBytes, HostAllocatedBytes).
constexpr bool isHostMemoryCounter(CounterKind kind) noexcept {
    return kind == CounterKind::HostResidentBytes || kind == CounterKind::HostAllocatedBytes;
}

/// Where a collective's [startNs, endNs] comes from, best first (after the timing sources of
/// NCCL's inspector plugin: kernel-channel GPU timer, else proxy, else host).
enum class CollectiveTiming : uint8_t {
    Unknown = 0,
    /// The NCCL / RCCL kernel's own interval from a GPU activity record (CUPTI, Kineto, Nsight
    /// Systems): execution on the GPU, waiting for peers included.
    Kernel = 1,
    /// NCCL profiler kernel-channel events: first channel start to last channel stop of the GPU
    /// globaltimer, converted to the trace clock.
    KernelChannels = 2,
    /// NCCL profiler proxy operations (network progress on the host): first start to last stop.
    Proxy = 3,
    /// Host times only: enqueue (collective start) to the end NCCL reported on the host.
    Host = 4,
};

/// What an NVTX / annotation range is.
enum class RangeKind : uint8_t {
    Nvtx = 0,            ///< NVTX push/pop or start/end on a CPU thread
    UserAnnotation = 1,  ///< torch.profiler.record_function on the CPU
    GpuAnnotation = 2,   ///< gpu_user_annotation: the same range projected on the GPU timeline
    Iteration = 3,  ///< a training step (ProfilerStep#N, or "iteration N" named by the producer)
};

// Each event table below is a struct of equal-length columns, one per field of its row struct
// (MemoryEvent -> MemoryEvents, ...). Its columns are listed once, in a VRAMSCOPE_*_COLUMNS list
// in the row struct's field order; VRAMSCOPE_EVENT_TABLE declares one std::vector per entry and
// writes every per-column operation from that list: forEachColumn(visit), which calls
// visit(column, &Row::field) for each column in list order, forEachColumnMember (the same with
// the table's member pointer, to walk two tables side by side), and reserve, append, at, clear,
// keepRows (filter), columnsAgree and ==. A new field goes into its row struct and into the
// list; the .vscope codecs (chunk encoders and decoders) still name each column, since every
// column has its own field number, default and encoding in trace.proto.

/// One column of a table whose rows are `Row`: std::vector of the field's type.
#define VRAMSCOPE_DECLARE_COLUMN(field) std::vector<decltype(Row::field)> field;
/// Calls `visit` with a column's member pointer and the row member it holds.
#define VRAMSCOPE_VISIT_COLUMN(field) visit(&Self::field, &Row::field);
/// The columns of `Table` listed by COLUMNS, and the operations over all of them.
#define VRAMSCOPE_EVENT_TABLE(Table, COLUMNS)                                                 \
    COLUMNS(VRAMSCOPE_DECLARE_COLUMN)                                                         \
    /** Calls visit(&Table::column, &Row::field) for every column, in list order. */          \
    template <class Visit>                                                                    \
    static constexpr void forEachColumnMember(Visit&& visit) {                                \
        using Self = Table;                                                                   \
        COLUMNS(VRAMSCOPE_VISIT_COLUMN)                                                       \
    }                                                                                         \
    /** Calls visit(column, &Row::field) for every column, in list order. */                  \
    template <class Visit>                                                                    \
    void forEachColumn(Visit&& visit) {                                                       \
        forEachColumnMember([&](auto column, auto field) { visit(this->*column, field); });   \
    }                                                                                         \
    template <class Visit>                                                                    \
    void forEachColumn(Visit&& visit) const {                                                 \
        forEachColumnMember([&](auto column, auto field) { visit(this->*column, field); });   \
    }                                                                                         \
    /** Reserves room for `n` rows in every column. */                                        \
    void reserve(size_t n) {                                                                  \
        forEachColumn([n](auto& column, auto) { column.reserve(n); });                        \
    }                                                                                         \
    void append(const Row& row) {                                                             \
        forEachColumn([&row](auto& column, auto field) { column.push_back(row.*field); });    \
    }                                                                                         \
    /** Row i (i < size()). */                                                                \
    Row at(size_t i) const {                                                                  \
        Row row;                                                                              \
        forEachColumn([&row, i](const auto& column, auto field) { row.*field = column[i]; }); \
        return row;                                                                           \
    }                                                                                         \
    /** Removes every row; the columns keep their capacity. */                                \
    void clear() {                                                                            \
        forEachColumn([](auto& column, auto) { column.clear(); });                            \
    }                                                                                         \
    /** Keeps row i where keep[i] (keep has size() entries), in order. */                     \
    void keepRows(const std::vector<bool>& keep) {                                            \
        forEachColumn([&keep](auto& column, auto) {                                           \
            size_t out = 0;                                                                   \
            for (size_t i = 0; i < column.size(); ++i) {                                      \
                if (keep[i]) {                                                                \
                    column[out++] = column[i];                                                \
                }                                                                             \
            }                                                                                 \
            column.resize(out);                                                               \
        });                                                                                   \
    }                                                                                         \
    /** Whether every column has size() rows (a table filled by hand may not). */             \
    bool columnsAgree() const {                                                               \
        bool agree = true;                                                                    \
        forEachColumn([&agree, n = size()](const auto& column, auto) {                        \
            agree = agree && column.size() == n;                                              \
        });                                                                                   \
        return agree;                                                                         \
    }                                                                                         \
    bool operator==(const Table&) const = default;

/// One row of MemoryEvents, for appending and for reading a single event.
struct MemoryEvent {
    TimestampNs timestampNs = 0;
    uint64_t address = 0;
    uint64_t sizeBytes = 0;
    MemoryAction action = MemoryAction::Alloc;
    MemoryLevel level = MemoryLevel::Allocated;
    MemoryKind kind = MemoryKind::Unknown;
    DeviceIndex device{0};
    uint64_t stream = 0;
    StackId stack{0};        ///< 0 = no stack
    uint32_t nvtxRange = 0;  ///< 1-based index into TraceData::ranges, 0 = none

    bool operator==(const MemoryEvent&) const = default;
};

/// Column-wise memory events (alloc/free of an address and size): one column per MemoryEvent
/// field, in its order.
// clang-format off
#define VRAMSCOPE_MEMORY_COLUMNS(X) \
    X(timestampNs) \
    X(address) \
    X(sizeBytes) \
    X(action) \
    X(level) \
    X(kind) \
    X(device) \
    X(stream) \
    X(stack) \
    X(nvtxRange)
// clang-format on
struct MemoryEvents {
    using Row = MemoryEvent;
    VRAMSCOPE_EVENT_TABLE(MemoryEvents, VRAMSCOPE_MEMORY_COLUMNS)
    size_t size() const { return timestampNs.size(); }
};

/// One kernel, memcpy or memset on a device stream.
struct KernelEvent {
    TimestampNs startNs = 0;
    TimestampNs endNs = 0;
    DeviceIndex device{0};
    uint64_t stream = 0;
    StringId name = 0;
    KernelCategory category = KernelCategory::Compute;
    TimestampNs launchNs = -1;   ///< host launch time (cudaLaunchKernel start), -1 = unknown
    uint64_t bytes = 0;          ///< bytes moved, for memcpy / memset; 0 otherwise
    uint64_t correlationId = 0;  ///< producer's kernel <-> launch correlation, 0 = none
    /// The element type of the first tensor input of the matmul / convolution operator that
    /// launched the kernel, as the profiler wrote it ("float", "c10::BFloat16", "c10::Half"):
    /// Kineto's cpu_op `Input type`; 0 = unknown or not launched by such an operator.
    StringId operandType = 0;

    bool operator==(const KernelEvent&) const = default;
};

/// Column-wise kernels, memcpys and memsets: one column per KernelEvent field, in its order.
// clang-format off
#define VRAMSCOPE_KERNEL_COLUMNS(X) \
    X(startNs) \
    X(endNs) \
    X(device) \
    X(stream) \
    X(name) \
    X(category) \
    X(launchNs) \
    X(bytes) \
    X(correlationId) \
    X(operandType)
// clang-format on
struct KernelEvents {
    using Row = KernelEvent;
    VRAMSCOPE_EVENT_TABLE(KernelEvents, VRAMSCOPE_KERNEL_COLUMNS)
    size_t size() const { return startNs.size(); }
};

/// One NCCL / RCCL collective (or point-to-point) operation as seen by one rank.
/// The cross-rank key is (communicatorHash, function, seqNumber) (docs/DESIGN.md "NCCL
/// collectives").
struct CollectiveEvent {
    TimestampNs startNs = 0;
    TimestampNs endNs = 0;
    DeviceIndex device{0};
    uint64_t stream = 0;
    uint64_t communicatorHash = 0;  ///< 0 = unknown
    RankId rank = kUnknownRank;     ///< rank within the communicator
    int32_t nranks = 0;             ///< communicator size, 0 = unknown
    StringId function = 0;          ///< "AllReduce", "AllGather", ...
    int64_t seqNumber = -1;         ///< per-communicator sequence number, -1 = unknown
    uint64_t bytes = 0;             ///< message size in bytes
    StringId datatype = 0;
    StringId algorithm = 0;
    StringId protocol = 0;
    uint32_t channels = 0;  ///< NCCL channels the operation ran on, 0 = unknown
    /// startNs - the host time NCCL enqueued the operation (ncclProfileColl/P2p start), ns;
    /// -1 = unknown.
    int64_t enqueueLeadNs = -1;
    /// Root of Broadcast / Reduce, peer of Send / Recv (rank in the communicator); -1 = none or
    /// unknown.
    int32_t peer = -1;
    CollectiveTiming timing = CollectiveTiming::Unknown;

    bool operator==(const CollectiveEvent&) const = default;
};

/// A communicator as NCCL announced it to the profiler plugin (ncclProfiler init: commId /
/// commHash, nNodes, nranks, rank) or an importer found it (a process group).
struct Communicator {
    uint64_t hash = 0;                 ///< the key collectives carry in communicatorHash
    RankId rank = kUnknownRank;        ///< this process's rank in it
    int32_t nranks = 0;                ///< 0 = unknown
    int32_t nodes = 0;                 ///< hosts it spans, 0 = unknown
    std::string name;                  ///< user-assigned name (commName), may be empty
    TimestampNs initNs = 0;            ///< when it was created, trace clock; 0 = unknown
    DeviceIndex device = kHostDevice;  ///< the GPU it runs on, kHostDevice = unknown
};

/// Column-wise collectives: one column per CollectiveEvent field, in its order.
// clang-format off
#define VRAMSCOPE_COLLECTIVE_COLUMNS(X) \
    X(startNs) \
    X(endNs) \
    X(device) \
    X(stream) \
    X(communicatorHash) \
    X(rank) \
    X(nranks) \
    X(function) \
    X(seqNumber) \
    X(bytes) \
    X(datatype) \
    X(algorithm) \
    X(protocol) \
    X(channels) \
    X(enqueueLeadNs) \
    X(peer) \
    X(timing)
// clang-format on
struct CollectiveEvents {
    using Row = CollectiveEvent;
    VRAMSCOPE_EVENT_TABLE(CollectiveEvents, VRAMSCOPE_COLLECTIVE_COLUMNS)
    size_t size() const { return startNs.size(); }
};

/// An NVTX range, user annotation or iteration: [startNs, endNs) on a thread or a device.
struct RangeEvent {
    TimestampNs startNs = 0;
    TimestampNs endNs = 0;
    StringId name = 0;
    uint32_t depth = 0;     ///< nesting depth on its thread, 0 = outermost
    uint64_t threadId = 0;  ///< OS thread id for CPU ranges, 0 = unknown
    DeviceIndex device = kHostDevice;
    RangeKind kind = RangeKind::Nvtx;

    bool operator==(const RangeEvent&) const = default;
};

/// Column-wise NVTX ranges, annotations and iterations: one column per RangeEvent field.
// clang-format off
#define VRAMSCOPE_RANGE_COLUMNS(X) \
    X(startNs) \
    X(endNs) \
    X(name) \
    X(depth) \
    X(threadId) \
    X(device) \
    X(kind)
// clang-format on
struct RangeEvents {
    using Row = RangeEvent;
    VRAMSCOPE_EVENT_TABLE(RangeEvents, VRAMSCOPE_RANGE_COLUMNS)
    size_t size() const { return startNs.size(); }
};

/// A sampled value (e.g. the producer's total allocated bytes) at a time.
struct CounterSample {
    TimestampNs timestampNs = 0;
    StringId name = 0;
    DeviceIndex device = kHostDevice;
    CounterKind kind = CounterKind::Generic;
    double value = 0.0;

    bool operator==(const CounterSample&) const = default;
};

/// Column-wise counter samples: one column per CounterSample field.
// clang-format off
#define VRAMSCOPE_COUNTER_COLUMNS(X) \
    X(timestampNs) \
    X(name) \
    X(device) \
    X(kind) \
    X(value)
// clang-format on
struct CounterSamples {
    using Row = CounterSample;
    VRAMSCOPE_EVENT_TABLE(CounterSamples, VRAMSCOPE_COUNTER_COLUMNS)
    size_t size() const { return timestampNs.size(); }
};

/// A device allocation that failed with out-of-memory.
struct OomEvent {
    TimestampNs timestampNs = 0;
    DeviceIndex device{0};
    uint64_t stream = 0;
    uint64_t requestedBytes = 0;
    uint64_t freeBytes = 0;  ///< device free memory reported with the failure, 0 = unknown
};

/// A note a user pinned to a time range on a device (kHostDevice = all devices).
/// Fields beyond the first five carry a trace::Note (notes.h) through a .vscope file.
struct Annotation {
    TimestampNs startNs = 0;
    TimestampNs endNs = 0;
    DeviceIndex device = kHostDevice;
    std::string text;
    std::string author;
    std::string title;
    std::string color;  ///< "#rrggbb" or empty
    int64_t createdUnixMs = 0;
    uint64_t allocationAddress = 0;    ///< 0 = not pinned to an allocation
    TimestampNs allocationTimeNs = 0;  ///< trace clock
    std::string flameFrame;            ///< root first, ";"-joined; empty = none
    bool generated = false;
    std::string kind;
    std::string id;
    bool allRanks = false;  ///< with device == kHostDevice: every GPU of the job
};

/// One interned source frame (PyTorch snapshot frames carry name, filename, line).
struct Frame {
    StringId name = 0;
    StringId file = 0;
    int32_t line = 0;
    bool operator==(const Frame&) const = default;
};

/// A GPU the trace saw.
struct DeviceInfo {
    DeviceIndex index{0};
    std::string uuid;
    std::string name;
    uint64_t totalMemoryBytes = 0;  ///< capacity, 0 = unknown
};

/// Everything a .vscope header carries (docs/DESIGN.md "The trace file").
struct FileHeader {
    uint32_t formatMajor = 0;
    uint32_t formatMinor = 0;
    std::string producer;  ///< e.g. "vramscope-capture 0.1", "kineto-import"
    std::string host;
    int64_t pid = 0;
    RankId rank = kUnknownRank;
    RankId localRank = kUnknownRank;
    int32_t worldSize = 0;  ///< 0 = unknown
    std::string jobId;
    std::string clockDomain;  ///< e.g. "CLOCK_REALTIME", "kineto-us", "pytorch-snapshot-us"
    TimestampNs wallClockAnchorNs = 0;  ///< Unix ns at trace time anchorTraceNs, 0 = unknown
    TimestampNs anchorTraceNs = 0;
    std::vector<DeviceInfo> devices;
    std::vector<std::pair<std::string, std::string>> captureSettings;
};

/// One rank's whole trace in memory. Owns its strings; ids index the tables below.
class TraceData {
public:
    TraceData();

    FileHeader header;
    std::vector<std::string> strings;  ///< strings[0] == ""
    std::vector<Frame> frames;
    std::vector<std::vector<FrameId>>
        stacks;  ///< stacks[0] is empty; frames leaf (innermost) first
    MemoryEvents memory;
    KernelEvents kernels;
    CollectiveEvents collectives;
    RangeEvents ranges;
    CounterSamples counters;
    std::vector<OomEvent> ooms;
    std::vector<DataLoss> dataLoss;  ///< counters of the registry in data_loss.h
    std::vector<Annotation> annotations;
    std::vector<Communicator> communicators;  ///< in order of creation

    /// Returns the id of `s`, adding it to the string table the first time.
    StringId intern(std::string_view s);
    /// Returns the id of `f`, adding it the first time.
    FrameId internFrame(const Frame& f);
    /// Returns the id of a stack (frames leaf first), adding it the first time. Empty -> 0.
    StackId internStack(const std::vector<FrameId>& framesLeafFirst);

    std::string_view string(StringId id) const {
        return id < strings.size() ? std::string_view(strings[id]) : std::string_view();
    }
    /// Total events of every kind (memory, kernels, collectives, ranges, counters, OOMs).
    size_t eventCount() const;
    /// Looks up the device by index, nullptr when the header does not list it.
    const DeviceInfo* device(DeviceIndex index) const;

    /// Rebuilds the interning indexes after `strings`, `frames` or `stacks` were filled directly
    /// (as the reader does).
    void rebuildIndexes();

private:
    struct FrameHash {
        size_t operator()(const Frame& f) const noexcept;
    };
    struct StackHash {
        size_t operator()(const std::vector<FrameId>& s) const noexcept;
    };
    std::unordered_map<std::string, StringId> m_stringIndex;
    std::unordered_map<Frame, FrameId, FrameHash> m_frameIndex;
    std::unordered_map<std::vector<FrameId>, StackId, StackHash> m_stackIndex;
};

const char* toString(MemoryLevel level);
const char* toString(MemoryKind kind);
const char* toString(KernelCategory category);
const char* toString(RangeKind kind);

}  // namespace vramscope::trace
