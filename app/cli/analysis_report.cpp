#include "analysis_report.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "cli_command.h"
#include "roles_report.h"
#include "top_kernels_report.h"
#include "vramscope/analysis/collectives/straggler.h"
#include "vramscope/analysis/memory/oom_diagnosis.h"

namespace vramscope::app {

using Json = nlohmann::ordered_json;
using namespace analysis;

namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string signedBytes(int64_t v) {
    return formatBytes(double(v));
}

/// Bytes a kernel or frame name may take in a text line (full names are in the JSON).
constexpr size_t kNameWidth = 60;

std::string pct(double fraction) {
    return analysis::formatPercent(fraction);
}

/// Operators the JSON lists one by one, and the text table shows.
constexpr size_t kJsonOperators = 25;
constexpr size_t kTextOperators = 10;
constexpr size_t kOperatorNameWidth = 40;

Json operatorRowJson(const OperatorMemoryRow& r, bool peakKnown) {
    auto peak = [&](uint64_t v) { return peakKnown ? Json(v) : Json(nullptr); };
    return {{"name", r.name},
            {"self_allocations", r.selfAllocations},
            {"self_bytes", r.selfBytes},
            {"self_peak_bytes", peak(r.selfPeakBytes)},
            {"total_allocations", r.totalAllocations},
            {"total_bytes", r.totalBytes},
            {"total_peak_bytes", peak(r.totalPeakBytes)}};
}

Json operatorsJson(const OperatorMemoryTable& t) {
    Json j;
    j["level"] = trace::toString(t.level);
    j["allocations"] = t.allocations;
    j["bytes"] = t.bytes;
    j["peak_known"] = t.peakKnown;
    j["peak_time_ns"] = t.peakKnown ? Json(t.peakTimeNs) : Json(nullptr);
    j["peak_bytes"] = t.peakKnown ? Json(t.peakBytes) : Json(nullptr);
    j["pre_existing_peak_bytes"] = t.peakKnown ? Json(t.preExistingPeakBytes) : Json(nullptr);
    j["rows"] = Json::array();
    for (size_t i = 0; i < t.rows.size() && i < kJsonOperators; ++i) {
        j["rows"].push_back(operatorRowJson(t.rows[i], t.peakKnown));
    }
    j["other"] = operatorRowJson(sumRows(t.rows, kJsonOperators, "(other operators)"), t.peakKnown);
    return j;
}

void writeOperatorsText(const OperatorMemoryTable& t, std::ostream& os) {
    os << "  memory by operator (" << trace::toString(t.level) << " level: " << t.allocations
       << (t.allocations == 1 ? " allocation, " : " allocations, ") << formatBytes(t.bytes)
       << " allocated"
       << (t.peakKnown ? ", " + formatBytes(t.peakBytes) + " of it alive at the peak" : "")
       << "):\n";
    std::vector<std::string> names;
    for (size_t i = 0; i < t.rows.size() && i < kTextOperators; ++i) {
        names.push_back(t.rows[i].name);
    }
    names = shortenNames(names, kOperatorNameWidth);
    size_t width = 8;
    for (const std::string& n : names) {
        width = std::max(width, n.size());
    }
    auto peak = [&](uint64_t v) { return t.peakKnown ? formatBytes(v) : std::string("?"); };
    os << "    " << padRight("operator", width) << padLeft("self allocs", 13)
       << padLeft("self bytes", 12) << padLeft("self at peak", 14) << padLeft("total allocs", 14)
       << padLeft("total bytes", 13) << padLeft("total at peak", 15) << "\n";
    for (size_t i = 0; i < names.size(); ++i) {
        const OperatorMemoryRow& r = t.rows[i];
        os << "    " << padRight(names[i], width) << padLeft(std::to_string(r.selfAllocations), 13)
           << padLeft(formatBytes(r.selfBytes), 12) << padLeft(peak(r.selfPeakBytes), 14)
           << padLeft(std::to_string(r.totalAllocations), 14)
           << padLeft(formatBytes(r.totalBytes), 13) << padLeft(peak(r.totalPeakBytes), 15) << "\n";
    }
    if (t.rows.size() > names.size()) {
        const OperatorMemoryRow rest = sumRows(t.rows, names.size(), "");
        os << "    ... " << t.rows.size() - names.size() << " more operators with "
           << formatBytes(rest.selfBytes) << " self bytes (--json lists the first "
           << kJsonOperators << " and sums the rest as 'other')\n";
    }
    os << "    from each allocation event's stack: its frames without a source file (in a "
          "profiler trace the CPU ops and annotations enclosing it on its thread; in a memory "
          "snapshot its C++ frames)\n    self = the innermost op (self columns add up to all "
          "allocations), total = the op anywhere on the stack, "
       << (t.peakKnown ? "at peak = alive at the " + std::string(trace::toString(t.level)) + " peak"
                       : "at peak unknown (allocations without an address: frees cannot be "
                         "paired)")
       << "\n";
}

}  // namespace

