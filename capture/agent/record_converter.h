#pragma once
// CUPTI activity records -> rows of a trace::TraceData.
//
// A plain class over record structs: no CUPTI calls, no I/O, no threads, so that tests feed it
// constructed records. The agent calls it from its buffer-completed callback (under one mutex).

#include <cupti_activity.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "vramscope/trace/data_loss.h"
#include "vramscope/trace/kernel_names.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::capture {

/// How many records of each kind a converter saw (and how many it could not use).
struct ConversionStats {
    uint64_t records = 0;         ///< every record handed in
    uint64_t memory = 0;          ///< MEMORY2 records turned into memory events
    uint64_t memoryPool = 0;      ///< MEMORY_POOL records
    uint64_t kernels = 0;         ///< CONCURRENT_KERNEL records turned into kernel rows
    uint64_t memcpys = 0;         ///< MEMCPY records turned into rows
    uint64_t memsets = 0;         ///< MEMSET records turned into rows
    uint64_t withoutTime = 0;     ///< kernel/memcpy/memset records dropped: start 0 or end < start
    uint64_t markers = 0;         ///< MARKER records
    uint64_t libraryMarkers = 0;  ///< MARKER records of library NVTX domains, filtered out
    uint64_t ranges = 0;          ///< NVTX ranges completed (start and end seen)
    uint64_t lateStarts = 0;      ///< ranges completed by a START that came after its END
    uint64_t unmatchedEnds = 0;   ///< NVTX END markers whose START never came (or not held)
    uint64_t poolGrowths = 0;     ///< Reserved pool allocs emitted for pool growth
    uint64_t poolShrinks = 0;     ///< Reserved pool frees emitted for pool shrink or destroy
    uint64_t ignored = 0;         ///< records of kinds not converted
};

/// What the converter keeps beyond the default (the agent sets it from its environment).
struct ConverterOptions {
    /// Keep NVTX markers of library domains (isLibraryNvtxDomain); VRAMSCOPE_NVTX_LIBRARIES=1.
    bool keepLibraryNvtx = false;
    /// END markers held while their START has not arrived; beyond it they count as unmatched.
    size_t maxHeldEnds = 65'536;
};

/// What a record kind is called in data-loss records ("kernel records", "memory records", ...).
const char* recordKindName(CUpti_ActivityKind kind);

/// True for NCCL / RCCL kernels, mangled or not: the rule the importers use too
/// (trace/kernel_names.h, docs/DESIGN.md "NCCL collectives").
using trace::isCommunicationKernel;

/// True for NVTX domains that libraries register for their own annotations, not the
/// application's: names starting, case-insensitively, with NCCL, aws-ofi-nccl, cuBLAS (also
/// cuBLASLt), cuDNN, CUPTI, cuFFT, cuSPARSE, cuSOLVER, cuRAND, cuTENSOR, nvJPEG, NPP, nvCOMP,
/// TensorRT, NVSHMEM or CCCL (CUB/Thrust). Sources: NCCL registers "NCCL" (src/include/nvtx.h),
/// CCCL "CCCL" (cub/detail/nvtx.cuh in the CUDA 13.0 toolkit); the others are matched on their
/// library's name as a prefix, since their exact domain strings are not documented. The default
/// domain (nullptr or "") is the application's.
bool isLibraryNvtxDomain(const char* domain);

/// Converts CUPTI records into `out` (events are appended, strings interned in `out`). Keeps the
/// state that spans records: open NVTX ranges per thread, held END markers, the memory pools'
/// sizes and growths.
/// Not thread-safe; one converter per trace.
///
/// Mapping (docs/DESIGN.md "Two levels of GPU memory"):
/// - MEMORY2 (CUpti_ActivityMemory4): device memory that is not from a memory pool (cudaMalloc,
///   cuMemAlloc) -> MemoryLevel::Reserved, MemoryKind::Device; pool memory (cudaMallocAsync, any
///   record with isAsync or a memory-pool type) -> Allocated, Pool; DEVICE_STATIC (module globals)
///   -> Reserved, DeviceStatic; MANAGED -> Reserved, Managed; PINNED and PAGEABLE are host memory
///   -> device kHostDevice. Each pool allocation also updates a counter "cuda memory pool bytes"
///   (the pool size CUPTI reports, summed over the device's pools).
/// - MEMORY_POOL (CUpti_ActivityMemoryPool3): updates the same pool-size counter.
/// - CONCURRENT_KERNEL (CUpti_ActivityKernel10): KernelEvent with the demangled name, category
///   Communication for NCCL kernels, launchNs = the queued time when CUPTI measured it.
/// - MEMCPY (CUpti_ActivityMemcpy6) / MEMSET (CUpti_ActivityMemset4): KernelEvent of category
///   Memcpy / Memset with bytes, named "Memcpy HtoD" etc.
/// - Pool growth (per-tensor mode, PyTorch backend:cudaMallocAsync): the pool size a pool's
///   MEMORY2 records carry (memoryPoolConfig.pool.size, LOCAL pools) and MEMORY_POOL records
///   (CREATED/TRIMMED: size, DESTROYED: 0) become Reserved-level Pool events, so that reserved is
///   the pools' size and never below allocated: growth by N bytes = an alloc of N bytes at the
///   synthetic address pool address + previous size (inside the pool's address range); a shrink
///   frees the latest growths first (LIFO per pool), and a growth only partly given back is
///   freed whole and its kept part allocated again at the same address and time, so that every
///   free matches an earlier alloc by address and size. The addresses are bookkeeping, not the
///   physical layout of the pool.
/// - MARKER (CUpti_ActivityMarker2): START/END pairs (push/pop and start/end ranges, matched by
///   id) become one RangeEvent (kind Nvtx) whose depth is the number of ranges open on the
///   starting thread when it started (also for a range ended on another thread);
///   INSTANTANEOUS markers become zero-length ranges. An END whose START has not arrived yet
///   (buffers of different threads arrive in any order) is held by id (at most maxHeldEnds) and
///   the range is completed when the START arrives. Markers of library domains
///   (isLibraryNvtxDomain) are dropped and counted in stats().libraryMarkers unless
///   keepLibraryNvtx.
/// - Kernel, memcpy and memset records with start == 0 or end < start (CUPTI writes 0 when it
///   could not take the time) are dropped, counted in stats().withoutTime and handed out by
///   takeDataLoss() as cupti_records_without_time, never stored at t = 0.
/// Timestamps are CUPTI's, in ns, unchanged.
class RecordConverter {
public:
    explicit RecordConverter(trace::TraceData& out, ConverterOptions options = {});

