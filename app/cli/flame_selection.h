#pragma once
// Which live set a flame tree shows: the rank, the GPU, the memory level, the grouping and the
// time, read from the command line with the same rules wherever a tree is made (`flame`,
// `export --format speedscope`).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_command.h"
#include "vramscope/analysis/memory/flame_tree.h"

namespace vramscope::app {

/// The options that choose a flame tree: --device, --rank, --at, --by, --level.
std::vector<OptionSpec> flameSelectionOptions();

/// The choice as given, checked before any input is read.
struct FlameRequest {
    analysis::FlameGrouping grouping = analysis::FlameGrouping::Stack;
    std::string levelText;  ///< "allocated", "reserved" or "" (the GPU's detail level)
    std::optional<int64_t> rank;
    std::optional<int64_t> device;
    std::string atText = "peak";
};

/// Reads the flame options of `args`. nullopt with `exitCode` = kExitUsage (the usage error
/// written) on a bad --by, --level, --rank or --device, or an --at that is no TIME (isTimeText).
std::optional<FlameRequest> parseFlameRequest(CommandContext& ctx, const ParsedArgs& args,
                                              const std::string& help, int& exitCode);

/// Whether `text` is a TIME as --at and --diff take it: "peak", "oom", an integer or a number
/// with a unit (parseInteger, parseDurationNs). What FlameSelection::resolve accepts before it
/// looks at the trace, so that a malformed time is refused before any input is read.
bool isTimeText(std::string_view text);
/// The usage error for a `text` that is no TIME (isTimeText false).
std::string timeTextError(std::string_view text);

/// A GPU's live sets, chosen in a job. Holds pointers into the job, which must outlive it.
struct FlameSelection {
    const trace::RankTrace* rankTrace = nullptr;
    trace::DeviceIndex device{0};
    trace::MemoryLevel level = trace::MemoryLevel::Allocated;
    std::unique_ptr<analysis::FlameTreeBuilder> builder;
    trace::TimestampNs spanFirstNs = 0;  ///< the GPU's first memory event (trace clock)
    trace::TimestampNs spanLastNs = 0;   ///< the trace's last event

    /// TIME as --at reads it: "peak", "oom", an integer (ns on the rank's own clock, the clock
    /// of report --json's peak_time_ns), or a number with a unit (s, ms, us, ns) counted from
    /// the GPU's first memory event; a time outside [spanFirstNs, spanLastNs] is refused. nullopt
    /// with the usage error written on a bad or out-of-span time.
    std::optional<trace::TimestampNs> resolve(CommandContext& ctx, const std::string& text,
                                              const std::string& help) const;
};

/// Chooses the rank (--rank, default the first), the GPU (--device, default the lowest with
/// memory events), the level (--level, default the GPU's detail level) in `job`. nullopt with
/// `exitCode` set and the reason written: kExitUsage for a rank, GPU or level the job does not
/// have; kExitUnreadable when the rank has no GPU memory events or its frees cannot be paired
/// with allocations (no live set).
std::optional<FlameSelection> selectFlame(CommandContext& ctx, const trace::Job& job,
                                          const FlameRequest& request, const std::string& help,
                                          int& exitCode);

}  // namespace vramscope::app