Json segmentTotalsJson(const SegmentTotals& t, uint64_t requestBytes) {
    Json j;
    j["segments"] = t.segments;
    j["reserved_bytes"] = t.reservedBytes;
    j["allocated_bytes"] = t.allocatedBytes;
    j["free_bytes"] = t.freeBytes;
    j["largest_free_block_bytes"] = t.largestFreeBlockBytes;
    j["fragmentation"] = t.fragmentation >= 0 ? Json(t.fragmentation) : Json(nullptr);
    j["request_bytes"] = requestBytes > 0 ? Json(requestBytes) : Json(nullptr);
    j["blocks"] = t.blocks;
    j["blocks_outside_segments"] = t.blocksOutsideSegments;
    j["bytes_outside_segments"] = t.bytesOutsideSegments;
    j["straddling_blocks"] = t.straddlingBlocks;
    j["overlapping_segments"] = t.overlappingSegments;
    return j;
}

Json segmentsJson(const SegmentOverview& o, uint64_t requestBytes) {
    if (!o.known) {
        return nullptr;
    }
    Json j = segmentTotalsJson(o.totals, requestBytes);
    j["largest_segments"] = Json::array();
    for (const SegmentRow& r : o.largest) {
        j["largest_segments"].push_back({{"address", r.address},
                                         {"size_bytes", r.sizeBytes},
                                         {"allocated_bytes", r.allocatedBytes},
                                         {"free_bytes", r.freeBytes},
                                         {"largest_free_bytes", r.largestFreeBytes},
                                         {"blocks", r.blocks}});
    }
    return j;
}

std::vector<OptionSpec> analysisOptionSpecs() {
    // OptionSpec holds views: the composed text must outlive every caller.
    static const std::string capacityHelp =
        "capacity of the GPUs whose trace names none (PyTorch snapshots; a capacity the trace "
        "names wins): " +
        capacityValueHelp();
    return {
        {"--iteration-regex", true, "REGEX",
         "an iteration runs from the start of one range whose name matches REGEX (ECMAScript) "
         "to the start of the next (so 'Optimizer\\.step' gives the step period), instead of "
         "the default markers (ProfilerStep#N, ranges named like steps, optimizer steps)"},
        {"--capacity", true, "BYTES|GPU", capacityHelp},
        {"--gpu-hour-price", true, "P", "estimate the cost at P per GPU-hour"},
        {"--planned-steps", true, "N",
         "with --gpu-hour-price: price N steps (default: the steps seen)"},
    };
}

bool readAnalysisOptions(CommandContext& ctx, const ParsedArgs& args, const std::string& help,
                         JobAnalysisOptions& options) {
    if (auto re = args.value("--iteration-regex")) {
        options.iterations.regex = *re;
        if (re->empty()) {
            usageError(ctx, "--iteration-regex needs a non-empty regex", help);
            return false;
        }
        if (auto probe =
                findIterations(trace::TraceData(), trace::DeviceIndex{0}, options.iterations);
            !probe.ok()) {
            usageError(ctx, probe.error().message, help);
            return false;
        }
    }
    if (auto c = args.value("--capacity")) {
        const std::optional<uint64_t> bytes = parseCapacity(*c);
        if (!bytes) {
            usageError(ctx, capacityError(*c), help);
            return false;
        }
        options.capacityBytes = *bytes;
    }
    if (auto price = args.value("--gpu-hour-price")) {
        char* end = nullptr;
        const double p = std::strtod(price->c_str(), &end);
        if (price->empty() || end != price->c_str() + price->size() || !(p >= 0.0) || p > 1e9) {
            usageError(ctx, "--gpu-hour-price needs a non-negative number, got '" + *price + "'",
                       help);
            return false;
        }
        options.gpuHourPrice = p;
    }
    if (auto steps = args.value("--planned-steps")) {
        auto n = parseInteger(*steps);
        if (!n || *n < 1) {
            usageError(ctx, "--planned-steps needs a positive integer, got '" + *steps + "'", help);
            return false;
        }
        if (!options.gpuHourPrice) {
            usageError(ctx, "--planned-steps needs --gpu-hour-price", help);
            return false;
        }
        options.plannedSteps = *n;
    }
    return true;
}

