#pragma once
// Notes for what vramscope's analyses found in a job ("auto-notes"), placed on request so that a
// user can keep, edit or remove them like their own.

#include <vector>

#include "vramscope/analysis/job_model.h"
#include "vramscope/trace/notes.h"

namespace vramscope::analysis {

/// One generated note (trace::Note::generated = true, `kind` set, no id: the caller gives ids)
/// per finding the data supports, in time order:
///  - "peak": the highest allocated (else reserved) bytes of each GPU, a point at its time;
///  - "oom": each out-of-memory event, a point on its GPU, with the request and what was free;
///  - "staircase": where a GPU's leak verdict is a staircase, the range from the first steady
///    iteration's end to the trace end, with the growth per iteration;
///  - "straggler": the collective with the largest straggler wait, a range on the late rank;
///  - "idle-gap": the longest idle gap of the job, a range on its GPU, with its class.
/// A finding the analyses did not make (no memory, no iterations, one rank) gives no note: a
/// note is never placed on what the data does not support. Times are job time.
std::vector<trace::Note> autoNotes(const JobModel& job);

}  // namespace vramscope::analysis
