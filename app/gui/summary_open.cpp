#include "summary_open.h"

#include <QSettings>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>

#include "vramscope/analysis/model/summary_timeline.h"
#include "vramscope/analysis/model/summary_window.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/job_index.h"

namespace vramscope::app {

namespace {

constexpr const char* kBudgetKey = "memory/budgetBytes";

/// Steps standing for summary blocks, drawn as each block's band: the block's first value at
/// its start, then its highest and lowest value alternating across it, then its last value at its
/// end. A block says only that the series stayed within [min, max] over its span, so every part
/// of the span shows the whole band (a level-of-detail bucket inside the block sees both values)
/// rather than a made-up shape. Sparse summaries alternate more often so that the band holds at
/// the widths a screen shows; at most about 8 k extra steps in all. Times move by `toJob`.
analysis::StepSeries stepsOfBlocks(const std::vector<trace::SummaryBlock>& blocks, int64_t toJob) {
    const int64_t alternations = std::clamp<int64_t>(
        4096 / std::max<int64_t>(1, static_cast<int64_t>(blocks.size())), 2, 512);
    analysis::StepSeries s;
    s.timeNs.reserve(blocks.size() * static_cast<size_t>(2 * alternations + 2));
    s.bytes.reserve(s.timeNs.capacity());
    auto push = [&](int64_t t, int64_t v) {
        if (!s.timeNs.empty() && s.timeNs.back() >= t) {
            // Equal times merge keeping the later value: keep the one further from the
            // previous so the envelope survives.
            s.bytes.back() = std::max(s.bytes.back(), v);
            return;
        }
        s.timeNs.push_back(t);
        s.bytes.push_back(v);
    };
    for (const trace::SummaryBlock& b : blocks) {
        const int64_t start = b.startNs + toJob;
        const int64_t end = b.endNs + toJob;
        push(start, b.firstBytes);
        const int64_t span = end - start;
        const int64_t n = std::min<int64_t>(2 * alternations, span - 1);
        for (int64_t k = 1; k <= n; ++k) {
            push(start + span * k / (n + 1), k % 2 == 1 ? b.maxBytes : b.minBytes);
        }
        if (n <= 0 && span > 0) {
            push(start, b.maxBytes);
        }
        if (end > start) {
            push(end, b.lastBytes);
        }
    }
    return s;
}

/// Highest peak share of capacity of a rank's GPUs (peak bytes, below every share, when no
/// capacity is known), the key of worst-first ordering.
double worstShare(const std::vector<analysis::SummaryTimeline>& gpus) {
    double worst = -std::numeric_limits<double>::infinity();
    for (const analysis::SummaryTimeline& g : gpus) {
        const int64_t peak = std::max(g.peakAllocatedBytes, g.peakReservedBytes);
        const double key = g.capacityBytes > 0
                               ? static_cast<double>(peak) / static_cast<double>(g.capacityBytes)
                               : -1.0 / (1.0 + static_cast<double>(peak));
        worst = std::max(worst, key);
    }
    return worst;
}

analysis::GpuSeries seriesOfSummary(const analysis::SummaryTimeline& t,
                                    const trace::FileHeader& header, int rankIndex, int64_t toJob,
                                    int colorIndex) {
    analysis::GpuSeries g;
    g.key = {rankIndex, t.device};
    g.rank = header.rank;
    for (const trace::DeviceInfo& d : header.devices) {
        if (d.index == t.device) {
            g.deviceName = d.name;
        }
    }
    analysis::MemorySummary& m = g.memory;
    m.capacityBytes = t.capacityBytes;
    m.hasAllocated = !t.allocated.empty();
    m.hasReserved = !t.reserved.empty();
    m.peakAllocatedBytes = t.peakAllocatedBytes;
    m.peakAllocatedTimeNs = m.hasAllocated ? t.peakAllocatedTimeNs + toJob : 0;
    m.peakReservedBytes = t.peakReservedBytes;
    m.peakReservedTimeNs = m.hasReserved ? t.peakReservedTimeNs + toJob : 0;
    m.memoryEvents = t.memoryEvents;
    g.allocated = analysis::LodSeries(stepsOfBlocks(t.allocated, toJob));
    g.reserved = analysis::LodSeries(stepsOfBlocks(t.reserved, toJob));
    g.allocatedSource = t.allocatedSource;
    g.reservedSource = t.reservedSource;
    g.colorIndex = colorIndex;
    return g;
}

std::string fileName(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

}  // namespace

uint64_t estimatedDetailBytes(const trace::TraceSummary& summary) {
    const uint64_t rows =
        std::accumulate(summary.tableRows.begin(), summary.tableRows.end(), uint64_t{0});
    return rows * kResidentBytesPerEvent;
}

uint64_t estimatedWindowBytes(const trace::TraceSummary& summary, int64_t t0, int64_t t1) {
    const trace::FrameFilter want = trace::framesOverlapping(t0, t1);
    double all = 0.0;
    double inWindow = 0.0;
    for (const trace::FrameIndexEntry& f : summary.frames) {
        if ((f.contents & ~uint32_t{trace::kFrameTables}) == 0) {
            continue;  // tables only: no events
        }
        all += f.frameBytes;
        if (want(f)) {
            inWindow += f.frameBytes;
        }
    }
    if (all <= 0.0) {
        return 0;
    }
    return static_cast<uint64_t>(static_cast<double>(estimatedDetailBytes(summary)) * inWindow /
                                 all);
}

uint64_t physicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

uint64_t defaultMemoryBudgetBytes() {
    const uint64_t ram = physicalMemoryBytes();
    return ram > 0 ? ram / 4 : uint64_t{1} << 30;
}

uint64_t memoryBudgetBytes() {
    const qulonglong kept = QSettings().value(QLatin1String(kBudgetKey), 0).toULongLong();
    return kept > 0 ? kept : defaultMemoryBudgetBytes();
}

void setMemoryBudgetBytes(uint64_t bytes) {
    QSettings settings;
    if (bytes == 0) {
        settings.remove(QLatin1String(kBudgetKey));
    } else {
        settings.setValue(QLatin1String(kBudgetKey), qulonglong(bytes));
    }
}

namespace {

std::shared_ptr<analysis::JobModel> buildOverview(const std::vector<SummarySource>& sources,
                                                  std::string title, bool worstFirst) {
    std::vector<std::vector<analysis::SummaryTimeline>> timelines;
    std::vector<size_t> order(sources.size());
    std::iota(order.begin(), order.end(), size_t{0});
    int64_t origin = std::numeric_limits<int64_t>::max();
    int64_t end = std::numeric_limits<int64_t>::min();
    for (const SummarySource& s : sources) {
        timelines.push_back(analysis::summaryTimelines(s.summary));
        if (s.summary.lastNs > s.summary.firstNs || s.summary.firstNs != 0) {
            origin = std::min(origin, s.summary.firstNs);
            end = std::max(end, s.summary.lastNs);
        }
    }
    if (origin > end) {
        origin = 0;
        end = 1;
    }
    if (worstFirst) {
        std::vector<double> key;
        for (const auto& t : timelines) {
            key.push_back(worstShare(t));
        }
        std::stable_sort(order.begin(), order.end(),
                         [&key](size_t a, size_t b) { return key[a] > key[b]; });
    }
    auto m = std::make_shared<analysis::JobModel>();
    m->title = std::move(title);
    m->originNs = origin;
    m->durationNs = std::max<int64_t>(1, end - origin);
    int color = 0;
    for (size_t i : order) {
        const SummarySource& s = sources[i];
        const int rankIndex = static_cast<int>(m->ranks.size());
        trace::RankTrace rt;
        rt.path = s.path;
        rt.trace.data.header = s.summary.header;
        rt.rankSource = "header";
        m->job.ranks.push_back(std::move(rt));
        analysis::RankInfo info;
        info.rank =
            trace::toInt(s.summary.header.rank) >= 0 ? s.summary.header.rank : trace::kUnknownRank;
        info.path = s.path;
        info.host = s.summary.header.host;
        info.toJobNs = -origin;
        m->ranks.push_back(std::move(info));
        for (const analysis::SummaryTimeline& t : timelines[i]) {
            m->gpus.push_back(seriesOfSummary(t, s.summary.header, rankIndex, -origin, color++));
        }
        if (!s.problem.empty()) {
            m->problems.push_back(s.problem);
        }
    }
    return m;
}

}  // namespace

std::shared_ptr<const analysis::JobModel> overviewModel(const std::vector<SummarySource>& sources,
                                                        std::string title, bool worstFirst) {
    return buildOverview(sources, std::move(title), worstFirst);
}

std::vector<uint64_t> framesForWindow(const trace::TraceSummary& summary, int64_t t0, int64_t t1) {
    const trace::FrameFilter want = trace::framesOverlapping(t0, t1);
    std::vector<uint64_t> out;
    for (const trace::FrameIndexEntry& f : summary.frames) {
        if (want(f)) {
            out.push_back(f.frameNumber);
        }
    }
    return out;
}

trace::Result<std::shared_ptr<const analysis::JobModel>> loadWindow(
    const std::string& path, const trace::TraceSummary& summary, int64_t t0, int64_t t1) {
    // Read from the summary block in force at t0, so that the window's levels can be anchored
    // to the whole file's (memory alive before the window is in no frame of it).
    const int64_t readFrom = analysis::windowReadStart(summary, t0);
    auto loaded = trace::readTraceFrames(path, summary, trace::framesOverlapping(readFrom, t1));
    if (!loaded.ok()) {
        return loaded.error();
    }
    analysis::anchorWindowMemory(loaded->data, summary, readFrom, t1);
    trace::Job job;
    trace::RankTrace rank;
    rank.path = path;
    rank.trace = std::move(loaded).value();
    rank.rankSource = "header";
    job.ranks.push_back(std::move(rank));
    const std::string title =
        fileName(path) + " (" + analysis::formatDuration(double(t1 - t0)) + " window)";
    return analysis::buildJobModel(std::move(job), title);
}

trace::Result<std::optional<SummarySource>> readSummarySource(const std::string& path) {
    auto read = trace::readTraceSummary(path);
    if (!read.ok()) {
        return read.error();
    }
    if (!read->found) {
        return std::optional<SummarySource>{};
    }
    SummarySource s;
    s.path = path;
    s.summary = std::move(read->summary);
    s.problem = read->report.summary();
    return std::optional<SummarySource>{std::move(s)};
}

trace::Result<std::shared_ptr<const analysis::JobModel>> loadIndexOverview(
    const std::string& path) {
    auto read = trace::readJobIndex(path);
    if (!read.ok()) {
        return read.error();
    }
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::vector<SummarySource> sources;
    std::vector<std::string> problems;
    for (trace::JobIndexEntry& e : read->index.ranks) {
        std::filesystem::path file(e.path);
        if (file.is_relative()) {
            file = folder / file;
        }
        SummarySource s;
        s.path = file.lexically_normal().string();
        if (!e.problem.empty()) {
            problems.push_back(e.path + ": " + e.problem);
            continue;
        }
        std::error_code ec;
        if (!std::filesystem::exists(file, ec)) {
            s.problem = e.path + " is missing: its summary is shown, its detail cannot be loaded.";
        }
        s.summary = std::move(e.summary);
        sources.push_back(std::move(s));
    }
    std::shared_ptr<analysis::JobModel> model = buildOverview(sources, fileName(path), true);
    const std::string damaged = read->report.summary();
    if (!damaged.empty()) {
        model->problems.push_back(damaged);
    }
    model->problems.insert(model->problems.end(), problems.begin(), problems.end());
    return std::shared_ptr<const analysis::JobModel>(std::move(model));
}

std::vector<std::string> storedAnalysisLines(const trace::TraceSummary& summary) {
    std::vector<std::string> lines;
    for (const trace::DeviceAnalysisSummary& a : summary.analysis) {
        std::string line = "GPU " + std::to_string(trace::toInt(a.device)) + ": " +
                           std::to_string(a.iterationStartNs.size()) + " iterations";
        if (!a.leakVerdict.empty()) {
            line += "; leak: " + a.leakVerdict;
            if (a.slopeBytesPerIteration != 0.0) {
                line += " (" + analysis::formatBytes(a.slopeBytesPerIteration) + " per iteration)";
            }
        }
        if (!a.analysedBy.empty()) {
            line += " — stored by " + a.analysedBy;
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

}  // namespace vramscope::app