void addDeviceAnalysisJson(const DeviceAnalysis& d, Json& j, size_t maxGaps) {
    Json its;
    its["count"] = d.iterations.count();
    its["source"] = toString(d.iterations.source);
    its["confidence"] = d.iterations.confidence;
    its["median_duration_ns"] = d.iterations.medianDurationNs();
    its["reason"] = d.iterations.reason;
    if (d.iterations.periodAllocations > 0) {  // detection ran, trusted or not
        its["period_allocations"] = d.iterations.periodAllocations;
        its["period_score"] = d.iterations.periodScore;
        its["whole_periods"] = d.iterations.wholePeriods;
        its["period_duration_ns"] = d.iterations.periodDurationNs;
    }
    j["iterations"] = its;

    const LeakReport& l = d.leak;
    Json leak;
    leak["verdict"] = toString(l.verdict);
    leak["growth_bytes_per_iteration"] = l.growthBytesPerIteration;
    leak["iterations_to_oom"] = l.iterationsToOom ? Json(*l.iterationsToOom) : Json(nullptr);
    leak["survivors"] = Json::array();
    for (const SurvivorGroup& g : l.survivors) {
        Json s;
        s["description"] = describeSurvivor(g, l.survivorIterations);
        s["bytes"] = g.bytes;
        s["count"] = g.count;
        s["size_bytes"] = g.sizeBytes;
        s["iterations"] = g.iterations;
        s["min_per_iteration"] = g.minPerIteration;
        s["max_per_iteration"] = g.maxPerIteration;
        s["alive_at_end"] = g.aliveAtEnd;
        s["largest_bytes"] = g.largestBytes;
        s["user_frame"] = g.userFrame.empty() ? Json(nullptr) : Json(g.userFrame);
        s["nvtx_range"] = g.nvtxRange.empty() ? Json(nullptr) : Json(g.nvtxRange);
        s["user_frames"] = g.userFrames;
        s["top_frames"] = g.topFrames;
        leak["survivors"].push_back(s);
    }
    leak["survivor_bytes"] = l.survivorBytes;
    leak["survivor_iterations"] = l.survivorIterations;
    leak["level"] = trace::toString(l.level);
    leak["slope_bytes_per_iteration"] = l.slopeBytesPerIteration;
    leak["noise_bytes"] = l.noiseBytes;
    leak["rising_fraction"] = l.risingFraction;
    leak["reason"] = l.reason;
    leak["baselines_bytes"] = Json::array();
    leak["peaks_bytes"] = Json::array();
    for (const IterationMemory& m : l.iterations) {
        leak["baselines_bytes"].push_back(m.baselineBytes);
        leak["peaks_bytes"].push_back(m.peakBytes);
    }
    j["leak"] = leak;

    if (d.breakdown) {
        const TimeBreakdown& b = *d.breakdown;
        Json t;
        t["span_ns"] = b.spanNs;
        t["busy_ns"] = b.busyNs;
        t["idle_ns"] = b.idleNs;
        t["compute_ns"] = b.computeNs;
        t["communication_ns"] = b.communicationNs;
        t["memory_ns"] = b.memoryNs;
        t["overlap_ns"] = b.overlapNs;
        t["exposed_communication_ns"] = b.exposedCommunicationNs;
        t["overlap_pct"] = b.overlapPct;
        t["kernels"] = b.kernels;
        Json causes;
        for (GapCause c : {GapCause::CollectiveWait, GapCause::HostBound, GapCause::Other}) {
            causes[toString(c)] = {{"count", b.gapCountByCause[int(c)]},
                                   {"total_ns", b.gapNsByCause[int(c)]}};
        }
        t["gaps_by_cause"] = causes;
        if (d.communication) {
            const CommunicationSplit& c = *d.communication;
            t["communication_split"] = {{"collectives", c.collectives},
                                        {"wait_ns", c.waitNs},
                                        {"transfer_ns", c.transferNs},
                                        {"exposed_wait_ns", c.exposedWaitNs},
                                        {"exposed_transfer_ns", c.exposedTransferNs},
                                        {"partial", c.partial}};
        } else {
            t["communication_split"] = nullptr;
        }
        j["time_breakdown"] = t;
        j["idle_gaps"] = Json::array();
        for (size_t i = 0; i < b.gaps.size() && i < maxGaps; ++i) {
            const IdleGap& g = b.gaps[i];
            j["idle_gaps"].push_back(
                {{"start_ns", g.startNs},
                 {"duration_ns", g.durationNs},
                 {"device", toInt(g.device)},
                 {"cause", toString(g.cause)},
                 {"kernel_before", g.kernelBefore},
                 {"kernel_after", g.kernelAfter},
                 {"kernel_before_name",
                  i < d.gapKernelNames.size() ? d.gapKernelNames[i].first : std::string()},
                 {"kernel_after_name",
                  i < d.gapKernelNames.size() ? d.gapKernelNames[i].second : std::string()}});
        }
    } else {
        j["time_breakdown"] = nullptr;
        j["idle_gaps"] = Json::array();
    }
    j["model_state_bytes"] = d.modelStateBytes >= 0 ? Json(d.modelStateBytes) : Json(nullptr);
    j["model_state_excluded_leak_bytes"] =
        d.modelStateBytes >= 0 ? Json(d.modelStateExcludedLeakBytes) : Json(nullptr);
    addRolesJson(d, j);
    if (d.operators) {
        j["operators"] = operatorsJson(*d.operators);
    }
    j["top_kernels"] = d.kernelTimes ? topKernelsJson(*d.kernelTimes) : Json(nullptr);
    j["ooms"] = Json::array();
    for (const OomFacts& o : d.ooms) {
        Json top = Json::array();
        for (const LiveGroup& g : o.topLive) {
            top.push_back({{"label", g.label}, {"bytes", g.bytes}, {"count", g.count}});
        }
        j["ooms"].push_back(
            {{"time_ns", o.timeNs},
             {"requested_bytes", o.requestedBytes},
             {"free_bytes", o.freeBytes > 0 ? Json(o.freeBytes) : Json(nullptr)},
             {"allocated_bytes", o.allocatedBytes >= 0 ? Json(o.allocatedBytes) : Json(nullptr)},
             {"reserved_bytes", o.reservedBytes >= 0 ? Json(o.reservedBytes) : Json(nullptr)},
             {"live_allocations", o.liveAllocations},
             {"largest_free_block_bytes",
              o.largestFreeBlockBytes >= 0 ? Json(o.largestFreeBlockBytes) : Json(nullptr)},
             {"segment_free_bytes",
              o.segmentFreeBytes >= 0 ? Json(o.segmentFreeBytes) : Json(nullptr)},
             {"cause", toString(diagnoseOom(o, d.memory.capacityBytes).cause)},
             {"segments", segmentsJson(o.segments, o.requestedBytes)},
             {"top_live", top},
             {"roles", o.roles ? roleBytesJson(*o.roles) : Json(nullptr)}});
        if (!o.segments.known) {
            j["ooms"].back()["segments_unknown_reason"] = o.segments.reason;
        }
    }
}

