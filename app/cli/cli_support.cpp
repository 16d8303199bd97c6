// Option parsing, input loading and number formatting shared by the vramscope-cli subcommands.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "cli_command.h"
#include "vramscope/analysis/memory/gpu_capacity.h"
#include "vramscope/bundled_sample.h"

namespace vramscope::app {

namespace fs = std::filesystem;

std::optional<std::string> ParsedArgs::value(std::string_view name) const {
    auto it = values.find(name);
    if (it == values.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::string CommandContext::help() const {
    return spec == nullptr ? std::string() : commandHelp(*spec);
}

const CommandSpec* findCommand(std::string_view name) {
    for (const CommandSpec& c : commandTable()) {
        if (c.name == name) {
            return &c;
        }
    }
    return nullptr;
}

std::string commandHelp(const CommandSpec& spec) {
    return commandHelp(spec.name, spec.synopsis, spec.description, spec.options);
}

std::string commandHelp(std::string_view command, std::string_view synopsis,
                        std::string_view description, const std::vector<OptionSpec>& options) {
    std::string s = "usage: vramscope-cli " + std::string(command) + " " + std::string(synopsis) +
                    "\n\n" + std::string(description) + "\n\noptions:\n";
    auto line = [&](std::string left, std::string_view help) {
        left = "  " + left;
        if (left.size() < 32) {
            left.resize(32, ' ');
        } else {
            left += "\n" + std::string(32, ' ');
        }
        s += left + std::string(help) + "\n";
    };
    for (const auto& o : options) {
        std::string left(o.name);
        if (!o.alias.empty()) {
            left += ", " + std::string(o.alias);
        }
        if (o.takesValue) {
            left += " " + std::string(o.valueName);
        }
        line(left, o.help);
    }
    line("-h, --help", "show this help and exit");
    return s;
}

int usageError(CommandContext& ctx, const std::string& message, const std::string& help) {
    ctx.err << "vramscope-cli " << ctx.command << ": " << message << "\n\n" << help;
    return kExitUsage;
}

std::nullopt_t usageFailure(CommandContext& ctx, const std::string& message,
                            const std::string& help) {
    usageError(ctx, message, help);
    return std::nullopt;
}

std::optional<ParsedArgs> parseCommand(CommandContext& ctx, const std::vector<OptionSpec>& options,
                                       const std::string& help, int& exitCode) {
    std::optional<ParsedArgs> args = parseArgs(ctx, options, help);
    if (!args) {
        exitCode = kExitUsage;
        return std::nullopt;
    }
    if (args->help) {
        ctx.out << help;
        exitCode = kExitSuccess;
        return std::nullopt;
    }
    return args;
}

std::optional<ParsedArgs> parseCommand(CommandContext& ctx, int& exitCode) {
    static const std::vector<OptionSpec> kNone;
    return parseCommand(ctx, ctx.spec == nullptr ? kNone : ctx.spec->options, ctx.help(), exitCode);
}

std::optional<ParsedArgs> parseArgs(CommandContext& ctx, const std::vector<OptionSpec>& options,
                                    const std::string& help) {
    ParsedArgs parsed;
    const auto& args = ctx.args;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
            break;
        }
        if (a.size() < 2 || a[0] != '-') {
            parsed.positional.push_back(a);
            continue;
        }
        if (a == "--help" || a == "-h") {
            parsed.help = true;
            continue;
        }
        const size_t eq = a.find('=');
        const std::string name = a.substr(0, eq);
        const OptionSpec* spec = nullptr;
        for (const auto& o : options) {
            if (o.name == name || (!o.alias.empty() && o.alias == name)) {
                spec = &o;
            }
        }
        if (spec == nullptr) {
            usageError(ctx,
                       name == "--max-input-gib"
                           ? "--max-input-gib is a global option: give it before the command "
                             "(vramscope-cli --max-input-gib N " +
                                 ctx.command + " ...)"
                           : "unknown option '" + name + "'",
                       help);
            return std::nullopt;
        }
        std::string value;
        if (spec->takesValue) {
            if (eq != std::string::npos) {
                value = a.substr(eq + 1);
            } else if (i + 1 < args.size()) {
                value = args[++i];
            } else {
                usageError(
                    ctx, "option " + name + " needs a value (" + std::string(spec->valueName) + ")",
                    help);
                return std::nullopt;
            }
        } else if (eq != std::string::npos) {
            usageError(ctx, "option " + name + " takes no value", help);
            return std::nullopt;
        }
        parsed.values[std::string(spec->name)] = value;
    }
    return parsed;
}

std::optional<uint64_t> parseByteCount(std::string_view text) {
    uint64_t value = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || p == text.data()) {
        return std::nullopt;
    }
    std::string_view unit(p, static_cast<size_t>(end - p));
    if (!unit.empty() && unit.front() == ' ') {
        unit.remove_prefix(1);
    }
    uint64_t scale = 1;
    if (!unit.empty() && unit != "B") {
        static constexpr std::string_view kUnits = "KMGT";
        const size_t k = kUnits.find(unit[0]);
        const std::string_view rest = unit.substr(1);
        if (k == std::string_view::npos || (rest != "" && rest != "iB" && rest != "B")) {
            return std::nullopt;
        }
        const uint64_t base = rest == "B" ? 1000 : 1024;  // KB = 1000 B, KiB and K = 1024 B
        for (size_t i = 0; i <= k; ++i) {
            scale *= base;
        }
    }
    if (value > UINT64_MAX / scale) {
        return std::nullopt;
    }
    return value * scale;
}

