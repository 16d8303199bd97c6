#include "record_converter.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace vramscope::capture {

namespace {

using trace::DeviceIndex;
using trace::KernelCategory;
using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;
using trace::TimestampNs;

uint64_t streamOf(uint32_t cuptiStreamId) {
    return cuptiStreamId == CUPTI_INVALID_STREAM_ID ? 0 : cuptiStreamId;
}

std::string demangle(const char* name) {
    int status = 0;
    char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status != 0 || out == nullptr) {
        std::free(out);
        return name;
    }
    std::string result(out);
    std::free(out);
    return result;
}

const char* memcpyName(uint8_t copyKind) {
    switch (copyKind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
            return "Memcpy HtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
            return "Memcpy DtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
            return "Memcpy HtoA";
        case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
            return "Memcpy AtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
            return "Memcpy AtoA";
        case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
            return "Memcpy AtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
            return "Memcpy DtoA";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
            return "Memcpy DtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
            return "Memcpy HtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
            return "Memcpy PtoP";
        default:
            return "Memcpy";
    }
}

}  // namespace

const char* recordKindName(CUpti_ActivityKind kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            return "memory records";
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
            return "memory pool records";
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            return "kernel records";
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            return "memcpy records";
        case CUPTI_ACTIVITY_KIND_MEMSET:
            return "memset records";
        case CUPTI_ACTIVITY_KIND_MARKER:
            return "NVTX marker records";
        default:
            return "other CUPTI records";
    }
}

bool isCommunicationKernel(std::string_view name) {
    // Only the start of the name matters, mangled (_Z29ncclDevKernel_...) or not.
    const std::string_view head = name.substr(0, 64);
    return head.find("ncclDevKernel_") != std::string_view::npos ||
           head.find("ncclKernel_") != std::string_view::npos ||
           head.find("ncclSymkDevKernel_") != std::string_view::npos;
}

RecordConverter::RecordConverter(trace::TraceData& out) : m_out(out) {}

void RecordConverter::seen(uint64_t timestampNs) {
    const auto t = static_cast<TimestampNs>(timestampNs);
    if (t > m_lastNs) {
        m_lastNs = t;
    }
}

void RecordConverter::convert(const CUpti_Activity& record) {
    ++m_stats.records;
    switch (record.kind) {
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            convertMemory(reinterpret_cast<const CUpti_ActivityMemory4&>(record));
            break;
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
            convertMemoryPool(reinterpret_cast<const CUpti_ActivityMemoryPool3&>(record));
            break;
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            convertKernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record));
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            convertMemcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record));
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            convertMemset(reinterpret_cast<const CUpti_ActivityMemset4&>(record));
            break;
        case CUPTI_ACTIVITY_KIND_MARKER:
            convertMarker(reinterpret_cast<const CUpti_ActivityMarker2&>(record));
            break;
        default:
            ++m_stats.ignored;
            break;
    }
}

void RecordConverter::convertMemory(const CUpti_ActivityMemory4& r) {
    ++m_stats.memory;
    seen(r.timestamp);
    trace::MemoryEvent e;
    e.timestampNs = static_cast<TimestampNs>(r.timestamp);
    e.address = r.address;
    e.sizeBytes = r.bytes;
    e.action = r.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                   ? MemoryAction::Free
                   : MemoryAction::Alloc;
    e.device = static_cast<DeviceIndex>(r.deviceId);
    e.stream = streamOf(r.streamId);
    const bool fromPool = r.isAsync != 0 || r.memoryPoolConfig.memoryPoolType !=
                                                CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    e.level = MemoryLevel::Reserved;
    switch (r.memoryKind) {
        case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
            e.kind = fromPool ? MemoryKind::Pool : MemoryKind::Device;
            e.level = fromPool ? MemoryLevel::Allocated : MemoryLevel::Reserved;
            break;
        case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
            e.kind = MemoryKind::DeviceStatic;
            break;
        case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
        case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
            e.kind = MemoryKind::Managed;
            break;
        case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
            e.kind = MemoryKind::Pinned;
            e.device = trace::kHostDevice;
            break;
        case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
            e.kind = MemoryKind::Pageable;
            e.device = trace::kHostDevice;
            break;
        default:
            e.kind = MemoryKind::Unknown;
            break;
    }
    m_out.memory.append(e);
    if (fromPool && r.memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
        updatePoolCounter(e.timestampNs, e.device, r.memoryPoolConfig.address,
                          r.memoryPoolConfig.pool.size);
    }
}

void RecordConverter::convertMemoryPool(const CUpti_ActivityMemoryPool3& r) {
    ++m_stats.memoryPool;
    seen(r.timestamp);
    const uint64_t bytes =
        r.memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED ? 0
                                                                                         : r.size;
    updatePoolCounter(static_cast<TimestampNs>(r.timestamp), static_cast<DeviceIndex>(r.deviceId),
                      r.address, bytes);
}

void RecordConverter::updatePoolCounter(TimestampNs t, DeviceIndex device, uint64_t poolAddress,
                                        uint64_t poolBytes) {
    uint64_t& known = m_poolBytes[device][poolAddress];
    if (known == poolBytes && poolBytes != 0) {
        return;
    }
    uint64_t& total = m_poolTotal[device];
    total = total - known + poolBytes;
    known = poolBytes;
    if (m_poolCounterName == 0) {
        m_poolCounterName = m_out.intern("cuda memory pool bytes");
    }
    trace::CounterSample s;
    s.timestampNs = t;
    s.name = m_poolCounterName;
    s.device = device;
    s.kind = trace::CounterKind::Generic;
    s.value = static_cast<double>(total);
    m_out.counters.append(s);
}