/// The checklist rules that found nothing or could not judge (what fired is in the advice above):
/// one line per rule and outcome with the same detail, naming the GPUs it holds for.
void writeChecklist(std::ostream& os, const std::vector<AdviceAssessment>& assessed) {
    struct Line {
        const AdviceAssessment* first;
        std::vector<std::string> where;
    };
    std::vector<Line> lines;
    for (const AdviceAssessment& a : assessed) {
        if (a.outcome == AssessmentOutcome::Fired) {
            continue;
        }
        auto same = std::find_if(lines.begin(), lines.end(), [&](const Line& l) {
            return l.first->rule == a.rule && l.first->outcome == a.outcome &&
                   l.first->detail == a.detail;
        });
        if (same == lines.end()) {
            lines.push_back({&a, {}});
            same = lines.end() - 1;
        }
        same->where.push_back(deviceLabel(a.rank, a.device));
    }
    if (lines.empty()) {
        return;
    }
    os << "\ntraining checklist (rules that gave no advice):\n";
    for (const Line& l : lines) {
        std::string where;
        for (size_t i = 0; i < l.where.size() && i < 4; ++i) {
            where += (i ? ", " : "") + l.where[i];
        }
        if (l.where.size() > 4) {
            where += " and " + std::to_string(l.where.size() - 4) + " more";
        }
        os << "  " << l.first->rule << ": " << toString(l.first->outcome) << " (" << where
           << "): " << l.first->detail << "\n";
    }
}

