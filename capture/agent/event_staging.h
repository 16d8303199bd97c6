#pragma once
// The agent's events between the CUPTI callbacks and the writer thread.
//
// Thread-safe (one mutex): the job side (CUPTI's buffer-completed callback, on a training thread
// or CUPTI's worker) converts records into a bounded staging TraceData; the writer thread takes
// them out once per round. The job side never waits for I/O: when staging is full, or once the
// output has failed, records are dropped and counted, never queued without bound.

#include <cupti_activity.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "record_converter.h"
#include "vramscope/trace/data_loss.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::capture {

class EventStaging {
public:
    /// Rows (memory, kernels, ranges, counters) staged at most between two writer rounds.
    static constexpr size_t kDefaultMaxRows = 2'000'000;

    explicit EventStaging(size_t maxRows = kDefaultMaxRows);

    /// Job side: converts every record `next()` yields (a `const CUpti_Activity*`, nullptr at
    /// the end) under one lock, and adds `cuptiDropped` (CUPTI's own count of records it lost).
    /// Records beyond maxRows are counted as WriterQueueOverflow, records after outputFailed()
    /// as OutputWriteFailed (per record kind); none is kept. No I/O, no wait on the writer.
    /// After the final round (takeInto with final) every record is still converted, and also
    /// counted as CuptiRecordsAfterClose (written in the agent's last frame, after the closing
    /// round).
    template <class NextRecord>
    void addRecords(uint64_t cuptiDropped, NextRecord&& next) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_cuptiDropped += cuptiDropped;
        while (const CUpti_Activity* record = next()) {
            addLocked(*record);
            m_afterFinal += m_finalTaken ? 1 : 0;
        }
    }

    /// Job side: a buffer whose walk CUPTI stopped before its end (an incomplete or unknown
    /// record), `bytesLost` after the last record read. Counted as CuptiRecordsUndecoded (one
    /// per buffer, the bytes in the reason).
    void noteUndecodedBuffer(uint64_t bytesLost);
    /// Rows the agent makes itself (driver VMM pages, NVML samples), under the same bounds as
    /// records: beyond maxRows or after outputFailed() they are counted, not kept.
    void addMemory(const std::vector<trace::MemoryEvent>& events);
    void addCounters(const std::vector<trace::CounterSample>& samples);

    /// Writer side: moves the staged rows, the string-table entries `out` lacks and one DataLoss
    /// per non-zero drop counter (the converter's records without a time, undecodable buffers
    /// and records after the final round among them) into `out`, and resets the counters.
    /// `final` first closes the NVTX ranges still open (at exit) and marks every later record
    /// as arriving after the final round.
    void takeInto(trace::TraceData& out, bool final);
    /// Job start, before the first record: the converter's options (library NVTX domains).
    /// Returns false, changing nothing, once a record has been converted.
    bool setConverterOptions(const ConverterOptions& options);
    /// Interns `name` in the staging string table (the ids written come from it).
    trace::StringId intern(std::string_view name);
    /// Writer side, after takeInto: interns `name` in the staging table and copies every entry
    /// `out` lacks into `out.strings`, so the id is valid in `out` at once (rows the agent adds
    /// itself, e.g. NCCL collectives, after the round's take).
    trace::StringId internInto(std::string_view name, trace::TraceData& out);

    /// From now on every record is dropped and counted as OutputWriteFailed.
    void markOutputFailed();
    bool outputFailed() const;

    /// Records dropped so far, and not yet taken, under `counter` (WriterQueueOverflow,
    /// OutputWriteFailed); for tests and the closing notice.
    uint64_t pendingDrops(trace::LossCounter counter) const;
    /// Records dropped under OutputWriteFailed since the output failed (taken or not).
    uint64_t droppedAfterFailure() const;
    /// Rows staged now.
    size_t stagedRows() const;

private:
    void addLocked(const CUpti_Activity& record);
    /// False (counting the row under `kind`) when the row cannot be kept.
    bool roomLocked(size_t kind);
    size_t stagedRowsLocked() const;

    static constexpr size_t kKinds = 64;
    const size_t m_maxRows;
    mutable std::mutex m_mutex;
    trace::TraceData m_staging;
    std::unique_ptr<RecordConverter> m_converter;
    std::array<uint64_t, kKinds> m_overflowByKind{};  ///< dropped because staging was full
    std::array<uint64_t, kKinds> m_failedByKind{};    ///< dropped because the output failed
    uint64_t m_cuptiDropped = 0;
    uint64_t m_droppedAfterFailure = 0;
    uint64_t m_undecodedBuffers = 0;
    uint64_t m_undecodedBytes = 0;
    uint64_t m_afterFinal = 0;  ///< records converted after the final take, not yet reported
    bool m_finalTaken = false;
    bool m_outputFailed = false;
};

}  // namespace vramscope::capture
