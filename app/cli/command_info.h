#pragma once
// vramscope-cli info as options, a result and a printer: what each trace of a job holds (header,
// devices, event counts by kind, time span, what the reader loaded and lost).

#include <iosfwd>
#include <optional>

#include "cli_command.h"
#include "device_report.h"

namespace vramscope::app {

/// The command line of `info`: FILE... [--json].
struct InfoOptions {
    InputOptions inputs;  ///< at least one
    bool json = false;
};

/// Parses ctx.args. nullopt with `exitCode` set when the command is done: kExitSuccess after
/// --help, kExitUsage after a usage error (written to ctx.err).
std::optional<InfoOptions> parseInfoOptions(CommandContext& ctx, int& exitCode);

/// What `info` reports, one JSON object per trace of the job, in the job's rank order:
/// {"file", "format", "header": {"format_version", "producer", "host", "pid", "rank" (null when
/// unknown), "rank_source", "local_rank", "world_size", "job_id", "clock_domain",
/// "wall_clock_anchor_ns", "anchor_trace_ns", "capture_settings"}, "devices": [{"index", "uuid",
/// "name", "capacity_bytes" (null when unknown)}], "events": {"memory": {"total", "alloc",
/// "free", "allocated_level", "reserved_level"}, "kernels": {"total", and one count per
/// category}, "collectives", "ranges": {"total", one per kind}, "counters", "ooms",
/// "annotations", "strings", "frames", "stacks"}, "event_total", "time_span": {"first_ns",
/// "last_ns", "duration_ns"} (trace clock; null without events), "read": {"file_bytes",
/// "complete", "frames_loaded", "frames_skipped", "summary"}, "summaries": {"frames", "final",
/// "analyses"} (null when the file stores none), "data_loss": [dataLossJson()]}.
struct InfoResult {
    Json traces = Json::array();
};

/// Describes every trace of `job`; reads a .vscope file's summary frames from its path.
InfoResult describeTraces(const trace::Job& job);

/// `{"traces": [...]}` as JSON (two-space indent), or the text form: one block per trace.
void printInfo(const InfoResult& result, bool json, std::ostream& os);

}  // namespace vramscope::app
