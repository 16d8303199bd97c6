#pragma once
// A training job as the readers hand it over: one loaded trace per rank, with where it came from.
// Plain data (trace_io); trace::openJob (open_trace.h, trace_import) fills it.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {

/// The format an input was read as (detectFormat in open_trace.h guesses it).
enum class InputFormat { Unknown, Vscope, PytorchSnapshot, KinetoJson, NsysSqlite };

/// One rank of a job: a loaded trace and where it came from.
struct RankTrace {
    /// The file, or "ARCHIVE:MEMBER" for a trace read from an archive, or "REPORT:pid N" for one
    /// process of an Nsight Systems report that holds several.
    std::string path;
    InputFormat format = InputFormat::Unknown;
    LoadedTrace trace;
    // Clock: the trace's timestamps stay as the producer stamped them (the rank's own clock).
    // Every supported producer stamps events with one host clock per rank that the ranks of a
    // job share (Kineto: microseconds of the host's clock, made absolute with
    // `baseTimeNanoseconds` where the file has one, so ranks on different hosts meet on the Unix
    // epoch; Nsight Systems: ns since the session start made absolute with the report's
    // TARGET_INFO_SESSION_START_TIME.utcEpochNs, likewise; .vscope: its clock domain), so the
    // job's clock (analysis::JobModel, ns from the job's earliest event) is one shift of all of
    // them, and no per-rank offset is kept here.
    std::string rankSource;  ///< where the rank came from: "header", "file name", "unknown"
};

/// A training job: one trace per rank, sorted by rank (unknown ranks last, in path order).
struct Job {
    std::vector<RankTrace> ranks;
    std::vector<Error>
        skipped;  ///< inputs that could not be opened at all (the job opens without them)
    /// Sentences about inputs that opened but were not taken as they are: a rank given twice
    /// (kept once, naming both sources) and two different traces claiming one rank (both kept).
    std::vector<std::string> warnings;
};

}  // namespace vramscope::trace
