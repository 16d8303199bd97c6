// vramscope-cli info: what a trace holds (header, devices, event counts, time span, data loss).
#include <array>
#include <filesystem>
#include <ostream>

#include "command_info.h"
#include "vramscope/trace/summary.h"

namespace vramscope::app {

namespace {

using trace::KernelCategory;
using trace::MemoryAction;
using trace::MemoryLevel;
using trace::TraceData;

/// Counts by kind, as plain JSON: {"memory": {"total", "alloc", "free", "allocated_level",
/// "reserved_level"}, "kernels": {"total", "compute", ...}, "collectives", "ranges": {...},
/// "counters", "ooms", "annotations", "strings", "frames", "stacks"}.
Json eventCounts(const TraceData& d) {
    Json j;
    uint64_t allocs = 0;
    uint64_t allocatedLevel = 0;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        allocs += d.memory.action[i] == MemoryAction::Alloc;
        allocatedLevel += d.memory.level[i] == MemoryLevel::Allocated;
    }
    j["memory"] = {{"total", d.memory.size()},
                   {"alloc", allocs},
                   {"free", d.memory.size() - allocs},
                   {"allocated_level", allocatedLevel},
                   {"reserved_level", d.memory.size() - allocatedLevel}};
    std::array<uint64_t, 4> byCategory{};
    for (auto c : d.kernels.category) {
        ++byCategory[static_cast<size_t>(c) % byCategory.size()];
    }
    Json kernels = {{"total", d.kernels.size()}};
    for (size_t c = 0; c < byCategory.size(); ++c) {
        kernels[trace::toString(static_cast<KernelCategory>(c))] = byCategory[c];
    }
    j["kernels"] = kernels;
    j["collectives"] = d.collectives.size();
    std::array<uint64_t, 4> byKind{};
    for (auto k : d.ranges.kind) {
        ++byKind[static_cast<size_t>(k) % byKind.size()];
    }
    Json ranges = {{"total", d.ranges.size()}};
    for (size_t k = 0; k < byKind.size(); ++k) {
        ranges[trace::toString(static_cast<trace::RangeKind>(k))] = byKind[k];
    }
    j["ranges"] = ranges;
    j["counters"] = d.counters.size();
    j["ooms"] = d.ooms.size();
    j["annotations"] = d.annotations.size();
    j["strings"] = d.strings.size();
    j["frames"] = d.frames.size();
    j["stacks"] = d.stacks.size();
    return j;
}

/// Whether the file stores summary frames: {"frames", "final", "analyses"}, or null when it has
/// none (another format, a .vscope written before format 1.1, an archive member).
Json summaryInfo(const trace::RankTrace& rt) {
    std::error_code ec;
    if (rt.format != trace::InputFormat::Vscope || !std::filesystem::is_regular_file(rt.path, ec)) {
        return nullptr;
    }
    auto read = trace::readTraceSummary(rt.path);
    if (!read || !read->found) {
        return nullptr;
    }
    return {{"frames", read->summary.summaryFrames},
            {"final", read->summary.final},
            {"analyses", !read->summary.analysis.empty()}};
}

Json rankInfo(const trace::RankTrace& rt) {
    const TraceData& d = rt.trace.data;
    const auto& h = d.header;
    Json j;
    j["file"] = rt.path;
    j["format"] = trace::toString(rt.format);
    j["header"] = {
        {"format_version", std::to_string(h.formatMajor) + "." + std::to_string(h.formatMinor)},
        {"producer", h.producer},
        {"host", h.host},
        {"pid", h.pid},
        {"rank", h.rank == trace::kUnknownRank ? Json(nullptr) : Json(toInt(h.rank))},
        {"rank_source", rt.rankSource},
        {"local_rank",
         h.localRank == trace::kUnknownRank ? Json(nullptr) : Json(toInt(h.localRank))},
        {"world_size", h.worldSize == 0 ? Json(nullptr) : Json(h.worldSize)},
        {"job_id", h.jobId},
        {"clock_domain", h.clockDomain},
        {"wall_clock_anchor_ns", h.wallClockAnchorNs},
        {"anchor_trace_ns", h.anchorTraceNs}};
    Json settings = Json::object();
    for (const auto& [k, v] : h.captureSettings) {
        settings[k] = v;
    }
    j["header"]["capture_settings"] = settings;
    j["devices"] = Json::array();
    for (const auto& dev : h.devices) {
        j["devices"].push_back(
            {{"index", toInt(dev.index)},
             {"uuid", dev.uuid},
             {"name", dev.name},
             {"capacity_bytes",
              dev.totalMemoryBytes == 0 ? Json(nullptr) : Json(dev.totalMemoryBytes)}});
    }
    j["events"] = eventCounts(d);
    j["event_total"] = d.eventCount();
    if (const auto span = traceTimeSpan(d)) {
        j["time_span"] = {{"first_ns", span->firstNs},
                          {"last_ns", span->lastNs},
                          {"duration_ns", span->lastNs - span->firstNs}};
    } else {
        j["time_span"] = nullptr;
    }
    const auto& report = rt.trace.report;
    j["read"] = {{"file_bytes", report.fileBytes},
                 {"complete", report.complete},
                 {"frames_loaded", report.framesLoaded},
                 {"frames_skipped", report.framesSkipped},
                 {"summary", report.summary()}};
    j["summaries"] = summaryInfo(rt);
    j["data_loss"] = Json::array();
    for (const auto& l : d.dataLoss) {
        j["data_loss"].push_back(dataLossJson(l));
    }
    return j;
}

std::string valueText(const Json& v) {
    if (v.is_null()) {
        return "unknown";
    }
    return v.is_string() ? v.get<std::string>() : v.dump();
}

void writeInfoText(const Json& info, std::ostream& os) {
    const auto& h = info["header"];
    os << info["file"].get<std::string>() << " (" << info["format"].get<std::string>()
       << ", format " << h["format_version"].get<std::string>() << ")\n";
    for (const char* key : {"producer", "host", "pid", "rank", "rank_source", "local_rank",
                            "world_size", "job_id", "clock_domain"}) {
        std::string label = std::string(key) + ":";
        label.resize(14, ' ');
        os << "  " << label << valueText(h[key]) << "\n";
    }
    os << "  devices:\n";
    for (const auto& d : info["devices"]) {
        os << "    " << d["index"].dump() << "  " << d["name"].get<std::string>() << "  "
           << (d["capacity_bytes"].is_null() ? "capacity unknown"
                                             : formatBytes(d["capacity_bytes"].get<uint64_t>()))
           << "  " << d["uuid"].get<std::string>() << "\n";
    }
    const auto& e = info["events"];
    os << "  events:       " << info["event_total"].dump() << "\n";
    os << "    memory      " << e["memory"]["total"].dump() << " (" << e["memory"]["alloc"].dump()
       << " alloc, " << e["memory"]["free"].dump() << " free; "
       << e["memory"]["allocated_level"].dump() << " allocated level, "
       << e["memory"]["reserved_level"].dump() << " reserved level)\n";
    os << "    kernels     " << e["kernels"]["total"].dump() << " (";
    bool first = true;
    for (const auto& [k, v] : e["kernels"].items()) {
        if (k != "total") {
            os << (first ? "" : ", ") << v.dump() << " " << k;
            first = false;
        }
    }
    os << ")\n    collectives " << e["collectives"].dump() << "\n    ranges      "
       << e["ranges"]["total"].dump() << " (";
    first = true;
    for (const auto& [k, v] : e["ranges"].items()) {
        if (k != "total") {
            os << (first ? "" : ", ") << v.dump() << " " << k;
            first = false;
        }
    }
    os << ")\n    counters    " << e["counters"].dump() << "\n    OOMs        " << e["ooms"].dump()
       << "\n    annotations " << e["annotations"].dump() << "\n";
    os << "  tables:       " << e["strings"].dump() << " strings, " << e["frames"].dump()
       << " frames, " << e["stacks"].dump() << " stacks\n";
    if (info["time_span"].is_null()) {
        os << "  time span:    no events\n";
    } else {
        const auto& s = info["time_span"];
        os << "  time span:    " << s["first_ns"].dump() << " .. " << s["last_ns"].dump() << " ns ("
           << formatDuration(double(s["duration_ns"].get<int64_t>())) << ")\n";
    }
    const auto& read = info["read"];
    os << "  read:         " << read["file_bytes"].dump() << " bytes, "
       << read["frames_loaded"].dump() << " frames"
       << (read["complete"].get<bool>() ? ", complete" : ", INCOMPLETE") << "\n";
    if (!read["summary"].get<std::string>().empty()) {
        os << "                " << read["summary"].get<std::string>() << "\n";
    }
    if (const auto& sum = info["summaries"]; sum.is_null()) {
        os << "  summaries:    none (computed from the events when opened)\n";
    } else {
        os << "  summaries:    " << sum["frames"].dump() << " frames, "
           << (sum["final"].get<bool>() ? "final"
                                        : "cut (no closing summary: the writer did not finish)")
           << (sum["analyses"].get<bool>() ? ", with analyses" : "") << "\n";
    }
    os << "  data loss:" << (info["data_loss"].empty() ? "    none" : "") << "\n";
    for (const auto& l : info["data_loss"]) {
        const trace::DataLoss loss{trace::lossCounterFromName(l["name"].get<std::string>()),
                                   l["count"].is_null() ? 0 : l["count"].get<uint64_t>(),
                                   l["reason"].get<std::string>(), 0, 0};
        os << "    " << trace::describe(loss) << "\n";
    }
    if (!h["capture_settings"].empty()) {
        os << "  capture settings:\n";
        for (const auto& [k, v] : h["capture_settings"].items()) {
            os << "    " << k << " = " << v.get<std::string>() << "\n";
        }
    }
}

}  // namespace

