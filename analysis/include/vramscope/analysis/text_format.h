#pragma once
// Numbers as people read them, shared by the analyses' reason texts, the CLI and the GUI (which
// wraps them in QString): binary byte units, durations and percentages.

#include <cstdint>
#include <string>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// "512 B", "1.50 KiB", "-12.25 MiB", "13.92 GiB": binary units (1 KiB = 1024 B, IEC 80000-13),
/// the largest unit whose value is at least 1, `decimals` digits after the point (none for
/// bytes); a value that would round up to 1024 of its unit is shown in the next one (1 MiB - 1 B
/// is "1.00 MiB", not "1024.00 KiB"). Negative values keep their sign (growth, diffs).
std::string formatBytes(double bytes, int decimals = 2);

/// "850 ns", "12.500 us", "3.250 ms", "2.000 s": the largest unit (ns, us, ms, s) whose value
/// is at least 1. decimals >= 0 fixes the digits after the point (none for ns); decimals < 0
/// keeps three significant digits (0 decimals from 100, 1 from 10, else 2), for narrow labels.
/// A value that would round up to 1000 of its unit is shown in the next one ("1.000 ms").
std::string formatDuration(double ns, int decimals = 3);

/// "42.5 %": fraction x 100 with `decimals` digits.
std::string formatPercent(double fraction, int decimals = 1);

/// A cost or a number of GPU-hours: two decimals from 1 up ("3.96", "1234.50"), three
/// significant digits below 1 ("0.500", "0.0420", "0.000193"), so that a short trace's cost is
/// never "0.00"; fixed notation, never an exponent; "0.00" for 0 and below 1e-12 in magnitude.
/// One spelling for the CLI's text, the GUI and the analyses' sentences (JSON keeps raw numbers).
std::string formatAmount(double value);

/// "rank 3", or "rank ?" for an unknown rank (< 0).
std::string rankLabel(trace::RankId rank);

/// "rank 3 GPU 0", or "rank ? GPU 0" for an unknown rank.
std::string deviceLabel(trace::RankId rank, trace::DeviceIndex device);

}  // namespace vramscope::analysis
