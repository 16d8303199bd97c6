#include "flame_selection.h"

#include <algorithm>
#include <ostream>

#include "analysis_report.h"
#include "device_report.h"
#include "vramscope/analysis/memory/live_set.h"

namespace vramscope::app {

namespace {

using namespace analysis;

/// The rank list for a "no rank N" message: "0, 1, ?".
std::string rankList(const trace::Job& job) {
    std::string ranks;
    for (const trace::RankTrace& r : job.ranks) {
        ranks +=
            (ranks.empty() ? "" : ", ") + (r.trace.data.header.rank == trace::kUnknownRank
                                               ? std::string("?")
                                               : std::to_string(toInt(r.trace.data.header.rank)));
    }
    return ranks;
}

}  // namespace

std::vector<OptionSpec> flameSelectionOptions() {
    return {
        {"--device", true, "D", "GPU index (default: the lowest with memory events)"},
        {"--rank", true, "R", "rank of the job to show (default: the first)"},
        {"--at", true, "TIME",
         "peak (default), oom, an integer: ns on the rank's own clock, or e.g. 1.5s"},
        {"--by", true, "GROUPING", "stack (default), nvtx or category"},
        {"--level", true, "LEVEL", "allocated or reserved (default: allocated when recorded)"},
    };
}

bool isTimeText(std::string_view text) {
    return text == "peak" || text == "oom" || parseInteger(text) || parseDurationNs(text);
}

std::string timeTextError(std::string_view text) {
    return "TIME must be peak, oom, an integer (ns) or a number with s/ms/us/ns, got '" +
           std::string(text) + "'";
}

std::optional<FlameRequest> parseFlameRequest(CommandContext& ctx, const ParsedArgs& args,
                                              const std::string& help, int& exitCode) {
    exitCode = kExitUsage;
    FlameRequest request;
    const std::string by = args.value("--by").value_or("stack");
    if (by == "nvtx") {
        request.grouping = FlameGrouping::Nvtx;
    } else if (by == "category") {
        request.grouping = FlameGrouping::Category;
    } else if (by != "stack") {
        usageError(ctx, "--by must be stack, nvtx or category", help);
        return std::nullopt;
    }
    request.levelText = args.value("--level").value_or("");
    if (!request.levelText.empty() && request.levelText != "allocated" &&
        request.levelText != "reserved") {
        usageError(ctx, "--level must be allocated or reserved", help);
        return std::nullopt;
    }
    if (!integerOption(ctx, args, "--rank", help, request.rank) ||
        !integerOption(ctx, args, "--device", help, request.device)) {
        return std::nullopt;
    }
    request.atText = args.value("--at").value_or("peak");
    if (!isTimeText(request.atText)) {
        usageError(ctx, timeTextError(request.atText), help);
        return std::nullopt;
    }
    exitCode = kExitSuccess;
    return request;
}

std::optional<trace::TimestampNs> FlameSelection::resolve(CommandContext& ctx,
                                                          const std::string& text,
                                                          const std::string& help) const {
    const trace::TraceData& data = rankTrace->trace.data;
    const AllocationIndex& index = builder->index();
    std::optional<trace::TimestampNs> t;
    if (text == "peak") {
        t = peakTime(data, index);
    } else if (text == "oom") {
        for (const trace::OomEvent& o : data.ooms) {
            if (o.device == device) {
                t = o.timestampNs;
                break;
            }
        }
        if (!t) {
            usageError(ctx, "the trace has no OOM on GPU " + std::to_string(toInt(device)), help);
            return std::nullopt;
        }
    } else if (auto n = parseInteger(text)) {
        t = *n;
    } else if (auto ns = parseDurationNs(text)) {
        t = (index.empty() ? 0 : index.timeAt(0)) + *ns;
    } else {
        usageError(ctx, timeTextError(text), help);
        return std::nullopt;
    }
    if (*t < spanFirstNs || *t > spanLastNs) {
        usageError(ctx,
                   "TIME '" + text + "' is outside the trace: GPU " +
                       std::to_string(toInt(device)) + " spans " + std::to_string(spanFirstNs) +
                       " .. " + std::to_string(spanLastNs) + " ns in the trace's clock (0 .. " +
                       formatDuration(spanLastNs - spanFirstNs) + " from its first memory event)",
                   help);
        return std::nullopt;
    }
    return t;
}

std::optional<FlameSelection> selectFlame(CommandContext& ctx, const trace::Job& job,
                                          const FlameRequest& request, const std::string& help,
                                          int& exitCode) {
    exitCode = kExitUsage;
    FlameSelection s;
    s.rankTrace = job.ranks.empty() ? nullptr : &job.ranks.front();
    if (request.rank) {
        s.rankTrace = nullptr;
        for (const trace::RankTrace& r : job.ranks) {
            if (toInt(r.trace.data.header.rank) == *request.rank) {
                s.rankTrace = &r;
            }
        }
    }
    if (s.rankTrace == nullptr) {
        usageError(ctx,
                   "no rank " + std::to_string(request.rank.value_or(0)) +
                       " in the input (ranks: " + rankList(job) + ")",
                   help);
        return std::nullopt;
    }
    const trace::TraceData& data = s.rankTrace->trace.data;
    // GPUs with memory events (host memory, device -1, has no live set here).
    const std::vector<trace::DeviceIndex> gpus = memoryGpus(data);
    if (gpus.empty()) {
        ctx.err << "vramscope-cli " << ctx.command << ": " << s.rankTrace->path
                << " has no GPU memory events (memory was not recorded), so there is no live "
                   "set to show\n";
        exitCode = kExitUnreadable;
        return std::nullopt;
    }
    const std::optional<trace::DeviceIndex> chosen =
        chooseMemoryGpu(ctx, gpus, request.device, help, exitCode);
    if (!chosen) {
        return std::nullopt;
    }
    s.device = *chosen;
    const trace::MemoryLevel detail = detailLevel(data, s.device);
    s.level = request.levelText.empty()         ? detail
              : request.levelText == "reserved" ? trace::MemoryLevel::Reserved
                                                : trace::MemoryLevel::Allocated;
    s.builder = std::make_unique<FlameTreeBuilder>(data, s.device, s.level);
    if (s.builder->index().empty()) {
        usageError(ctx,
                   "GPU " + std::to_string(toInt(s.device)) + " has no " +
                       trace::toString(s.level) + " memory events (it has " +
                       trace::toString(detail) + " ones); try --level " + trace::toString(detail),
                   help);
        exitCode = kExitUsage;
        return std::nullopt;
    }
    if (const LiveSetEvidence evidence = liveSetEvidence(data, s.device, s.level);
        !evidence.known) {
        ctx.err << "vramscope-cli " << ctx.command << ": " << s.rankTrace->path
                << ": no live set for GPU " << toInt(s.device) << ": " << evidence.reason << "\n";
        exitCode = kExitUnreadable;
        return std::nullopt;
    }
    // Times from the GPU's first memory event to the trace's last event.
    s.spanFirstNs = s.builder->index().timeAt(0);
    s.spanLastNs = s.spanFirstNs;
    if (auto span = traceTimeSpan(data)) {
        s.spanLastNs = std::max(s.spanLastNs, span->lastNs);
    }
    exitCode = kExitSuccess;
    return s;
}

}  // namespace vramscope::app
