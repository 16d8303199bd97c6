#pragma once
// Readable quantities for the widgets: bytes in binary units and durations as
// analysis/text_format.h writes them (one rule for the GUI, the CLI and the reason texts), as
// QString; time-axis units; GPU labels.

#include <QFontMetrics>
#include <QString>

#include <cstdint>
#include <string>

namespace vramscope::analysis {
struct GpuKey;
struct JobModel;
}  // namespace vramscope::analysis

namespace vramscope::widgets {

/// "0 B", "512 B", "3.21 GiB": analysis::formatBytes (three significant digits, binary units).
QString formatBytes(double bytes);

/// A time unit for an axis or a read-out.
struct TimeUnit {
    double ns = 1.0;  ///< ns per unit
    const char* suffix = "ns";
};

/// The unit that shows `spanNs` with a number between about 1 and 10000: ns below 10 us, us
/// below 10 ms, ms below 10 s, s above.
TimeUnit timeUnitFor(double spanNs);

/// `timeNs` in `unit`, e.g. "12.5 ms"; decimals chosen so that `resolutionNs` remains visible.
QString formatTime(double timeNs, TimeUnit unit, double resolutionNs);

/// A duration or instant as analysis::formatDuration writes it: "1.23 s", "850 us".
QString formatDuration(double ns);

/// A bandwidth in GB/s (10^9 bytes per second), three significant digits: "183 GB/s".
QString formatBandwidth(double gigabytesPerSecond);

/// A kernel, frame or range name fitted into `pixels`: analysis::compactName, then the middle
/// elided (the head and the tail, where names usually differ, "ProfilerStep#12", stay). Full
/// names belong in the tooltip.
QString elideName(const QFontMetrics& metrics, const std::string& name, int pixels);

/// Whether no GPU of `job` recorded anything (analysis::gpusRecorded() == 0), and the sentence the
/// views show then in place of empty plots and tables, analysis::kNoGpuMessage in words:
/// "No GPU in this trace: no GPU memory and no GPU kernels were recorded."
bool hasNoGpu(const analysis::JobModel& job);
QString noGpuSentence();

/// Whether no GPU of `job` has allocation events (JobModel::memoryOf is null for every GPU), and
/// the sentence the flame view and the details show then: "This trace has no allocation events,
/// so there is no live set to show. Allocation events come from ..." (allocationEventsSources).
bool hasNoAllocationEvents(const analysis::JobModel& job);
QString noAllocationEventsSentence();
/// Where allocation events (what live sets and flame views are built from) come from, as a
/// sentence: for the views of a trace that has none (a Kineto trace taken without
/// profile_memory, an Nsight Systems report without --cuda-memory-usage).
QString allocationEventsSources();

/// "rank 3 \u00b7 GPU 0", or "rank ? \u00b7 GPU 0" when the rank is unknown.
QString gpuLabel(const analysis::JobModel& job, const analysis::GpuKey& key);

}  // namespace vramscope::widgets
