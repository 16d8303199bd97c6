#pragma once
// The one progress callback of vramscope's long work: reading and importing inputs, analysing a
// job, building the job model, summarising rank files.

#include <functional>
#include <string_view>

namespace vramscope::trace {

/// Called from the thread doing the work with how far it has come, `done` from 0 to 1 (never
/// going back within one piece of work), and what it is doing now in words for a progress line
/// ("Analysing 8 ranks"; may be empty). Returns false to cancel: the work then stops at its next
/// check and returns ErrorCode::Cancelled. An empty function means nobody is listening.
using Progress = std::function<bool(double done, std::string_view stage)>;

}  // namespace vramscope::trace