Json adviceJson(const std::vector<Advice>& advice) {
    Json out = Json::array();
    for (const Advice& a : advice) {
        Json e = Json::object();
        for (const Evidence& ev : a.evidence) {
            e[ev.name] = ev.value;
        }
        out.push_back({{"rule", a.rule},
                       {"severity", toString(a.severity)},
                       {"message", a.message},
                       {"evidence", e},
                       {"rank", toInt(a.rank) >= 0 ? Json(toInt(a.rank)) : Json(nullptr)},
                       {"device", toInt(a.device)}});
    }
    return out;
}

Json assessmentsJson(const std::vector<AdviceAssessment>& assessed) {
    Json out = Json::array();
    for (const AdviceAssessment& a : assessed) {
        const bool fired = a.outcome == AssessmentOutcome::Fired;
        out.push_back({{"rule", a.rule},
                       {"rank", toInt(a.rank) >= 0 ? Json(toInt(a.rank)) : Json(nullptr)},
                       {"device", toInt(a.device)},
                       {"outcome", toString(a.outcome)},
                       {"severity", fired ? Json(toString(a.severity)) : Json(nullptr)},
                       {"detail", a.detail}});
    }
    return out;
}

Json costJson(const std::optional<CostEstimate>& cost) {
    if (!cost) {
        return nullptr;
    }
    const CostInput& in = cost->input;
    if (!cost->known) {
        return {{"gpu_hour_price", in.gpuHourPrice},
                {"known", false},
                {"reason", cost->unknownReason},
                {"total_cost", nullptr},
                {"gpu_hours", nullptr}};
    }
    return {{"gpu_hour_price", in.gpuHourPrice},
            {"known", true},
            {"gpus", in.gpus},
            {"step_time_ns", in.stepTimeNs},
            {"step_time_source", in.stepTimeSource},
            {"steps", in.steps},
            {"steps_source", in.stepsSource},
            {"hours", cost->hours},
            {"gpu_hours", cost->gpuHours},
            {"total_cost", cost->totalCost},
            {"idle_fraction", cost->idleKnown ? Json(cost->idleFraction) : Json(nullptr)},
            {"idle_cost", cost->idleKnown ? Json(cost->idleCost) : Json(nullptr)},
            {"formula",
             "gpu_hours = gpus x step_time x steps; total = gpu_hours x gpu_hour_price; idle = "
             "total x idle_fraction, idle_fraction = sum of idle / sum of span over devices (null "
             "without kernels)"}};
}

namespace {

/// The earliest start among the collective's participants (its clock: the job's in the model).
int64_t firstArrivalNs(const MatchedCollective& c) {
    int64_t first = c.participants.empty() ? 0 : c.participants.front().startNs;
    for (const CollectiveParticipant& p : c.participants) {
        first = std::min(first, p.startNs);
    }
    return first;
}

}  // namespace

Json collectivesJson(const JobAnalysis& job, size_t maxCollectives) {
    const CollectiveMatch& m = job.collectives;
    Json j;
    j["method"] = m.method;
    j["source"] = m.source;
    j["matched"] = m.collectives.size();
    j["unmatched"] = m.unmatched;
    j["impossible_by_order"] = m.impossibleByOrder;
    j["point_to_point"] = m.pointToPoint;
    j["partial"] = job.coverage.partial();
    j["not_one_job"] =
        job.coverage.notOneJob.empty() ? Json(nullptr) : Json(job.coverage.notOneJob);
    if (job.straggler) {
        const StragglerFinding& f = *job.straggler;
        j["straggler"] = {{"rank", toInt(f.rank)},
                          {"named", f.meetsEvidence},
                          {"why_not", f.meetsEvidence ? Json(nullptr) : Json(f.whyNot)},
                          {"times_last", f.timesLast},
                          {"collectives", f.collectives},
                          {"wait_caused_ns", f.waitCausedNs},
                          {"wait_share_of_communication", f.waitShare},
                          {"steps", f.steps},
                          {"wait_per_step_per_rank_ns", f.waitPerStepPerRankNs},
                          {"wait_gpu_hours", f.waitGpuHours},
                          {"summary", stragglerSummary(job.straggler, m, job.coverage)}};
    } else {
        j["straggler"] = nullptr;
    }
    j["ranks"] = Json::array();
    for (const RankWait& w : m.ranks) {
        j["ranks"].push_back({{"rank", toInt(w.rank)},
                              {"collectives", w.collectives},
                              {"total_wait_ns", w.totalWaitNs},
                              {"times_straggler", w.timesStraggler}});
    }
    j["collectives"] = Json::array();
    for (size_t i = 0; i < m.collectives.size() && i < maxCollectives; ++i) {
        const MatchedCollective& c = m.collectives[i];
        j["collectives"].push_back(
            {{"function", c.function},
             {"sequence", c.seqNumber},
             {"communicator_hash", c.communicatorHash},
             {"bytes", c.bytes},
             {"ranks", c.participants.size()},
             {"straggler_rank",
              toInt(c.stragglerRank) >= 0 ? Json(toInt(c.stragglerRank)) : Json(nullptr)},
             {"skew_ns", c.skewNs},
             {"first_arrival_ns", firstArrivalNs(c)},
             {"last_arrival_ns", firstArrivalNs(c) + c.skewNs}});
    }
    return j;
}

