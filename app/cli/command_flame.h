#pragma once
// vramscope-cli flame as options, a result and a printer: the live set of one GPU at one time (or
// what changed between two times) as a flame tree.

#include <iosfwd>
#include <optional>
#include <string>

#include "cli_command.h"
#include "flame_selection.h"
#include "vramscope/analysis/memory/flame_tree.h"

namespace vramscope::app {

/// The command line of `flame`: FILE [--rank R] [--device D] [--level L] [--at TIME] [--by G]
/// [--diff TIME2] [--format folded|json|speedscope].
struct FlameOptions {
    InputOptions inputs;  ///< exactly one
    FlameRequest request;
    std::optional<std::string> diffText;  ///< --diff TIME2, read as --at reads TIME
    std::string format = "folded";        ///< folded, json or speedscope
};

/// Parses ctx.args. nullopt with `exitCode` set when the command is done: kExitSuccess after
/// --help, kExitUsage after a usage error (written to ctx.err).
std::optional<FlameOptions> parseFlameOptions(CommandContext& ctx, int& exitCode);

/// The tree `flame` prints, and where it comes from.
struct FlameResult {
    std::string file;
    trace::RankId rank = trace::kUnknownRank;
    trace::DeviceIndex device{0};
    trace::MemoryLevel level = trace::MemoryLevel::Allocated;
    analysis::FlameGrouping grouping = analysis::FlameGrouping::Stack;
    /// At request.atText, or with diffText the difference from it to diffText (isDiff).
    analysis::FlameTree tree;
};

/// The tree `options` ask for in `job`. nullopt with `exitCode` set and the reason written to
/// ctx.err: kExitUsage for a rank, GPU or level the job lacks or a time outside the GPU's span;
/// kExitUnreadable when the rank has no live set (selectFlame's rules).
std::optional<FlameResult> flameOf(CommandContext& ctx, const trace::Job& job,
                                   const FlameOptions& options, int& exitCode);

/// Writes the tree in `format`: "folded" (toFolded: "root;...;leaf BYTES" lines), "speedscope"
/// (writeSpeedscope) or "json": {"file", "rank", "device", "level", "grouping", "time_ns",
/// "before_time_ns" (diff only), "total_bytes", "allocations", "tree": {"name", "bytes", "count",
/// "self_bytes", "before_bytes"/"after_bytes" (diff only), "children"}}. An error only where
/// writeSpeedscope gives one.
trace::Status printFlame(const FlameResult& result, const std::string& format, std::ostream& os);

}  // namespace vramscope::app
