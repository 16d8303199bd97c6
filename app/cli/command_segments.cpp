// vramscope-cli segments: the reserved segments of a GPU at a time or at an OOM, with their
// allocated blocks, free gaps, largest free block and fragmentation, as a table or JSON.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "analysis_report.h"
#include "cli_command.h"
#include "device_report.h"
#include "vramscope/analysis/flame_tree.h"
#include "vramscope/analysis/segments.h"

namespace vramscope::app {

namespace {

using Json = nlohmann::ordered_json;
using namespace analysis;

/// The moment the layout is taken at, and how it was chosen.
struct Moment {
    trace::TimestampNs timeNs = 0;
    std::string what;           ///< "OOM 1 of 1", "the allocated peak", "the time asked for"
    uint64_t requestBytes = 0;  ///< at an OOM: the failed request; else 0
};

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

int runSegments(CommandContext& ctx) {
    const std::vector<OptionSpec> options = {
        {"--device", true, "D", "GPU index (default: the lowest with memory events)"},
        {"--at", true, "TIME",
         "time from the trace start: seconds (2.5) or a number with s, ms, us, ns"},
        {"--at-oom", true, "N", "the Nth out-of-memory event of the GPU (1 = the first)"},
        {"--json", false, "", "write JSON instead of the table"},
    };
    const std::string help = commandHelp(
        ctx.command, "FILE [--at TIME | --at-oom N] [--device D] [--json]",
        "The reserved segments of a GPU at one moment, as PyTorch's caching allocator holds\n"
        "them: each segment (largest first) with its allocated bytes, free bytes, largest free\n"
        "block and number of blocks, then the totals and the fragmentation, 1 - largest free\n"
        "block / free bytes (0: all free memory is one block; near 1: it is scattered). At an OOM\n"
        "it compares the request with the largest free block: smaller than the free bytes but\n"
        "larger than every block is fragmentation. Without --at or --at-oom it shows the first\n"
        "OOM, else the allocated peak, and says which. Needs a trace with segment addresses and\n"
        "blocks (a PyTorch memory snapshot); a PyTorch profiler trace has neither. --json gives\n"
        "every segment with its blocks and gaps (addresses as integers).\n\n"
        "exit codes: 0 success, 2 usage (bad option, no such GPU, no Nth OOM, a time outside\n"
        "the trace), 3 unreadable input, or segments the input cannot give (said on stderr)",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (args->positional.size() != 1) {
        return usageError(ctx, "segments takes exactly one input", help);
    }
    if (args->has("--at") && args->has("--at-oom")) {
        return usageError(ctx, "give --at or --at-oom, not both", help);
    }
    std::optional<int64_t> wantOom;
    if (auto n = args->value("--at-oom")) {
        wantOom = parseInteger(*n);
        if (!wantOom || *wantOom < 1) {
            return usageError(ctx, "--at-oom needs a positive integer (1 = the first OOM)", help);
        }
    }
    std::optional<int64_t> atNs;
    if (auto a = args->value("--at")) {
        atNs = parseDurationNs(*a);
        if (!atNs) {
            // A bare number is seconds.
            atNs = parseDurationNs(*a + "s");
        }
        if (!atNs) {
            return usageError(ctx, "--at needs seconds (2.5) or a number with s, ms, us, ns", help);
        }
    }
    std::optional<int64_t> wantDevice;
    if (!integerOption(ctx, *args, "--device", help, wantDevice)) {
        return kExitUsage;
    }
    auto job = loadJob(ctx, args->positional);
    if (!job) {
        return kExitUnreadable;
    }
    if (job->ranks.empty()) {
        ctx.err << "vramscope-cli segments: " << args->positional.front() << " holds no trace\n";
        return kExitUnreadable;
    }
    const trace::RankTrace& rt = job->ranks.front();
    const trace::TraceData& data = rt.trace.data;
    const std::vector<trace::DeviceIndex> gpus = memoryGpus(data);
    if (gpus.empty()) {
        ctx.err << "vramscope-cli segments: " << rt.path
                << " has no GPU memory events (memory was not recorded), so there are no "
                   "segments to show\n";
        return kExitUnreadable;
    }
    int exitCode = kExitSuccess;
    const std::optional<trace::DeviceIndex> chosen =
        chooseMemoryGpu(ctx, gpus, wantDevice, help, exitCode);
    if (!chosen) {
        return exitCode;
    }
    const trace::DeviceIndex device = *chosen;
    const AllocationIndex segments(data, device, trace::MemoryLevel::Reserved);
    const AllocationIndex blocks(data, device, trace::MemoryLevel::Allocated);
    const TimeSpan span = traceTimeSpan(data).value_or(TimeSpan{});
    std::string error;
    const std::optional<Moment> moment =
        chooseMoment(data, device, blocks, span, atNs, wantOom, error);
    if (!moment) {
        return usageError(ctx, error, help);
    }
    const Moment& m = *moment;
    const std::string gpu = "GPU " + std::to_string(toInt(device));
    const SegmentLayout layout = segmentLayoutAt(data, segments, blocks, m.timeNs);
    if (!layout.known) {
        ctx.err << "vramscope-cli segments: " << rt.path << ": no segments for " << gpu << " at "
                << formatDuration(double(m.timeNs - span.firstNs)) << ": " << layout.reason << "\n";
        return kExitUnreadable;
    }
    if (!args->has("--json")) {
        writeLayoutText(layout, m, device, span.firstNs, ctx.out);
        return kExitSuccess;
    }
    Json j;
    j["file"] = rt.path;
    j["rank"] =
        data.header.rank == trace::kUnknownRank ? Json(nullptr) : Json(toInt(data.header.rank));
    j["device"] = toInt(device);
    j["time_ns"] = layout.timeNs;
    j["since_start_ns"] = layout.timeNs - span.firstNs;
    j["moment"] = m.what;
    j["totals"] = segmentTotalsJson(layout.totals, m.requestBytes);
    j["free_text"] = segmentFreeText(layout.totals, m.requestBytes);
    j["segments"] = layoutJson(layout);
    ctx.out << j.dump(2) << "\n";
    return kExitSuccess;
}

}  // namespace vramscope::app
