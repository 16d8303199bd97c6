#pragma once
// A time window of a file read on its own (readTraceFrames) given the levels of the whole file:
// memory alive before the window comes from the summaries, not from events the window lacks.

#include <cstdint>

#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

using trace::TimestampNs;

/// Where to start reading for a window that starts at `t0` (file clock): the first step of the
/// summary block in force at t0 over every event-fed series, so that the read holds a step whose
/// whole-file value the summary knows (anchorWindowMemory needs one). `t0` when no block starts
/// before it.
TimestampNs windowReadStart(const trace::TraceSummary& summary, TimestampNs t0);

/// What anchorWindowMemory did.
struct WindowAnchor {
    int anchoredSeries = 0;    ///< series given their memory alive before the window
    int unanchoredSeries = 0;  ///< series with events but no block start among them (levels
                               ///< then count only the window's own events)
};

/// Adjusts the memory events of `window` (the frames of [t0, t1] read from the file `summary`
/// describes, starting at windowReadStart) so that buildMemoryTimelines gives the whole file's
/// levels there. Memory events outside [t0', t1] are dropped, t0' being the earliest event time of
/// a read frame that overlaps [t0, t1] (table frames far from the window carry events too). Per
/// (device, level) fed by events: with R(t) the running sum of the window's events after every
/// event at time t (MemoryRunningSum rules) and b the first summary block whose first step lies
/// among the window's events, the memory alive before the window is
///   c = b.firstBytes - R(b.startNs) + lift,   lift = max(0, -MemoryEnvelope::lowestBytes),
/// added as one MemoryKind::PreExisting allocation just before the window's first event (the
/// whole-file series is lifted by `lift` too, so the window's values equal the lifted ones). A
/// series without memory events in the window gets the value in force from the last block
/// before it. Exact when frees inside the window of memory allocated before it carry their
/// allocation's size (true of every producer vramscope reads).
WindowAnchor anchorWindowMemory(trace::TraceData& window, const trace::TraceSummary& summary,
                                TimestampNs t0, TimestampNs t1);

}  // namespace vramscope::analysis
