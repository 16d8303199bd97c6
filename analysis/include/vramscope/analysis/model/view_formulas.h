#pragma once
// The formulas behind the figures each view shows, in words, with their sources: the footer of an
// exported picture, the review PDF's pages and the GUI's export all print them from here, so a
// figure and the sentence that explains it never drift apart. Plain data, no Qt.

#include <string>
#include <string_view>
#include <vector>

namespace vramscope::analysis {

struct JobModel;

/// The views that can be rendered and exported on their own, in the order the review report
/// pages them: "timeline", "roles", "lanes", "flame", "gaps", "leak", "advice", "segments".
const std::vector<std::string_view>& exportableViews();

/// Whether `view` is one of exportableViews().
bool isExportableView(std::string_view view);

/// The formula sentences of `view` (one figure each, its source in parentheses where it comes
/// from outside vramscope); the capacity rule and units first. Empty for an unknown name.
std::vector<std::string> viewFormulas(std::string_view view);

/// The one-line title of `view` ("Memory timeline", "Communication lanes", ...); empty for an
/// unknown name.
std::string viewTitle(std::string_view view);

/// Why `view` has nothing to show for `job` ("no memory events were recorded", "no kernels were
/// recorded", ...), or "" when it has data. The review report leaves such views out and lists
/// them with this sentence; the rules follow what each view draws.
std::string viewEmptyReason(const JobModel& job, std::string_view view);

}  // namespace vramscope::analysis
