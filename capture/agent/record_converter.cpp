#include "record_converter.h"

#include "cupti_record_layouts.h"  // the 12.x and 13.0 layouts this converter reads alike

#include <cxxabi.h>

#include <cctype>
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

bool isLibraryNvtxDomain(const char* domain) {
    if (domain == nullptr || *domain == '\0') {
        return false;
    }
    static constexpr std::string_view kPrefixes[] = {
        "nccl",   "aws-ofi-nccl", "cublas", "cudnn", "cupti",  "cufft",    "cusparse", "cusolver",
        "curand", "cutensor",     "nvjpeg", "npp",   "nvcomp", "tensorrt", "nvshmem",  "cccl",
    };
    const std::string_view name(domain);
    for (const std::string_view prefix : kPrefixes) {
        if (name.size() < prefix.size()) {
            continue;
        }
        bool same = true;
        for (size_t i = 0; i < prefix.size() && same; ++i) {
            same = std::tolower(static_cast<unsigned char>(name[i])) == prefix[i];
        }
        if (same) {
            return true;
        }
    }
    return false;
}

RecordConverter::RecordConverter(trace::TraceData& out, ConverterOptions options)
    : m_out(out), m_options(options) {}

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
    // The pool's growth goes first: it is the reserved memory the allocation is carved from.
    if (fromPool && r.memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
        updatePool(e.timestampNs, e.device, r.memoryPoolConfig.address,
                   r.memoryPoolConfig.pool.size);
    }
    m_out.memory.append(e);
}

void RecordConverter::convertMemoryPool(const CUpti_ActivityMemoryPool3& r) {
    ++m_stats.memoryPool;
    seen(r.timestamp);
    if (r.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED) {
        return;  // NOTE(cupti): size is valid for LOCAL pools only; an imported pool is another
                 // process's memory
    }
    const uint64_t bytes =
        r.memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED ? 0
                                                                                         : r.size;
    updatePool(static_cast<TimestampNs>(r.timestamp), static_cast<DeviceIndex>(r.deviceId),
               r.address, bytes);
}

void RecordConverter::emitPoolEvent(TimestampNs t, DeviceIndex device, MemoryAction action,
                                    const PoolGrowth& g) {
    trace::MemoryEvent e;
    e.timestampNs = t;
    e.address = g.address;
    e.sizeBytes = g.bytes;
    e.action = action;
    e.level = MemoryLevel::Reserved;
    e.kind = MemoryKind::Pool;
    e.device = device;
    m_out.memory.append(e);
    ++(action == MemoryAction::Alloc ? m_stats.poolGrowths : m_stats.poolShrinks);
}

void RecordConverter::updatePool(TimestampNs t, DeviceIndex device, uint64_t poolAddress,
                                 uint64_t poolBytes) {
    PoolState& pool = m_pools[device][poolAddress];
    if (pool.bytes == poolBytes && poolBytes != 0) {
        return;
    }
    const uint64_t before = pool.bytes;
    if (poolBytes > before) {
        // Growth: the new bytes lie after the ones the pool already had.
        const PoolGrowth g{poolAddress + before, poolBytes - before};
        pool.growths.push_back(g);
        emitPoolEvent(t, device, MemoryAction::Alloc, g);
    } else {
        // Shrink: give back the latest growths first; a growth given back only in part is freed
        // whole and its kept part allocated again, so each free matches its alloc exactly.
        uint64_t shrink = before - poolBytes;
        while (shrink > 0 && !pool.growths.empty()) {
            const PoolGrowth top = pool.growths.back();
            pool.growths.pop_back();
            emitPoolEvent(t, device, MemoryAction::Free, top);
            if (top.bytes > shrink) {
                const PoolGrowth kept{top.address, top.bytes - shrink};
                pool.growths.push_back(kept);
                emitPoolEvent(t, device, MemoryAction::Alloc, kept);
                shrink = 0;
            } else {
                shrink -= top.bytes;
            }
        }
    }
    uint64_t& total = m_poolTotal[device];
    total = total - before + poolBytes;
    pool.bytes = poolBytes;
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

bool RecordConverter::hasTime(uint64_t start, uint64_t end, CUpti_ActivityKind kind) {
    // NOTE(cupti): start and end are 0 when CUPTI could not take the time (cupti_activity.h);
    // an end before the start is no interval either.
    if (start != 0 && end >= start) {
        return true;
    }
    ++m_stats.withoutTime;
    ++m_withoutTimeByKind[static_cast<uint32_t>(kind)];
    return false;
}

void RecordConverter::takeDataLoss(std::vector<trace::DataLoss>& out) {
    // In kind order, so that the rows do not depend on the map's order.
    for (const CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                          CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}) {
        auto it = m_withoutTimeByKind.find(static_cast<uint32_t>(kind));
        if (it == m_withoutTimeByKind.end() || it->second == 0) {
            continue;
        }
        out.push_back(
            {trace::LossCounter::CuptiRecordsWithoutTime, it->second, recordKindName(kind), 0, 0});
        it->second = 0;
    }
}