std::optional<uint64_t> parseCapacity(std::string_view text) {
    std::optional<uint64_t> bytes = parseByteCount(text);
    if (!bytes) {
        bytes = analysis::gpuCapacityByName(text);
    }
    return bytes && *bytes > 0 ? bytes : std::nullopt;
}

namespace {

/// "H100-80GB, H200, ..." from the table.
std::string gpuNames() {
    std::string names;
    for (const analysis::GpuCapacity& g : analysis::gpuCapacities()) {
        names += (names.empty() ? "" : ", ") + std::string(g.name);
    }
    return names;
}

}  // namespace

std::string capacityValueHelp() {
    return "bytes with a binary unit (KiB/MiB/GiB/TiB, e.g. 141GiB; KB/MB/GB/TB are powers of "
           "1000) or a GPU name: " +
           gpuNames() + " (datasheet sizes, read as GiB)";
}

std::string capacityError(std::string_view text) {
    return "--capacity needs a byte count such as 80GiB or a GPU name (" + gpuNames() + "), got '" +
           std::string(text) + "'";
}

std::optional<int64_t> parseDurationNs(std::string_view text) {
    static const std::pair<std::string_view, double> kUnits[] = {
        {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    for (const auto& [unit, scale] : kUnits) {
        if (text.size() > unit.size() && text.ends_with(unit)) {
            const std::string number(text.substr(0, text.size() - unit.size()));
            char* end = nullptr;
            const double v = std::strtod(number.c_str(), &end);
            // strtod also reads "inf", hex and leading spaces: accept plain decimals only.
            const bool plain =
                !number.empty() &&
                (std::isdigit(static_cast<unsigned char>(number[0])) || number[0] == '.');
            if (plain && end == number.c_str() + number.size() && v >= 0 && v < 1e7) {
                return int64_t(v * scale);
            }
            return std::nullopt;
        }
    }
    return std::nullopt;
}

std::optional<int64_t> parseInteger(std::string_view text) {
    int64_t value = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || p != end || text.empty()) {
        return std::nullopt;
    }
    return value;
}

std::string padRight(std::string s, size_t width) {
    if (s.size() < width) {
        s.resize(width, ' ');
    }
    return s;
}

std::string padLeft(const std::string& s, size_t width) {
    return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

std::string formatPercent(uint64_t part, uint64_t whole) {
    if (whole == 0) {
        return {};
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%",
                  100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return buf;
}

OptionSpec keepGoingOption(std::string_view help) {
    return {"--keep-going", false, "", help};
}

std::optional<InputOptions> parseInputs(CommandContext& ctx, const ParsedArgs& args,
                                        const InputRule& rule) {
    InputOptions inputs;
    inputs.paths = args.positional;
    inputs.keepGoing = args.has("--keep-going");
    const size_t n = inputs.paths.size();
    if (n == 0 && rule.bundledWhenNone) {
        inputs.bundled = true;
        return inputs;
    }
    if (n < rule.atLeast || n > rule.atMost) {
        usageError(
            ctx,
            rule.countError.empty() ? std::string("no input given") : std::string(rule.countError),
            ctx.help());
        return std::nullopt;
    }
    return inputs;
}

std::optional<trace::Job> openInputs(CommandContext& ctx, const InputOptions& inputs) {
    if (!inputs.bundled) {
        return openInputs(ctx, inputs.paths, inputs.keepGoing);
    }
    auto bundled = openBundledSample();
    if (!bundled.ok()) {
        ctx.err << "vramscope-cli " << ctx.command << ": cannot read " << bundled.error().describe()
                << "\n";
        return std::nullopt;
    }
    ctx.err << "vramscope-cli " << ctx.command
            << ": no input given; reporting the bundled sample job (" << bundled->ranks.size()
            << " ranks)\n";
    return std::move(bundled).value();
}

std::optional<trace::Job> openInputs(CommandContext& ctx, const std::vector<std::string>& paths,
                                     bool keepGoing) {
    trace::ReadOptions options;
    options.maxInputBytes = ctx.maxInputBytes;
    auto job = trace::openJob(paths, options);
    if (!job.ok()) {
        ctx.err << "vramscope-cli " << ctx.command << ": cannot read " << job.error().describe()
                << "\n";
        return std::nullopt;
    }
    for (const auto& e : job->skipped) {
        ctx.err << "vramscope-cli " << ctx.command << ": cannot read " << e.describe()
                << (keepGoing ? " (skipped)" : "") << "\n";
    }
    for (const std::string& w : job->warnings) {
        ctx.err << "vramscope-cli " << ctx.command << ": warning: " << w << "\n";
    }
    if (!job->skipped.empty() && !keepGoing) {
        return std::nullopt;
    }
    return std::move(job).value();
}

std::string outputPathFor(const std::string& out, const std::string& label) {
    constexpr std::string_view kExt = ".vscope";
    if (out.size() > kExt.size() && std::string_view(out).ends_with(kExt)) {
        return out.substr(0, out.size() - kExt.size()) + "-" + label + std::string(kExt);
    }
    return (fs::path(out) / (label + std::string(kExt))).string();
}

trace::Status prepareOutput(const std::string& out) {
    fs::path dir(out);
    if (std::string_view(out).ends_with(".vscope")) {
        dir = dir.parent_path();
        if (dir.empty()) {
            return trace::Status::success();
        }
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) {
        return trace::Error::make(
            trace::ErrorCode::Io, out,
            "cannot create the output directory" + (ec ? ": " + ec.message() : std::string()));
    }
    return trace::Status::success();
}

bool integerOption(CommandContext& ctx, const ParsedArgs& args, std::string_view name,
                   const std::string& help, std::optional<int64_t>& out) {
    if (auto text = args.value(name)) {
        out = parseInteger(*text);
        if (!out) {
            usageError(ctx, std::string(name) + " needs an integer", help);
            return false;
        }
    }
    return true;
}

std::vector<trace::DeviceIndex> memoryGpus(const trace::TraceData& data) {
    std::vector<trace::DeviceIndex> gpus;
    for (trace::DeviceIndex d : data.memory.device) {
        if (toInt(d) >= 0 && std::find(gpus.begin(), gpus.end(), d) == gpus.end()) {
            gpus.push_back(d);
        }
    }
    std::sort(gpus.begin(), gpus.end());
    return gpus;
}

std::optional<trace::DeviceIndex> chooseMemoryGpu(const std::vector<trace::DeviceIndex>& gpus,
                                                  std::optional<int64_t> wanted,
                                                  std::string& error) {
    if (!wanted) {
        return gpus.front();
    }
    if (std::none_of(gpus.begin(), gpus.end(),
                     [&](trace::DeviceIndex d) { return toInt(d) == *wanted; })) {
        std::string list;
        for (trace::DeviceIndex d : gpus) {
            list += (list.empty() ? "" : ", ") + std::to_string(toInt(d));
        }
        error = "no GPU " + std::to_string(*wanted) +
                " with memory events in the input (GPUs: " + list + ")";
        return std::nullopt;
    }
    return trace::DeviceIndex(int32_t(*wanted));
}

std::optional<trace::DeviceIndex> chooseMemoryGpu(CommandContext& ctx,
                                                  const std::vector<trace::DeviceIndex>& gpus,
                                                  std::optional<int64_t> wanted,
                                                  const std::string& help, int& exitCode) {
    std::string error;
    const std::optional<trace::DeviceIndex> chosen = chooseMemoryGpu(gpus, wanted, error);
    if (!chosen) {
        exitCode = usageError(ctx, error, help);
    }
    return chosen;
}

}  // namespace vramscope::app
