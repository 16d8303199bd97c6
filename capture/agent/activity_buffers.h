#pragma once
// The activity buffers the agent hands CUPTI: 256 KiB each, zeroed before CUPTI gets them, so
// that CUPTI never clears one on a training thread (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER
// promises it) and a buffer that a busy thread fills comes back within about 0.1 s
// (docs/DESIGN.md "How CUPTI hands buffers back": CUPTI returns the buffer receiving new kernels
// only when it is full; 256 KiB hold about 1,200 kernel records, a tenth of a second on a busy main
// thread).
//
// Thread-safe. take() and give() run on the job's threads (CUPTI's buffer callbacks) and only
// move pointers under a short lock; refill() runs on the agent's flush thread and does the
// zeroing and allocating there. The pool never holds more than maxPooled buffers.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace vramscope::capture {

class ActivityBufferPool {
public:
    /// Bytes of every buffer the pool makes (CUPTI asks for 8-byte alignment; calloc gives 16).
    static constexpr size_t kBufferBytes = size_t{256} << 10;

    /// `keepZeroed` buffers are kept ready (refill() tops them up); at most `maxPooled` stay in
    /// the pool, zeroed or waiting to be zeroed (the rest are freed).
    explicit ActivityBufferPool(size_t keepZeroed = 32, size_t maxPooled = 96);
    ~ActivityBufferPool();
    ActivityBufferPool(const ActivityBufferPool&) = delete;
    ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

    /// A zeroed buffer of kBufferBytes: a ready one, else a fresh calloc (counted in
    /// allocatedOnDemand()); nullptr when memory is exhausted.
    uint8_t* take();
    /// A buffer CUPTI handed back (`size` as handed out): kept to be zeroed by refill(), or
    /// freed when the pool is full or the size is not ours.
    void give(uint8_t* buffer, size_t size);
    /// Flush thread: zeroes the buffers given back and allocates until keepZeroed are ready.
    void refill();

    size_t readyCount() const;
    size_t dirtyCount() const;
    /// Buffers take() had to allocate because none was ready (each a calloc on a job thread).
    uint64_t allocatedOnDemand() const;

private:
    const size_t m_keepZeroed;
    const size_t m_maxPooled;
    mutable std::mutex m_mutex;
    std::vector<uint8_t*> m_ready;  ///< zeroed
    std::vector<uint8_t*> m_dirty;  ///< given back, not zeroed yet
    uint64_t m_onDemand = 0;
};

}  // namespace vramscope::capture
