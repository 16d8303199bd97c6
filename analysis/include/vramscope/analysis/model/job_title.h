#pragma once
// The name a job goes by in the window title, in exports and in reviews: one rule for the GUI and
// every CLI command.

#include <string>
#include <vector>

namespace vramscope::analysis {

/// "run.vscope" for one file, "dir" for one directory (a trailing slash is ignored),
/// "N inputs" for several (files, directories or archives alike), "bundled sample" for none.
std::string jobTitle(const std::vector<std::string>& inputs);

}  // namespace vramscope::analysis