    /// Converts one record; kinds not listed above are counted in stats().ignored.
    void convert(const CUpti_Activity& record);
    /// Emits every NVTX range still open, ending at `endNs` (at exit, so that an interrupted
    /// iteration still shows), and counts the END markers still held as unmatched. Returns how
    /// many ranges were closed.
    size_t closeOpenRanges(trace::TimestampNs endNs);
    /// Appends one DataLoss per record kind (reason "kernel records", ...) with the records
    /// dropped for want of a time since the previous call (LossCounter::CuptiRecordsWithoutTime);
    /// appends nothing when none was dropped.
    void takeDataLoss(std::vector<trace::DataLoss>& out);

    const ConversionStats& stats() const { return m_stats; }
    const ConverterOptions& options() const { return m_options; }
    /// Largest timestamp seen in any record, 0 before the first.
    trace::TimestampNs lastTimestampNs() const { return m_lastNs; }
    size_t openRangeCount() const { return m_open.size(); }
    /// END markers waiting for their START.
    size_t heldEndCount() const { return m_heldEnds.size(); }

private:
    struct OpenRange {
        trace::TimestampNs startNs = 0;
        trace::StringId name = 0;
        uint64_t threadId = 0;
        uint32_t depth = 0;
    };
    struct PoolGrowth {
        uint64_t address = 0;
        uint64_t bytes = 0;
    };
    struct PoolState {
        uint64_t bytes = 0;               ///< the pool's size as last reported
        std::vector<PoolGrowth> growths;  ///< Reserved allocs alive, oldest first
    };
    struct KernelName {
        std::string mangled;
        trace::StringId id = 0;
        bool communication = false;
    };

    void convertMemory(const CUpti_ActivityMemory4& r);
    void convertMemoryPool(const CUpti_ActivityMemoryPool3& r);
    void convertKernel(const CUpti_ActivityKernel10& r);
    void convertMemcpy(const CUpti_ActivityMemcpy6& r);
    void convertMemset(const CUpti_ActivityMemset4& r);
    void convertMarker(const CUpti_ActivityMarker2& r);
    const KernelName& kernelName(const char* name);
    void updatePool(trace::TimestampNs t, trace::DeviceIndex device, uint64_t poolAddress,
                    uint64_t poolBytes);
    void emitPoolEvent(trace::TimestampNs t, trace::DeviceIndex device, trace::MemoryAction action,
                       const PoolGrowth& g);
    bool hasTime(uint64_t start, uint64_t end, CUpti_ActivityKind kind);
    void startMarker(const CUpti_ActivityMarker2& r, uint64_t thread, bool library);
    void endMarker(const CUpti_ActivityMarker2& r);
    void emitRange(const OpenRange& open, trace::TimestampNs endNs);
    void seen(uint64_t timestampNs);

    trace::TraceData& m_out;
    ConverterOptions m_options;
    ConversionStats m_stats;
    trace::TimestampNs m_lastNs = 0;
    std::unordered_map<uint32_t, OpenRange> m_open;               ///< by marker id
    std::unordered_map<uint32_t, trace::TimestampNs> m_heldEnds;  ///< END time by marker id
    std::unordered_set<uint32_t> m_filteredOpen;  ///< library ranges started, END not yet seen
    std::unordered_map<uint64_t, uint32_t> m_depthByThread;     ///< open ranges per thread
    std::unordered_map<const char*, KernelName> m_kernelNames;  ///< CUPTI shares name pointers
    std::unordered_map<trace::DeviceIndex, std::unordered_map<uint64_t, PoolState>> m_pools;
    std::unordered_map<trace::DeviceIndex, uint64_t> m_poolTotal;
    std::unordered_map<uint32_t, uint64_t> m_withoutTimeByKind;  ///< not yet taken, by kind
    trace::StringId m_poolCounterName = 0;
};

}  // namespace vramscope::capture
