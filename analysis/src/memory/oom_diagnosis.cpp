#include "vramscope/analysis/memory/oom_diagnosis.h"

#include "vramscope/analysis/memory/segments.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {

namespace {

std::string bytes(int64_t v) {
    return formatBytes(double(v));
}

const char* const kLimits =
    "a per-process memory fraction (torch.cuda.set_per_process_memory_fraction), a MIG slice, "
    "another process on the GPU, or a container limit";

}  // namespace

SegmentFreeSpace segmentFreeSpaceAt(const trace::TraceData& data, const AllocationIndex& segments,
                                    const AllocationIndex& blocks, trace::TimestampNs t) {
    SegmentFreeSpace out;
    const SegmentLayout layout = segmentLayoutAt(data, segments, blocks, t);
    if (layout.known) {
        out.segments = layout.totals.segments;
        out.largestFreeBlockBytes = layout.totals.largestFreeBlockBytes;
        out.freeBytes = layout.totals.freeBytes;
    }
    return out;
}

const char* toString(OomCause cause) {
    switch (cause) {
        case OomCause::LimitBelowDevice:
            return "limit-below-device";
        case OomCause::Fragmentation:
            return "fragmentation";
        case OomCause::DeviceFull:
            return "device-full";
        case OomCause::Unknown:
            return "unknown";
    }
    return "unknown";
}

OomDiagnosis diagnoseOom(const OomFacts& o, uint64_t capacityBytes) {
    OomDiagnosis d;
    const int64_t request = allocationBytes(o.requestedBytes);
    const bool reservedKnown = o.reservedBytes >= 0;
    const int64_t freeReserved =
        reservedKnown && o.allocatedBytes >= 0 ? o.reservedBytes - o.allocatedBytes : -1;
    d.fragmented = o.largestFreeBlockBytes >= 0 && freeReserved >= 0 &&
                   o.largestFreeBlockBytes < request && freeReserved >= request;
    const std::string fragmentation =
        bytes(freeReserved) +
        " was free inside the reserved segments (reserved - allocated) but "
        "the largest free block there was " +
        bytes(o.largestFreeBlockBytes) + ", smaller than the request";
    const int64_t wanted = reservedKnown ? o.reservedBytes + request : -1;
    const double share =
        capacityBytes > 0 && reservedKnown ? double(wanted) / double(capacityBytes) : -1.0;
    const std::string sum = reservedKnown ? "reserved " + bytes(o.reservedBytes) + " + request " +
                                                bytes(request) + " = " + bytes(wanted)
                                          : std::string();
    const std::string ofCapacity = share >= 0
                                       ? sum + ", " + formatPercent(share) + " of the capacity " +
                                             formatBytes(double(capacityBytes))
                                       : std::string();
    const bool deviceHadRoom = o.freeBytes > 0 && o.freeBytes > o.requestedBytes;
    if (deviceHadRoom || (share >= 0 && share <= kOomBelowDeviceShare)) {
        d.cause = OomCause::LimitBelowDevice;
        d.explanation = deviceHadRoom
                            ? "the device itself had room: it reported " +
                                  formatBytes(double(o.freeBytes)) + " free, more than the " +
                                  bytes(request) + " requested" +
                                  (share >= 0      ? " (" + ofCapacity + ")"
                                   : reservedKnown ? " (" + sum + ")"
                                                   : "")
                            : ofCapacity + ", well below the device";
        d.explanation += ". A limit below the device was hit: " + std::string(kLimits) + ".";
        if (d.fragmented) {
            d.explanation += " Also " + fragmentation +
                             ", so the allocator had to reserve more (expandable_segments:True "
                             "lets it grow a segment instead).";
        }
    } else if (d.fragmented) {
        d.cause = OomCause::Fragmentation;
        d.explanation = "fragmentation: " + fragmentation +
                        ". Try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or "
                        "max_split_size_mb) so that freed memory can serve large requests.";
    } else if ((o.freeBytes > 0 && o.freeBytes <= o.requestedBytes) || share > 0) {
        d.cause = OomCause::DeviceFull;
        d.explanation =
            "the device was full: " +
            (share > 0 ? ofCapacity + " (more than " + formatPercent(kOomBelowDeviceShare, 0) + ")"
                       : "it reported " + formatBytes(double(o.freeBytes)) +
                             " free, less than the " + bytes(request) + " requested") +
            ".";
    } else {
        d.cause = OomCause::Unknown;
        d.explanation =
            "whether the device or a limit below it was full is unknown: the trace gives neither "
            "the device's capacity nor its free memory at the failure" +
            std::string(o.largestFreeBlockBytes < 0 ? ", nor the blocks inside its segments" : "") +
            ".";
    }
    return d;
}

}  // namespace vramscope::analysis
