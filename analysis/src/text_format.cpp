#include "vramscope/analysis/text_format.h"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace vramscope::analysis {

namespace {

std::string fixed(double v, int decimals, const char* unit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
    return buf;
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
    return fixed(bytes / scale, unit == 0 ? 0 : decimals, kUnits[unit]);
}

std::string formatDuration(double ns, int decimals) {
    const double magnitude = std::fabs(ns);
    double scale = 1.0;
    const char* unit = "ns";
    if (magnitude >= 1e9) {
        scale = 1e9;
        unit = "s";
    } else if (magnitude >= 1e6) {
        scale = 1e6;
        unit = "ms";
    } else if (magnitude >= 1e3) {
        scale = 1e3;
        unit = "us";
    }
    const double value = ns / scale;
    int digits = decimals;
    if (scale == 1.0) {
        digits = 0;
    } else if (decimals < 0) {
        const double a = std::fabs(value);
        digits = a >= 100 ? 0 : (a >= 10 ? 1 : 2);
    }
    return fixed(value, digits, unit);
}

std::string formatPercent(double fraction, int decimals) {
    return fixed(fraction * 100.0, decimals, "%");
}

std::string rankLabel(trace::RankId rank) {
    return trace::toInt(rank) >= 0 ? "rank " + std::to_string(trace::toInt(rank))
                                   : std::string("rank ?");
}

std::string deviceLabel(trace::RankId rank, trace::DeviceIndex device) {
    return rankLabel(rank) + " GPU " + std::to_string(trace::toInt(device));
}

}  // namespace vramscope::analysis
