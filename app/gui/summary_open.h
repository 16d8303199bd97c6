#pragma once
// Opening from summaries: a .vscope file's summary frames (or a job index's) drawn as a job model
// at once, the memory budget that decides whether every event is loaded, and the time windows
// loaded on demand when it is not. Plain functions over immutable values; callable from any thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/summary.h"

namespace vramscope::app {

/// Resident bytes the viewer spends per loaded event: a 10-million-event .vscope cost about 1.0 GB
/// resident in the GUI (issue 16's measurement of the viewer before summaries).
inline constexpr uint64_t kResidentBytesPerEvent = 100;

/// One file's summary for an overview: the file, its summary, and why its detail cannot be loaded
/// (empty when it can).
struct SummarySource {
    std::string path;
    trace::TraceSummary summary;
    std::string problem;
};

/// Events the summary covers (every table row) times kResidentBytesPerEvent: what loading all of
/// them would cost, bytes.
uint64_t estimatedDetailBytes(const trace::TraceSummary& summary);
/// Of estimatedDetailBytes, the share in the event frames overlapping [t0, t1] (trace time, ns),
/// by the frames' sizes in the summary's frame index. 0 when the index is empty.
uint64_t estimatedWindowBytes(const trace::TraceSummary& summary, int64_t t0, int64_t t1);

/// Physical memory of this machine in bytes (sysconf), 0 when unknown.
uint64_t physicalMemoryBytes();
/// A quarter of physical memory (1 GiB when unknown).
uint64_t defaultMemoryBudgetBytes();
/// The memory budget for events (QSettings "memory/budgetBytes", else the default), bytes.
uint64_t memoryBudgetBytes();
/// Keeps `bytes` as the budget; 0 goes back to the default.
void setMemoryBudgetBytes(uint64_t bytes);

/// A job model drawn from summaries alone: one rank per source, each GPU's allocated and reserved
/// memory from its summary blocks (analysis::summaryTimelines; every block's first, highest,
/// lowest and last value kept as steps), its peaks as the summary states them, no events and no
/// analyses. With `worstFirst`, ranks are ordered by their highest peak share of capacity (peak
/// bytes where no capacity is known), highest first. Job time 0 is the earliest summarised event.
/// Sources with a problem are listed in JobModel::problems and still drawn when they have a
/// summary.
std::shared_ptr<const analysis::JobModel> overviewModel(const std::vector<SummarySource>& sources,
                                                        std::string title, bool worstFirst);

/// Frame numbers of `summary.frames` that framesOverlapping(t0, t1) accepts (trace time, ns).
std::vector<uint64_t> framesForWindow(const trace::TraceSummary& summary, int64_t t0, int64_t t1);

/// The events of `path` in [t0, t1] (trace time, ns): only the frames the summary's index says
/// overlap it (readTraceFrames + framesOverlapping) and the table frames, built into a model
/// (buildJobModel: its job time 0 is the window's earliest event, JobModel::originNs says which
/// trace time that is). Errors: as readTraceFrames.
trace::Result<std::shared_ptr<const analysis::JobModel>> loadWindow(
    const std::string& path, const trace::TraceSummary& summary, int64_t t0, int64_t t1);

/// The summaries of `path` when it is a .vscope file with summary frames; nullopt when it has none
/// (an older file, or one cut before its first summary) or is not a .vscope file. Errors: as
/// readTraceSummary.
trace::Result<std::optional<SummarySource>> readSummarySource(const std::string& path);

/// A job index (.vscope-index, readJobIndex) as an overview model, worst ranks first: each rank's
/// RankInfo::path is its file resolved against the index's folder. Missing rank files and ranks
/// the index could not summarise are listed in JobModel::problems, not fatal. Errors: as
/// readJobIndex.
trace::Result<std::shared_ptr<const analysis::JobModel>> loadIndexOverview(const std::string& path);

/// What the summary's stored analyses say of each device ("GPU 0: 12 iterations; leak: none"),
/// for views that need every event when the events are not loaded. Empty without stored analyses.
std::vector<std::string> storedAnalysisLines(const trace::TraceSummary& summary);

}  // namespace vramscope::app
