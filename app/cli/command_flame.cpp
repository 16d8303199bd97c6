// vramscope-cli flame: the live set at a time (the peak, an OOM, any time) as a flame tree, in
// collapsed-stack text or JSON; optionally the difference between two times.
#include <algorithm>
#include <functional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "flame_selection.h"
#include "vramscope/analysis/flame_tree.h"
#include "vramscope/analysis/speedscope_export.h"

namespace vramscope::app {

namespace {

using Json = nlohmann::ordered_json;
using namespace analysis;

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
    // The selection's options, with --diff and --format before --level as help has listed them.
    std::vector<OptionSpec> options = flameSelectionOptions();
    options.insert(options.end() - 1,
                   {{"--diff", true, "TIME2", "show what changed from --at to TIME2"},
                    {"--format", true, "FORMAT", "folded (default), json or speedscope"}});
    const std::string help = commandHelp(
        ctx.command,
        "FILE [--rank R] [--device D] [--level allocated|reserved] [--at peak|oom|TIME]\n"
        "       [--by stack|nvtx|category] [--diff TIME2] [--format folded|json|speedscope]",
        "The allocations alive on a GPU at a time, grouped into a tree by stack frames (root\n"
        "first), by NVTX range path, or by category (memory kind, then size class), with bytes\n"
        "and allocation counts per node. 'folded' writes one line per allocation site,\n"
        "\"root;...;leaf BYTES\", which flamegraph.pl and speedscope read; with --diff it writes\n"
        "\"root;...;leaf BYTES_AT_TIME BYTES_AT_TIME2\" (flamegraph.pl's differential input).\n"
        "'speedscope' writes speedscope's JSON file format (unit bytes; not with --diff).\n"
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
    const std::string format = args->value("--format").value_or("folded");
    if (format != "folded" && format != "json" && format != "speedscope") {
        return usageError(ctx, "--format must be folded, json or speedscope", help);
    }
    if (format == "speedscope" && args->has("--diff")) {
        return usageError(ctx, "--format speedscope shows one time: it cannot take --diff", help);
    }
    int exitCode = kExitSuccess;
    const std::optional<FlameRequest> request = parseFlameRequest(ctx, *args, help, exitCode);
    if (!request) {
        return exitCode;
    }
    auto job = loadJob(ctx, args->positional);
    if (!job) {
        return kExitUnreadable;
    }
    const std::optional<FlameSelection> selection =
        selectFlame(ctx, *job, *request, help, exitCode);
    if (!selection) {
        return exitCode;
    }
    const std::optional<trace::TimestampNs> at = selection->resolve(ctx, request->atText, help);
    if (!at) {
        return kExitUsage;
    }
    FlameTree tree;
    if (auto diff = args->value("--diff")) {
        const std::optional<trace::TimestampNs> t2 = selection->resolve(ctx, *diff, help);
        if (!t2) {
            return kExitUsage;
        }
        tree = selection->builder->diff(*at, *t2, request->grouping);
    } else {
        tree = selection->builder->at(*at, request->grouping);
    }
    const trace::RankTrace* rt = selection->rankTrace;
    const trace::TraceData& data = rt->trace.data;
    if (format == "speedscope") {
        if (trace::Status s = writeSpeedscope(tree, {rt->path, data.header.rank}, ctx.out); !s) {
            ctx.err << "vramscope-cli flame: " << s.error().describe() << "\n";
            return kExitUnreadable;
        }
        return kExitSuccess;
    }
    if (format == "folded") {
        ctx.out << toFolded(tree);
        return kExitSuccess;
    }
    Json j;
    j["file"] = rt->path;
    j["rank"] =
        data.header.rank == trace::kUnknownRank ? Json(nullptr) : Json(toInt(data.header.rank));
    j["device"] = toInt(selection->device);
    j["level"] = trace::toString(selection->level);
    j["grouping"] = toString(request->grouping);
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
