#pragma once
// Why an allocation failed with out-of-memory: a limit below the device, fragmentation inside the
// reserved segments, or a full device, with the numbers each verdict rests on. Pure functions over
// plain data; what the oom advice, `check`'s oom rule and the report's OOM lines print.

#include <cstdint>
#include <string>

#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// Free space inside a device's reserved segments at one moment.
struct SegmentFreeSpace {
    /// The longest address range inside one segment that no live block covers; -1 = unknown.
    int64_t largestFreeBlockBytes = -1;
    int64_t freeBytes = -1;  ///< all such ranges together; -1 = unknown
    size_t segments = 0;     ///< reserved segments alive then
};

/// Free space inside the reserved segments at time t: the totals of segmentLayoutAt (segments.h,
/// where the rules are), which this only reads. Unknown (-1) whenever that layout is unknown.
SegmentFreeSpace segmentFreeSpaceAt(const trace::TraceData& data, const AllocationIndex& segments,
                                    const AllocationIndex& blocks, trace::TimestampNs t);

/// What made an allocation fail. toString(): "limit-below-device", "fragmentation",
/// "device-full", "unknown".
enum class OomCause { LimitBelowDevice, Fragmentation, DeviceFull, Unknown };
const char* toString(OomCause cause);

/// Reserved + request at most this share of the capacity reads as a limit below the device:
/// the CUDA context, cuBLAS/cuDNN workspaces and NCCL buffers live outside the allocator's
/// reserved bytes and take a few percent of a GPU, so a job that filled the device stops short of
/// 100 %, but not by a tenth.
inline constexpr double kOomBelowDeviceShare = 0.9;

/// The verdict on one OOM and the sentence that states it with its numbers.
struct OomDiagnosis {
    OomCause cause = OomCause::Unknown;
    /// The largest free block in the reserved segments was smaller than the request while the
    /// free reserved memory (reserved - allocated) was at least the request. May hold beside
    /// LimitBelowDevice (the allocator had to reserve more because of it, and the limit stopped
    /// that); it is the cause only when no limit below the device was seen.
    bool fragmented = false;
    std::string explanation;  ///< one or two sentences with the numbers, ending in "."
};

/// Decides, in this order:
/// 1. LimitBelowDevice: the device's free bytes the producer reported exceed the request, or
///    reserved + request <= kOomBelowDeviceShare x capacity (capacity and reserved known).
/// 2. Fragmentation: `fragmented` (largest free block and reserved - allocated known).
/// 3. DeviceFull: the device reported less free than the request, or reserved + request >
///    kOomBelowDeviceShare x capacity.
/// 4. Unknown: none of the numbers above is known.
/// `capacityBytes` 0 = unknown. Pure.
OomDiagnosis diagnoseOom(const OomFacts& oom, uint64_t capacityBytes);

}  // namespace vramscope::analysis
