#include "sweep.h"

#include <algorithm>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace vramscope::capture {

namespace {

bool isNameStart(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

/// Digits with at most one '.', at least one digit: "8", "0.25", "2." is refused (it would name
/// a directory "BATCH-2." that reads like a typo).
bool isPlainDecimal(std::string_view s) {
    bool dot = false;
    bool digitBeforeDot = false;
    bool digitAfterDot = false;
    for (char c : s) {
        if (c == '.') {
            if (dot) {
                return false;
            }
            dot = true;
        } else if (isDigit(c)) {
            (dot ? digitAfterDot : digitBeforeDot) = true;
        } else {
            return false;
        }
    }
    return digitBeforeDot && (!dot || digitAfterDot);
}

/// The line of `text` that holds byte `pos`, without its line end.
std::string_view lineAround(std::string_view text, size_t pos) {
    const size_t start = text.rfind('\n', pos);
    const size_t from = start == std::string_view::npos ? 0 : start + 1;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
        end = text.size();
    }
    std::string_view line = text.substr(from, end - from);
    if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
    }
    return line;
}

/// Parses "1000.00 MiB" at the start of `s` into bytes; the text consumed goes to `printed`.
std::optional<uint64_t> parsePyTorchSize(std::string_view s, std::string& printed) {
    size_t i = 0;
    while (i < s.size() && (isDigit(s[i]) || s[i] == '.')) {
        ++i;
    }
    if (i == 0) {
        return std::nullopt;
    }
    const std::string number(s.substr(0, i));
    size_t j = i;
    while (j < s.size() && s[j] == ' ') {
        ++j;
    }
    size_t k = j;
    while (k < s.size() && ((s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= 'a' && s[k] <= 'z'))) {
        ++k;
    }
    const std::string_view unit = s.substr(j, k - j);
    // c10's format_size: "bytes" up to 1 KiB, then KiB, MiB, GiB with two decimals.
    static constexpr std::array<std::pair<std::string_view, int>, 10> kUnits = {{{"bytes", 0},
                                                                                 {"B", 0},
                                                                                 {"KiB", 1},
                                                                                 {"KB", 1},
                                                                                 {"MiB", 2},
                                                                                 {"MB", 2},
                                                                                 {"GiB", 3},
                                                                                 {"GB", 3},
                                                                                 {"TiB", 4},
                                                                                 {"TB", 4}}};
    for (const auto& [name, power] : kUnits) {
        if (unit == name) {
            char* end = nullptr;
            const double v = std::strtod(number.c_str(), &end);
            if (end != number.c_str() + number.size() || !std::isfinite(v) || v < 0) {
                return std::nullopt;
            }
            printed = std::string(s.substr(0, k));
            return static_cast<uint64_t>(std::llround(v * std::pow(1024.0, power)));
        }
    }
    return std::nullopt;
}

}  // namespace

ParsedSweepSpec parseSweepSpec(std::string_view text) {
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) {
        return {std::nullopt, "--sweep needs NAME=V1,V2,... (e.g. --sweep BATCH=8,16,32)"};
    }
    SweepSpec spec;
    spec.name = std::string(text.substr(0, eq));
    bool nameOk = !spec.name.empty() && isNameStart(spec.name[0]);
    for (char c : spec.name) {
        nameOk = nameOk && (isNameStart(c) || isDigit(c));
    }
    if (!nameOk) {
        return {std::nullopt, "--sweep: '" + spec.name +
                                  "' is not an environment variable name (letters, digits and "
                                  "'_', not starting with a digit)"};
    }
    // The launcher's own variables: a sweep over one would move the trace elsewhere or unload
    // the agent while the run is recorded as if it were traced into DIR/NAME-V/.
    const bool launcherOwns = spec.name.starts_with("VRAMSCOPE_") ||
                              spec.name == "CUDA_INJECTION64_PATH" ||
                              spec.name == "NVTX_INJECTION64_PATH" || spec.name == "LD_PRELOAD" ||
                              spec.name == "LD_LIBRARY_PATH" || spec.name == "PATH";
    if (launcherOwns) {
        return {std::nullopt, "--sweep: " + spec.name +
                                  " is set by vramscope-run itself or decides what runs; sweep "
                                  "another variable (e.g. BATCH)"};
    }
    const std::string_view list = text.substr(eq + 1);
    if (list.empty()) {
        return {std::nullopt, "--sweep " + spec.name + "= has no values"};
    }
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string_view::npos) {
            comma = list.size();
        }
        const std::string item(list.substr(start, comma - start));
        if (!isPlainDecimal(item) || !(std::strtod(item.c_str(), nullptr) > 0)) {
            return {std::nullopt,
                    "--sweep " + spec.name + ": '" + item +
                        "' is not a positive number (digits with at most one '.'; batch-fit "
                        "fits peak memory against the values)"};
        }
        const double number = std::strtod(item.c_str(), nullptr);
        for (const SweepValue& seen : spec.values) {
            if (seen.number == number) {
                return {std::nullopt, "--sweep " + spec.name + ": the value " + item +
                                          " is given twice (as '" + seen.text + "' and '" + item +
                                          "')"};
            }
        }
        spec.values.push_back({item, number});
        start = comma + 1;
    }
    return {spec, {}};
}

