#pragma once
// Notes for what vramscope's analyses found in a job ("auto-notes"), placed on request so that a
// user can keep, edit or remove them like their own.

#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"

namespace vramscope::analysis {

/// One generated note (trace::Note::generated = true, `kind` set, no id: the caller gives ids)
/// per finding the data supports, in time order:
///  - "peak": the highest allocated (else reserved) bytes of each GPU, a point at its time;
///  - "oom": each out-of-memory event, a point on its GPU, with the request and what was free;
///  - "staircase": where a GPU's leak verdict is a staircase, the range of the iterations the
///    verdict was made on, with the growth per iteration and the verdict's reason;
///  - "straggler": when the straggler finding meets its evidence (as the advice requires), the
///    collective it was last in with the largest skew: the range from the first arrival to its
///    own, on its GPU;
///  - "idle-gap": the longest idle gap of the job, a range on its GPU, with its class.
/// A finding the analyses did not make (no memory, no iterations, one rank) gives no note: a
/// note is never placed on what the data does not support. Times are job time.
std::vector<trace::Note> autoNotes(const JobModel& job);

/// The notes the job's own trace files carry (trace::Annotation, as `vramscope-cli convert
/// --notes` writes them), moved onto job time. An annotation naming a device is pinned to that
/// GPU of its rank; one with device -1 belongs to every GPU. Ids are kept when unique, else
/// "f<i>" (i counts the annotations read).
std::vector<trace::Note> notesInTraces(const JobModel& job);

/// What to write into the file of rank `rankIndex` (whose job time = trace time + toJobNs) for
/// `notes` on job time: notes pinned to a GPU of that rank, and the notes of every GPU in rank
/// index 0's file only (allRanks set), so that a job read back has each note once.
std::vector<trace::Annotation> annotationsForRank(const std::vector<trace::Note>& notes,
                                                  int rankIndex, int64_t toJobNs);

}  // namespace vramscope::analysis
