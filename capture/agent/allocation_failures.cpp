#include "allocation_failures.h"

#include <algorithm>

namespace vramscope::capture {

namespace {

std::atomic<uint64_t> g_nextId{1};

struct ThreadSlot {
    uint64_t owner = 0;
    void* slot = nullptr;
};
thread_local ThreadSlot t_slot;

constexpr uint64_t stateOf(uint64_t word) {
    return word & 3;
}

}  // namespace

AllocationFailures::AllocationFailures(OomSink sink)
    : m_sink(std::move(sink)), m_id(g_nextId.fetch_add(1)) {}

AllocationFailures::Slot* AllocationFailures::threadSlot() {
    if (t_slot.owner == m_id) {
        return static_cast<Slot*>(t_slot.slot);
    }
    const size_t index = m_claimed.fetch_add(1, std::memory_order_relaxed);
    Slot* slot = index < kSlots ? &m_slots[index] : nullptr;
    t_slot = {m_id, slot};
    return slot;
}

void AllocationFailures::failed(const FailedAllocation& failure, int64_t steadyNs) {
    Slot* slot = threadSlot();
    if (slot == nullptr) {
        m_unslotted.fetch_add(1, std::memory_order_relaxed);
        m_sink(failure, 1);
        return;
    }
    uint64_t word = slot->state.load(std::memory_order_acquire);
    if (stateOf(word) == kWaiting &&
        slot->state.compare_exchange_strong(word, (word & ~uint64_t{3}) | kWriting,
                                            std::memory_order_acq_rel)) {
        // The retry failed too: one OOM for both, with the latest request.
        slot->state.store((word & ~uint64_t{3}) | kEmpty, std::memory_order_release);
        m_sink(failure, 2);
        return;
    }
    if (stateOf(word) == kEmpty) {
        const uint64_t next = ((word >> 2) + 1) << 2;
        if (slot->state.compare_exchange_strong(word, next | kWriting, std::memory_order_acq_rel)) {
            slot->failure = failure;
            slot->steadyNs.store(steadyNs, std::memory_order_relaxed);
            slot->state.store(next | kWaiting, std::memory_order_release);
            return;
        }
    }
    m_sink(failure, 1);  // the flush thread is taking the previous one this very moment
}

void AllocationFailures::succeeded() {
    if (t_slot.owner != m_id || t_slot.slot == nullptr) {
        return;  // this thread never failed an allocation
    }
    Slot* slot = static_cast<Slot*>(t_slot.slot);
    uint64_t word = slot->state.load(std::memory_order_acquire);
    if (stateOf(word) == kWaiting &&
        slot->state.compare_exchange_strong(word, (word & ~uint64_t{3}) | kEmpty,
                                            std::memory_order_acq_rel)) {
        m_retried.fetch_add(1, std::memory_order_relaxed);
    }
}

size_t AllocationFailures::takeExpired(int64_t nowSteadyNs, int64_t olderThanNs) {
    size_t taken = 0;
    const size_t claimed = std::min(m_claimed.load(std::memory_order_acquire), kSlots);
    for (size_t i = 0; i < claimed; ++i) {
        Slot& slot = m_slots[i];
        uint64_t word = slot.state.load(std::memory_order_acquire);
        if (stateOf(word) != kWaiting) {
            continue;
        }
        const int64_t since = slot.steadyNs.load(std::memory_order_relaxed);
        if (nowSteadyNs != INT64_MAX && nowSteadyNs - since < olderThanNs) {
            continue;
        }
        // The generation in `word` makes the exchange fail if the owner replaced the failure.
        if (!slot.state.compare_exchange_strong(word, (word & ~uint64_t{3}) | kTaking,
                                                std::memory_order_acq_rel)) {
            continue;
        }
        const FailedAllocation failure = slot.failure;
        slot.state.store((word & ~uint64_t{3}) | kEmpty, std::memory_order_release);
        m_sink(failure, 1);
        ++taken;
    }
    return taken;
}

}  // namespace vramscope::capture
