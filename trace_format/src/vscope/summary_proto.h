#pragma once
// Conversion between TraceSummary and trace.proto's Summary message, shared by the writer, the
// summary reader and the job index (private to trace_io).

#include <string_view>

#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"

namespace vramscope::trace::detail {

/// First payload byte of a summary frame: Chunk field 13 (`summary`), wire type 2 (13 << 3 | 2).
inline constexpr uint8_t kSummaryFrameTag = 0x6A;

/// Whether a frame is a summary frame (trace.proto, Summaries): raw, and its Chunk opens with
/// field 13. Event and header chunks never do: protobuf serialises fields in field order and
/// they always hold one of fields 1-12.
inline bool isSummaryFrame(uint8_t encoding, std::string_view payload) {
    return encoding == kEncodingRaw && !payload.empty() &&
           static_cast<uint8_t>(payload[0]) == kSummaryFrameTag;
}

/// Fills `out` from `summary` (header not included: it has its own frame / field).
void summaryToProto(const TraceSummary& summary, v1::Summary& out);
/// Reads `in` into a TraceSummary delta (no header). Ids and enums out of range are clamped and
/// counted in `badValues`; column lengths that disagree drop that envelope or index (counted too).
TraceSummary summaryFromProto(const v1::Summary& in, uint64_t& badValues);
/// FileHeader conversions (the writer's and the reader's, shared with the job index).
/// headerToProto writes header.formatMajor / formatMinor as they are (the writer then sets the
/// version it writes); headerFromProto leaves out.formatMajor / formatMinor alone, because a
/// reader takes the version from the file's preamble (read in.format_major() where wanted).
void headerToProto(const FileHeader& header, v1::FileHeader& out);
void headerFromProto(const v1::FileHeader& in, FileHeader& out);

}  // namespace vramscope::trace::detail
