#include "import/kineto/kineto_text.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "vramscope/trace/input_bytes.h"

namespace vramscope::trace::kineto {
namespace {

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' ||
                          s.back() == '\t' || s.back() == ',')) {
        s.remove_suffix(1);
    }
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    return s;
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

/// The parts of a JSON number: sign, integer digits, fraction digits, exponent (if any).
struct NumberText {
    bool negative = false;
    std::string_view integer;
    std::string_view fraction;
    bool hasExponent = false;
};

std::optional<NumberText> splitNumber(std::string_view s) {
    s = trimmed(s);
    NumberText n;
    size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
        n.negative = s[i] == '-';
        ++i;
    }
    const size_t intStart = i;
    while (i < s.size() && isDigit(s[i])) {
        ++i;
    }
    n.integer = s.substr(intStart, i - intStart);
    if (i < s.size() && s[i] == '.') {
        const size_t fracStart = ++i;
        while (i < s.size() && isDigit(s[i])) {
            ++i;
        }
        n.fraction = s.substr(fracStart, i - fracStart);
    }
    if (n.integer.empty() && n.fraction.empty()) {
        return std::nullopt;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        n.hasExponent = true;
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
            ++i;
        }
        const size_t expStart = i;
        while (i < s.size() && isDigit(s[i])) {
            ++i;
        }
        if (i == expStart) {
            return std::nullopt;
        }
    }
    if (i != s.size()) {
        return std::nullopt;
    }
    return n;
}

/// Digits to an unsigned value; nullopt on overflow.
std::optional<uint64_t> digitsValue(std::string_view digits) {
    uint64_t v = 0;
    for (char c : digits) {
        const auto d = static_cast<uint64_t>(c - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
            return std::nullopt;
        }
        v = v * 10 + d;
    }
    return v;
}

/// Value of a number with an exponent, through a double (rare in traces).
std::optional<double> viaDouble(std::string_view s) {
    std::string copy(trimmed(s));
    char* end = nullptr;
    const double d = std::strtod(copy.c_str(), &end);
    if (end == copy.c_str() || !std::isfinite(d)) {
        return std::nullopt;
    }
    return d;
}

std::optional<int64_t> doubleToInt64(double d) {
    // 2^63 as a double; values at or above it do not fit.
    if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0)) {
        return std::nullopt;
    }
    return static_cast<int64_t>(d);
}

std::string lowerNoUnderscore(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c != '_' && c != ' ') {
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        }
    }
    return out;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

/// "0x1f" / "0X1F" (as some ROCm traces write stream handles) to a value; nullopt otherwise.
std::optional<uint64_t> parseHex(std::string_view text) {
    text = trimmed(text);
    if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') ||
        text.size() > 18) {
        return std::nullopt;
    }
    uint64_t v = 0;
    for (char c : text.substr(2)) {
        const int d = std::isdigit(static_cast<unsigned char>(c)) != 0 ? c - '0'
                      : (c >= 'a' && c <= 'f')                         ? c - 'a' + 10
                      : (c >= 'A' && c <= 'F')                         ? c - 'A' + 10
                                                                       : -1;
        if (d < 0) {
            return std::nullopt;
        }
        v = v * 16 + static_cast<uint64_t>(d);
    }
    return v;
}

std::optional<int64_t> parseInt(std::string_view text) {
    const auto n = splitNumber(text);
    if (!n) {
        const auto hex = parseHex(text);
        if (hex && *hex <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return static_cast<int64_t>(*hex);
        }
        return std::nullopt;
    }
    if (n->hasExponent) {
        const auto d = viaDouble(text);
        return d ? doubleToInt64(std::trunc(*d)) : std::nullopt;
    }
    const auto v = digitsValue(n->integer);
    if (!v) {
        return std::nullopt;
    }
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (n->negative) {
        if (*v > kMax + 1) {
            return std::nullopt;
        }
        return *v == kMax + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(*v);
    }
    if (*v > kMax) {
        return std::nullopt;
    }
    return static_cast<int64_t>(*v);
}

std::optional<uint64_t> parseUint(std::string_view text) {
    const auto n = splitNumber(text);
    if (!n) {
        return parseHex(text);
    }
    if (n->negative) {
        return std::nullopt;
    }
    if (n->hasExponent) {
        const auto d = viaDouble(text);
        if (!d || *d < 0 || *d >= 18446744073709551616.0) {
            return std::nullopt;
        }
        return static_cast<uint64_t>(*d);
    }
    return digitsValue(n->integer);
}

