#pragma once
// The writer thread's side of the agent's output: the header, one round of events after another,
// and what happens when the output fails (a full disk, a file size limit, a viewer gone).
//
// Single-threaded (the agent's writer thread); owns the trace writer (a TraceStreamWriter with the
// protozero encoder: no libprotobuf in the agent) and through it the sink. On
// the first failed write it says so once through the notice function, tells the staging to drop
// and count every record from then on, and writes nothing more: the file keeps its whole frames
// (and at most one cut frame, which the reader reports as the file's end).

#include <functional>
#include <memory>
#include <string>

#include "event_staging.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::capture {

/// Where the writer's notices go: the agent passes printNotice, tests a counter.
using NoticeFn = std::function<void(const std::string& line)>;

class CaptureWriter {
public:
    CaptureWriter(std::unique_ptr<trace::ByteSink> sink, EventStaging& staging, NoticeFn notice,
                  trace::WriterOptions options = {});

    /// Writes the preamble and the header frame; false when the output failed (then failed()).
    bool writeHeader(const trace::FileHeader& header);
    /// One round: takes the staged events into `out`, lets `addOwn` (when given) add what the
    /// agent records itself (OOMs, host samples, data loss), writes and flushes them, then clears
    /// `out`'s events. Before the header nothing is taken (staging keeps it, bounded); after a
    /// failure the events are taken and dropped (the staging counts every record it refuses from
    /// then).
    void writeRound(trace::TraceData& out, bool final,
                    const std::function<void(trace::TraceData&)>& addOwn = {});
    /// Called with true before and false after a frame that holds only the round's new table
    /// entries (strings, frames, stacks) and communicators, which each round then writes ahead
    /// of its events: the live server keeps such frames for every later viewer
    /// (trace::live::LiveServer::setSticky). Without a hook tables and events share frames.
    void setTablesHook(std::function<void(bool tablesOnly)> hook) {
        m_tablesHook = std::move(hook);
    }
    /// Closes the output. After a failure, one more notice gives how many records were dropped.
    void close();

    bool headerWritten() const { return m_headerWritten; }
    bool failed() const { return m_failed; }
    /// Frames written so far (TraceStreamWriter::framesWritten).
    uint64_t framesWritten() const;

private:
    void fail(const trace::Error& error);

    std::unique_ptr<trace::TraceStreamWriter> m_writer;
    EventStaging& m_staging;
    NoticeFn m_notice;
    std::function<void(bool)> m_tablesHook;
    bool m_headerWritten = false;
    bool m_failed = false;
};

}  // namespace vramscope::capture
