// vramscope-cli flame: the live set at a time (the peak, an OOM, any time) as a flame tree, in
// collapsed-stack text or JSON; optionally the difference between two times.
#include <algorithm>
#include <functional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "command_flame.h"
#include "vramscope/analysis/export/speedscope_export.h"

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

std::optional<FlameOptions> parseFlameOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    auto inputs = parseInputs(ctx, *args, {1, 1, false, "flame takes exactly one input"});
    if (!inputs) {
        return std::nullopt;
    }
    FlameOptions options;
    options.inputs = std::move(*inputs);
    options.format = args->value("--format").value_or("folded");
    options.diffText = args->value("--diff");
    if (options.format != "folded" && options.format != "json" && options.format != "speedscope") {
        return usageFailure(ctx, "--format must be folded, json or speedscope", help);
    }
    if (options.diffText && !isTimeText(*options.diffText)) {
        return usageFailure(ctx, timeTextError(*options.diffText), help);
    }
    if (options.format == "speedscope" && options.diffText) {
        return usageFailure(ctx, "--format speedscope shows one time: it cannot take --diff", help);
    }
    std::optional<FlameRequest> request = parseFlameRequest(ctx, *args, help, exitCode);
    if (!request) {
        return std::nullopt;
    }
    options.request = std::move(*request);
    exitCode = kExitSuccess;
    return options;
}

std::optional<FlameResult> flameOf(CommandContext& ctx, const trace::Job& job,
                                   const FlameOptions& options, int& exitCode) {
    const std::string help = ctx.help();
    const FlameRequest& request = options.request;
    const std::optional<FlameSelection> selection = selectFlame(ctx, job, request, help, exitCode);
    if (!selection) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    const std::optional<trace::TimestampNs> at = selection->resolve(ctx, request.atText, help);
    if (!at) {
        return std::nullopt;
    }
    FlameResult result;
    if (options.diffText) {
        const std::optional<trace::TimestampNs> t2 =
            selection->resolve(ctx, *options.diffText, help);
        if (!t2) {
            return std::nullopt;
        }
        result.tree = selection->builder->diff(*at, *t2, request.grouping);
    } else {
        result.tree = selection->builder->at(*at, request.grouping);
    }
    const trace::RankTrace* rt = selection->rankTrace;
    result.file = rt->path;
    result.rank = rt->trace.data.header.rank;
    result.device = selection->device;
    result.level = selection->level;
    result.grouping = request.grouping;
    exitCode = kExitSuccess;
    return result;
}

trace::Status printFlame(const FlameResult& result, const std::string& format, std::ostream& os) {
    const FlameTree& tree = result.tree;
    if (format == "speedscope") {
        return writeSpeedscope(tree, {result.file, result.rank}, os);
    }
    if (format == "folded") {
        os << toFolded(tree);
        return trace::Status::success();
    }
    Json j;
    j["file"] = result.file;
    j["rank"] = result.rank == trace::kUnknownRank ? Json(nullptr) : Json(toInt(result.rank));
    j["device"] = toInt(result.device);
    j["level"] = trace::toString(result.level);
    j["grouping"] = toString(result.grouping);
    j["time_ns"] = tree.timeNs;
    if (tree.isDiff) {
        j["before_time_ns"] = tree.beforeTimeNs;
    }
    j["total_bytes"] = tree.root().bytes;
    j["allocations"] = tree.root().count;
    j["tree"] = nodeJson(tree, 0);
    os << j.dump(2) << "\n";
    return trace::Status::success();
}

int runFlame(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<FlameOptions> options = parseFlameOptions(ctx, code);
    if (!options) {
        return code;
    }
    const std::optional<trace::Job> job = openInputs(ctx, options->inputs);
    if (!job) {
        return kExitUnreadable;
    }
    const std::optional<FlameResult> result = flameOf(ctx, *job, *options, code);
    if (!result) {
        return code;
    }
    if (trace::Status s = printFlame(*result, options->format, ctx.out); !s) {
        ctx.err << "vramscope-cli flame: " << s.error().describe() << "\n";
        return kExitUnreadable;
    }
    return kExitSuccess;
}

}  // namespace vramscope::app
