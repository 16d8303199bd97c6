#pragma once
// Summaries of a .vscope file: what a viewer needs to draw every GPU of a trace without reading its
// events (memory envelopes, peaks, kernel time, a time index of the frames), and what the
// whole-file analyses found when a tool ran them. Stored as summary frames (trace.proto, message
// Summary): the writer adds one after each batch of event frames and one at close, so a file cut
// after any of them (a killed job) opens from the summaries up to there.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vramscope/trace/device_analysis_summary.h"
#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {

/// Steps of a memory series per summary block. 256 keeps a 10-million-step series at about 39 k
/// blocks (1.5 MB) while a block stays narrower than a screen column at the zoom that shows all.
inline constexpr uint32_t kSummaryBlockSteps = 256;
/// Buckets of a KernelHistogram: durations up to 2^63 ns.
inline constexpr size_t kKernelHistogramBuckets = 64;

/// Value range of one block of consecutive steps of a memory series (bytes; times in the file's
/// clock). A step is the series' value after every event at one timestamp (the rule of
/// analysis::buildMemoryTimelines).
struct SummaryBlock {
    TimestampNs startNs = 0;  ///< time of the block's first step
    TimestampNs endNs = 0;    ///< time of the block's last step (== startNs for one step)
    int64_t minBytes = 0;
    int64_t maxBytes = 0;
    int64_t firstBytes = 0;  ///< value of the first step
    int64_t lastBytes = 0;   ///< value of the last step: it holds until the next block starts
    uint32_t steps = 0;      ///< 1 .. kSummaryBlockSteps
};

/// Where a series' values come from (the same precedence as analysis::buildMemoryTimelines: the
/// producer's counter wins when the device has one).
enum class SeriesOrigin : uint8_t {
    MemoryEvents = 1,  ///< running sum of the level's alloc / free events (DeviceStatic left out)
    ProducerCounter = 2,  ///< CounterKind AllocatedBytes / ReservedBytes samples
};

/// One memory series (a level on a device) as blocks, with its cumulative figures. Values are the
/// raw running sum: when lowestBytes < 0 a viewer lifts every value by -lowestBytes (the memory
/// that must have been alive before the trace began), as buildMemoryTimelines does.
struct MemoryEnvelope {
    DeviceIndex device{0};
    MemoryLevel level = MemoryLevel::Allocated;
    SeriesOrigin origin = SeriesOrigin::MemoryEvents;
    std::vector<SummaryBlock> blocks;  ///< in time order
    uint64_t totalSteps = 0;
    uint64_t events = 0;  ///< events or samples that fed the series
    int64_t peakBytes = 0;
    TimestampNs peakTimeNs = 0;  ///< first time peakBytes was reached (the rank's own clock)
    /// Lowest running sum after any event (not only after a step: the rule of the timelines'
    /// lift, trace/memory_running_sum.h); 0 when it never went below 0, and for counters.
    int64_t lowestBytes = 0;
    uint64_t unmatchedFrees = 0;
    /// Events earlier than the series' last step when they arrived (in a later batch), or at
    /// the time of a step already stored in an earlier summary frame (they join the latest step,
    /// or give a second step at that time). Non-zero means the envelope is not what sorting every
    /// event would give: a viewer computes the series from the events instead.
    uint64_t outOfOrder = 0;
};

/// Kernel time of one category on one device.
struct KernelHistogram {
    DeviceIndex device{0};
    KernelCategory category = KernelCategory::Compute;
    uint64_t count = 0;
    uint64_t busyNs = 0;  ///< sum of durations (not the union)
    /// [i]: kernels whose duration d has floor(log2(d)) == i; d == 0 counts in [0].
    std::array<uint64_t, kKernelHistogramBuckets> log2Counts{};
    TimestampNs firstStartNs = 0;
    TimestampNs lastEndNs = 0;
};

/// What a frame holds (FrameIndexEntry::contents).
enum FrameContents : uint32_t {
    kFrameMemory = 1,
    kFrameKernels = 2,
    kFrameCollectives = 4,
    kFrameRanges = 8,
    kFrameCounters = 16,
    kFrameTables = 32,  ///< string, frame or stack table entries
    kFrameOther = 64,   ///< OOMs, data loss, annotations, communicators
};

/// Where one event frame is and the time its events span.
struct FrameIndexEntry {
    uint64_t frameNumber = 0;  ///< 0-based, header frame = 0
    uint64_t offset = 0;       ///< byte offset of the frame's length field
    uint32_t frameBytes = 0;   ///< head + payload + CRC
    TimestampNs minNs = 0;     ///< earliest event time (0 when the frame has no event)
    TimestampNs maxNs = 0;     ///< latest event time, kernel or range end
    uint32_t contents = 0;     ///< FrameContents bits
};