/// The leak verdict (a summary line) and its reason and survivors.
void writeLeakText(const LeakReport& l, ReportText& out) {
    std::ostream& os = out.os();
    os << "  memory per iteration: " << toString(l.verdict);
    if (l.verdict == LeakVerdict::Staircase) {
        os << ", growing " << signedBytes(l.growthBytesPerIteration)
           << " per iteration (Theil-Sen slope of the baselines, baseline = lowest "
           << trace::toString(l.level) << " bytes in an iteration)";
        if (l.iterationsToOom) {
            os << ", " << formatSignificant(*l.iterationsToOom)
               << " iterations until full (= (capacity - last peak) / growth)";
        }
    }
    os << "\n";
    out.take(ReportPart::Device, SummaryRole::Keep);
    os << "    " << l.reason << "\n";
    for (size_t i = 0; i < l.survivors.size() && i < 3; ++i) {
        const SurvivorGroup& g = l.survivors[i];
        os << "    survivor (made in one iteration, alive two later): "
           << describeSurvivor(g, l.survivorIterations) << "\n";
    }
}

void writeDeviceAnalysisText(const DeviceAnalysis& d, ReportText& out) {
    constexpr ReportPart kPart = ReportPart::Device;
    std::ostream& os = out.os();
    os << rankLabel(d.rank) << " GPU " << toInt(d.device) << ":\n";
    out.take(kPart, SummaryRole::Heading);
    for (const OomFacts& o : d.ooms) {
        os << "  OUT OF MEMORY at " << formatDuration(o.sinceStartNs)
           << " after the first event: requested " << formatBytes(o.requestedBytes);
        if (o.allocatedBytes >= 0) {
            os << ", allocated " << formatBytes(uint64_t(o.allocatedBytes));
        }
        if (o.reservedBytes >= 0) {
            os << ", reserved " << formatBytes(uint64_t(o.reservedBytes));
        }
        if (o.freeBytes > 0) {
            os << ", free " << formatBytes(o.freeBytes);
        }
        os << " (" << o.liveAllocations << (o.liveAllocations == 1 ? " allocation" : " allocations")
           << " alive)";
        os << "; cause: " << toString(diagnoseOom(o, d.memory.capacityBytes).cause) << "\n";
        out.take(kPart, SummaryRole::Keep);
        if (o.segments.known) {
            // The free space against the request, then the totals it rests on.
            os << "    segments: " << segmentFreeText(o.segments.totals, o.requestedBytes) << "\n"
               << "    segments: " << segmentTotalsText(o.segments.totals) << "\n";
        } else {
            os << "    segments: unknown: " << o.segments.reason << "\n";
        }
        for (const LiveGroup& g : o.topLive) {
            os << "    live: " << formatBytes(g.bytes) << " in " << g.count
               << (g.count == 1 ? " allocation" : " allocations") << " from " << g.label << "\n";
        }
        if (o.roles) {
            os << "    roles then: " << rolesLine(*o.roles) << "\n";
        }
        out.take(kPart);
    }
    os << "  iterations: " << d.iterations.count() << " (source: " << toString(d.iterations.source)
       << ", confidence " << pct(d.iterations.confidence) << ")";
    if (d.iterations.count() > 0) {
        os << ", median " << formatDuration(d.iterations.medianDurationNs());
    }
    os << "\n    " << d.iterations.reason << "\n";
    const LeakReport& l = d.leak;
    out.take(kPart);
    if (d.iterations.source == IterationSource::None) {
        // The reason is the iterations' one, printed above.
        os << "  memory per iteration: inconclusive: no iteration structure (no leak verdict, "
              "survivors or model state)\n";
        out.take(kPart, SummaryRole::Keep);
    } else {
        writeLeakText(l, out);
    }
    if (!d.liveSet.known && d.memory.peakBytes() > 0 &&
        d.iterations.source != IterationSource::None) {
        os << "  model state: unknown (the live set cannot be rebuilt; see above)\n";
    }
    if (d.liveSet.known && d.memory.peakBytes() > 0 && d.iterations.count() > 0 &&
        d.iterations.count() < kModelStateMinIterations) {
        os << "  model state: unknown (" << d.iterations.count() << " iterations; at least "
           << kModelStateMinIterations << " are needed to tell a tensor kept every iteration "
           << "from weights and optimizer state)\n";
    }
    if (d.modelStateBytes >= 0 && (d.memory.peakBytes() > 0)) {
        os << "  model state: " << formatBytes(uint64_t(d.modelStateBytes))
           << " (alive from the end of the first iteration to the end of the last";
        if (d.modelStateExcludedLeakBytes > 0) {
            os << "; excludes the leak's " << formatBytes(uint64_t(d.modelStateExcludedLeakBytes))
               << ", the survivors' allocations of the first iteration";
        }
        os << ")\n";
    }
    writeRolesText(d, os);
    if (d.operators) {
        writeOperatorsText(*d.operators, os);
    }
    out.take(kPart);
    if (!d.breakdown) {
        os << "  time: no kernels on this GPU\n";
        out.take(kPart, SummaryRole::Keep);
        return;
    }
    const TimeBreakdown& b = *d.breakdown;
    const double span = double(std::max<int64_t>(1, b.spanNs));
    os << "  time: span " << formatDuration(b.spanNs)
       << " (last kernel end - first kernel start), busy " << formatDuration(b.busyNs)
       << " (union of all kernels), idle " << formatDuration(b.idleNs) << " = "
       << pct(double(b.idleNs) / span) << " of span (span - busy)\n";
    os << "    compute " << formatDuration(b.computeNs) << ", communication "
       << formatDuration(b.communicationNs) << ", memory " << formatDuration(b.memoryNs)
       << " (unions of compute, NCCL/RCCL, and copy/memset kernels)\n";
    out.take(kPart, SummaryRole::Keep);  // the time line and its compute line
    os << "    overlap " << formatDuration(b.overlapNs)
       << " (communication also covered by compute) = " << fixed(b.overlapPct, 1)
       << " % of communication; exposed communication " << formatDuration(b.exposedCommunicationNs)
       << " (communication - overlap) = " << pct(double(b.exposedCommunicationNs) / span)
       << " of span\n";
    if (d.communication) {
        os << "    " << communicationSplitText(*d.communication) << "\n";
    }
    if (!enoughTimeEvidence(b)) {
        const AdviceOptions o;
        os << "    too little to judge time: the time advice needs a span of at least "
           << formatDuration(o.minTimeSpanNs) << " and " << o.minTimeKernels << " kernels (here "
           << formatDuration(b.spanNs) << ", " << b.kernels
           << (b.kernels == 1 ? " kernel" : " kernels") << ")\n";
    }
    os << "  idle gaps by what ends them:";
    for (GapCause c : {GapCause::CollectiveWait, GapCause::HostBound, GapCause::Other}) {
        os << " " << toString(c) << " " << b.gapCountByCause[int(c)] << " ("
           << formatDuration(b.gapNsByCause[int(c)]) << ")" << (c == GapCause::Other ? "" : ",");
    }
    os << "\n";
    // The kernels ending the gaps shown, shortened together so that different ones read apart.
    std::vector<std::string> enders;
    for (size_t i = 0; i < b.gaps.size() && i < 3; ++i) {
        enders.push_back(i < d.gapKernelNames.size() ? d.gapKernelNames[i].second : "");
    }
    enders = shortenNames(enders, kNameWidth);
    for (size_t i = 0; i < enders.size(); ++i) {
        const IdleGap& g = b.gaps[i];
        const std::string& after = enders[i];
        os << "    gap of " << formatDuration(g.durationNs) << " at "
           << formatDuration(g.startNs - b.firstStartNs)
           << " after the first kernel: " << toString(g.cause)
           << (after.empty() ? "" : ", ended by " + after) << "\n";
    }
    if (d.kernelTimes) {
        writeTopKernelsText(*d.kernelTimes, os);
    }
    out.take(kPart);
}

