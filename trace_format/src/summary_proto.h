#pragma once
// Conversion between TraceSummary and trace.proto's Summary message, shared by the writer, the
// summary reader and the job index (private to trace_io).

#include "vramscope/trace/summary.h"
#include "vramscope/trace/v1/trace.pb.h"

namespace vramscope::trace::detail {

/// Fills `out` from `summary` (header not included: it has its own frame / field).
void summaryToProto(const TraceSummary& summary, v1::Summary& out);
/// Reads `in` into a TraceSummary delta (no header). Ids and enums out of range are clamped and
/// counted in `badValues`; column lengths that disagree drop that envelope or index (counted too).
TraceSummary summaryFromProto(const v1::Summary& in, uint64_t& badValues);
/// FileHeader conversions (the writer's and the reader's, shared with the job index).
void headerToProto(const FileHeader& header, v1::FileHeader& out);
void headerFromProto(const v1::FileHeader& in, FileHeader& out);

}  // namespace vramscope::trace::detail
