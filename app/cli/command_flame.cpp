// vramscope-cli flame: the live set at a time (the peak, an OOM, any time) as a flame tree, in
// collapsed-stack text or JSON; optionally the difference between two times.
#include <algorithm>
#include <functional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "analysis_report.h"
#include "cli_command.h"
#include "device_report.h"
#include "vramscope/analysis/flame_tree.h"
#include "vramscope/analysis/leak.h"
#include "vramscope/analysis/live_set.h"

namespace vramscope::app {

namespace {

using Json = nlohmann::ordered_json;
using namespace analysis;

/// TIME: "peak", "oom", an integer (ns in the trace's own clock, the clock of report --json's
/// peak_time_ns), or a number with a unit (s, ms, us, ns) counted from the first memory event of
/// the device.
std::optional<trace::TimestampNs> resolveTime(const std::string& text, const trace::TraceData& data,
                                              const AllocationIndex& index, std::string& error) {
    if (text == "peak") {
        return peakTime(data, index);
    }
    if (text == "oom") {
        for (const trace::OomEvent& o : data.ooms) {
            if (o.device == index.device()) {
                return o.timestampNs;
            }
        }
        error = "the trace has no OOM on GPU " + std::to_string(toInt(index.device()));
        return std::nullopt;
    }
    if (auto n = parseInteger(text)) {
        return *n;
    }
    if (auto ns = parseDurationNs(text)) {
        const trace::TimestampNs first = index.empty() ? 0 : index.timeAt(0);
        return first + *ns;
    }
    error =
        "TIME must be peak, oom, an integer (ns) or a number with s/ms/us/ns, got '" + text + "'";
    return std::nullopt;
}

Json nodeJson(const FlameTree& tree, uint32_t i) {
    const FlameNode& n = tree.nodes[i];
    Json j;
    j["name"] = n.name;
    j["bytes"] = n.bytes;
    j["count"] = n.count;
    j["self_bytes"] = n.selfBytes;
    if (tree.isDiff) {
        j["before_bytes"] = n.beforeBytes;
        j["after_bytes"] = n.afterBytes;
    }
    j["children"] = Json::array();
    for (uint32_t c : n.children) {
        j["children"].push_back(nodeJson(tree, c));
    }
    return j;
}

}  // namespace

int runFlame(CommandContext& ctx) {
    const std::vector<OptionSpec> options = {
        {"--device", true, "D", "GPU index (default: the lowest with memory events)"},
        {"--rank", true, "R", "rank of the job to show (default: the first)"},
        {"--at", true, "TIME",
         "peak (default), oom, an integer: ns in the trace's own clock, or e.g. 1.5s"},
        {"--by", true, "GROUPING", "stack (default), nvtx or category"},
        {"--diff", true, "TIME2", "show what changed from --at to TIME2"},
        {"--format", true, "FORMAT", "folded (default) or json"},
        {"--level", true, "LEVEL", "allocated or reserved (default: allocated when recorded)"},
    };
    const std::string help = commandHelp(
        ctx.command,
        "FILE [--rank R] [--device D] [--level allocated|reserved] [--at peak|oom|TIME]\n"
        "       [--by stack|nvtx|category] [--diff TIME2] [--format folded|json]",
        "The allocations alive on a GPU at a time, grouped into a tree by stack frames (root\n"
        "first), by NVTX range path, or by category (memory kind, then size class), with bytes\n"
        "and allocation counts per node. 'folded' writes one line per allocation site,\n"
        "\"root;...;leaf BYTES\", which flamegraph.pl and speedscope read; with --diff it writes\n"
        "\"root;...;leaf BYTES_AT_TIME BYTES_AT_TIME2\" (flamegraph.pl's differential input).\n"
        "TIME with a unit (1.5s, 200ms) counts from the GPU's first memory event; an integer\n"
        "without a unit is a timestamp in ns in the trace's own clock (as report --json's\n"
        "peak_time_ns). A time before the GPU's first memory event or after the trace's last\n"
        "event is a usage error that names the span.\n\n"
        "exit codes: 0 success, 2 usage (bad option, no such rank or GPU, a time outside the\n"
        "trace, a level the GPU did not record), 3 unreadable input, or a live set the input\n"
        "cannot give (no GPU memory events, or allocations without an address so that frees\n"
        "cannot be paired with them: said on stderr)",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (args->positional.size() != 1) {
        return usageError(ctx, "flame takes exactly one input", help);
    }
    const std::string by = args->value("--by").value_or("stack");
    FlameGrouping grouping = FlameGrouping::Stack;
    if (by == "nvtx") {
        grouping = FlameGrouping::Nvtx;
    } else if (by == "category") {
        grouping = FlameGrouping::Category;
    } else if (by != "stack") {
        return usageError(ctx, "--by must be stack, nvtx or category", help);
    }
    const std::string format = args->value("--format").value_or("folded");
    if (format != "folded" && format != "json") {
        return usageError(ctx, "--format must be folded or json", help);
    }
    const std::string levelText = args->value("--level").value_or("");
    if (!levelText.empty() && levelText != "allocated" && levelText != "reserved") {
        return usageError(ctx, "--level must be allocated or reserved", help);
    }
    std::optional<int64_t> wantRank;
    if (!integerOption(ctx, *args, "--rank", help, wantRank)) {
        return kExitUsage;
    }
    std::optional<int64_t> wantDevice;
    if (!integerOption(ctx, *args, "--device", help, wantDevice)) {
        return kExitUsage;
    }
    auto job = loadJob(ctx, args->positional);
    if (!job) {
        return kExitUnreadable;
    }
    const trace::RankTrace* rt = job->ranks.empty() ? nullptr : &job->ranks.front();
    if (wantRank) {
        rt = nullptr;
        for (const trace::RankTrace& r : job->ranks) {
            if (toInt(r.trace.data.header.rank) == *wantRank) {
                rt = &r;
            }
        }
    }
    if (rt == nullptr) {
        std::string ranks;
        for (const trace::RankTrace& r : job->ranks) {
            ranks += (ranks.empty() ? "" : ", ") +
                     (r.trace.data.header.rank == trace::kUnknownRank
                          ? std::string("?")
                          : std::to_string(toInt(r.trace.data.header.rank)));
        }
        return usageError(
            ctx, "no rank " + std::to_string(*wantRank) + " in the input (ranks: " + ranks + ")",
            help);
    }
    const trace::TraceData& data = rt->trace.data;
    // GPUs with memory events (host memory, device -1, has no live set here).
    const std::vector<trace::DeviceIndex> gpus = memoryGpus(data);
    if (gpus.empty()) {
        ctx.err << "vramscope-cli flame: " << rt->path
                << " has no GPU memory events (memory was not recorded), so there is no live "
                   "set to show\n";
        return kExitUnreadable;
    }
    int exitCode = kExitSuccess;
    const std::optional<trace::DeviceIndex> chosen =
        chooseMemoryGpu(ctx, gpus, wantDevice, help, exitCode);
    if (!chosen) {
        return exitCode;
    }
    const trace::DeviceIndex device = *chosen;
    const trace::MemoryLevel level = levelText.empty()         ? detailLevel(data, device)
                                     : levelText == "reserved" ? trace::MemoryLevel::Reserved
                                                               : trace::MemoryLevel::Allocated;
    FlameTreeBuilder builder(data, device, level);
    if (builder.index().empty()) {
        return usageError(ctx,
                          "GPU " + std::to_string(toInt(device)) + " has no " +
                              trace::toString(level) + " memory events (it has " +
                              trace::toString(detailLevel(data, device)) + " ones); try --level " +
                              trace::toString(detailLevel(data, device)),
                          help);
    }
    if (const LiveSetEvidence evidence = liveSetEvidence(data, device, level); !evidence.known) {
        ctx.err << "vramscope-cli flame: " << rt->path << ": no live set for GPU " << toInt(device)
                << ": " << evidence.reason << "\n";
        return kExitUnreadable;
    }
    // Times from the GPU's first memory event to the trace's last event.
    const trace::TimestampNs spanFirst = builder.index().timeAt(0);
    trace::TimestampNs spanLast = spanFirst;
    if (auto span = traceTimeSpan(data)) {
        spanLast = std::max(spanLast, span->lastNs);
    }
    auto inSpan = [&](trace::TimestampNs t, const std::string& text) {
        if (t >= spanFirst && t <= spanLast) {
            return true;
        }
        usageError(ctx,
                   "TIME '" + text + "' is outside the trace: GPU " +
                       std::to_string(toInt(device)) + " spans " + std::to_string(spanFirst) +
                       " .. " + std::to_string(spanLast) + " ns in the trace's clock (0 .. " +
                       formatDuration(spanLast - spanFirst) + " from its first memory event)",
                   help);
        return false;
    };
    std::string error;
    const std::string atText = args->value("--at").value_or("peak");
    auto at = resolveTime(atText, data, builder.index(), error);
    if (!at) {
        return usageError(ctx, error, help);
    }
    if (!inSpan(*at, atText)) {
        return kExitUsage;
    }
    FlameTree tree;
    if (auto diff = args->value("--diff")) {
        auto t2 = resolveTime(*diff, data, builder.index(), error);
        if (!t2) {
            return usageError(ctx, error, help);
        }
        if (!inSpan(*t2, *diff)) {
            return kExitUsage;
        }
        tree = builder.diff(*at, *t2, grouping);
    } else {
        tree = builder.at(*at, grouping);
    }
    if (format == "folded") {
        ctx.out << toFolded(tree);
        return kExitSuccess;
    }
    Json j;
    j["file"] = rt->path;
    j["rank"] =
        data.header.rank == trace::kUnknownRank ? Json(nullptr) : Json(toInt(data.header.rank));
    j["device"] = toInt(device);
    j["level"] = trace::toString(level);
    j["grouping"] = toString(grouping);
    j["time_ns"] = tree.timeNs;
    if (tree.isDiff) {
        j["before_time_ns"] = tree.beforeTimeNs;
    }
    j["total_bytes"] = tree.root().bytes;
    j["allocations"] = tree.root().count;
    j["tree"] = nodeJson(tree, 0);
    ctx.out << j.dump(2) << "\n";
    return kExitSuccess;
}

}  // namespace vramscope::app
