#pragma once
// The analyses the GUI panels show for one loaded job (iterations, leaks, flame tree builders,
// kernel lanes, time breakdowns and idle gaps, matched collectives, advice, cost inputs), computed
// once by analyzeJob() from the analysis library and then shared read-only with the panels.

#include <QString>

#include <memory>
#include <vector>

#include "vramscope/analysis/advice.h"
#include "vramscope/analysis/collectives.h"
#include "vramscope/analysis/flame_tree.h"
#include "vramscope/analysis/iterations.h"
#include "vramscope/analysis/job_analysis.h"
#include "vramscope/analysis/kernel_lanes.h"
#include "vramscope/analysis/leak.h"
#include "vramscope/analysis/time_breakdown.h"
#include "vramscope/widgets/loaded_job.h"

namespace vramscope::widgets {

/// Allocation-level views of one GPU that has allocation events. Times are the rank's trace time.
struct GpuMemoryAnalysis {
    GpuKey key;
    trace::MemoryLevel level = trace::MemoryLevel::Allocated;  ///< the level with allocation detail
    int64_t peakTimeNs = 0;  ///< peak of `level` (analysis::peakTime), trace time
    /// Iterations, leak verdict, model state of this GPU (points into JobAnalyses::analysis).
    const analysis::DeviceAnalysis* device = nullptr;
    /// Live sets and flame trees of (device, level). Not thread-safe: once the analyses are handed
    /// to the GUI thread, only that thread uses it.
    std::shared_ptr<analysis::FlameTreeBuilder> flame;

    const analysis::LeakReport& leak() const { return device->leak; }
};

/// Kernel lanes of one GPU that ran kernels. Times are the rank's trace time.
struct GpuKernelAnalysis {
    GpuKey key;
    analysis::KernelLaneIndex lanes;
    const analysis::TimeBreakdown* breakdown = nullptr;  ///< points into JobAnalyses::analysis
};

/// Everything the panels show for a job: analysis::analyzeJob's results (iterations, leaks, time
/// breakdowns and idle gaps, collectives matched on the job's time axis, advice, cost inputs)
/// plus per GPU a flame tree builder and a kernel lane index. Keeps the job alive (the builders
/// refer to its traces). Built off the GUI thread by analyzeJob(), then shared as
/// std::shared_ptr<const JobAnalyses>.
struct JobAnalyses {
    std::shared_ptr<const LoadedJob> job;
    /// Inputs are the job's ranks in order (DeviceAnalysis::input = GpuKey::rankIndex), each with
    /// clock offset RankInfo::toJobNs, so collective times are job time (ns from the job start).
    analysis::JobAnalysis analysis;
    std::vector<GpuMemoryAnalysis> memory;   ///< GPUs with allocation events, by rank then device
    std::vector<GpuKernelAnalysis> kernels;  ///< GPUs with kernels, by rank then device
    /// Cost inputs as observed (price 0); the advice panel sets price and steps on a copy.
    analysis::CostInput cost;
    /// Why analysis::analyzeJob failed, empty when it did not.
    std::string problem;

    const GpuMemoryAnalysis* memoryOf(GpuKey key) const;
    const GpuKernelAnalysis* kernelsOf(GpuKey key) const;
    const analysis::CollectiveMatch& collectives() const { return analysis.collectives; }
    const std::vector<analysis::Advice>& advice() const { return analysis.advice; }
};

/// Runs the analyses of `job` (may take seconds on a large job: call it off the GUI thread; it
/// touches no Qt object). Never fails: when analysis::analyzeJob does, `problem` says why and the
/// flame builders and lanes are still there.
std::shared_ptr<const JobAnalyses> analyzeJob(std::shared_ptr<const LoadedJob> job);

/// "rank 3 · GPU 0", or "GPU 0" when the rank is unknown.
QString gpuLabel(const LoadedJob& job, GpuKey key);

}  // namespace vramscope::widgets
