#include "activity_buffers.h"

#include <cstdlib>
#include <cstring>

namespace vramscope::capture {

ActivityBufferPool::ActivityBufferPool(size_t keepZeroed, size_t maxPooled)
    : m_keepZeroed(keepZeroed), m_maxPooled(maxPooled < keepZeroed ? keepZeroed : maxPooled) {}

ActivityBufferPool::~ActivityBufferPool() {
    for (uint8_t* b : m_ready) {
        std::free(b);
    }
    for (uint8_t* b : m_dirty) {
        std::free(b);
    }
}

uint8_t* ActivityBufferPool::take() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_ready.empty()) {
            uint8_t* b = m_ready.back();
            m_ready.pop_back();
            return b;
        }
        ++m_onDemand;
    }
    return static_cast<uint8_t*>(std::calloc(1, kBufferBytes));
}

void ActivityBufferPool::give(uint8_t* buffer, size_t size) {
    if (buffer == nullptr) {
        return;
    }
    if (size == kBufferBytes) {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_ready.size() + m_dirty.size() < m_maxPooled) {
            m_dirty.push_back(buffer);
            return;
        }
    }
    std::free(buffer);
}

void ActivityBufferPool::refill() {
    std::vector<uint8_t*> dirty;
    size_t ready = 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        dirty.swap(m_dirty);
        ready = m_ready.size();
    }
    for (uint8_t* b : dirty) {
        std::memset(b, 0, kBufferBytes);
    }
    std::vector<uint8_t*> fresh;
    for (size_t n = ready + dirty.size(); n < m_keepZeroed; ++n) {
        if (auto* b = static_cast<uint8_t*>(std::calloc(1, kBufferBytes))) {
            fresh.push_back(b);
        }
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    m_ready.insert(m_ready.end(), dirty.begin(), dirty.end());
    m_ready.insert(m_ready.end(), fresh.begin(), fresh.end());
}

size_t ActivityBufferPool::readyCount() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_ready.size();
}

size_t ActivityBufferPool::dirtyCount() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_dirty.size();
}

uint64_t ActivityBufferPool::allocatedOnDemand() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_onDemand;
}

}  // namespace vramscope::capture