const RecordConverter::KernelName& RecordConverter::kernelName(const char* name) {
    if (name == nullptr) {
        name = "";
    }
    auto it = m_kernelNames.find(name);
    // NOTE(cupti): records of one kernel share one name pointer; the string is compared too in
    // case a pointer is reused after a module unload.
    if (it != m_kernelNames.end() && it->second.mangled == name) {
        return it->second;
    }
    KernelName k;
    k.mangled = name;
    k.communication = isCommunicationKernel(k.mangled);
    k.id = m_out.intern(demangle(name));
    return m_kernelNames.insert_or_assign(name, std::move(k)).first->second;
}

void RecordConverter::convertKernel(const CUpti_ActivityKernel10& r) {
    ++m_stats.kernels;
    seen(r.end);
    const KernelName& name = kernelName(r.name);
    trace::KernelEvent e;
    e.startNs = static_cast<TimestampNs>(r.start);
    e.endNs = static_cast<TimestampNs>(r.end);
    e.device = static_cast<DeviceIndex>(r.deviceId);
    e.stream = streamOf(r.streamId);
    e.name = name.id;
    e.category = name.communication ? KernelCategory::Communication : KernelCategory::Compute;
    e.launchNs = r.queued != CUPTI_TIMESTAMP_UNKNOWN ? static_cast<TimestampNs>(r.queued) : -1;
    e.correlationId = r.correlationId;
    m_out.kernels.append(e);
}

void RecordConverter::convertMemcpy(const CUpti_ActivityMemcpy6& r) {
    ++m_stats.memcpys;
    seen(r.end);
    trace::KernelEvent e;
    e.startNs = static_cast<TimestampNs>(r.start);
    e.endNs = static_cast<TimestampNs>(r.end);
    e.device = static_cast<DeviceIndex>(r.deviceId);
    e.stream = streamOf(r.streamId);
    e.name = m_out.intern(memcpyName(r.copyKind));
    e.category = KernelCategory::Memcpy;
    e.bytes = r.bytes;
    e.correlationId = r.correlationId;
    m_out.kernels.append(e);
}

void RecordConverter::convertMemset(const CUpti_ActivityMemset4& r) {
    ++m_stats.memsets;
    seen(r.end);
    trace::KernelEvent e;
    e.startNs = static_cast<TimestampNs>(r.start);
    e.endNs = static_cast<TimestampNs>(r.end);
    e.device = static_cast<DeviceIndex>(r.deviceId);
    e.stream = streamOf(r.streamId);
    e.name = m_out.intern("Memset");
    e.category = KernelCategory::Memset;
    e.bytes = r.bytes;
    e.correlationId = r.correlationId;
    m_out.kernels.append(e);
}

void RecordConverter::convertMarker(const CUpti_ActivityMarker2& r) {
    ++m_stats.markers;
    seen(r.timestamp);
    const auto t = static_cast<TimestampNs>(r.timestamp);
    // Process-scoped ranges (nvtxRangeStart/End may end on another thread) nest among themselves.
    const uint64_t thread =
        r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? r.objectId.pt.threadId : 0;
    if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0) {
        uint32_t& depth = m_depthByThread[thread];
        OpenRange open;
        open.startNs = t;
        open.name = m_out.intern(r.name != nullptr ? std::string_view(r.name) : "");
        open.threadId = thread;
        open.depth = depth++;
        m_open[r.id] = open;
        return;
    }
    if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0) {
        auto it = m_open.find(r.id);
        if (it == m_open.end()) {
            ++m_stats.unmatchedEnds;
            return;
        }
        const OpenRange open = it->second;
        m_open.erase(it);
        uint32_t& depth = m_depthByThread[open.threadId];
        if (depth > 0) {
            --depth;
        }
        trace::RangeEvent e;
        e.startNs = open.startNs;
        e.endNs = t >= open.startNs ? t : open.startNs;
        e.name = open.name;
        e.depth = open.depth;
        e.threadId = open.threadId;
        e.device = trace::kHostDevice;
        e.kind = trace::RangeKind::Nvtx;
        m_out.ranges.append(e);
        ++m_stats.ranges;
        return;
    }
    if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) != 0) {
        trace::RangeEvent e;
        e.startNs = t;
        e.endNs = t;
        e.name = m_out.intern(r.name != nullptr ? std::string_view(r.name) : "");
        e.depth = m_depthByThread[thread];
        e.threadId = thread;
        e.device = trace::kHostDevice;
        e.kind = trace::RangeKind::Nvtx;
        m_out.ranges.append(e);
        ++m_stats.ranges;
    }
}

size_t RecordConverter::closeOpenRanges(TimestampNs endNs) {
    const size_t n = m_open.size();
    for (const auto& [id, open] : m_open) {
        trace::RangeEvent e;
        e.startNs = open.startNs;
        e.endNs = endNs >= open.startNs ? endNs : open.startNs;
        e.name = open.name;
        e.depth = open.depth;
        e.threadId = open.threadId;
        e.device = trace::kHostDevice;
        e.kind = trace::RangeKind::Nvtx;
        m_out.ranges.append(e);
        ++m_stats.ranges;
    }
    m_open.clear();
    m_depthByThread.clear();
    return n;
}

}  // namespace vramscope::capture
