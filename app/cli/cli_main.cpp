// vramscope-cli: subcommand table and dispatch.
#include <exception>
#include <new>
#include <ostream>

#include "cli_command.h"
#include "vramscope/trace/input_bytes.h"

// The subcommands' run functions, by name. To add one: write app/cli/command_<name>.cpp defining
// `int vramscope::app::run<Name>(CommandContext&)` (it parses ctx.args with parseCommand() and
// answers --help), list the file in app/cli/CMakeLists.txt, add its row (summary, synopsis,
// description, options) to commandTable() in command_table.cpp and its section to
// docs/man/vramscope-cli.1 (a test compares the two), and add ONE line here: X("<name>",
// run<Name>).
#define VRAMSCOPE_CLI_COMMANDS(X) \
    X("info", runInfo)            \
    X("report", runReport)        \
    X("synth", runSynth)          \
    X("convert", runConvert)      \
    X("summarize", runSummarize)  \
    X("flame", runFlame)          \
    X("segments", runSegments)    \
    X("check", runCheck)          \
    X("batch-fit", runBatchFit)   \
    X("export", runExport)        \
    X("render", runRender)        \
    X("review", runReview)        \
    X("attach", runAttach)        \
    X("watch", runWatch)          \
    X("replay", runReplay)

namespace vramscope::app {

#define VRAMSCOPE_DECLARE_COMMAND(name, fn) int fn(CommandContext& ctx);
VRAMSCOPE_CLI_COMMANDS(VRAMSCOPE_DECLARE_COMMAND)
#undef VRAMSCOPE_DECLARE_COMMAND

#ifndef VRAMSCOPE_CLI_WITH_QT
// render and review draw with Qt (app/cli/CMakeLists.txt builds them with the GUI only); a
// build without Qt keeps the names, so that scripts get a sentence rather than "unknown command".
namespace {
int withoutQt(CommandContext& ctx) {
    const std::string why =
        "this vramscope-cli was built without Qt (VRAMSCOPE_BUILD_GUI=OFF), so it cannot draw; "
        "use a build with the GUI";
    if (!ctx.args.empty() && (ctx.args.front() == "--help" || ctx.args.front() == "-h")) {
        // Help is an answer, not an error: say what the command would need.
        ctx.out << "usage: vramscope-cli " << ctx.command << " ...\n\n" << why << ".\n";
        return kExitSuccess;
    }
    ctx.err << "vramscope-cli " << ctx.command
            << ": this vramscope-cli was built without Qt (VRAMSCOPE_BUILD_GUI=OFF), so it cannot "
               "draw; use a build with the GUI\n";
    return kExitUsage;
}
}  // namespace
int runRender(CommandContext& ctx) {
    return withoutQt(ctx);
}
std::string renderViewNames() {
    return "(none: this build cannot draw)";
}
int runReview(CommandContext& ctx) {
    return withoutQt(ctx);
}
#endif

namespace {

struct Command {
    std::string_view name;
    int (*run)(CommandContext&);
};

#define VRAMSCOPE_COMMAND_ROW(name, fn) Command{name, &fn},
constexpr Command kCommands[] = {VRAMSCOPE_CLI_COMMANDS(VRAMSCOPE_COMMAND_ROW)};
#undef VRAMSCOPE_COMMAND_ROW

void writeTopHelp(std::ostream& os) {
    os << "usage: vramscope-cli COMMAND [OPTIONS] [ARGS]\n\n"
          "Where GPU memory goes and where GPUs sit idle in training jobs, headless.\n\n"
          "commands:\n";
    for (const CommandSpec& c : commandTable()) {
        std::string name(c.name);
        name.resize(12, ' ');
        os << "  " << name << c.summary << "\n";
    }
    os << "\nglobal options (before COMMAND):\n"
          "  --max-input-gib N  refuse an input larger than N GiB once decompressed (default 16,\n"
          "                     or VRAMSCOPE_MAX_INPUT_GIB from the environment)\n"
          "\nAn input named - is standard input (e.g. ssh host cat trace.json.gz | vramscope-cli\n"
          "report -).\n"
          "'vramscope-cli COMMAND --help' describes a command.\n\n"
          "options:\n"
          "  -h, --help  show this help and exit\n"
          "  --version   print the version and exit\n\n"
          "exit codes: 0 success, 1 a check failed, 2 usage error, 3 unreadable input (or\n"
          "unwritable output, or not enough memory)\n";
}

/// Reads the global options that come before the command (`maxInputBytes` is set only when
/// --max-input-gib is given); returns the index of the command, or nullopt after writing a usage
/// error.
std::optional<size_t> globalOptions(const std::vector<std::string>& args,
                                    std::optional<uint64_t>& maxInputBytes, std::ostream& err) {
    size_t i = 0;
    while (i < args.size() && args[i].starts_with("--max-input-gib")) {
        std::string value;
        if (args[i] == "--max-input-gib" && i + 1 < args.size()) {
            value = args[i + 1];
            i += 2;
        } else if (args[i].starts_with("--max-input-gib=")) {
            value = args[i].substr(16);
            i += 1;
        } else {
            err << "vramscope-cli: --max-input-gib needs a value\n";
            return std::nullopt;
        }
        const std::optional<int64_t> gib = parseInteger(value);
        if (!gib || *gib < 1 || *gib > (int64_t{1} << 20)) {
            err << "vramscope-cli: --max-input-gib needs a whole number of GiB from 1 to 1048576, "
                   "not '"
                << value << "'\n";
            return std::nullopt;
        }
        maxInputBytes = static_cast<uint64_t>(*gib) << 30;
    }
    return i;
}

}  // namespace

int runCli(const std::vector<std::string>& allArgs, std::ostream& out, std::ostream& err) {
    std::optional<uint64_t> limitOption;
    const std::optional<size_t> first = globalOptions(allArgs, limitOption, err);
    if (!first) {
        writeTopHelp(err);
        return kExitUsage;
    }
    const std::vector<std::string> args(allArgs.begin() + static_cast<ptrdiff_t>(*first),
                                        allArgs.end());
    if (args.empty()) {
        err << "vramscope-cli: no command given\n\n";
        writeTopHelp(err);
        return kExitUsage;
    }
    const std::string& name = args[0];
    if (name == "--help" || name == "-h" || name == "help") {
        writeTopHelp(out);
        return kExitSuccess;
    }
    if (name == "--version") {
        out << "vramscope-cli " << VRAMSCOPE_VERSION << "\n";
        return kExitSuccess;
    }
    // The environment's limit counts only where the option is not given, and only for a command
    // (help and version read no input).
    uint64_t maxInputBytes = limitOption.value_or(trace::kDefaultMaxInputBytes);
    if (!limitOption) {
        auto fromEnvironment = trace::maxInputBytesSetting();
        if (!fromEnvironment) {
            err << "vramscope-cli: " << fromEnvironment.error().describe() << "\n";
            return kExitUsage;
        }
        maxInputBytes = *fromEnvironment;
    }
    for (const auto& c : kCommands) {
        if (c.name == name) {
            CommandContext ctx{
                name,          std::vector<std::string>(args.begin() + 1, args.end()),
                out,           err,
                maxInputBytes, findCommand(name)};
            try {
                return c.run(ctx);
            } catch (const std::bad_alloc&) {
                err << "vramscope-cli " << name
                    << ": out of memory (the input or the request is too large for this "
                       "machine)\n";
            } catch (const std::exception& e) {
                err << "vramscope-cli " << name << ": internal error: " << e.what() << "\n";
            }
            return kExitUnreadable;
        }
    }
    err << "vramscope-cli: unknown command '" << name << "'\n\n";
    writeTopHelp(err);
    return kExitUsage;
}

}  // namespace vramscope::app
