#pragma once
// A flame tree as speedscope's file format (https://www.speedscope.app/file-format-schema.json),
// so the live set at a time opens in speedscope with its bytes unit (folded stacks lose it).
// What `vramscope-cli export --format speedscope`, `flame --format speedscope` and the GUI's
// File > Export Data... write, through the same function.

#include <ostream>
#include <string>

#include "vramscope/analysis/memory/flame_tree.h"
#include "vramscope/trace/error.h"

namespace vramscope::analysis {

/// Where a tree came from, for the profile's name.
struct SpeedscopeSource {
    std::string file;  ///< the trace (or job title) the tree was built from
    trace::RankId rank = trace::kUnknownRank;
};

/// The frame that stands for bytes held at the root itself (allocations with an empty path).
inline constexpr const char* kSpeedscopeRootFrame = "(no path)";

/// The name of the profile writeSpeedscope writes: "FILE, rank R GPU D, allocated at T ns (trace
/// clock), by stack".
std::string speedscopeProfileName(const FlameTree& tree, const SpeedscopeSource& source);

/// Writes `tree` as one speedscope file: "$schema", "shared": {"frames": one {"name"} per
/// distinct node name}, one profile {"type": "sampled", "unit": "bytes", "startValue": 0,
/// "endValue": the sum of the weights}, where each node with self bytes gives one sample (the
/// frame indices from the root's child down to that node, root first) weighted by its self bytes,
/// in tree order (children by bytes, largest first). The weights sum to the root's bytes: the
/// live bytes at tree.timeNs. Format facts from speedscope's file-format-schema.json (v1.25).
/// Errors (ErrorCode::Invalid): a diff tree (speedscope weights cannot be negative).
trace::Status writeSpeedscope(const FlameTree& tree, const SpeedscopeSource& source,
                              std::ostream& out);

}  // namespace vramscope::analysis