/// A file's summaries merged: blocks and frame-index entries concatenated in file order, the
/// cumulative figures of the last summary frame.
struct TraceSummary {
    FileHeader header;
    std::vector<MemoryEnvelope> memory;           ///< sorted by (device, level, origin)
    std::vector<KernelHistogram> kernels;         ///< sorted by (device, category)
    std::vector<FrameIndexEntry> frames;          ///< in file order
    std::vector<DeviceAnalysisSummary> analysis;  ///< empty unless a tool stored it
    TimestampNs firstNs = 0;                      ///< span of every event covered (0/0 when none)
    TimestampNs lastNs = 0;
    /// Rows covered: memory, kernels, collectives, ranges, counters.
    std::array<uint64_t, 5> tableRows{};
    uint64_t summaryFrames = 0;  ///< summary frames merged (0: computed from events, not stored)
    bool final = false;          ///< the closing summary was found (the writer finished)

    /// The envelope of (device, level, origin), nullptr when there is none.
    const MemoryEnvelope* envelope(DeviceIndex device, MemoryLevel level,
                                   SeriesOrigin origin) const;
};

/// Builds summaries incrementally from the batches a TraceWriter writes. Memory stays bounded by
/// the live allocations of the batches (for address matching) plus one open block per series:
/// events are not kept. Single-threaded.
class SummaryBuilder {
public:
    SummaryBuilder();
    ~SummaryBuilder();
    SummaryBuilder(SummaryBuilder&&) noexcept;
    SummaryBuilder& operator=(SummaryBuilder&&) noexcept;

    /// Feeds every event row of `batch` (tables are looked up in it). Within a batch, events of a
    /// series are taken in time order (stable); an event earlier than the series' last step from
    /// an earlier batch is counted in MemoryEnvelope::outOfOrder.
    void addBatch(const TraceData& batch);
    /// Records where a frame went (the writer calls this for every frame it writes after the
    /// header frame, summary frames excluded).
    void addFrame(const FrameIndexEntry& frame);
    /// The summary of everything fed since the previous takeDelta(): cumulative figures plus the
    /// blocks (open blocks are closed) and frame entries added since. `final` marks the last one.
    TraceSummary takeDelta(bool final);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// The summary of an in-memory trace, computed with a SummaryBuilder over all of it (header
/// included; no frame index: summaryFrames == 0). What a viewer uses for a file without summary
/// frames, and what tests compare stored summaries with.
TraceSummary summarizeTrace(const TraceData& data);

/// Merges `delta` (a later summary frame of the same file) into `into` by the rules of
/// TraceSummary: blocks and frames appended, cumulative figures replaced, analysis replaced when
/// `delta` has one.
void mergeSummary(TraceSummary& into, TraceSummary delta);

/// What readTraceSummary found.
struct SummaryRead {
    TraceSummary summary;
    /// False when the file has no summary frame (written before format 1.1, or cut before its
    /// first one): then `summary` holds only the header, and a caller reads the events
    /// (summarizeTrace over readTraceFile).
    bool found = false;
    /// The frames were scanned (heads only): a cut or damaged file is reported here like
    /// readTraceFile reports it, with file name, byte offset and frame number.
    ReadReport report;
};

/// Reads the header and every summary frame of a .vscope file without decoding its event frames:
/// frame heads are read to walk the file, and only raw frames whose payload starts with the
/// Summary tag are checked (CRC) and decoded. Cost: O(frames) small reads plus the summaries.
/// Errors as readTraceFile for the preamble and the header frame; a damaged summary frame is
/// skipped and reported, and the figures of the last sound one stand.
Result<SummaryRead> readTraceSummary(const std::string& path, const ReadOptions& options = {});

/// Which frames readTraceFrames loads, besides every frame holding table entries (kFrameTables),
/// which is always read so that ids resolve.
using FrameFilter = std::function<bool(const FrameIndexEntry&)>;

/// Reads the header, every frame with table entries and the event frames that `want` accepts,
/// using `summary.frames` (from readTraceSummary of the same file) to seek to them. Events of the
/// table frames are kept too (they may fall outside what `want` asked for). Problems as
/// readTraceFile; a frame that is not where the index says is reported (Corrupt) and skipped.
Result<LoadedTrace> readTraceFrames(const std::string& path, const TraceSummary& summary,
                                    const FrameFilter& want, const ReadOptions& options = {});

/// Frames holding memory events at or before `t` (for a live set at t: every allocation alive at
/// t was made at or before t). A FrameFilter for readTraceFrames.
FrameFilter memoryFramesUpTo(TimestampNs t);
/// Frames whose events overlap [t0, t1]. A FrameFilter for readTraceFrames.
FrameFilter framesOverlapping(TimestampNs t0, TimestampNs t1);

}  // namespace vramscope::trace