void writeJobAnalysisText(const JobAnalysis& job, const std::optional<CostEstimate>& cost,
                          ReportText& out) {
    std::ostream& os = out.os();
    const CollectiveMatch& m = job.collectives;
    const bool partial = job.coverage.partial();
    if (!job.coverage.notOneJob.empty()) {
        os << "\njob: the inputs are not one job (" << job.coverage.notOneJob
           << "): collectives are not matched across them\n";
    } else {
        os << "\njob: " << coverageText(job.coverage.ranksPresent, job.coverage.worldSize)
           << (partial ? " (partial: cross-rank figures speak of the ranks present only)" : "")
           << "\n";
    }
    out.take(ReportPart::Job, SummaryRole::Keep);
    if (m.pointToPoint > 0) {
        os << "  point-to-point operations (send/recv): " << m.pointToPoint
           << ", not matched (a send waits for its peer, not for the last rank)\n";
    }
    if (m.impossibleByOrder > 0) {
        os << "  " << m.impossibleByOrder
           << " collectives paired by order were left out: in some pairs a rank's kernel ended "
              "before the last rank's began, which no collective allows, so the ranks' sequences "
              "of "
              "those functions differ (events dropped or sampled)\n";
    }
    if (!m.collectives.empty()) {
        out.take(ReportPart::Job);
        os << "\ncollectives across ranks: " << m.collectives.size() << " matched by " << m.method
           << " (from " << m.source << "), " << m.unmatched << " seen on one rank only\n";
        os << "  " << stragglerSummary(job.straggler, m, job.coverage) << "\n";
        out.take(ReportPart::Collectives, SummaryRole::Keep);
        os << "  last = the rank whose collective starts last"
           << (partial ? " of those present" : "") << "; wait = last start - own start\n";
        for (const RankWait& w : m.ranks) {
            os << "  rank " << toInt(w.rank) << ": waited " << formatDuration(w.totalWaitNs)
               << (partial ? " for the ranks present" : "") << " in " << w.collectives
               << " collectives, last to arrive " << w.timesStraggler
               << (w.timesStraggler == 1 ? " time\n" : " times\n");
        }
        for (size_t i = 0; i < m.collectives.size() && i < 10; ++i) {
            const MatchedCollective& c = m.collectives[i];
            os << "  " << c.function << " #" << c.seqNumber << ": ";
            if (toInt(c.stragglerRank) >= 0) {
                os << (partial ? "last present " : "last ") << rankLabel(c.stragglerRank);
            } else {
                os << "all at once";
            }
            os << ", skew " << formatDuration(c.skewNs) << "\n";
        }
        if (m.collectives.size() > 10) {
            os << "  ... " << m.collectives.size() - 10 << " more (see --json)\n";
        }
        out.take(ReportPart::Collectives);
    }
    out.take(ReportPart::Job);
    os << "\nadvice:" << (job.advice.empty() ? " none (no rule fired)" : "") << "\n";
    out.take(ReportPart::Advice, SummaryRole::Keep);
    for (const Advice& a : job.advice) {
        os << "  [" << toString(a.severity) << "] " << a.rule << ": " << a.message << "\n";
        out.take(ReportPart::Advice, SummaryRole::Entry);
    }
    writeChecklist(os, job.assessments);
    out.take(ReportPart::Checklist);
    if (cost && !cost->known) {
        os << "\ncost: unknown (" << cost->unknownReason << ")\n";
    } else if (cost) {
        const CostEstimate& c = *cost;
        os << "\ncost: " << formatAmount(c.totalCost) << " = " << formatAmount(c.gpuHours)
           << " GPU-hours x " << formatAmount(c.input.gpuHourPrice)
           << " per GPU-hour; GPU-hours = " << c.input.gpus
           << (c.input.gpus == 1 ? " GPU" : " GPUs") << " x " << formatAmount(c.hours)
           << " h of wall time (step " << formatDuration(c.input.stepTimeNs) << " ("
           << c.input.stepTimeSource << ") x " << c.input.steps
           << (c.input.steps == 1 ? " step (" : " steps (") << c.input.stepsSource
           << ")); idle part ";
        if (c.idleKnown) {
            os << formatAmount(c.idleCost) << " (" << pct(c.idleFraction)
               << " = sum of idle / sum of span)\n";
        } else {
            os << "unknown (no kernel records: idle time needs kernels)\n";
        }
    }
    out.take(ReportPart::Cost, SummaryRole::Keep);
}

}  // namespace vramscope::app
