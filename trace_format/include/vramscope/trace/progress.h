#pragma once
// The one progress callback of vramscope's long work: reading and importing inputs, analysing a
// job, building the job model, summarising rank files.

#include <cstdint>
#include <functional>
#include <string_view>

namespace vramscope::trace {

/// Called from the thread doing the work with how far it has come, `done` from 0 to 1 (never
/// going back within one piece of work), and what it is doing now in words for a progress line
/// ("Analysing 8 ranks"; may be empty). Returns false to cancel: the work then stops at its next
/// check and returns ErrorCode::Cancelled. An empty function means nobody is listening.
using Progress = std::function<bool(double done, std::string_view stage)>;

/// Tells `progress` that `done` of `total` units (bytes read, tables imported) are done, as the
/// share done / total (1 when total is 0). True when there is no callback or it says go on.
inline bool reportProgress(const Progress& progress, uint64_t done, uint64_t total,
                           std::string_view stage) {
    if (!progress) {
        return true;
    }
    return progress(total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total),
                    stage);
}

}  // namespace vramscope::trace