std::vector<std::string> substituteSweepValue(const std::vector<std::string>& args,
                                              const std::string& name, const std::string& value) {
    const std::string token = "{" + name + "}";
    std::vector<std::string> out;
    out.reserve(args.size());
    for (const std::string& arg : args) {
        std::string s;
        size_t from = 0;
        for (size_t at = arg.find(token); at != std::string::npos; at = arg.find(token, from)) {
            s.append(arg, from, at - from);
            s += value;
            from = at + token.size();
        }
        s.append(arg, from, std::string::npos);
        out.push_back(std::move(s));
    }
    return out;
}

std::string sweepRunDirectory(const std::string& dir, const std::string& name,
                              const std::string& value) {
    std::string base = dir;
    if (base.size() > 1 && base.back() == '/') {
        base.pop_back();
    }
    return base + "/" + name + "-" + value;
}

std::optional<OomMessage> findOomMessage(std::string_view stderrText) {
    // NOTE(pytorch): the exception's class changed name over releases; its message did not.
    static constexpr std::array<std::string_view, 3> kHeads = {
        "torch.OutOfMemoryError: CUDA out of memory.",
        "torch.cuda.OutOfMemoryError: CUDA out of memory.", "RuntimeError: CUDA out of memory."};
    size_t best = std::string_view::npos;
    size_t bestLength = 0;
    for (std::string_view head : kHeads) {
        const size_t at = stderrText.rfind(head);
        if (at != std::string_view::npos && (best == std::string_view::npos || at > best)) {
            best = at;
            bestLength = head.size();
        }
    }
    if (best == std::string_view::npos) {
        return std::nullopt;
    }
    OomMessage m;
    m.line = std::string(lineAround(stderrText, best));
    const std::string_view rest = stderrText.substr(best + bestLength);
    constexpr std::string_view kTried = "Tried to allocate ";
    const size_t tried = rest.find(kTried);
    // Only within the message's own line: a later, unrelated "Tried to allocate" is not its.
    const size_t lineEnd = rest.find('\n');
    if (tried != std::string_view::npos && (lineEnd == std::string_view::npos || tried < lineEnd)) {
        m.requestedBytes = parsePyTorchSize(rest.substr(tried + kTried.size()), m.requestedText);
        if (!m.requestedBytes) {
            m.requestedText.clear();
        }
    }
    return m;
}

SweepVerdict judgeSweepRun(const SweepRunResult& run) {
    if (run.exitCode == 0 && !run.killedBySignal) {
        return SweepVerdict::Finished;
    }
    if (run.killedBySignal) {
        return SweepVerdict::Failed;
    }
    return run.traceOomEvents > 0 || run.stderrOom ? SweepVerdict::OutOfMemory
                                                   : SweepVerdict::Failed;
}

