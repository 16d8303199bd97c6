#pragma once
// What a producer, the reader or an importer had to drop, as named counters of one registry.
//
// After Perfetto's stats table: every counter has a stable name, a severity (info, data_loss,
// error) and a description, and producers only report counters the registry lists. The CLI
// (`info`, `check`, `report`) and the GUI banner print the name, the value and the description.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace vramscope::trace {

/// How bad a counter is (Perfetto's stats `kind`: info | data_loss | error).
enum class LossSeverity : uint8_t {
    Info = 0,      ///< input was repaired or ignored; no event is missing
    DataLoss = 1,  ///< events are missing because the producer or the input dropped them
    Error = 2,     ///< events are missing because the input is damaged or contradicts itself
};

/// The counters, in registry order. Their names are the stable keys (dataLossCounters()).
enum class LossCounter : uint8_t {
    Other = 0,  ///< a loss an older or foreign producer named in its own words
    // .vscope reader
    FramesSkipped,
    TruncatedBytes,
    // input decoding (gzip)
    CompressedInputCut,
    // Kineto / Chrome trace JSON importer
    JsonValuesOutOfRange,
    JsonEventsWithoutTime,
    JsonNonObjectEntries,
    JsonControlCharactersReplaced,
    JsonInvalidUtf8Replaced,
    JsonEventsAfterDamage,
    // PyTorch memory snapshot importer
    SnapshotEntriesSkipped,
    // capture agent
    CuptiRecordsDropped,
    WriterQueueOverflow,
    OomEventsDropped,
    // Nsight Systems SQLite importer
    NsysRowsSkipped,
    // any importer: values no real job produces (hostile or damaged input)
    SizesOutOfRange,
    TimesOutOfSpan,
    // capture agent: the trace output itself failed (directory unwritable, disk full)
    OutputWriteFailed,
    // capture agent as NCCL profiler plugin: no free event handle, or the writer's queue full
    NcclEventsDropped,
    // live viewing: what a producer (agent or replay) could not send to one viewer
    LiveFramesDropped,
    // capture agent: CUPTI records it received but could not use
    CuptiRecordsUndecoded,
    CuptiRecordsWithoutTime,
    // capture agent: records CUPTI handed over after the agent's final flush at exit
    CuptiRecordsAfterClose,
};

/// One row of the registry.
struct LossCounterInfo {
    LossCounter counter;
    std::string_view name;  ///< stable key, snake_case; written into .vscope DataLoss.what
    LossSeverity severity;
    std::string_view description;  ///< what the value counts, for a user
};

/// One reported loss: a counter, its value and the details of this occurrence.
struct DataLoss {
    LossCounter counter = LossCounter::Other;
    uint64_t count = 0;   ///< how many were lost (0 = not counted)
    std::string reason;   ///< this occurrence's details (may be empty)
    int64_t startNs = 0;  ///< time range affected (trace clock), 0/0 = unknown
    int64_t endNs = 0;
};

/// Every counter, in LossCounter order (entry i describes LossCounter(i)).
std::span<const LossCounterInfo> dataLossCounters();
/// The registry row of `counter`.
const LossCounterInfo& lossCounterInfo(LossCounter counter);
/// The counter named `name`; also maps the free labels files written before the registry carried
/// in DataLoss.what ("frames", "CUPTI activity records", ...). Other when unknown.
LossCounter lossCounterFromName(std::string_view name);
/// "info", "data_loss" or "error".
const char* toString(LossSeverity severity);
/// "NAME = VALUE [KIND]: DESCRIPTION (REASON)"; VALUE is "uncounted" for count 0 and the reason
/// part is left out when empty. E.g. "frames_skipped = 2 [error]: .vscope frames with a CRC
/// mismatch or an undecodable payload were skipped; their events are missing".
std::string describe(const DataLoss& loss);

}  // namespace vramscope::trace