void RecordConverter::convertKernel(const CUpti_ActivityKernel10& r) {
    if (!hasTime(r.start, r.end, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
        return;
    }
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
    if (!hasTime(r.start, r.end, CUPTI_ACTIVITY_KIND_MEMCPY)) {
        return;
    }
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
    if (!hasTime(r.start, r.end, CUPTI_ACTIVITY_KIND_MEMSET)) {
        return;
    }
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
    const bool library = !m_options.keepLibraryNvtx && isLibraryNvtxDomain(r.domain);
    // Process-scoped ranges (nvtxRangeStart/End may end on another thread) nest among themselves.
    const uint64_t thread =
        r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? r.objectId.pt.threadId : 0;
    if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0) {
        startMarker(r, thread, library);
        return;
    }
    if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0) {
        endMarker(r);
        return;
    }
    if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) != 0) {
        if (library) {
            ++m_stats.libraryMarkers;
            return;
        }
        seen(r.timestamp);
        const auto t = static_cast<TimestampNs>(r.timestamp);
        OpenRange mark;
        mark.startNs = t;
        mark.name = m_out.intern(r.name != nullptr ? std::string_view(r.name) : "");
        mark.depth = m_depthByThread[thread];
        mark.threadId = thread;
        emitRange(mark, t);
    }
}

void RecordConverter::startMarker(const CUpti_ActivityMarker2& r, uint64_t thread, bool library) {
    auto held = m_heldEnds.find(r.id);
    if (library) {
        ++m_stats.libraryMarkers;
        if (held != m_heldEnds.end()) {
            m_heldEnds.erase(held);  // its END came first; nothing is left to wait for
        } else if (m_filteredOpen.size() < m_options.maxHeldEnds) {
            // NOTE(cupti): the END record may not carry the domain; the id tells it is ours to
            // drop. Beyond the bound its END is held instead and counted unmatched at exit.
            m_filteredOpen.insert(r.id);
        }
        return;
    }
    seen(r.timestamp);
    OpenRange open;
    open.startNs = static_cast<TimestampNs>(r.timestamp);
    open.name = m_out.intern(r.name != nullptr ? std::string_view(r.name) : "");
    open.threadId = thread;
    uint32_t& depth = m_depthByThread[thread];
    open.depth = depth;
    if (held != m_heldEnds.end()) {
        // Its END arrived first (another thread's buffer): the range is complete now, and
        // opens nothing on the starting thread.
        const TimestampNs endNs = held->second;
        m_heldEnds.erase(held);
        ++m_stats.lateStarts;
        emitRange(open, endNs);
        return;
    }
    ++depth;
    m_open[r.id] = open;
}

void RecordConverter::endMarker(const CUpti_ActivityMarker2& r) {
    const auto t = static_cast<TimestampNs>(r.timestamp);
    auto it = m_open.find(r.id);
    if (it != m_open.end()) {
        seen(r.timestamp);
        const OpenRange open = it->second;
        m_open.erase(it);
        // The starting thread's depth, also when another thread ends the range.
        uint32_t& depth = m_depthByThread[open.threadId];
        if (depth > 0) {
            --depth;
        }
        emitRange(open, t);
        return;
    }
    if (m_filteredOpen.erase(r.id) > 0) {
        ++m_stats.libraryMarkers;
        return;
    }
    if (m_heldEnds.size() >= m_options.maxHeldEnds) {
        ++m_stats.unmatchedEnds;
        return;
    }
    seen(r.timestamp);
    m_heldEnds[r.id] = t;
}

void RecordConverter::emitRange(const OpenRange& open, TimestampNs endNs) {
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

size_t RecordConverter::closeOpenRanges(TimestampNs endNs) {
    const size_t n = m_open.size();
    for (const auto& entry : m_open) {
        emitRange(entry.second, endNs);
    }
    m_open.clear();
    m_depthByThread.clear();
    m_stats.unmatchedEnds += m_heldEnds.size();
    m_heldEnds.clear();
    m_filteredOpen.clear();
    return n;
}

}  // namespace vramscope::capture
