#pragma once
// Numbers as people read them, shared by the analyses' reason texts, the CLI and the GUI (which
// wraps them in QString): binary byte units, durations and percentages.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// "512 B", "1.50 KiB", "96.6 MiB", "-12.3 MiB", "11.9 GiB": binary units (1 KiB = 1024 B,
/// IEC 80000-13) with three significant digits, the one byte format of every text surface (CLI,
/// GUI, reason texts; JSON keeps raw integers). Whole bytes below 1000 B; above, the unit is the
/// one that keeps the number below 1000 once rounded, so a number never has four digits: 1000 to
/// 1023.x of a unit reads in the next one (1000 MiB is "0.977 GiB", 1 MiB - 1 B is "1.00 MiB").
/// Digits after the point: 2 below 10, 1 below 100, 0 from 100 (judged on the rounded value, so
/// 99.96 MiB is "100 MiB"). EiB is the largest unit. Negative values keep their sign (growth).
std::string formatBytes(double bytes);

/// "850 ns", "12.2 us", "346 ms", "1.73 s": the one duration format, three significant digits by
/// the same rule as formatBytes over ns, us, ms and s (decimal units): whole ns below 1000 ns, a
/// value that would round to 1000 of its unit reads in the next one (999.6 us is "1.00 ms"), and
/// seconds, the largest unit, keep no decimals from 100 s ("3600 s").
std::string formatDuration(double ns);

/// "42.5 %": fraction x 100 with `decimals` digits.
std::string formatPercent(double fraction, int decimals = 1);

/// A kernel or frame name without the parts that repeat what the rest says, for every surface
/// that has to shorten names: the leading "void " return type, "(anonymous namespace)::", the
/// namespaces of a templated name and of its template arguments ("void at::native::k<4,
/// at::native::FillFunctor<float> >(int, ...)" reads "k<4, FillFunctor<float>>"; names without
/// template arguments, "aten::add", keep theirs), the parameter list of a templated function (its
/// types repeat the template's), "> >" closed as ">>", and the directories of a trailing
/// " (/path/to/file.py:12)" location. Other names come back unchanged.
std::string compactName(std::string_view name);

/// compactName(name), then at most `width` bytes by eliding its middle with "..." (the head and
/// a fifth of the width at the tail stay), never cutting a UTF-8 character. A width under 8
/// keeps the head only.
std::string shortenName(std::string_view name, size_t width);

/// Shortens a set of names shown together (one table, one list of gaps) so that different names
/// stay different where at most `width` bytes allow it: each name is compacted as compactName,
/// then its middle elided, but around the part that tells it apart from the most similar other
/// name (the first differing byte after their common prefix, or before their common suffix),
/// not over it. Names that would still collide get more width, up to the whole compact name,
/// and names whose compact forms coincide keep their full text. The result is in input order;
/// equal inputs give equal outputs. O(n^2 x length) for n names: meant for tens to hundreds.
std::vector<std::string> shortenNames(const std::vector<std::string>& names, size_t width);

/// A cost or a number of GPU-hours: two decimals from 1 up ("3.96", "1234.50"), three
/// significant digits below 1 ("0.500", "0.0420", "0.000193"), so that a short trace's cost is
/// never "0.00"; fixed notation, never an exponent; "0.00" for 0 and below 1e-12 in magnitude.
/// One spelling for the CLI's text, the GUI and the analyses' sentences (JSON keeps raw numbers).
std::string formatAmount(double value);

/// A dimensionless number (a fit's R^2, a ratio, a count such as iterations until full) with
/// three significant digits in fixed notation: "0.223", "0.900", "1.00", "27.5", "150", "0.0420",
/// "-0.500"; "0.00" for 0 and below 1e-12 in magnitude, "unknown" when not finite. The one spelling
/// of such numbers for the CLI's text, the GUI and the analyses' sentences (JSON keeps raw
/// numbers).
std::string formatSignificant(double value);

/// "rank 3", or "rank ?" for an unknown rank (< 0).
std::string rankLabel(trace::RankId rank);

/// "rank 3 GPU 0", or "rank ? GPU 0" for an unknown rank.
std::string deviceLabel(trace::RankId rank, trace::DeviceIndex device);

/// How much of a job is open: "2 of 128 ranks present" (a header names a larger world size),
/// "8 of 8 ranks present", or "3 ranks present (world size unknown)" (worldSize <= 0).
std::string coverageText(size_t ranksPresent, int32_t worldSize);

}  // namespace vramscope::analysis
