#include "vramscope/trace/trace_data.h"

#include <functional>

namespace vramscope::trace {

TraceData::TraceData() {
    strings.emplace_back();
    stacks.emplace_back();
    m_stringIndex.emplace(std::string(), 0);
}

StringId TraceData::intern(std::string_view s) {
    auto it = m_stringIndex.find(std::string(s));
    if (it != m_stringIndex.end()) {
        return it->second;
    }
    const auto id = static_cast<StringId>(strings.size());
    strings.emplace_back(s);
    m_stringIndex.emplace(strings.back(), id);
    return id;
}

FrameId TraceData::internFrame(const Frame& f) {
    auto it = m_frameIndex.find(f);
    if (it != m_frameIndex.end()) {
        return it->second;
    }
    const auto id = static_cast<FrameId>(frames.size());
    frames.push_back(f);
    m_frameIndex.emplace(f, id);
    return id;
}

StackId TraceData::internStack(const std::vector<FrameId>& framesLeafFirst) {
    if (framesLeafFirst.empty()) {
        return StackId{0};
    }
    auto it = m_stackIndex.find(framesLeafFirst);
    if (it != m_stackIndex.end()) {
        return it->second;
    }
    const auto id = static_cast<StackId>(stacks.size());
    stacks.push_back(framesLeafFirst);
    m_stackIndex.emplace(framesLeafFirst, id);
    return id;
}

size_t TraceData::eventCount() const {
    return memory.size() + kernels.size() + collectives.size() + ranges.size() + counters.size() +
           ooms.size();
}

const DeviceInfo* TraceData::device(DeviceIndex index) const {
    for (const auto& d : header.devices) {
        if (d.index == index) {
            return &d;
        }
    }
    return nullptr;
}

void TraceData::rebuildIndexes() {
    m_stringIndex.clear();
    m_frameIndex.clear();
    m_stackIndex.clear();
    if (strings.empty()) {
        strings.emplace_back();
    }
    if (stacks.empty()) {
        stacks.emplace_back();
    }
    for (size_t i = 0; i < strings.size(); ++i) {
        m_stringIndex.emplace(strings[i], static_cast<StringId>(i));
    }
    for (size_t i = 0; i < frames.size(); ++i) {
        m_frameIndex.emplace(frames[i], static_cast<FrameId>(i));
    }
    for (size_t i = 1; i < stacks.size(); ++i) {
        m_stackIndex.emplace(stacks[i], static_cast<StackId>(i));
    }
}

size_t TraceData::FrameHash::operator()(const Frame& f) const noexcept {
    const uint64_t h = (uint64_t{f.name} << 32) ^ (uint64_t{f.file} << 7) ^ uint32_t(f.line);
    return std::hash<uint64_t>{}(h);
}

size_t TraceData::StackHash::operator()(const std::vector<FrameId>& s) const noexcept {
    uint64_t h = 1469598103934665603ull;  // FNV-1a offset basis
    for (FrameId f : s) {
        h = (h ^ toInt(f)) * 1099511628211ull;
    }
    return h;
}

const char* toString(MemoryLevel level) {
    return level == MemoryLevel::Reserved ? "reserved" : "allocated";
}

const char* toString(MemoryKind kind) {
    switch (kind) {
        case MemoryKind::Unknown:
            return "unknown";
        case MemoryKind::Device:
            return "device";
        case MemoryKind::DeviceStatic:
            return "device-static";
        case MemoryKind::Pool:
            return "pool";
        case MemoryKind::Managed:
            return "managed";
        case MemoryKind::Pinned:
            return "pinned";
        case MemoryKind::Pageable:
            return "pageable";
        case MemoryKind::PreExisting:
            return "pre-existing";
    }
    return "unknown";
}

const char* toString(KernelCategory category) {
    switch (category) {
        case KernelCategory::Compute:
            return "compute";
        case KernelCategory::Communication:
            return "communication";
        case KernelCategory::Memcpy:
            return "memcpy";
        case KernelCategory::Memset:
            return "memset";
    }
    return "compute";
}

const char* toString(RangeKind kind) {
    switch (kind) {
        case RangeKind::Nvtx:
            return "nvtx";
        case RangeKind::UserAnnotation:
            return "user_annotation";
        case RangeKind::GpuAnnotation:
            return "gpu_annotation";
        case RangeKind::Iteration:
            return "iteration";
    }
    return "nvtx";
}

}  // namespace vramscope::trace
