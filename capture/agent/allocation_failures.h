#pragma once
// Failed device allocations, kept per thread until it is clear what they were
// (docs/DESIGN.md "Capture: PyTorch allocator facts"): PyTorch's caching allocator retries a failed
// cudaMalloc after freeing its cache, so a failure followed by a success on the same thread is a
// retry, not an out-of-memory; a second failure in a row (the retry failed) is one OOM, and so is a
// failure nothing follows within one flush period, or before the process ends.
//
// Lock-free on the job's side: each thread that fails an allocation claims a slot once (an atomic
// exchange) and then only changes its slot's state with compare-and-swap; the flush thread takes
// the failures that waited too long. The state word carries a generation, so that the flush
// thread never takes a failure newer than the one it looked at. OOMs go to a sink (the agent's
// lock-free OOM ring); neither side calls the driver or allocates.

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>

namespace vramscope::capture {

/// One failed allocation as the API callback saw it.
struct FailedAllocation {
    int64_t timestampNs = 0;  ///< the trace clock (CUPTI's) at the failing call's exit
    uint64_t requestedBytes = 0;
    int32_t device = 0;   ///< CUDA device of the call's context
    uint64_t stream = 0;  ///< CUPTI stream id, 0 when none or unknown
};

class AllocationFailures {
public:
    /// Called with the failure that became an OOM and how many failures in a row it stands for.
    using OomSink = std::function<void(const FailedAllocation&, uint32_t failures)>;
    /// Threads that can hold a failure; failures on further threads are OOMs at once.
    static constexpr size_t kSlots = 1024;

    explicit AllocationFailures(OomSink sink);

    // --- the failing thread (an API callback) ---
    /// An allocation call failed; `steadyNs` is CLOCK_MONOTONIC now (the age the flush thread
    /// judges by). A second failure while one waits is one OOM at once (the retry failed).
    void failed(const FailedAllocation& failure, int64_t steadyNs);
    /// An allocation call succeeded: a failure waiting on this thread was retried.
    void succeeded();

    // --- the flush thread ---
    /// Every failure that waited at least `olderThanNs` by `nowSteadyNs` becomes an OOM; returns
    /// how many.
    size_t takeExpired(int64_t nowSteadyNs, int64_t olderThanNs);
    /// At exit: every waiting failure becomes an OOM.
    size_t takeAll() { return takeExpired(INT64_MAX, 0); }

    /// Failures followed by a success on their thread, since the start.
    uint64_t retried() const { return m_retried.load(std::memory_order_relaxed); }
    /// Failures on threads that found no free slot (reported as OOMs at once).
    uint64_t unslotted() const { return m_unslotted.load(std::memory_order_relaxed); }

private:
    // state word: generation << 2 | state
    static constexpr uint64_t kEmpty = 0;
    static constexpr uint64_t kWriting = 1;
    static constexpr uint64_t kWaiting = 2;
    static constexpr uint64_t kTaking = 3;

    struct Slot {
        std::atomic<uint64_t> state{kEmpty};
        std::atomic<int64_t> steadyNs{0};
        FailedAllocation failure;  ///< written in kWriting, read in kTaking or by the owner
    };

    Slot* threadSlot();

    OomSink m_sink;
    const uint64_t m_id;  ///< tells this object's thread-local slot from an earlier object's
    std::array<Slot, kSlots> m_slots;
    std::atomic<size_t> m_claimed{0};
    std::atomic<uint64_t> m_retried{0};
    std::atomic<uint64_t> m_unslotted{0};
};

}  // namespace vramscope::capture
