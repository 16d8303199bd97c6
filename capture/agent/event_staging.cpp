#include "event_staging.h"

#include <algorithm>
#include <string>

namespace vramscope::capture {

namespace {

size_t kindIndex(const CUpti_Activity& record, size_t kinds) {
    return std::min<size_t>(static_cast<size_t>(record.kind), kinds - 1);
}

void takeCounts(std::array<uint64_t, 64>& byKind, trace::LossCounter counter,
                trace::TraceData& out) {
    for (size_t kind = 0; kind < byKind.size(); ++kind) {
        if (byKind[kind] == 0) {
            continue;
        }
        out.dataLoss.push_back(
            {counter, byKind[kind], recordKindName(static_cast<CUpti_ActivityKind>(kind)), 0, 0});
        byKind[kind] = 0;
    }
}

}  // namespace

EventStaging::EventStaging(size_t maxRows)
    : m_maxRows(maxRows), m_converter(std::make_unique<RecordConverter>(m_staging)) {}

size_t EventStaging::stagedRowsLocked() const {
    return m_staging.memory.size() + m_staging.kernels.size() + m_staging.ranges.size() +
           m_staging.counters.size();
}

bool EventStaging::roomLocked(size_t kind) {
    if (m_outputFailed) {
        ++m_failedByKind[kind];
        ++m_droppedAfterFailure;
        return false;
    }
    if (stagedRowsLocked() >= m_maxRows) {
        ++m_overflowByKind[kind];
        return false;
    }
    return true;
}

void EventStaging::addLocked(const CUpti_Activity& record) {
    if (roomLocked(kindIndex(record, kKinds))) {
        m_converter->convert(record);
    }
}

void EventStaging::noteUndecodedBuffer(uint64_t bytesLost) {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_undecodedBuffers;
    m_undecodedBytes += bytesLost;
}

void EventStaging::addMemory(const std::vector<trace::MemoryEvent>& events) {
    std::lock_guard<std::mutex> lock(m_mutex);
    for (const trace::MemoryEvent& e : events) {
        if (roomLocked(CUPTI_ACTIVITY_KIND_MEMORY2)) {
            m_staging.memory.append(e);
        }
    }
}

void EventStaging::addCounters(const std::vector<trace::CounterSample>& samples) {
    std::lock_guard<std::mutex> lock(m_mutex);
    for (const trace::CounterSample& s : samples) {
        if (roomLocked(0)) {
            m_staging.counters.append(s);
        }
    }
}

void EventStaging::takeInto(trace::TraceData& out, bool final) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (final) {
        m_converter->closeOpenRanges(m_converter->lastTimestampNs());
        m_finalTaken = true;
    }
    for (size_t i = out.strings.size(); i < m_staging.strings.size(); ++i) {
        out.strings.push_back(m_staging.strings[i]);
    }
    std::swap(out.memory, m_staging.memory);
    std::swap(out.kernels, m_staging.kernels);
    std::swap(out.ranges, m_staging.ranges);
    std::swap(out.counters, m_staging.counters);
    if (m_cuptiDropped > 0) {
        out.dataLoss.push_back({trace::LossCounter::CuptiRecordsDropped, m_cuptiDropped, {}, 0, 0});
        m_cuptiDropped = 0;
    }
    m_converter->takeDataLoss(out.dataLoss);
    if (m_undecodedBuffers > 0) {
        out.dataLoss.push_back({trace::LossCounter::CuptiRecordsUndecoded, m_undecodedBuffers,
                                std::to_string(m_undecodedBytes) +
                                    " bytes after the last readable record of their buffers",
                                0, 0});
        m_undecodedBuffers = 0;
        m_undecodedBytes = 0;
    }
    if (m_afterFinal > 0) {
        out.dataLoss.push_back({trace::LossCounter::CuptiRecordsAfterClose, m_afterFinal,
                                "handed over after the final flush at exit", 0, 0});
        m_afterFinal = 0;
    }
    takeCounts(m_overflowByKind, trace::LossCounter::WriterQueueOverflow, out);
    takeCounts(m_failedByKind, trace::LossCounter::OutputWriteFailed, out);
}

bool EventStaging::setConverterOptions(const ConverterOptions& options) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_converter->stats().records > 0) {
        return false;
    }
    m_converter = std::make_unique<RecordConverter>(m_staging, options);
    return true;
}

trace::StringId EventStaging::intern(std::string_view name) {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_staging.intern(name);
}

trace::StringId EventStaging::internInto(std::string_view name, trace::TraceData& out) {
    std::lock_guard<std::mutex> lock(m_mutex);
    const trace::StringId id = m_staging.intern(name);
    for (size_t i = out.strings.size(); i < m_staging.strings.size(); ++i) {
        out.strings.push_back(m_staging.strings[i]);
    }
    return id;
}

void EventStaging::markOutputFailed() {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_outputFailed = true;
}

bool EventStaging::outputFailed() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_outputFailed;
}

uint64_t EventStaging::pendingDrops(trace::LossCounter counter) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto& byKind =
        counter == trace::LossCounter::OutputWriteFailed ? m_failedByKind : m_overflowByKind;
    uint64_t sum = 0;
    for (const uint64_t n : byKind) {
        sum += n;
    }
    return sum;
}

uint64_t EventStaging::droppedAfterFailure() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_droppedAfterFailure;
}

size_t EventStaging::stagedRows() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return stagedRowsLocked();
}

}  // namespace vramscope::capture
