#pragma once
// What the trace exports (Perfetto, Chrome JSON) contain, decided once: walkJob() visits a job
// model's tracks and events in the order every writer needs, and an ExportSink turns them into
// one format. Internal to analysis; the public entry points are perfetto_export.h and
// chrome_trace_export.h.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/model/job_model.h"

namespace vramscope::analysis::exporting {

/// A named value shown with an event (a Perfetto debug annotation, a Chrome "args" entry).
struct ExportArg {
    std::string_view name;
    enum class Type : uint8_t { Int, Uint, String } type = Type::Int;
    int64_t intValue = 0;
    uint64_t uintValue = 0;
    std::string_view stringValue;

    static ExportArg ofInt(std::string_view n, int64_t v) { return {n, Type::Int, v, 0, {}}; }
    static ExportArg ofUint(std::string_view n, uint64_t v) { return {n, Type::Uint, 0, v, {}}; }
    static ExportArg ofString(std::string_view n, std::string_view v) {
        return {n, Type::String, 0, 0, v};
    }
};

/// The place of a slice in a flow (a matched collective linked across ranks, in arrival order).
enum class FlowStep : uint8_t { None, First, Middle, Last };

/// One slice: [startNs, endNs) in job time (ns from the job start, >= 0).
struct ExportSlice {
    int64_t startNs = 0;
    int64_t endNs = 0;
    std::string_view name;
    /// Kineto's category names for kernels ("kernel", "gpu_memcpy", "gpu_memset") so that a
    /// Chrome export reads back as a profiler trace; our own words for the rest.
    std::string_view category;
    std::vector<ExportArg> args;
    uint64_t flowId = 0;  ///< 0 = no flow
    FlowStep flowStep = FlowStep::None;
};

/// Where a track sits. Every track belongs to one rank (its process).
enum class TrackKind : uint8_t {
    HostThread,  ///< a CPU thread of the rank (NVTX ranges, annotations, profiler steps)
    Slices,      ///< any other track of slices (a GPU stream, idle gaps, collectives, ...)
    Counter,     ///< a counter of bytes
};

/// Receives the walk. Tracks are announced before their events; the slices of one track come
/// consecutively, in start order (longer first on equal starts), properly nested (a slice that
/// begins inside another ends inside it), and are followed by endTrack(). Counter values of one
/// track come in time order. Not thread-safe; one walk per sink.
class ExportSink {
public:
    virtual ~ExportSink() = default;
    /// A rank: its position in JobModel::ranks and a display name ("rank 3 · host-a").
    virtual void process(int rankIndex, std::string_view name) = 0;
    /// A track of rank `rankIndex`; `threadId` is the OS thread for HostThread tracks. Returns
    /// the id the events of the track refer to (the sink's own numbering).
    virtual uint64_t track(int rankIndex, TrackKind kind, std::string_view name,
                           uint64_t threadId) = 0;
    virtual void slice(uint64_t track, const ExportSlice& slice) = 0;
    /// Ends the track's slices (a sink that writes begin / end pairs closes what is open).
    virtual void endTrack(uint64_t track) = 0;
    virtual void counter(uint64_t track, int64_t timeNs, int64_t bytes) = 0;
    virtual void instant(uint64_t track, int64_t timeNs, std::string_view name,
                         std::string_view category, const std::vector<ExportArg>& args) = 0;
    /// False once the sink failed (its stream refused a write): the walk stops.
    virtual bool good() const = 0;
};

/// Name of the counter track of one level of GPU `device`: "GPU 0 allocated", "GPU 0 reserved".
/// The Chrome export writes its memory counters under these names and the Kineto importer reads
/// them back by them (trace_format's kineto_parse.cpp parses the same form).
std::string memoryCounterName(trace::DeviceIndex device, trace::MemoryLevel level);

/// Walks `model`: per rank a process; per GPU of JobModel::gpus the allocated and reserved
/// counters at full resolution (the model's step series, job time); per (GPU, stream) the
/// kernels, copies and memsets; the trace's NVTX ranges, annotations and profiler steps on their
/// host threads (GPU annotations on a track of their GPU); the analysis' iterations when they
/// did not come from ranges; per GPU the matched collectives, each a flow over its participants
/// (flow id = 1 + its position in JobModel::collectives().collectives), the idle gaps with their
/// cause (those the analysis keeps: the largest BreakdownOptions::maxGaps, 1,000 by default), and
/// the OOM events as instants. Slices that overlap without nesting (kernels of a stream that
/// overlap in the trace) go on extra tracks named "... (overlap N)" so that nothing is dropped or
/// cut. The notes a trace carries (TraceData::annotations, the .vscope's annotations) are slices on
/// a "notes" track of their rank; a notes sidecar (docs/DESIGN.md "Notes and review exports")
/// reaches them through `convert` (see walkNotes()).
void walkJob(const JobModel& model, ExportSink& sink);

}  // namespace vramscope::analysis::exporting
