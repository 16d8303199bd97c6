#include "vramscope/analysis/text_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace vramscope::analysis {

namespace {

std::string fixed(double v, int decimals, const char* unit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
    return buf;
}

/// Whether `v` printed with `decimals` digits reads at least `limit` in magnitude (999.9996 us
/// prints "1000.000"), so that the next unit should be used instead.
bool printsAtLeast(double v, int decimals, double limit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v));
    return std::strtod(buf, nullptr) >= limit;
}

/// Digits after the point for a duration `value` in a unit of `scale` ns (see formatDuration).
int durationDigits(double value, double scale, int decimals) {
    if (scale == 1.0) {
        return 0;
    }
    if (decimals >= 0) {
        return decimals;
    }
    const double a = std::fabs(value);
    return a >= 100 ? 0 : (a >= 10 ? 1 : 2);
}

}  // namespace

std::string formatBytes(double bytes, int decimals) {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    const double magnitude = std::fabs(bytes);
    size_t unit = 0;
    double scale = 1.0;
    while (unit + 1 < std::size(kUnits) && magnitude >= scale * 1024.0) {
        scale *= 1024.0;
        ++unit;
    }
    // Rounding can reach the next unit (1 MiB - 1 B is 1023.999 KiB, "1024.00 KiB").
    if (unit + 1 < std::size(kUnits) &&
        printsAtLeast(bytes / scale, unit == 0 ? 0 : decimals, 1024.0)) {
        scale *= 1024.0;
        ++unit;
    }
    return fixed(bytes / scale, unit == 0 ? 0 : decimals, kUnits[unit]);
}

std::string formatDuration(double ns, int decimals) {
    static constexpr struct {
        double scale;
        const char* name;
    } kUnits[] = {{1.0, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
    const double magnitude = std::fabs(ns);
    size_t unit = 0;
    while (unit + 1 < std::size(kUnits) && magnitude >= kUnits[unit + 1].scale) {
        ++unit;
    }
    // Rounding can reach the next unit (999.9996 us would read "1000.000 us").
    const double scale = kUnits[unit].scale;
    if (unit + 1 < std::size(kUnits) &&
        printsAtLeast(ns / scale, durationDigits(ns / scale, scale, decimals), 1000.0)) {
        ++unit;
    }
    const double value = ns / kUnits[unit].scale;
    return fixed(value, durationDigits(value, kUnits[unit].scale, decimals), kUnits[unit].name);
}

std::string formatPercent(double fraction, int decimals) {
    return fixed(fraction * 100.0, decimals, "%");
}

std::string formatAmount(double value) {
    const double a = std::fabs(value);
    if (!std::isfinite(value)) {
        return "unknown";
    }
    int decimals = 2;
    if (a < 1e-12) {
        value = 0.0;  // no "-0.00"
    } else if (a < 1.0) {
        decimals = 2 - int(std::floor(std::log10(a)));  // three significant digits
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string rankLabel(trace::RankId rank) {
    return trace::toInt(rank) >= 0 ? "rank " + std::to_string(trace::toInt(rank))
                                   : std::string("rank ?");
}

std::string deviceLabel(trace::RankId rank, trace::DeviceIndex device) {
    return rankLabel(rank) + " GPU " + std::to_string(trace::toInt(device));
}

}  // namespace vramscope::analysis