std::optional<InfoOptions> parseInfoOptions(CommandContext& ctx, int& exitCode) {
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    InfoOptions options;
    auto inputs = parseInputs(ctx, *args, {});
    if (!inputs) {
        exitCode = kExitUsage;
        return std::nullopt;
    }
    options.inputs = std::move(*inputs);
    options.json = args->has("--json");
    return options;
}

InfoResult describeTraces(const trace::Job& job) {
    InfoResult result;
    for (const auto& rt : job.ranks) {
        result.traces.push_back(rankInfo(rt));
    }
    return result;
}

void printInfo(const InfoResult& result, bool json, std::ostream& os) {
    if (json) {
        os << Json{{"traces", result.traces}}.dump(2) << "\n";
        return;
    }
    for (size_t i = 0; i < result.traces.size(); ++i) {
        if (i > 0) {
            os << "\n";
        }
        writeInfoText(result.traces[i], os);
    }
}

int runInfo(CommandContext& ctx) {
    int done = kExitSuccess;
    const std::optional<InfoOptions> options = parseInfoOptions(ctx, done);
    if (!options) {
        return done;
    }
    const std::optional<trace::Job> job = openInputs(ctx, options->inputs);
    if (!job) {
        return kExitUnreadable;
    }
    printInfo(describeTraces(*job), options->json, ctx.out);
    return kExitSuccess;
}

}  // namespace vramscope::app
