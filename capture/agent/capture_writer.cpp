#include "capture_writer.h"

#include "vramscope/trace/chunk_encoder.h"

namespace vramscope::capture {

namespace {

/// Swaps the event tables of `a` and `b`, communicators excepted (they go with the tables).
void swapEventsButCommunicators(trace::TraceData& a, trace::TraceData& b) {
    std::swap(a.memory, b.memory);
    std::swap(a.kernels, b.kernels);
    std::swap(a.collectives, b.collectives);
    std::swap(a.ranges, b.ranges);
    std::swap(a.counters, b.counters);
    std::swap(a.ooms, b.ooms);
    std::swap(a.dataLoss, b.dataLoss);
    std::swap(a.annotations, b.annotations);
}

}  // namespace

CaptureWriter::CaptureWriter(std::unique_ptr<trace::ByteSink> sink, EventStaging& staging,
                             NoticeFn notice, trace::WriterOptions options)
    // protozero's encoder: the same bytes as the tools' TraceWriter, without libprotobuf.
    : m_writer(std::make_unique<trace::TraceStreamWriter>(std::move(sink), options,
                                                          trace::makeProtozeroChunkEncoder())),
      m_staging(staging),
      m_notice(std::move(notice)) {}

bool CaptureWriter::writeHeader(const trace::FileHeader& header) {
    if (m_failed || m_headerWritten) {
        return m_headerWritten;
    }
    trace::Status st = m_writer->writeHeader(header);
    if (st.ok()) {
        st = m_writer->flush();
    }
    if (!st.ok()) {
        fail(st.error());
        return false;
    }
    m_headerWritten = true;
    return true;
}

void CaptureWriter::writeRound(trace::TraceData& out, bool final,
                               const std::function<void(trace::TraceData&)>& addOwn) {
    if (!m_headerWritten && !m_failed) {
        return;  // staging keeps the events until the header is out
    }
    m_staging.takeInto(out, final);
    if (addOwn) {
        addOwn(out);
    }
    if (m_headerWritten && !m_failed && m_tablesHook) {
        // The round's new table entries and communicators first, in a frame of their own.
        trace::TraceData events;
        swapEventsButCommunicators(out, events);
        m_tablesHook(true);
        trace::Status st = m_writer->writeEvents(out);
        m_tablesHook(false);
        swapEventsButCommunicators(out, events);
        out.communicators.clear();
        if (!st.ok()) {
            fail(st.error());
        }
    }
    if (m_headerWritten && !m_failed && (out.eventCount() > 0 || !out.dataLoss.empty())) {
        trace::Status st = m_writer->writeEvents(out);
        if (st.ok()) {
            st = m_writer->flush();
        }
        if (!st.ok()) {
            fail(st.error());
        }
    }
    trace::clearEventTables(out);
}

void CaptureWriter::close() {
    // The closing summary frame marks the file as finished; after a failure the output is not
    // trusted to take it (the summaries of the last good batch stand).
    if (m_writer && m_headerWritten && !m_failed) {
        trace::Status st = m_writer->finish();
        if (!st.ok()) {
            fail(st.error());
        }
    }
    m_writer.reset();
    if (m_failed) {
        m_notice(std::to_string(m_staging.droppedAfterFailure()) +
                 " CUPTI records were dropped after the trace output failed");
    }
}

uint64_t CaptureWriter::framesWritten() const {
    return m_writer ? m_writer->framesWritten() : 0;
}

void CaptureWriter::fail(const trace::Error& error) {
    if (m_failed) {
        return;
    }
    m_failed = true;
    m_staging.markOutputFailed();
    m_notice("capture stopped: " + error.describe() +
             "; the trace keeps what was written before, later records are counted and dropped");
}

}  // namespace vramscope::capture
