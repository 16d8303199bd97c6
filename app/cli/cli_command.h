#pragma once
// What every vramscope-cli subcommand shares: its context, exit codes, its entry in the command
// table (help and options), option and input parsing, opening inputs and formatting numbers. A
// subcommand lives in app/cli/command_<name>.cpp as `int run<Name>(CommandContext&)`: it parses
// its options into a struct, calls a function that returns its result as a value, and prints
// that (text or JSON). Its help and options are one row of commandTable() (command_table.cpp),
// and its run function is registered by one line in cli_main.cpp.

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::app {

/// Exit codes of vramscope-cli (stable: scripts and CI rely on them).
enum ExitCode : int {
    kExitSuccess = 0,
    kExitCheckFailed = 1,  ///< the command ran, and a check it was asked to make failed
    kExitUsage = 2,        ///< bad command line: usage on stderr
    kExitUnreadable = 3,   ///< an input could not be read (or an output written): file on stderr
};

struct CommandSpec;

/// What a subcommand gets: its arguments (after the subcommand name) and where to write.
/// Results go to `out`, messages for the user (errors, notes) to `err`.
struct CommandContext {
    std::string command;  ///< e.g. "report"
    std::vector<std::string> args;
    std::ostream& out;
    std::ostream& err;
    /// Largest input read, after decompression (--max-input-gib, else VRAMSCOPE_MAX_INPUT_GIB,
    /// else trace::kDefaultMaxInputBytes).
    uint64_t maxInputBytes = trace::kDefaultMaxInputBytes;
    /// The command's row of commandTable(); runCli sets it. Null only in a context a test made
    /// by hand, whose help is then empty.
    const CommandSpec* spec = nullptr;

    /// The command's --help text, commandHelp(*spec) ("" without a spec).
    std::string help() const;
};

/// Entry point of vramscope-cli, separate from main() so tests can run commands in-process.
/// args excludes the program name.
int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// One option a subcommand accepts. `name` includes the dashes ("--json", "-o"); `alias` is an
/// optional second spelling.
struct OptionSpec {
    std::string_view name;
    bool takesValue = false;
    std::string_view valueName;  ///< shown in help, e.g. "N"
    std::string_view help;
    std::string_view alias = {};
};

/// A command as its --help and the man page describe it. commandTable() holds one per command:
/// the single source of the help text, and the list tests compare docs/man/vramscope-cli.1 with.
struct CommandSpec {
    std::string_view name;            ///< e.g. "report"
    std::string_view summary;         ///< its line in the top-level help
    std::string synopsis;             ///< after "usage: vramscope-cli NAME "
    std::string description;          ///< the paragraphs between the usage line and the options
    std::vector<OptionSpec> options;  ///< every option but -h/--help, which every command takes
};

/// Every command, in the order the top-level help lists them (command_table.cpp). The texts live
/// as long as the program (OptionSpec holds views into them).
const std::vector<CommandSpec>& commandTable();
/// The views `render --view` draws, for its help ("memory, lanes, ..."); command_render.cpp in
/// builds with Qt, a sentence saying there are none in builds without.
std::string renderViewNames();
/// The row of commandTable() named `name`, or null.
const CommandSpec* findCommand(std::string_view name);

/// A subcommand's command line after parsing.
struct ParsedArgs {
    std::vector<std::string> positional;
    std::map<std::string, std::string, std::less<>> values;  ///< by OptionSpec::name; "" for flags
    bool help = false;                                       ///< --help or -h was given

    bool has(std::string_view name) const { return values.find(name) != values.end(); }
    std::optional<std::string> value(std::string_view name) const;
};

/// Help text of a subcommand: "usage: vramscope-cli NAME SYNOPSIS", the description and one
/// line per option (plus --help).
std::string commandHelp(std::string_view command, std::string_view synopsis,
                        std::string_view description, const std::vector<OptionSpec>& options);
/// The same for a row of the command table.
std::string commandHelp(const CommandSpec& spec);

/// Parses `ctx.args` against `options`. Accepts "--name value", "--name=value" and "--" (the rest
/// is positional). On an unknown option or a missing value, writes the message and `help` to
/// ctx.err and returns nullopt: the command then returns kExitUsage.
std::optional<ParsedArgs> parseArgs(CommandContext& ctx, const std::vector<OptionSpec>& options,
                                    const std::string& help);

/// What every subcommand does first: parseArgs, then --help printed to ctx.out. Returns the
/// arguments, or nullopt with `exitCode` set when the command is done: kExitUsage after a usage
/// error, kExitSuccess after the help.
std::optional<ParsedArgs> parseCommand(CommandContext& ctx, const std::vector<OptionSpec>& options,
                                       const std::string& help, int& exitCode);
/// parseCommand with the options and help of the command's own row (ctx.spec).
std::optional<ParsedArgs> parseCommand(CommandContext& ctx, int& exitCode);

/// Writes "vramscope-cli COMMAND: MESSAGE" and the help to ctx.err; returns kExitUsage.
int usageError(CommandContext& ctx, const std::string& message, const std::string& help);

/// usageError for the functions that parse a command's options into a struct: writes the error
/// and the help to ctx.err and returns nullopt (the caller's exit code is then kExitUsage).
std::nullopt_t usageFailure(CommandContext& ctx, const std::string& message,
                            const std::string& help);

/// Parses a non-negative integer ("123", "123B") or a byte size with a unit, optionally after
/// one space: binary "64KiB", "512MiB", "2GiB", "1TiB" ("K", "M", "G", "T" alone mean the same)
/// or decimal "KB", "MB", "GB", "TB" (powers of 1000, so 141GB = 141e9 bytes). Nullopt on
/// anything else or overflow.
std::optional<uint64_t> parseByteCount(std::string_view text);
/// Parses a GPU capacity for --capacity (check, batch-fit): a byte count as parseByteCount (binary
/// "141GiB"; decimal "80GB" is 80 x 10^9 B) or a GPU name of analysis::gpuCapacities()
/// ("H200", case-insensitive). Nullopt for anything else and for 0.
std::optional<uint64_t> parseCapacity(std::string_view text);
/// What a --capacity value may be, for the options' help: the units and the GPU names.
std::string capacityValueHelp();
/// The message for a --capacity value parseCapacity refused.
std::string capacityError(std::string_view text);

/// Parses a decimal integer (optionally negative) that fits int64. Nullopt otherwise.
std::optional<int64_t> parseInteger(std::string_view text);
/// Parses a duration with a unit, "1.5s", "200ms", "40us", "900ns" (a non-negative decimal number
/// below 10^7 of its unit), into ns. Nullopt otherwise (no unit, a sign, trailing text). What the
/// commands that take a time counted from a start (flame --at, segments --at) read.
std::optional<int64_t> parseDurationNs(std::string_view text);

// Bytes and durations print as everywhere else (analysis/text_format.h).
using analysis::formatBytes;
using analysis::formatDuration;
using analysis::rankLabel;
/// `s` padded with spaces on the right (padRight) or the left (padLeft) to `width` bytes; longer
/// text is kept whole. For the columns of text tables.
std::string padRight(std::string s, size_t width);
std::string padLeft(const std::string& s, size_t width);
/// "12.3 %" of `whole`, or "" when whole is 0.
std::string formatPercent(uint64_t part, uint64_t whole);

/// How many inputs a command takes, and what it does with none: the part of the commands'
/// preambles that differs.
struct InputRule {
    size_t atLeast = 1;
    size_t atMost = SIZE_MAX;
    /// With no input: the bundled sample job (report) instead of a usage error.
    bool bundledWhenNone = false;
    /// The usage error for a wrong count; empty: "no input given".
    std::string_view countError = {};
};

/// The inputs of a command as its command line gives them.
struct InputOptions {
    std::vector<std::string> paths;  ///< files, directories, archives, "-" (standard input)
    bool keepGoing = false;          ///< --keep-going: open the job without unreadable inputs
    bool bundled = false;            ///< no path given: the bundled sample job
};

/// --keep-going, for the commands that take it; `help` says what the command does then.
OptionSpec keepGoingOption(std::string_view help);

/// The inputs of `args` checked against `rule` (and --keep-going when the command has it). On a
/// wrong count writes the usage error and returns nullopt (the command returns kExitUsage).
std::optional<InputOptions> parseInputs(CommandContext& ctx, const ParsedArgs& args,
                                        const InputRule& rule);

/// Opens `paths` (files, directories, archives) as one job with trace::openJob. Any input that
/// cannot be opened is written to ctx.err ("vramscope-cli: cannot read FILE: byte N: why") and
/// makes this return nullopt (the command then returns kExitUnreadable), unless `keepGoing`, in
/// which case the job opens without it (the problems stay in Job::skipped).
std::optional<trace::Job> openInputs(CommandContext& ctx, const std::vector<std::string>& paths,
                                     bool keepGoing = false);
/// The same for parsed inputs; `inputs.bundled` opens the bundled sample job and says so on
/// ctx.err ("no input given; reporting the bundled sample job (N ranks)").
std::optional<trace::Job> openInputs(CommandContext& ctx, const InputOptions& inputs);

/// Reads the integer option `name` (e.g. "--device") into `out` when given; on a value that is
/// no integer writes a usage error ("--device needs an integer") and returns false (the command
/// then returns kExitUsage). `out` stays nullopt when the option is absent.
bool integerOption(CommandContext& ctx, const ParsedArgs& args, std::string_view name,
                   const std::string& help, std::optional<int64_t>& out);

/// GPUs of `data` with memory events, ascending (host memory, device -1, is left out).
std::vector<trace::DeviceIndex> memoryGpus(const trace::TraceData& data);
/// The GPU a command works on: `wanted` when given (a usage error naming the GPUs with memory
/// events when it has none), else the first of memoryGpus. nullopt with `exitCode` set
/// (kExitUsage after writing the usage error) when `wanted` is not among them; `gpus` must not
/// be empty.
std::optional<trace::DeviceIndex> chooseMemoryGpu(CommandContext& ctx,
                                                  const std::vector<trace::DeviceIndex>& gpus,
                                                  std::optional<int64_t> wanted,
                                                  const std::string& help, int& exitCode);

/// chooseMemoryGpu without writing: nullopt with `error` set (the usage error's sentence).
std::optional<trace::DeviceIndex> chooseMemoryGpu(const std::vector<trace::DeviceIndex>& gpus,
                                                  std::optional<int64_t> wanted,
                                                  std::string& error);

/// Output names for one .vscope per rank (synth and convert): when `out` ends in ".vscope",
/// "OUT-rank<R>.vscope" beside it (OUT being `out` without the extension); otherwise `out` is a
/// directory (created when missing) holding "rank<R>.vscope". `label` is "rank<R>" for a known
/// rank; callers pass another label (e.g. "file<i>") when the rank is unknown.
std::string outputPathFor(const std::string& out, const std::string& label);
/// Creates the directory that will hold the outputs (`out` itself, or the parent directory of
/// OUT.vscope) when it is missing. Error names the path.
trace::Status prepareOutput(const std::string& out);

}  // namespace vramscope::app