std::optional<int64_t> parseMicrosToNs(std::string_view text) {
    const auto n = splitNumber(text);
    if (!n) {
        return std::nullopt;
    }
    if (n->hasExponent) {
        const auto d = viaDouble(text);
        return d ? doubleToInt64(std::round(*d * 1000.0)) : std::nullopt;
    }
    const auto us = digitsValue(n->integer);
    constexpr uint64_t kMaxUs = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / 1000;
    if (!us || *us > kMaxUs - 1) {
        return std::nullopt;
    }
    uint64_t ns = *us * 1000;
    uint64_t frac = 0;
    for (size_t i = 0; i < 3; ++i) {
        frac =
            frac * 10 + (i < n->fraction.size() ? static_cast<uint64_t>(n->fraction[i] - '0') : 0);
    }
    if (n->fraction.size() > 3 && n->fraction[3] >= '5') {
        ++frac;
    }
    ns += frac;
    return n->negative ? -static_cast<int64_t>(ns) : static_cast<int64_t>(ns);
}

std::optional<uint64_t> firstNumberIn(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && !isDigit(s[i])) {
        ++i;
    }
    if (i == s.size()) {
        return std::nullopt;
    }
    size_t j = i;
    while (j < s.size() && isDigit(s[j]) && j - i < 19) {
        ++j;
    }
    return digitsValue(s.substr(i, j - i));
}

bool looksNumeric(std::string_view text) {
    text = trimmed(text);
    return !text.empty() && (isDigit(text[0]) || text[0] == '-');
}

uint64_t originalOffset(const OffsetMap& map, uint64_t repairedOffset) {
    auto it = std::upper_bound(
        map.begin(), map.end(), repairedOffset,
        [](uint64_t value, const std::pair<uint64_t, uint64_t>& e) { return value < e.first; });
    if (it == map.begin()) {
        return repairedOffset;
    }
    --it;
    return it->second + (repairedOffset - it->first);
}

Utf8Repair repairUtf8(std::string_view in) {
    Utf8Repair r;
    r.text.reserve(in.size() + in.size() / 64 + kInputPaddingBytes);
    const auto* p = reinterpret_cast<const unsigned char*>(in.data());
    const size_t n = in.size();
    size_t runStart = 0;
    size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t need = 0;
        unsigned char lo = 0x80;
        unsigned char hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        }
        size_t good = 1;  // bytes of the longest valid prefix (the lead byte counts when need > 0)
        if (need > 0) {
            while (good <= need && i + good < n) {
                const unsigned char d = p[i + good];
                if (d < (good == 1 ? lo : 0x80) || d > (good == 1 ? hi : 0xBF)) {
                    break;
                }
                ++good;
            }
            if (good == need + 1) {
                i += good;
                continue;
            }
        }
        r.text.append(in.substr(runStart, i - runStart));
        r.text.append("\xEF\xBF\xBD");
        if (r.firstBadOffset < 0) {
            r.firstBadOffset = static_cast<int64_t>(i);
        }
        ++r.replaced;
        i += good;
        runStart = i;
        r.offsets.emplace_back(r.text.size(), i);
    }
    r.text.append(in.substr(runStart));
    return r;
}

StructureRepair repairStructure(std::string_view in) {
    StructureRepair r;
    r.text.reserve(in.size() + 8 + kInputPaddingBytes);
    r.text.assign(in);
    std::string stack;
    bool inString = false;
    bool escaped = false;
    bool malformed = false;
    int64_t lastCut = -1;
    std::string closers;
    size_t i = 0;
    for (; i < in.size() && !malformed; ++i) {
        const char c = in[i];
        if (inString) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                inString = false;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                r.text[i] = ' ';
                if (r.firstControlOffset < 0) {
                    r.firstControlOffset = static_cast<int64_t>(i);
                }
                ++r.controlChars;
            }
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            stack.push_back(c);
        } else if (c == '}' || c == ']') {
            if (stack.empty() || stack.back() != (c == '}' ? '{' : '[')) {
                malformed = true;
                break;
            }
            stack.pop_back();
            if (c == '}' && (stack == "[" || stack == "{[")) {
                lastCut = static_cast<int64_t>(i) + 1;
                closers = stack == "[" ? "]" : "]}";
            }
        }
    }
    r.cut = malformed || inString || !stack.empty();
    r.usable = !r.cut || lastCut >= 0;
    if (r.cut) {
        r.endOffset = static_cast<int64_t>(i);
        r.cutOffset = lastCut;
        if (lastCut >= 0) {
            r.text.resize(static_cast<size_t>(lastCut));
            r.text += closers;
        }
    }
    return r;
}

uint32_t dtypeSize(std::string_view dtype) {
    static constexpr std::array<std::pair<std::string_view, uint32_t>, 20> kSizes{{
        {"float", 4},
        {"double", 8},
        {"half", 2},
        {"bfloat16", 2},
        {"long", 8},
        {"int", 4},
        {"short", 2},
        {"char", 1},
        {"byte", 1},
        {"bool", 1},
        {"complexhalf", 4},
        {"complexfloat", 8},
        {"complexdouble", 16},
        {"uint16", 2},
        {"uint32", 4},
        {"uint64", 8},
        {"float8_e4m3fn", 1},
        {"float8_e5m2", 1},
        {"float8_e4m3fnuz", 1},
        {"float8_e5m2fnuz", 1},
    }};
    for (const auto& [name, size] : kSizes) {
        if (equalsIgnoreCase(dtype, name)) {
            return size;
        }
    }
    return 0;
}

