// vramscope-cli segments: the reserved segments of a GPU at a time or at an OOM, with their
// allocated blocks, free gaps, largest free block and fragmentation, as a table or JSON.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "analysis_report.h"
#include "command_segments.h"
#include "device_report.h"
#include "vramscope/analysis/memory/flame_tree.h"
#include "vramscope/analysis/memory/segments.h"

namespace vramscope::app {

namespace {

using Json = nlohmann::ordered_json;
using namespace analysis;

using Moment = SegmentsMoment;

std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

Json layoutJson(const SegmentLayout& l) {
    Json out = Json::array();
    for (const Segment& s : l.segments) {
        Json blocks = Json::array();
        for (const SegmentBlock& b : s.blocks) {
            blocks.push_back(
                {{"address", b.address}, {"size_bytes", b.sizeBytes}, {"event", b.eventIndex}});
        }
        Json gaps = Json::array();
        for (const SegmentGap& g : s.gaps) {
            gaps.push_back({{"address", g.address}, {"size_bytes", g.sizeBytes}});
        }
        out.push_back({{"address", s.address},
                       {"size_bytes", s.sizeBytes},
                       {"stream", s.stream},
                       {"allocated_bytes", s.allocatedBytes},
                       {"free_bytes", s.freeBytes},
                       {"largest_free_bytes", s.largestFreeBytes},
                       {"blocks", blocks},
                       {"gaps", gaps}});
    }
    return out;
}

void writeLayoutText(const SegmentLayout& l, const Moment& m, trace::DeviceIndex device,
                     trace::TimestampNs start, std::ostream& os) {
    os << "GPU " << toInt(device) << " at " << formatDuration(double(l.timeNs - start))
       << " after the trace start (" << m.what << ")";
    if (m.requestBytes > 0) {
        os << ", request " << formatBytes(double(m.requestBytes));
    }
    os << "\n\n";
    char line[160];
    std::snprintf(line, sizeof line, "  %-18s %10s %10s %10s %13s %7s\n", "address", "size",
                  "allocated", "free", "largest free", "blocks");
    os << line;
    for (size_t i : segmentsLargestFirst(l)) {
        const Segment& s = l.segments[i];
        std::snprintf(line, sizeof line, "  %-18s %10s %10s %10s %13s %7zu\n",
                      hex(s.address).c_str(), formatBytes(double(s.sizeBytes)).c_str(),
                      formatBytes(double(s.allocatedBytes)).c_str(),
                      formatBytes(double(s.freeBytes)).c_str(),
                      formatBytes(double(s.largestFreeBytes)).c_str(), s.blocks.size());
        os << line;
    }
    os << "\n" << segmentTotalsText(l.totals) << "\n";
    os << segmentFreeText(l.totals, m.requestBytes) << "\n";
    if (l.totals.blocksOutsideSegments > 0) {
        os << l.totals.blocksOutsideSegments << " live blocks ("
           << formatBytes(double(l.totals.bytesOutsideSegments))
           << ") lie outside every segment: the trace is missing segments\n";
    }
    if (l.totals.straddlingBlocks > 0 || l.totals.overlappingSegments > 0) {
        os << l.totals.straddlingBlocks << " blocks cross a segment's end and "
           << l.totals.overlappingSegments
           << " segments overlap the one before them: the trace is damaged\n";
    }
}

/// The moment to show: --at (ns after the trace start), the --at-oom'th OOM of `device`, else its
/// first OOM, else the allocated peak. Nullopt with `error` for a time past the trace or an OOM
/// the GPU does not have.
std::optional<Moment> chooseMoment(const trace::TraceData& data, trace::DeviceIndex device,
                                   const AllocationIndex& blocks, const TimeSpan& span,
                                   std::optional<int64_t> atNs, std::optional<int64_t> wantOom,
                                   std::string& error) {
    std::vector<const trace::OomEvent*> ooms;
    for (const trace::OomEvent& o : data.ooms) {
        if (o.device == device) {
            ooms.push_back(&o);
        }
    }
    std::stable_sort(ooms.begin(), ooms.end(),
                     [](const trace::OomEvent* a, const trace::OomEvent* b) {
                         return a->timestampNs < b->timestampNs;
                     });
    const std::string gpu = "GPU " + std::to_string(toInt(device));
    Moment m;
    if (atNs) {
        m.timeNs = span.firstNs + *atNs;
        m.what = "the time asked for";
        if (m.timeNs > span.lastNs) {
            error = "--at " + formatDuration(double(*atNs)) + " is past the end of the trace (" +
                    formatDuration(double(span.lastNs - span.firstNs)) + " after its start)";
            return std::nullopt;
        }
    } else if (wantOom || !ooms.empty()) {
        const size_t n = size_t(wantOom.value_or(1));
        if (n > ooms.size()) {
            error = gpu + " has " + std::to_string(ooms.size()) +
                    (ooms.size() == 1 ? " OOM" : " OOMs") + ", not " + std::to_string(n);
            return std::nullopt;
        }
        m.timeNs = ooms[n - 1]->timestampNs;
        m.requestBytes = ooms[n - 1]->requestedBytes;
        m.what = "OOM " + std::to_string(n) + " of " + std::to_string(ooms.size());
    } else {
        m.timeNs = blocks.empty() ? span.lastNs : peakTime(data, blocks);
        m.what = "the allocated peak: the trace has no OOM on " + gpu;
    }
    return m;
}

}  // namespace

std::optional<SegmentsOptions> parseSegmentsOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    auto inputs = parseInputs(ctx, *args, {1, 1, false, "segments takes exactly one input"});
    if (!inputs) {
        return std::nullopt;
    }
    SegmentsOptions options;
    options.inputs = std::move(*inputs);
    if (args->has("--at") && args->has("--at-oom")) {
        return usageFailure(ctx, "give --at or --at-oom, not both", help);
    }
    if (auto n = args->value("--at-oom")) {
        options.atOom = parseInteger(*n);
        if (!options.atOom || *options.atOom < 1) {
            return usageFailure(ctx, "--at-oom needs a positive integer (1 = the first OOM)", help);
        }
    }
    if (auto a = args->value("--at")) {
        options.atNs = parseDurationNs(*a);
        if (!options.atNs) {
            // A bare number is seconds.
            options.atNs = parseDurationNs(*a + "s");
        }
        if (!options.atNs) {
            return usageFailure(ctx, "--at needs seconds (2.5) or a number with s, ms, us, ns",
                                help);
        }
    }
    if (!integerOption(ctx, *args, "--device", help, options.device)) {
        return std::nullopt;
    }
    options.json = args->has("--json");
    exitCode = kExitSuccess;
    return options;
}

