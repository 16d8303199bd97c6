#pragma once
// Readable quantities: bytes in binary units (KiB = 1024 B, IEC 80000-13) and durations in the
// SI unit that fits (ns, us, ms, s).

#include <QString>

#include <cstdint>

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

}  // namespace vramscope::widgets
