#pragma once
// Readable quantities for the widgets: bytes in binary units and durations as
// analysis/text_format.h writes them (one rule for the GUI, the CLI and the reason texts), as
// QString; time-axis units; GPU labels.

#include <QString>

#include <cstdint>

namespace vramscope::analysis {
struct GpuKey;
struct JobModel;
}  // namespace vramscope::analysis

namespace vramscope::widgets {

/// "0 B", "512 B", "3.21 GiB": the largest binary unit that keeps the number >= 1, `decimals`
/// digits after the point (none for bytes).
QString formatBytes(double bytes, int decimals = 2);

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

/// A duration or instant in the unit that fits it, 3 significant digits: "1.23 s", "850 us".
QString formatDuration(double ns);

/// "rank 3 \u00b7 GPU 0", or "rank ? \u00b7 GPU 0" when the rank is unknown.
QString gpuLabel(const analysis::JobModel& job, const analysis::GpuKey& key);

}  // namespace vramscope::widgets