std::optional<SegmentsResult> segmentsAt(CommandContext& ctx, const trace::Job& job,
                                         const SegmentsOptions& options, int& exitCode) {
    exitCode = kExitUnreadable;
    if (job.ranks.empty()) {
        ctx.err << "vramscope-cli segments: " << options.inputs.paths.front()
                << " holds no trace\n";
        return std::nullopt;
    }
    const trace::RankTrace& rt = job.ranks.front();
    const trace::TraceData& data = rt.trace.data;
    const std::vector<trace::DeviceIndex> gpus = memoryGpus(data);
    if (gpus.empty()) {
        ctx.err << "vramscope-cli segments: " << rt.path
                << " has no GPU memory events (memory was not recorded), so there are no "
                   "segments to show\n";
        return std::nullopt;
    }
    const std::string help = ctx.help();
    const std::optional<trace::DeviceIndex> chosen =
        chooseMemoryGpu(ctx, gpus, options.device, help, exitCode);
    if (!chosen) {
        return std::nullopt;
    }
    const trace::DeviceIndex device = *chosen;
    const AllocationIndex segments(data, device, trace::MemoryLevel::Reserved);
    const AllocationIndex blocks(data, device, trace::MemoryLevel::Allocated);
    const TimeSpan span = traceTimeSpan(data).value_or(TimeSpan{});
    std::string error;
    const std::optional<Moment> moment =
        chooseMoment(data, device, blocks, span, options.atNs, options.atOom, error);
    if (!moment) {
        exitCode = usageError(ctx, error, help);
        return std::nullopt;
    }
    SegmentsResult result;
    result.layout = segmentLayoutAt(data, segments, blocks, moment->timeNs);
    if (!result.layout.known) {
        ctx.err << "vramscope-cli segments: " << rt.path << ": no segments for GPU "
                << toInt(device) << " at " << formatDuration(double(moment->timeNs - span.firstNs))
                << ": " << result.layout.reason << "\n";
        exitCode = kExitUnreadable;
        return std::nullopt;
    }
    result.file = rt.path;
    result.rank = data.header.rank;
    result.device = device;
    result.moment = *moment;
    result.startNs = span.firstNs;
    exitCode = kExitSuccess;
    return result;
}

void printSegments(const SegmentsResult& result, bool json, std::ostream& os) {
    const SegmentLayout& layout = result.layout;
    const Moment& m = result.moment;
    if (!json) {
        writeLayoutText(layout, m, result.device, result.startNs, os);
        return;
    }
    Json j;
    j["file"] = result.file;
    j["rank"] = result.rank == trace::kUnknownRank ? Json(nullptr) : Json(toInt(result.rank));
    j["device"] = toInt(result.device);
    j["time_ns"] = layout.timeNs;
    j["since_start_ns"] = layout.timeNs - result.startNs;
    j["moment"] = m.what;
    j["totals"] = segmentTotalsJson(layout.totals, m.requestBytes);
    j["free_text"] = segmentFreeText(layout.totals, m.requestBytes);
    j["segments"] = layoutJson(layout);
    os << j.dump(2) << "\n";
}

int runSegments(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<SegmentsOptions> options = parseSegmentsOptions(ctx, code);
    if (!options) {
        return code;
    }
    const std::optional<trace::Job> job = openInputs(ctx, options->inputs);
    if (!job) {
        return kExitUnreadable;
    }
    const std::optional<SegmentsResult> result = segmentsAt(ctx, *job, *options, code);
    if (!result) {
        return code;
    }
    printSegments(*result, options->json, ctx.out);
    return kExitSuccess;
}

}  // namespace vramscope::app
