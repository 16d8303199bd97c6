// vramscope-cli: subcommand table and dispatch.
#include <exception>
#include <new>
#include <ostream>

#include "cli_command.h"

// The subcommands, in the order the top-level help lists them. To add one: write
// app/cli/command_<name>.cpp defining `int vramscope::app::run<Name>(CommandContext&)` (it parses
// ctx.args with parseArgs() and answers --help), list the file in app/cli/CMakeLists.txt, and add
// ONE line here: X("<name>", run<Name>, "<one-line summary>").
#define VRAMSCOPE_CLI_COMMANDS(X)                                                                \
    X("info", runInfo, "header, devices, event counts by kind, time span and data loss")         \
    X("report", runReport, "per-device peaks of allocated and reserved memory (text or JSON)")   \
    X("synth", runSynth, "write a deterministic synthetic training job, one .vscope per rank")   \
    X("convert", runConvert, "import any supported input and write .vscope, one file per rank")  \
    X("flame", runFlame, "the live set at the peak, an OOM or a time as a flame tree")           \
    X("segments", runSegments, "reserved segments, free blocks and fragmentation at a time/OOM") \
    X("check", runCheck, "pass/fail rules for CI: peak, leak, exposed communication")            \
    X("batch-fit", runBatchFit, "largest batch that fits, from runs at several batch sizes")     \
    X("export", runExport, "write a job for other tools: Perfetto, Chrome JSON, CSV, speedscope")

namespace vramscope::app {

#define VRAMSCOPE_DECLARE_COMMAND(name, fn, summary) int fn(CommandContext& ctx);
VRAMSCOPE_CLI_COMMANDS(VRAMSCOPE_DECLARE_COMMAND)
#undef VRAMSCOPE_DECLARE_COMMAND

namespace {

struct Command {
    std::string_view name;
    int (*run)(CommandContext&);
    std::string_view summary;
};

#define VRAMSCOPE_COMMAND_ROW(name, fn, summary) Command{name, &fn, summary},
constexpr Command kCommands[] = {VRAMSCOPE_CLI_COMMANDS(VRAMSCOPE_COMMAND_ROW)};
#undef VRAMSCOPE_COMMAND_ROW

void writeTopHelp(std::ostream& os) {
    os << "usage: vramscope-cli COMMAND [OPTIONS] [ARGS]\n\n"
          "Where GPU memory goes and where GPUs sit idle in training jobs, headless.\n\n"
          "commands:\n";
    for (const auto& c : kCommands) {
        std::string name(c.name);
        name.resize(12, ' ');
        os << "  " << name << c.summary << "\n";
    }
    os << "\nAn input named - is standard input (e.g. ssh host cat trace.json.gz | vramscope-cli\n"
          "report -).\n"
          "'vramscope-cli COMMAND --help' describes a command.\n\n"
          "options:\n"
          "  -h, --help  show this help and exit\n"
          "  --version   print the version and exit\n\n"
          "exit codes: 0 success, 1 a check failed, 2 usage error, 3 unreadable input (or\n"
          "unwritable output, or not enough memory)\n";
}

}  // namespace

int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
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
    for (const auto& c : kCommands) {
        if (c.name == name) {
            CommandContext ctx{name, std::vector<std::string>(args.begin() + 1, args.end()), out,
                               err};
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
