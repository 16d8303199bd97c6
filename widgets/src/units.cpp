#include "vramscope/widgets/units.h"

#include <algorithm>
#include <cmath>

namespace vramscope::widgets {

QString formatBytes(double bytes, int decimals) {
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    const double magnitude = std::fabs(bytes);
    int unit = 0;
    double value = bytes;
    while (unit < 5 && magnitude >= std::pow(1024.0, unit + 1)) {
        ++unit;
    }
    value = bytes / std::pow(1024.0, unit);
    return QStringLiteral("%1 %2").arg(value, 0, 'f', unit == 0 ? 0 : decimals).arg(kUnits[unit]);
}

TimeUnit timeUnitFor(double spanNs) {
    const double span = std::fabs(spanNs);
    if (span < 1e4) {
        return {1.0, "ns"};
    }
    if (span < 1e7) {
        return {1e3, "us"};
    }
    if (span < 1e10) {
        return {1e6, "ms"};
    }
    return {1e9, "s"};
}

QString formatTime(double timeNs, TimeUnit unit, double resolutionNs) {
    // Enough decimals that one resolution step changes the printed number.
    const double stepInUnit = std::max(resolutionNs, 1e-3) / unit.ns;
    int decimals = 0;
    if (stepInUnit < 1.0) {
        decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(stepInUnit) - 1e-9)), 0, 9);
    }
    return QStringLiteral("%1 %2").arg(timeNs / unit.ns, 0, 'f', decimals).arg(unit.suffix);
}

QString formatDuration(double ns) {
    const double magnitude = std::fabs(ns);
    TimeUnit unit{1.0, "ns"};
    if (magnitude >= 1e9) {
        unit = {1e9, "s"};
    } else if (magnitude >= 1e6) {
        unit = {1e6, "ms"};
    } else if (magnitude >= 1e3) {
        unit = {1e3, "us"};
    }
    const double value = magnitude / unit.ns;
    const int decimals = unit.ns == 1.0 || value >= 100 ? 0 : (value >= 10 ? 1 : 2);
    return QStringLiteral("%1 %2").arg(ns / unit.ns, 0, 'f', decimals).arg(unit.suffix);
}

}  // namespace vramscope::widgets
