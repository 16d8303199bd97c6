#include "vramscope/trace/trace_data.h"

#include <functional>

namespace vramscope::trace {

void MemoryEvents::reserve(size_t n) {
    timestampNs.reserve(n);
    address.reserve(n);
    sizeBytes.reserve(n);
    action.reserve(n);
    level.reserve(n);
    kind.reserve(n);
    device.reserve(n);
    stream.reserve(n);
    stack.reserve(n);
    nvtxRange.reserve(n);
}

void MemoryEvents::append(const MemoryEvent& e) {
    timestampNs.push_back(e.timestampNs);
    address.push_back(e.address);
    sizeBytes.push_back(e.sizeBytes);
    action.push_back(e.action);
    level.push_back(e.level);
    kind.push_back(e.kind);
    device.push_back(e.device);
    stream.push_back(e.stream);
    stack.push_back(e.stack);
    nvtxRange.push_back(e.nvtxRange);
}

MemoryEvent MemoryEvents::at(size_t i) const {
    return MemoryEvent{timestampNs[i], address[i], sizeBytes[i], action[i], level[i],
                       kind[i],        device[i],  stream[i],    stack[i],  nvtxRange[i]};
}

void KernelEvents::reserve(size_t n) {
    startNs.reserve(n);
    endNs.reserve(n);
    device.reserve(n);
    stream.reserve(n);
    name.reserve(n);
    category.reserve(n);
    launchNs.reserve(n);
    bytes.reserve(n);
    correlationId.reserve(n);
    operandType.reserve(n);
}

void KernelEvents::append(const KernelEvent& e) {
    startNs.push_back(e.startNs);
    endNs.push_back(e.endNs);
    device.push_back(e.device);
    stream.push_back(e.stream);
    name.push_back(e.name);
    category.push_back(e.category);
    launchNs.push_back(e.launchNs);
    bytes.push_back(e.bytes);
    correlationId.push_back(e.correlationId);
    operandType.push_back(e.operandType);
}

KernelEvent KernelEvents::at(size_t i) const {
    return KernelEvent{startNs[i],  endNs[i],    device[i], stream[i],        name[i],
                       category[i], launchNs[i], bytes[i],  correlationId[i], operandType[i]};
}

void CollectiveEvents::append(const CollectiveEvent& e) {
    startNs.push_back(e.startNs);
    endNs.push_back(e.endNs);
    device.push_back(e.device);
    stream.push_back(e.stream);
    communicatorHash.push_back(e.communicatorHash);
    rank.push_back(e.rank);
    nranks.push_back(e.nranks);
    function.push_back(e.function);
    seqNumber.push_back(e.seqNumber);
    bytes.push_back(e.bytes);
    datatype.push_back(e.datatype);
    algorithm.push_back(e.algorithm);
    protocol.push_back(e.protocol);
    channels.push_back(e.channels);
    enqueueLeadNs.push_back(e.enqueueLeadNs);
    peer.push_back(e.peer);
    timing.push_back(e.timing);
}

CollectiveEvent CollectiveEvents::at(size_t i) const {
    return CollectiveEvent{
        startNs[i],  endNs[i],     device[i],   stream[i],    communicatorHash[i],
        rank[i],     nranks[i],    function[i], seqNumber[i], bytes[i],
        datatype[i], algorithm[i], protocol[i], channels[i],  enqueueLeadNs[i],
        peer[i],     timing[i]};
}

void RangeEvents::append(const RangeEvent& e) {
    startNs.push_back(e.startNs);
    endNs.push_back(e.endNs);
    name.push_back(e.name);
    depth.push_back(e.depth);
    threadId.push_back(e.threadId);
    device.push_back(e.device);
    kind.push_back(e.kind);
}

RangeEvent RangeEvents::at(size_t i) const {
    return RangeEvent{startNs[i], endNs[i], name[i], depth[i], threadId[i], device[i], kind[i]};
}

void CounterSamples::append(const CounterSample& s) {
    timestampNs.push_back(s.timestampNs);
    name.push_back(s.name);
    device.push_back(s.device);
    kind.push_back(s.kind);
    value.push_back(s.value);
}

CounterSample CounterSamples::at(size_t i) const {
    return CounterSample{timestampNs[i], name[i], device[i], kind[i], value[i]};
}

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