uint32_t inputTypeSize(std::string_view t) {
    if (t.starts_with("c10::")) {
        t.remove_prefix(5);
    }
    static constexpr std::array<std::pair<std::string_view, uint32_t>, 12> kCppSizes{{
        {"long int", 8},
        {"long long", 8},
        {"long long int", 8},
        {"unsigned long", 8},
        {"short int", 2},
        {"signed char", 1},
        {"unsigned char", 1},
        {"unsigned int", 4},
        {"int64_t", 8},
        {"int32_t", 4},
        {"ComplexFloat", 8},
        {"ComplexDouble", 16},
    }};
    for (const auto& [name, size] : kCppSizes) {
        if (equalsIgnoreCase(t, name)) {
            return size;
        }
    }
    return dtypeSize(t);
}

std::string canonicalCollective(std::string_view collectiveName) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kNames{{
        {"allreduce", "AllReduce"},
        {"allgather", "AllGather"},
        {"reducescatter", "ReduceScatter"},
        {"alltoall", "AllToAll"},
        {"broadcast", "Broadcast"},
        {"reduce", "Reduce"},
        {"gather", "Gather"},
        {"scatter", "Scatter"},
        {"sendrecv", "SendRecv"},
        {"send", "Send"},
        {"recv", "Recv"},
        {"barrier", "Barrier"},
    }};
    const std::string key = lowerNoUnderscore(collectiveName);
    for (const auto& [prefix, canonical] : kNames) {
        if (key.starts_with(prefix)) {
            return std::string(canonical);
        }
    }
    return std::string(collectiveName);
}

uint64_t fnv1a64(std::string_view s) {
    uint64_t h = 14695981039346656037ull;
    for (char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

int32_t indexInRankList(std::string_view list, int32_t rank) {
    int32_t index = 0;
    size_t i = 0;
    while (i < list.size()) {
        if (!isDigit(list[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < list.size() && isDigit(list[j])) {
            ++j;
        }
        const auto v = digitsValue(list.substr(i, std::min<size_t>(j - i, 18)));
        if (v && static_cast<int64_t>(*v) == rank) {
            return index;
        }
        ++index;
        i = j;
    }
    return -1;
}

std::optional<std::pair<DeviceIndex, MemoryLevel>> memoryCounterOf(std::string_view name) {
    constexpr std::string_view kPrefix = "GPU ";
    if (!name.starts_with(kPrefix)) {
        return std::nullopt;
    }
    name.remove_prefix(kPrefix.size());
    int32_t device = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), device);
    if (ec != std::errc() || end == name.data() || device < 0) {
        return std::nullopt;
    }
    const std::string_view level(end, static_cast<size_t>(name.data() + name.size() - end));
    if (level == " allocated") {
        return std::make_pair(DeviceIndex{device}, MemoryLevel::Allocated);
    }
    if (level == " reserved") {
        return std::make_pair(DeviceIndex{device}, MemoryLevel::Reserved);
    }
    return std::nullopt;
}

bool isPrecisionOp(std::string_view name) {
    for (std::string_view op :
         {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::linear", "aten::matmul",
          "aten::_convolution", "aten::cudnn_convolution", "aten::miopen_convolution"}) {
        if (name == op) {
            return true;
        }
    }
    // aten::conv1d / conv2d / conv3d / convolution / conv_transpose2d / convolution_backward
    return name.starts_with("aten::conv");
}

EventCategory eventCategory(std::string_view cat) {
    std::array<char, 24> low{};
    if (cat.size() >= low.size()) {
        return EventCategory::Other;
    }
    for (size_t i = 0; i < cat.size(); ++i) {
        const char c = cat[i];
        low[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    const std::string_view c(low.data(), cat.size());
    if (c == "kernel") {
        return EventCategory::Kernel;
    }
    if (c == "gpu_memcpy" || c == "memcpy") {
        return EventCategory::Memcpy;
    }
    if (c == "gpu_memset" || c == "memset") {
        return EventCategory::Memset;
    }
    if (c == "cuda_runtime" || c == "cuda_driver" || c == "runtime" || c == "driver" ||
        c == "hip_runtime") {
        return EventCategory::Runtime;
    }
    if (c == "cpu_op" || c == "operator") {
        return EventCategory::CpuOp;
    }
    if (c == "user_annotation") {
        return EventCategory::UserAnnotation;
    }
    if (c == "gpu_user_annotation") {
        return EventCategory::GpuUserAnnotation;
    }
    if (c == "cpu_instant_event") {
        return EventCategory::Instant;
    }
    if (c == "python_function") {
        return EventCategory::Python;
    }
    return EventCategory::Other;
}

}  // namespace vramscope::trace::kineto
