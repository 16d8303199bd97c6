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
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::capture {

/// How many records of each kind a converter saw (and how many it could not use).
struct ConversionStats {
    uint64_t records = 0;        ///< every record handed in
    uint64_t memory = 0;         ///< MEMORY2 records turned into memory events
    uint64_t memoryPool = 0;     ///< MEMORY_POOL records
    uint64_t kernels = 0;        ///< CONCURRENT_KERNEL records
    uint64_t memcpys = 0;        ///< MEMCPY records
    uint64_t memsets = 0;        ///< MEMSET records
    uint64_t markers = 0;        ///< MARKER records
    uint64_t ranges = 0;         ///< NVTX ranges completed (start and end seen)
    uint64_t unmatchedEnds = 0;  ///< NVTX end markers whose start was never seen
    uint64_t ignored = 0;        ///< records of kinds not converted
};

/// What a record kind is called in data-loss records ("kernel records", "memory records", ...).
const char* recordKindName(CUpti_ActivityKind kind);

/// True for NCCL / RCCL kernels: names containing ncclDevKernel_ (NCCL >= 2.19), ncclKernel_
/// (older) or ncclSymkDevKernel_ (DESIGN.md, NCCL facts), mangled or not.
bool isCommunicationKernel(std::string_view name);

/// Converts CUPTI records into `out` (events are appended, strings interned in `out`). Keeps the
/// state that spans records: open NVTX ranges per thread, the per-device memory-pool sizes.
/// Not thread-safe; one converter per trace.
///
/// Mapping (DESIGN.md "Two levels of GPU memory"):
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
/// - MARKER (CUpti_ActivityMarker2): START/END pairs (push/pop and start/end ranges, matched by
///   id) become one RangeEvent (kind Nvtx) whose depth is the number of ranges open on the
///   starting thread when it started; INSTANTANEOUS markers become zero-length ranges.
/// Timestamps are CUPTI's, in ns, unchanged.
class RecordConverter {
public:
    explicit RecordConverter(trace::TraceData& out);

    /// Converts one record; kinds not listed above are counted in stats().ignored.
    void convert(const CUpti_Activity& record);
    /// Emits every NVTX range still open, ending at `endNs` (at exit, so that an interrupted
    /// iteration still shows). Returns how many were closed.
    size_t closeOpenRanges(trace::TimestampNs endNs);

    const ConversionStats& stats() const { return m_stats; }
    /// Largest timestamp seen in any record, 0 before the first.
    trace::TimestampNs lastTimestampNs() const { return m_lastNs; }
    size_t openRangeCount() const { return m_open.size(); }

private:
    struct OpenRange {
        trace::TimestampNs startNs = 0;
        trace::StringId name = 0;
        uint64_t threadId = 0;
        uint32_t depth = 0;
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
    void updatePoolCounter(trace::TimestampNs t, trace::DeviceIndex device, uint64_t poolAddress,
                           uint64_t poolBytes);
    void seen(uint64_t timestampNs);

    trace::TraceData& m_out;
    ConversionStats m_stats;
    trace::TimestampNs m_lastNs = 0;
    std::unordered_map<uint32_t, OpenRange> m_open;             ///< by marker id
    std::unordered_map<uint64_t, uint32_t> m_depthByThread;     ///< open ranges per thread
    std::unordered_map<const char*, KernelName> m_kernelNames;  ///< CUPTI shares name pointers
    std::unordered_map<trace::DeviceIndex, std::unordered_map<uint64_t, uint64_t>> m_poolBytes;
    std::unordered_map<trace::DeviceIndex, uint64_t> m_poolTotal;
    trace::StringId m_poolCounterName = 0;
};

}  // namespace vramscope::capture
