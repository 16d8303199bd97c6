#pragma once
// vramscope-cli segments as options, a result and a printer: the reserved segments of one GPU at
// one moment (a time, an OOM, else the allocated peak), with their blocks and free gaps.

#include <iosfwd>
#include <optional>
#include <string>

#include "cli_command.h"
#include "vramscope/analysis/memory/segments.h"

namespace vramscope::app {

/// The command line of `segments`: FILE [--at TIME | --at-oom N] [--device D] [--json].
struct SegmentsOptions {
    InputOptions inputs;            ///< exactly one
    std::optional<int64_t> device;  ///< --device; default the lowest GPU with memory events
    std::optional<int64_t> atNs;    ///< --at, ns after the trace's first event
    std::optional<int64_t> atOom;   ///< --at-oom, 1 = the GPU's first OOM
    bool json = false;
};

/// Parses ctx.args. nullopt with `exitCode` set when the command is done: kExitSuccess after
/// --help, kExitUsage after a usage error (written to ctx.err). A bare number for --at is seconds.
std::optional<SegmentsOptions> parseSegmentsOptions(CommandContext& ctx, int& exitCode);

/// The moment a layout is taken at, and how it was chosen.
struct SegmentsMoment {
    trace::TimestampNs timeNs = 0;  ///< trace clock
    std::string what;           ///< "OOM 1 of 1", "the allocated peak: ...", "the time asked for"
    uint64_t requestBytes = 0;  ///< at an OOM: the failed request; else 0
};

/// What `segments` shows: the layout of the first trace's chosen GPU at the chosen moment.
struct SegmentsResult {
    std::string file;
    trace::RankId rank = trace::kUnknownRank;
    trace::DeviceIndex device{0};
    SegmentsMoment moment;
    trace::TimestampNs startNs = 0;  ///< the trace's first event, which --at counts from
    analysis::SegmentLayout layout;  ///< known (a layout that is not is an error, not a result)
};

/// The layout `options` ask for in the first trace of `job`. nullopt with `exitCode` set and the
/// reason written to ctx.err: kExitUsage for a GPU the trace lacks, an OOM it does not have or a
/// time past its end; kExitUnreadable for a job without traces, a trace without GPU memory
/// events, or a layout the trace cannot give (no segment addresses: segmentLayoutAt's reason).
std::optional<SegmentsResult> segmentsAt(CommandContext& ctx, const trace::Job& job,
                                         const SegmentsOptions& options, int& exitCode);

/// The table (largest segment first, then totals, fragmentation and what is damaged), or JSON:
/// {"file", "rank", "device", "time_ns", "since_start_ns", "moment", "totals", "free_text",
/// "segments": [{"address", "size_bytes", "stream", "allocated_bytes", "free_bytes",
/// "largest_free_bytes", "blocks", "gaps"}]}.
void printSegments(const SegmentsResult& result, bool json, std::ostream& os);

}  // namespace vramscope::app
