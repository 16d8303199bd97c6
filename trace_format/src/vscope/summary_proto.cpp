// TraceSummary <-> trace.proto Summary, and FileHeader <-> trace.proto FileHeader (the one copy
// the writer, the readers and the job index share). Layout facts in trace.proto (Summaries).

#include "vscope/summary_proto.h"

#include <algorithm>

#include "vramscope/trace/trace_file.h"

namespace vramscope::trace::detail {
namespace {

void envelopeToProto(const MemoryEnvelope& e, v1::MemoryEnvelope& out) {
    out.set_device(toInt(e.device));
    out.set_level(static_cast<uint32_t>(e.level));
    out.set_origin(static_cast<uint32_t>(e.origin));
    TimestampNs previous = 0;
    for (const SummaryBlock& b : e.blocks) {
        // Modulo 2^64 like the event columns' deltas, so any pair of times round-trips.
        out.add_start_ns_delta(static_cast<int64_t>(static_cast<uint64_t>(b.startNs) -
                                                    static_cast<uint64_t>(previous)));
        out.add_duration_ns(static_cast<uint64_t>(b.endNs) - static_cast<uint64_t>(b.startNs));
        out.add_min_bytes(b.minBytes);
        out.add_max_bytes(b.maxBytes);
        out.add_first_bytes(b.firstBytes);
        out.add_last_bytes(b.lastBytes);
        out.add_steps(b.steps);
        previous = b.startNs;
    }
    out.set_total_steps(e.totalSteps);
    out.set_events(e.events);
    out.set_peak_bytes(e.peakBytes);
    out.set_peak_time_ns(e.peakTimeNs);
    out.set_lowest_bytes(e.lowestBytes);
    out.set_unmatched_frees(e.unmatchedFrees);
    out.set_out_of_order(e.outOfOrder);
}

/// False (and nothing filled) when the envelope cannot be used: unknown level or origin, or
/// block columns of different lengths.
bool envelopeFromProto(const v1::MemoryEnvelope& in, MemoryEnvelope& out, uint64_t& bad) {
    if (in.level() > 1 || in.origin() < 1 || in.origin() > 2) {
        ++bad;
        return false;
    }
    const int n = in.start_ns_delta_size();
    if (in.duration_ns_size() != n || in.min_bytes_size() != n || in.max_bytes_size() != n ||
        in.first_bytes_size() != n || in.last_bytes_size() != n || in.steps_size() != n) {
        ++bad;
        return false;
    }
    out.device = DeviceIndex{in.device()};
    out.level = static_cast<MemoryLevel>(in.level());
    out.origin = static_cast<SeriesOrigin>(in.origin());
    out.blocks.resize(static_cast<size_t>(n));
    uint64_t previous = 0;
    for (int i = 0; i < n; ++i) {
        SummaryBlock& b = out.blocks[static_cast<size_t>(i)];
        previous += static_cast<uint64_t>(in.start_ns_delta(i));
        b.startNs = static_cast<TimestampNs>(previous);
        b.endNs = static_cast<TimestampNs>(previous + in.duration_ns(i));
        b.minBytes = in.min_bytes(i);
        b.maxBytes = in.max_bytes(i);
        b.firstBytes = in.first_bytes(i);
        b.lastBytes = in.last_bytes(i);
        b.steps = in.steps(i);
        if (b.steps < 1 || b.steps > kSummaryBlockSteps) {
            b.steps = std::clamp<uint32_t>(b.steps, 1, kSummaryBlockSteps);
            ++bad;
        }
        if (b.minBytes > b.maxBytes) {
            std::swap(b.minBytes, b.maxBytes);
            ++bad;
        }
    }
    out.totalSteps = in.total_steps();
    out.events = in.events();
    out.peakBytes = in.peak_bytes();
    out.peakTimeNs = in.peak_time_ns();
    out.lowestBytes = std::min<int64_t>(in.lowest_bytes(), 0);
    bad += in.lowest_bytes() > 0 ? 1 : 0;
    out.unmatchedFrees = in.unmatched_frees();
    out.outOfOrder = in.out_of_order();
    return true;
}

void kernelsToProto(const KernelHistogram& k, v1::KernelHistogram& out) {
    out.set_device(toInt(k.device));
    out.set_category(static_cast<uint32_t>(k.category));
    out.set_count(k.count);
    out.set_busy_ns(k.busyNs);
    // Trailing empty buckets are left out; the reader fills them with 0.
    size_t used = k.log2Counts.size();
    while (used > 0 && k.log2Counts[used - 1] == 0) {
        --used;
    }
    for (size_t i = 0; i < used; ++i) {
        out.add_log2_counts(k.log2Counts[i]);
    }
    out.set_first_start_ns(k.firstStartNs);
    out.set_last_end_ns(k.lastEndNs);
}

bool kernelsFromProto(const v1::KernelHistogram& in, KernelHistogram& out, uint64_t& bad) {
    if (in.category() > static_cast<uint32_t>(KernelCategory::Memset)) {
        ++bad;
        return false;
    }
    out.device = DeviceIndex{in.device()};
    out.category = static_cast<KernelCategory>(in.category());
    out.count = in.count();
    out.busyNs = in.busy_ns();
    const auto n = static_cast<size_t>(in.log2_counts_size());
    if (n > kKernelHistogramBuckets) {
        ++bad;
    }
    for (size_t i = 0; i < std::min(n, kKernelHistogramBuckets); ++i) {
        out.log2Counts[i] = in.log2_counts(static_cast<int>(i));
    }
    out.firstStartNs = in.first_start_ns();
    out.lastEndNs = in.last_end_ns();
    return true;
}

void framesToProto(const std::vector<FrameIndexEntry>& frames, v1::FrameIndex& out) {
    for (const FrameIndexEntry& f : frames) {
        out.add_frame_number(f.frameNumber);
        out.add_offset(f.offset);
        out.add_frame_bytes(f.frameBytes);
        out.add_min_ns(f.minNs);
        out.add_max_ns(f.maxNs);
        out.add_contents(f.contents);
    }
}

void framesFromProto(const v1::FrameIndex& in, std::vector<FrameIndexEntry>& out, uint64_t& bad) {
    const int n = in.frame_number_size();
    if (in.offset_size() != n || in.frame_bytes_size() != n || in.min_ns_size() != n ||
        in.max_ns_size() != n || in.contents_size() != n) {
        ++bad;
        return;
    }
    constexpr uint32_t kKnownContents = 127;
    out.reserve(out.size() + static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        FrameIndexEntry f;
        f.frameNumber = in.frame_number(i);
        f.offset = in.offset(i);
        f.frameBytes = in.frame_bytes(i);
        f.minNs = in.min_ns(i);
        f.maxNs = in.max_ns(i);
        f.contents = in.contents(i) & kKnownContents;
        // A frame is at least its head and tail, and past the preamble.
        if ((in.contents(i) & ~kKnownContents) != 0 ||
            f.frameBytes < kFrameHeadBytes + kFrameTailBytes || f.offset < kPreambleBytes ||
            f.minNs > f.maxNs) {
            ++bad;
            if (f.frameBytes < kFrameHeadBytes + kFrameTailBytes || f.offset < kPreambleBytes) {
                continue;
            }
            f.maxNs = std::max(f.minNs, f.maxNs);
        }
        out.push_back(f);
    }
}

void analysisToProto(const DeviceAnalysisSummary& a, v1::DeviceAnalysis& out) {
    out.set_device(toInt(a.device));
    out.set_iteration_source(a.iterationSource);
    out.set_iteration_reason(a.iterationReason);
    for (TimestampNs t : a.iterationStartNs) {
        out.add_iteration_start_ns(t);
    }
    for (TimestampNs t : a.iterationEndNs) {
        out.add_iteration_end_ns(t);
    }
    for (int64_t b : a.baselineBytes) {
        out.add_baseline_bytes(b);
    }
    for (int64_t b : a.iterationPeakBytes) {
        out.add_iteration_peak_bytes(b);
    }
    out.set_leak_verdict(a.leakVerdict);
    out.set_slope_bytes_per_iteration(a.slopeBytesPerIteration);
    out.set_growth_bytes(a.growthBytes);
    out.set_leak_reason(a.leakReason);
    out.set_analysed_by(a.analysedBy);
}

DeviceAnalysisSummary analysisFromProto(const v1::DeviceAnalysis& in, uint64_t& bad) {
    DeviceAnalysisSummary a;
    a.device = DeviceIndex{in.device()};
    a.iterationSource = in.iteration_source();
    a.iterationReason = in.iteration_reason();
    a.iterationStartNs.assign(in.iteration_start_ns().begin(), in.iteration_start_ns().end());
    a.iterationEndNs.assign(in.iteration_end_ns().begin(), in.iteration_end_ns().end());
    a.baselineBytes.assign(in.baseline_bytes().begin(), in.baseline_bytes().end());
    a.iterationPeakBytes.assign(in.iteration_peak_bytes().begin(), in.iteration_peak_bytes().end());
    // Per-iteration columns are parallel: cut them to the shortest (an empty per-iteration
    // column means "not computed" and stays empty).
    size_t n = std::min(a.iterationStartNs.size(), a.iterationEndNs.size());
    for (const auto* col : {&a.baselineBytes, &a.iterationPeakBytes}) {
        if (!col->empty()) {
            n = std::min(n, col->size());
        }
    }
    auto cut = [&](auto& col) {
        if (col.size() > n) {
            col.resize(n);
            ++bad;
        }
    };
    cut(a.iterationStartNs);
    cut(a.iterationEndNs);
    cut(a.baselineBytes);
    cut(a.iterationPeakBytes);
    a.leakVerdict = in.leak_verdict();
    a.slopeBytesPerIteration = in.slope_bytes_per_iteration();
    a.growthBytes = in.growth_bytes();
    a.leakReason = in.leak_reason();
    a.analysedBy = in.analysed_by();
    return a;
}

}  // namespace

void summaryToProto(const TraceSummary& summary, v1::Summary& out) {
    out.set_final(summary.final);
    out.set_first_ns(summary.firstNs);
    out.set_last_ns(summary.lastNs);
    for (uint64_t rows : summary.tableRows) {
        out.add_table_rows(rows);
    }
    for (const MemoryEnvelope& e : summary.memory) {
        envelopeToProto(e, *out.add_memory());
    }
    for (const KernelHistogram& k : summary.kernels) {
        kernelsToProto(k, *out.add_kernels());
    }
    if (!summary.frames.empty()) {
        framesToProto(summary.frames, *out.mutable_frames());
    }
    for (const DeviceAnalysisSummary& a : summary.analysis) {
        analysisToProto(a, *out.add_analysis());
    }
}

TraceSummary summaryFromProto(const v1::Summary& in, uint64_t& badValues) {
    TraceSummary s;
    s.final = in.final();
    s.firstNs = in.first_ns();
    s.lastNs = std::max(in.first_ns(), in.last_ns());
    badValues += in.last_ns() < in.first_ns() ? 1 : 0;
    if (in.table_rows_size() != static_cast<int>(s.tableRows.size()) && in.table_rows_size() != 0) {
        ++badValues;
    }
    for (int i = 0; i < std::min<int>(in.table_rows_size(), static_cast<int>(s.tableRows.size()));
         ++i) {
        s.tableRows[static_cast<size_t>(i)] = in.table_rows(i);
    }
    for (const auto& e : in.memory()) {
        MemoryEnvelope env;
        if (envelopeFromProto(e, env, badValues)) {
            s.memory.push_back(std::move(env));
        }
    }
    for (const auto& k : in.kernels()) {
        KernelHistogram h;
        if (kernelsFromProto(k, h, badValues)) {
            s.kernels.push_back(h);
        }
    }
    framesFromProto(in.frames(), s.frames, badValues);
    for (const auto& a : in.analysis()) {
        s.analysis.push_back(analysisFromProto(a, badValues));
    }
    // Keep the documented order even if a producer wrote another one.
    auto envKey = [](const MemoryEnvelope& e) {
        return std::tuple(toInt(e.device), static_cast<int>(e.level), static_cast<int>(e.origin));
    };
    std::stable_sort(s.memory.begin(), s.memory.end(),
                     [&](const auto& a, const auto& b) { return envKey(a) < envKey(b); });
    std::stable_sort(s.kernels.begin(), s.kernels.end(), [](const auto& a, const auto& b) {
        return std::pair(toInt(a.device), static_cast<int>(a.category)) <
               std::pair(toInt(b.device), static_cast<int>(b.category));
    });
    s.summaryFrames = 1;
    return s;
}

void headerToProto(const FileHeader& h, v1::FileHeader& out) {
    out.set_format_major(h.formatMajor);
    out.set_format_minor(h.formatMinor);
    out.set_producer(h.producer);
    out.set_host(h.host);
    out.set_pid(h.pid);
    out.set_rank(toInt(h.rank));
    out.set_local_rank(toInt(h.localRank));
    out.set_world_size(h.worldSize);
    out.set_job_id(h.jobId);
    out.set_clock_domain(h.clockDomain);
    out.set_wall_clock_anchor_ns(h.wallClockAnchorNs);
    out.set_anchor_trace_ns(h.anchorTraceNs);
    for (const auto& d : h.devices) {
        auto* pd = out.add_devices();
        pd->set_index(toInt(d.index));
        pd->set_uuid(d.uuid);
        pd->set_name(d.name);
        pd->set_total_memory_bytes(d.totalMemoryBytes);
    }
    for (const auto& [key, value] : h.captureSettings) {
        auto* kv = out.add_capture_settings();
        kv->set_key(key);
        kv->set_value(value);
    }
}

void headerFromProto(const v1::FileHeader& in, FileHeader& out) {
    out.producer = in.producer();
    out.host = in.host();
    out.pid = in.pid();
    out.rank = RankId{in.rank()};
    out.localRank = RankId{in.local_rank()};
    out.worldSize = in.world_size();
    out.jobId = in.job_id();
    out.clockDomain = in.clock_domain();
    out.wallClockAnchorNs = in.wall_clock_anchor_ns();
    out.anchorTraceNs = in.anchor_trace_ns();
    out.devices.clear();
    for (const auto& d : in.devices()) {
        out.devices.push_back(
            DeviceInfo{DeviceIndex{d.index()}, d.uuid(), d.name(), d.total_memory_bytes()});
    }
    out.captureSettings.clear();
    for (const auto& kv : in.capture_settings()) {
        out.captureSettings.emplace_back(kv.key(), kv.value());
    }
}

}  // namespace vramscope::trace::detail
