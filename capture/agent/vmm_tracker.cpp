#include "vmm_tracker.h"

namespace vramscope::capture {

namespace {

trace::MemoryEvent reservedEvent(trace::TimestampNs t, uint64_t address, uint64_t bytes,
                                 int32_t device, trace::MemoryAction action) {
    trace::MemoryEvent e;
    e.timestampNs = t;
    e.address = address;
    e.sizeBytes = bytes;
    e.action = action;
    e.level = trace::MemoryLevel::Reserved;
    e.kind = trace::MemoryKind::Device;
    e.device = trace::DeviceIndex{device};
    return e;
}

}  // namespace

void VmmTracker::created(uint64_t handle, uint64_t bytes, int32_t device) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_handles[handle] = {bytes, device};
}

void VmmTracker::released(uint64_t handle) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_handles.erase(handle);
}

void VmmTracker::mapped(uint64_t address, uint64_t bytes, uint64_t handle, int32_t fallbackDevice,
                        trace::TimestampNs t, std::vector<trace::MemoryEvent>& out) {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto h = m_handles.find(handle);
    const int32_t device = h != m_handles.end() ? h->second.device : fallbackDevice;
    if (device < 0 || bytes == 0) {
        return;  // host memory, or nothing mapped
    }
    m_ranges[address] = {bytes, device};
    out.push_back(reservedEvent(t, address, bytes, device, trace::MemoryAction::Alloc));
}

void VmmTracker::unmapped(uint64_t address, uint64_t bytes, trace::TimestampNs t,
                          std::vector<trace::MemoryEvent>& out) {
    std::lock_guard<std::mutex> lock(m_mutex);
    const uint64_t end = address + bytes;
    auto it = m_ranges.upper_bound(address);
    if (it != m_ranges.begin()) {
        --it;  // the range that may start before `address` and reach into it
    }
    while (it != m_ranges.end() && it->first < end) {
        const uint64_t start = it->first;
        const Range r = it->second;
        const uint64_t stop = start + r.bytes;
        if (stop <= address) {
            ++it;
            continue;
        }
        it = m_ranges.erase(it);
        out.push_back(reservedEvent(t, start, r.bytes, r.device, trace::MemoryAction::Free));
        if (start < address) {
            m_ranges[start] = {address - start, r.device};
            out.push_back(
                reservedEvent(t, start, address - start, r.device, trace::MemoryAction::Alloc));
        }
        if (stop > end) {
            it = m_ranges.emplace(end, Range{stop - end, r.device}).first;
            out.push_back(reservedEvent(t, end, stop - end, r.device, trace::MemoryAction::Alloc));
            ++it;
        }
    }
}

size_t VmmTracker::mappedRanges() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_ranges.size();
}

}  // namespace vramscope::capture
