#include "vramscope/trace/data_loss.h"

#include <array>
#include <utility>

namespace vramscope::trace {
namespace {

using S = LossSeverity;
using C = LossCounter;

// The registry. Names are stable (they are written into files): add rows, never rename.
constexpr std::array kCounters{
    LossCounterInfo{C::Other, "other", S::DataLoss,
                    "a loss the producer described in its own words (see the reason)"},
    LossCounterInfo{C::FramesSkipped, "frames_skipped", S::Error,
                    ".vscope frames with a CRC mismatch or an undecodable payload were skipped; "
                    "their events are missing"},
    LossCounterInfo{C::TruncatedBytes, "truncated_bytes", S::DataLoss,
                    "bytes after the last whole frame or event of a file that was cut (a crash "
                    "or an interrupted copy); their events are missing"},
    LossCounterInfo{C::CompressedInputCut, "compressed_input_cut", S::DataLoss,
                    "the gzip stream ends early; what was compressed after the cut is missing"},
    LossCounterInfo{C::JsonValuesOutOfRange, "json_values_out_of_range", S::Info,
                    "numbers outside the 64-bit range in fields vramscope reads were skipped; "
                    "their events were kept"},
    LossCounterInfo{C::JsonEventsWithoutTime, "json_events_without_time", S::DataLoss,
                    "events without a usable ts (or [memory] events without Bytes) were "
                    "skipped"},
    LossCounterInfo{C::JsonNonObjectEntries, "json_non_object_entries", S::Info,
                    "traceEvents elements that are not objects were skipped"},
    LossCounterInfo{C::JsonControlCharactersReplaced, "json_control_characters_replaced", S::Info,
                    "raw control characters inside strings (JSON forbids them) were replaced by "
                    "spaces"},
    LossCounterInfo{C::JsonInvalidUtf8Replaced, "json_invalid_utf8_replaced", S::Info,
                    "invalid UTF-8 sequences were replaced with U+FFFD"},
    LossCounterInfo{C::JsonEventsAfterDamage, "json_events_after_damage", S::Error,
                    "the JSON is cut or malformed; the events after the damage are lost"},
    LossCounterInfo{C::SnapshotEntriesSkipped, "snapshot_entries_skipped", S::Error,
                    "PyTorch memory snapshot entries that could not be replayed were skipped"},
    LossCounterInfo{C::CuptiRecordsDropped, "cupti_records_dropped", S::DataLoss,
                    "CUPTI dropped activity records because no buffer was free; try a shorter "
                    "VRAMSCOPE_FLUSH_MS"},
    LossCounterInfo{C::WriterQueueOverflow, "writer_queue_overflow", S::DataLoss,
                    "records dropped because the trace writer fell behind (disk or socket too "
                    "slow) and its queue was full"},
    LossCounterInfo{C::OomEventsDropped, "oom_events_dropped", S::DataLoss,
                    "failed allocations beyond what the agent could queue were not recorded"},
    LossCounterInfo{C::NsysRowsSkipped, "nsys_rows_skipped", S::DataLoss,
                    "rows of an Nsight Systems export that make no event were left out (see the "
                    "reason)"},
    LossCounterInfo{C::SizesOutOfRange, "sizes_out_of_range", S::Error,
                    "memory sizes larger than any GPU or host could hold (damaged or hostile "
                    "input) were kept out of peaks and totals"},
    LossCounterInfo{C::TimesOutOfSpan, "times_out_of_span", S::Error,
                    "events whose time or duration lies far outside the rest of the trace (a "
                    "zero or foreign timestamp, a duration of years) were kept out of the span"},
    LossCounterInfo{C::OutputWriteFailed, "output_write_failed", S::DataLoss,
                    "the agent could not write its trace output (directory unwritable, disk "
                    "full); events after the failure are missing"},
    LossCounterInfo{C::NcclEventsDropped, "nccl_events_dropped", S::DataLoss,
                    "NCCL profiler events the agent had no room for (event pool exhausted or "
                    "the queue to the writer full); those collectives or channels are missing"},
    LossCounterInfo{C::LiveFramesDropped, "live_frames_dropped", S::DataLoss,
                    "frames a live producer could not send to this viewer (its queue was full, "
                    "or they had left the producer's ring before the viewer attached); the "
                    "events are missing from this copy only, not from the job"},
    LossCounterInfo{C::CuptiRecordsUndecoded, "cupti_records_undecoded", S::DataLoss,
                    "CUPTI activity records handed to the agent that it could not read (CUPTI "
                    "reported an incomplete or unknown record, and the rest of that buffer was "
                    "unreadable); the count is of buffers cut, the reason gives the bytes lost"},
    LossCounterInfo{C::CuptiRecordsWithoutTime, "cupti_records_without_time", S::DataLoss,
                    "kernel, memcpy or memset records whose start or end time CUPTI could not "
                    "take (0, or an end before the start); dropped rather than drawn at time 0"},
    LossCounterInfo{C::CuptiRecordsAfterClose, "cupti_records_after_close", S::Info,
                    "CUPTI activity records handed to the agent after its final flush at exit "
                    "(a CUDA context destroyed during the process's teardown); they were written "
                    "in a last frame after the closing round, later ones are not in the file"},
};

constexpr bool inOrder() {
    for (size_t i = 0; i < kCounters.size(); ++i) {
        if (static_cast<size_t>(kCounters[i].counter) != i) {
            return false;
        }
    }
    return true;
}
static_assert(inOrder(), "kCounters must list every LossCounter in declaration order");
static_assert(static_cast<size_t>(C::CuptiRecordsAfterClose) + 1 == kCounters.size(),
              "every LossCounter needs a registry row");

/// Labels written into DataLoss.what before the registry existed (by the reader, the importers
/// and the capture agent, and kept by `vramscope-cli convert`). "events" and "characters" named
/// several counters and stay Other.
constexpr std::pair<std::string_view, LossCounter> kLegacyLabels[] = {
    {"frames", C::FramesSkipped},
    {"bytes at the end of the file", C::TruncatedBytes},
    {"bytes", C::CompressedInputCut},
    {"argument values", C::JsonValuesOutOfRange},
    {"snapshot entries", C::SnapshotEntriesSkipped},
    {"CUPTI activity records", C::CuptiRecordsDropped},
    {"out-of-memory events", C::OomEventsDropped},
};

}  // namespace

std::span<const LossCounterInfo> dataLossCounters() {
    return kCounters;
}

const LossCounterInfo& lossCounterInfo(LossCounter counter) {
    const auto i = static_cast<size_t>(counter);
    return i < kCounters.size() ? kCounters[i] : kCounters[0];
}

LossCounter lossCounterFromName(std::string_view name) {
    for (const LossCounterInfo& c : kCounters) {
        if (c.name == name) {
            return c.counter;
        }
    }
    for (const auto& [label, counter] : kLegacyLabels) {
        if (label == name) {
            return counter;
        }
    }
    return C::Other;
}

const char* toString(LossSeverity severity) {
    switch (severity) {
        case S::Info:
            return "info";
        case S::DataLoss:
            return "data_loss";
        case S::Error:
            return "error";
    }
    return "data_loss";
}

std::string describe(const DataLoss& loss) {
    const LossCounterInfo& info = lossCounterInfo(loss.counter);
    std::string out(info.name);
    out += " = " + (loss.count > 0 ? std::to_string(loss.count) : std::string("uncounted"));
    out += std::string(" [") + toString(info.severity) + "]: ";
    out += info.description;
    if (!loss.reason.empty()) {
        out += " (" + loss.reason + ")";
    }
    return out;
}

}  // namespace vramscope::trace