std::string formatSizeLikePyTorch(uint64_t bytes) {
    // NOTE(pytorch): c10's format_size: bytes up to 1024, then KiB up to 1 MiB, MiB up to 1 GiB,
    // GiB above (never TiB), two decimals.
    if (bytes <= 1024) {
        return std::to_string(bytes) + " bytes";
    }
    double v = double(bytes) / 1024.0;
    const char* unit = "KiB";
    if (bytes > (1ull << 30)) {
        v = double(bytes) / double(1ull << 30);
        unit = "GiB";
    } else if (bytes > (1ull << 20)) {
        v = double(bytes) / double(1ull << 20);
        unit = "MiB";
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f %s", v, unit);
    return buf;
}

std::string describeOomRequest(const SweepRunResult& run) {
    if (run.traceOomEvents > 0 && run.traceOomRequestedBytes > 0) {
        return formatSizeLikePyTorch(run.traceOomRequestedBytes) + " (" +
               std::to_string(run.traceOomRequestedBytes) + " bytes, from the trace's OOM event)";
    }
    if (run.stderrOom && run.stderrOom->requestedBytes) {
        return run.stderrOom->requestedText + " (about " +
               std::to_string(*run.stderrOom->requestedBytes) +
               " bytes, from PyTorch's message, which rounds to two decimals)";
    }
    return "unknown (neither the trace's OOM event nor PyTorch's message names it)";
}

void BoundedTail::append(std::string_view bytes) {
    if (bytes.size() >= m_capacity) {
        m_text.assign(bytes.substr(bytes.size() - m_capacity));
        return;
    }
    m_text.append(bytes);
    if (m_text.size() > m_capacity) {
        m_text.erase(0, m_text.size() - m_capacity);
    }
}

std::vector<std::string> batchFitArguments(
    const std::vector<std::pair<std::string, std::string>>& runs) {
    std::vector<std::string> args = {"batch-fit"};
    for (const auto& [dir, value] : runs) {
        args.push_back(dir + ":" + value);
    }
    return args;
}

std::optional<SweepValue> largestStableValue(const std::vector<SweepRecord>& records) {
    std::optional<SweepValue> best;
    for (const SweepRecord& r : records) {
        // A run that wrote no trace measured nothing, however it ended.
        if (r.verdict == SweepVerdict::Finished && r.traceFiles > 0 &&
            (!best || r.value.number > best->number)) {
            best = r.value;
        }
    }
    return best;
}

std::string sweepSummaryText(const SweepSpec& spec, const std::vector<SweepRecord>& records) {
    std::string out = "sweep " + spec.name + ": " + std::to_string(records.size()) + " of " +
                      std::to_string(spec.values.size()) + " runs made\n";
    for (const SweepRecord& r : records) {
        out += "  " + spec.name + "=" + r.value.text + ": ";
        switch (r.verdict) {
            case SweepVerdict::Finished:
                out += "finished";
                break;
            case SweepVerdict::OutOfMemory:
                out += "out of memory (exit status " + std::to_string(r.result.exitCode) + ")";
                break;
            case SweepVerdict::Failed:
                out += "failed (exit status " + std::to_string(r.result.exitCode) +
                       (r.result.killedBySignal
                            ? ", killed by signal " + std::to_string(r.result.exitCode - 128)
                            : std::string()) +
                       ")";
                break;
        }
        out += ", " + std::to_string(r.traceFiles) + " trace file" +
               (r.traceFiles == 1 ? "" : "s") + " in " + r.directory + "\n";
    }
    for (size_t i = records.size(); i < spec.values.size(); ++i) {
        out += "  " + spec.name + "=" + spec.values[i].text + ": not run\n";
    }
    const std::optional<SweepValue> stable = largestStableValue(records);
    out += "largest stable " + spec.name +
           " measured: " + (stable ? stable->text : std::string("none (no run finished)")) + "\n";
    if (records.empty()) {
        return out;
    }
    const SweepRecord& last = records.back();
    if (last.verdict == SweepVerdict::OutOfMemory) {
        out += "out of memory at " + spec.name + "=" + last.value.text + ": requested " +
               describeOomRequest(last.result) + "\n";
        if (last.result.stderrOom) {
            out += "  " + last.result.stderrOom->line + "\n";
        }
    } else if (last.verdict == SweepVerdict::Failed) {
        out += "stopped at " + spec.name + "=" + last.value.text +
               ": the command failed with exit status " + std::to_string(last.result.exitCode) +
               " and no out-of-memory (no OOM event in its trace, no PyTorch OOM message on its "
               "stderr); the values after it were not run\n";
    } else {
        out += "no run ran out of memory: every value finished\n";
    }
    return out;
}

int sweepExitCode(const std::vector<SweepRecord>& records, bool fitRan) {
    if (!records.empty() && records.back().verdict == SweepVerdict::Failed) {
        return kSweepExitFailed;
    }
    if (!largestStableValue(records)) {  // none finished with a trace: nothing was measured
        return kSweepExitNoneFinished;
    }
    return fitRan ? kSweepExitDone : kSweepExitNoFit;
}

std::vector<std::string> cliCandidates(const std::string& launcherDir) {
    return {launcherDir + "/vramscope-cli", launcherDir + "/../app/cli/vramscope-cli"};
}

}  // namespace vramscope::capture
