#include "vramscope/analysis/model/text_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

namespace vramscope::analysis {

namespace {

std::string fixed(double v, int decimals, const char* unit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
    return buf;
}

/// A value rounded to three significant digits reads at least 1000 from here on.
constexpr double kNextUnitAt = 999.5;

/// Digits after the point that keep three significant digits of `v` once rounded: 99.96 rounds
/// to "100" (0 decimals), not "100.0"; below 1 (1000 to 1023 of the unit before) three decimals,
/// "0.977".
int significantDecimals(double v) {
    const double a = std::fabs(v);
    return a >= 99.95 ? 0 : (a >= 9.995 ? 1 : (a >= 0.9995 ? 2 : 3));
}

/// `value` in the first of `units` (scales ascending, the first 1) whose rounded number stays
/// below 1000, or the last; whole numbers in the first unit (bytes, ns).
template <class Unit, size_t N>
std::string threeSignificant(double value, const Unit (&units)[N]) {
    const double magnitude = std::fabs(value);
    if (magnitude < kNextUnitAt) {
        return fixed(value, 0, units[0].name);
    }
    size_t u = 1;
    while (u + 1 < N && magnitude / units[u].scale >= kNextUnitAt) {
        ++u;
    }
    const double v = value / units[u].scale;
    return fixed(v, significantDecimals(v), units[u].name);
}

struct Unit {
    double scale;
    const char* name;
};

}  // namespace

std::string formatBytes(double bytes) {
    static const Unit kUnits[] = {{1.0, "B"},
                                  {1024.0, "KiB"},
                                  {1024.0 * 1024, "MiB"},
                                  {1024.0 * 1024 * 1024, "GiB"},
                                  {std::ldexp(1.0, 40), "TiB"},
                                  {std::ldexp(1.0, 50), "PiB"},
                                  {std::ldexp(1.0, 60), "EiB"}};
    return threeSignificant(bytes, kUnits);
}

std::string formatDuration(double ns) {
    static constexpr Unit kUnits[] = {{1.0, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
    return threeSignificant(ns, kUnits);
}

std::string formatPercent(double fraction, int decimals) {
    return fixed(fraction * 100.0, decimals, "%");
}

namespace {

constexpr std::string_view kEllipsis = "...";

bool isIdentifierStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool isIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool isContinuationByte(char c) {
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

/// `pos` moved back to the first byte of the UTF-8 character it falls in.
size_t charStartBefore(std::string_view s, size_t pos) {
    while (pos > 0 && pos < s.size() && isContinuationByte(s[pos])) {
        --pos;
    }
    return pos;
}

/// `pos` moved forward to the first byte of the next whole UTF-8 character.
size_t charStartAfter(std::string_view s, size_t pos) {
    while (pos < s.size() && isContinuationByte(s[pos])) {
        ++pos;
    }
    return pos;
}

void replaceAll(std::string& s, std::string_view what, std::string_view with) {
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at)) {
        s.replace(at, what.size(), with);
    }
}

/// Index of the '(' that opens the parenthesised group ending `s`, or npos.
size_t trailingGroupOpen(std::string_view s) {
    if (s.empty() || s.back() != ')') {
        return std::string::npos;
    }
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
        if (s[i] == ')') {
            ++depth;
        } else if (s[i] == '(' && --depth == 0) {
            return i;
        }
    }
    return std::string::npos;
}

/// `s` without the "ns::" qualifiers of identifiers inside template argument lists, and of its
/// own name too when `everywhere`.
std::string dropNamespaces(std::string_view s, bool everywhere) {
    std::string out;
    out.reserve(s.size());
    int angle = 0;
    size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if ((everywhere || angle > 0) && isIdentifierStart(c) &&
            (i == 0 || !isIdentifierChar(s[i - 1]))) {
            size_t end = i;
            while (end < s.size() && isIdentifierChar(s[end])) {
                ++end;
            }
            const bool qualifier =
                s.substr(end, 2) == "::" && end + 2 < s.size() && isIdentifierStart(s[end + 2]);
            if (!qualifier) {
                out.append(s.substr(i, end - i));
            }
            i = qualifier ? end + 2 : end;
            continue;
        }
        angle += c == '<' ? 1 : (c == '>' && angle > 0 ? -1 : 0);
        out.push_back(c);
        ++i;
    }
    return out;
}

/// The first `head` and last `tail` bytes of `c` around "...".
std::string headAndTail(const std::string& c, size_t head, size_t tail) {
    return c.substr(0, charStartBefore(c, head)) + std::string(kEllipsis) +
           c.substr(charStartAfter(c, c.size() - tail));
}

std::string elideMiddle(const std::string& c, size_t width) {
    if (c.size() <= width) {
        return c;
    }
    if (width < 8) {
        return c.substr(0, charStartBefore(c, width));
    }
    const size_t tail = width / 5;
    return headAndTail(c, width - kEllipsis.size() - tail, tail);
}

size_t commonPrefix(std::string_view a, std::string_view b) {
    return size_t(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

size_t commonSuffix(std::string_view a, std::string_view b) {
    return size_t(std::mismatch(a.rbegin(), a.rend(), b.rbegin(), b.rend()).first - a.rbegin());
}

/// compact[i] in at most `width` bytes, its elision placed so that what differs from the most
/// similar other name stays visible: the head when the longest common prefix ends inside it, the
/// tail when the longest common suffix does, else a window around where the prefix ends.
std::string elideApart(const std::vector<std::string>& compact, size_t i, size_t width) {
    const std::string& c = compact[i];
    if (c.size() <= width || width < 24) {
        return elideMiddle(c, width);
    }
    size_t prefix = 0;
    size_t suffix = 0;
    for (size_t j = 0; j < compact.size(); ++j) {
        if (j != i) {
            prefix = std::max(prefix, commonPrefix(c, compact[j]));
            suffix = std::max(suffix, commonSuffix(c, compact[j]));
        }
    }
    const size_t room = width - kEllipsis.size();
    if (prefix < room - width / 5) {
        return elideMiddle(c, width);
    }
    const size_t minHead = width / 3;
    if (suffix + 1 <= room - minHead) {
        const size_t tail = std::min(suffix + 7, room - minHead);
        return headAndTail(c, room - tail, tail);
    }
    const size_t head = width / 4;
    const size_t tail = width / 6;
    const size_t window = width - head - tail - 2 * kEllipsis.size();
    const size_t start =
        std::clamp(prefix > window / 3 ? prefix - window / 3 : 0, head, c.size() - tail - window);
    return c.substr(0, charStartBefore(c, head)) + std::string(kEllipsis) +
           c.substr(charStartAfter(c, start),
                    charStartBefore(c, start + window) - charStartAfter(c, start)) +
           std::string(kEllipsis) + c.substr(charStartAfter(c, c.size() - tail));
}

}  // namespace

std::string compactName(std::string_view name) {
    std::string s(name);
    if (s.starts_with("void ")) {
        s.erase(0, 5);
    }
    replaceAll(s, "(anonymous namespace)::", "");
    // A trailing source location keeps its file name, not its directories.
    if (const size_t open = s.rfind(" ("); open != std::string::npos && s.ends_with(")")) {
        const size_t slash = s.find_last_of("/\\");
        if (slash != std::string::npos && slash > open) {
            s.erase(open + 2, slash - open - 1);
        }
    }
    // A templated function's parameter list repeats its template arguments' types.
    if (const size_t open = trailingGroupOpen(s);
        open != std::string::npos && open > 0 && s[open - 1] != ' ' && s.find('<') < open) {
        s.erase(open);
    }
    // A templated name (a kernel) reads by its own name and arguments: "at::native::" says little
    // there. Other names ("aten::add", "torch::autograd::Engine::f") keep their namespaces.
    const size_t angle = s.find('<');
    const bool templated =
        angle != std::string::npos && angle > 0 && isIdentifierChar(s[angle - 1]);
    s = dropNamespaces(s, templated);
    replaceAll(s, "> >", ">>");
    return s;
}

std::string shortenName(std::string_view name, size_t width) {
    return elideMiddle(compactName(name), width);
}

std::vector<std::string> shortenNames(const std::vector<std::string>& names, size_t width) {
    std::vector<std::string> distinct = names;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::vector<std::string> compact;
    for (const std::string& n : distinct) {
        compact.push_back(compactName(n));
    }
    // Different names whose compact forms coincide keep their full text (which differs).
    for (bool merged = true; merged;) {
        merged = false;
        std::map<std::string, std::vector<size_t>> byCompact;
        for (size_t i = 0; i < compact.size(); ++i) {
            byCompact[compact[i]].push_back(i);
        }
        for (const auto& [text, members] : byCompact) {
            for (size_t m : members) {
                if (members.size() > 1 && compact[m] != distinct[m]) {
                    compact[m] = distinct[m];
                    merged = true;
                }
            }
        }
    }
    // Names whose shortened forms collide get more room until they differ or are whole.
    std::vector<size_t> widths(distinct.size(), width);
    std::vector<std::string> shortened(distinct.size());
    for (bool grew = true; grew;) {
        grew = false;
        std::map<std::string, std::vector<size_t>> byText;
        for (size_t i = 0; i < distinct.size(); ++i) {
            shortened[i] = elideApart(compact, i, widths[i]);
            byText[shortened[i]].push_back(i);
        }
        for (const auto& [text, members] : byText) {
            for (size_t m : members) {
                if (members.size() > 1 && widths[m] < compact[m].size()) {
                    widths[m] = std::min(compact[m].size(), widths[m] + 8);
                    grew = true;
                }
            }
        }
    }
    std::vector<std::string> out;
    out.reserve(names.size());
    for (const std::string& n : names) {
        const auto at = std::lower_bound(distinct.begin(), distinct.end(), n) - distinct.begin();
        out.push_back(shortened[size_t(at)]);
    }
    return out;
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

std::string formatSignificant(double value) {
    if (!std::isfinite(value)) {
        return "unknown";
    }
    const double a = std::fabs(value);
    if (a < 1e-12) {
        return "0.00";
    }
    int decimals = a >= 1.0 ? significantDecimals(value) : 2 - int(std::floor(std::log10(a)));
    // 0.9996 rounds to 1.000 with three decimals: from 1 up, two decimals keep three digits.
    if (a < 1.0 && std::round(a * std::pow(10.0, decimals)) >= std::pow(10.0, decimals)) {
        decimals = 2;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, decimals), value);
    return buf;
}

std::string rankLabel(trace::RankId rank) {
    return trace::toInt(rank) >= 0 ? "rank " + std::to_string(trace::toInt(rank))
                                   : std::string("rank ?");
}

std::string deviceLabel(trace::RankId rank, trace::DeviceIndex device) {
    if (device == trace::kHostDevice) {
        return rankLabel(rank) + " host";
    }
    return rankLabel(rank) + " GPU " + std::to_string(trace::toInt(device));
}

std::string coverageText(size_t ranksPresent, int32_t worldSize) {
    const std::string present = std::to_string(ranksPresent);
    if (worldSize <= 0) {
        return present + (ranksPresent == 1 ? " rank" : " ranks") + " present (world size unknown)";
    }
    return present + " of " + std::to_string(worldSize) +
           (worldSize == 1 ? " rank present" : " ranks present");
}

}  // namespace vramscope::analysis
