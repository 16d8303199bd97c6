#include "vramscope/analysis/model/job_model.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>

#include "vramscope/analysis/memory/flame_service.h"
#include "vramscope/analysis/memory/flame_tree.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/time_span.h"

namespace vramscope::analysis {

int64_t GpuSeries::bytesInUseAt(int64_t t) const {
    return analysis::bytesInUseAt(allocated.series(), reserved.series(), t);
}

const GpuSeries* JobModel::gpu(GpuKey key) const {
    for (const GpuSeries& g : gpus) {
        if (g.key == key) {
            return &g;
        }
    }
    return nullptr;
}

const GpuMemoryAnalysis* JobModel::memoryOf(GpuKey key) const {
    for (const GpuMemoryAnalysis& g : memory) {
        if (g.key == key) {
            return &g;
        }
    }
    return nullptr;
}

const GpuKernelAnalysis* JobModel::kernelsOf(GpuKey key) const {
    for (const GpuKernelAnalysis& g : kernels) {
        if (g.key == key) {
            return &g;
        }
    }
    return nullptr;
}

namespace {

void shift(StepSeries& s, int64_t by) {
    for (int64_t& t : s.timeNs) {
        t += by;
    }
}

std::string fileName(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

void collectProblems(const trace::Job& job, JobModel& out) {
    for (const trace::Error& e : job.skipped) {
        out.problems.push_back("Not opened: " + e.describe());
    }
    for (const std::string& w : job.warnings) {
        out.problems.push_back(w + ".");
    }
    for (const trace::RankTrace& r : job.ranks) {
        const trace::ReadReport& report = r.trace.report;
        if (!report.complete) {
            const std::string summary = report.summary();
            out.problems.push_back(summary.empty() ? fileName(r.path) + " was only partly loaded."
                                                   : summary);
        }
        for (const trace::DataLoss& loss : r.trace.data.dataLoss) {
            out.problems.push_back(fileName(r.path) + ": " + trace::describe(loss) + ".");
        }
    }
}

/// Sets the job time axis and the ranks' offsets onto it.
void placeRanks(JobModel& m) {
    const JobTimeAxis axis = jobTimeAxis(m.job);
    m.originNs = axis.originNs;
    m.durationNs = axis.durationNs;
    const int64_t origin = axis.originNs;
    for (const trace::RankTrace& rank : m.job.ranks) {
        const trace::TraceData& data = rank.trace.data;
        RankInfo info;
        info.rank = toInt(data.header.rank) >= 0 ? data.header.rank : trace::kUnknownRank;
        info.path = rank.path;
        info.host = data.header.host;
        info.toJobNs = -origin;
        info.ranges.reserve(data.ranges.size());
        for (size_t i = 0; i < data.ranges.size(); ++i) {
            const trace::RangeEvent e = data.ranges.at(i);
            info.ranges.push_back({e.startNs + info.toJobNs, e.endNs + info.toJobNs,
                                   std::string(data.string(e.name)), e.depth, e.kind});
        }
        m.ranks.push_back(std::move(info));
    }
}

/// The analysis of device `device` of rank `r`, null when the analyses failed.
const DeviceAnalysis* analysisOf(const JobModel& m, size_t r, trace::DeviceIndex device) {
    for (const DeviceAnalysis& d : m.analysis.devices) {
        if (d.input == r && d.device == device) {
            return &d;
        }
    }
    return nullptr;
}

/// The drawn form of one timeline of rank `r`, on the job's clock.
GpuSeries seriesOf(const JobModel& m, size_t r, MemoryTimeline t, int colorIndex) {
    const trace::TraceData& data = m.job.ranks[r].trace.data;
    const int64_t toJob = m.ranks[r].toJobNs;
    GpuSeries g;
    g.key = {static_cast<int>(r), t.device};
    g.rank = m.ranks[r].rank;
    if (const trace::DeviceInfo* dev = data.device(t.device)) {
        g.deviceName = dev->name;
    }
    // The peaks as analyzeJob found them (one computation for every surface); the timeline's own
    // summary only when there is no analysis to take them from.
    const DeviceAnalysis* analysed = analysisOf(m, r, t.device);
    g.memory = (analysed != nullptr ? analysed->memory : summarizeMemory(t)).shifted(toJob);
    // An empty series has no peak; keep its time at the job start, not at the rank origin.
    if (t.allocated.empty()) {
        g.memory.peakAllocatedTimeNs = 0;
    }
    if (t.reserved.empty()) {
        g.memory.peakReservedTimeNs = 0;
    }
    shift(t.allocated, toJob);
    shift(t.reserved, toJob);
    g.allocated = LodSeries(std::move(t.allocated));
    g.reserved = LodSeries(std::move(t.reserved));
    g.allocatedSource = t.allocatedSource;
    g.reservedSource = t.reservedSource;
    for (const trace::OomEvent& o : data.ooms) {
        if (o.device == t.device) {
            g.ooms.push_back({o.timestampNs + toJob, o.requestedBytes});
        }
    }
    g.colorIndex = colorIndex;
    return g;
}

/// GPUs of `data` with allocation events (device-static memory and host memory left out).
std::set<trace::DeviceIndex> allocationDevices(const trace::TraceData& data) {
    std::set<trace::DeviceIndex> devices;
    for (size_t i = 0; i < data.memory.size(); ++i) {
        if (data.memory.device[i] != trace::kHostDevice &&
            data.memory.kind[i] != trace::MemoryKind::DeviceStatic) {
            devices.insert(data.memory.device[i]);
        }
    }
    return devices;
}

/// Per-GPU allocation views, kernel lanes and the flame service, over the finished analyses.
void indexGpus(JobModel& m) {
    m.flames = std::make_shared<FlameService>();
    for (size_t r = 0; r < m.job.ranks.size(); ++r) {
        const trace::TraceData& data = m.job.ranks[r].trace.data;
        const std::set<trace::DeviceIndex> withAllocations = allocationDevices(data);
        for (const DeviceAnalysis& d : m.analysis.devices) {
            if (d.input != r) {
                continue;
            }
            const GpuKey key{static_cast<int>(r), d.device};
            if (withAllocations.count(d.device) > 0) {
                GpuMemoryAnalysis g;
                g.key = key;
                g.device = &d;
                g.level = d.index->level();
                g.peakTimeNs = peakTime(data, *d.index);
                g.liveSet = d.liveSet;
                m.flames->add(key.rankIndex, key.device, data, d.index, d.roles);
                m.memory.push_back(g);
            }
            if (d.breakdown) {
                m.kernels.push_back({key, KernelLaneIndex(data, d.device), &*d.breakdown});
            }
        }
    }
}

}  // namespace

trace::Result<std::shared_ptr<const JobModel>> buildJobModel(trace::Job job, std::string title,
                                                             const ModelProgress& progress,
                                                             JobAnalysisOptions options) {
    auto m = std::make_shared<JobModel>();
    m->title = std::move(title);
    m->job = std::move(job);
    collectProblems(m->job, *m);
    placeRanks(*m);

    std::vector<RankInput> inputs;
    for (size_t r = 0; r < m->job.ranks.size(); ++r) {
        // An unknown rank stays -1: the analyses say "rank ?" and match collectives by position.
        inputs.push_back(
            RankInput{&m->job.ranks[r].trace.data, m->ranks[r].rank, m->ranks[r].toJobNs});
    }
    // Analyses take most of the time; the rest (reductions, lanes) the last tenth.
    const size_t ranks = inputs.size();
    AnalysisProgress analysisProgress;
    if (progress) {
        analysisProgress = [&](double done, std::string_view) {
            // Ranks are analysed several at once, so the stage names the job, not one rank.
            const std::string stage = ranks > 1 ? "Analysing " + std::to_string(ranks) + " ranks"
                                                : std::string("Analysing the trace");
            return progress(0.9 * done, stage);
        };
    }
    if (!options.gpuHourPrice) {
        options.gpuHourPrice = 0.0;  // the cost inputs; a view prices them
    }
    std::vector<std::vector<MemoryTimeline>> timelines;
    auto analysed = analyzeJob(inputs, options, analysisProgress, &timelines);
    if (analysed.ok()) {
        m->analysis = std::move(analysed).value();
        if (m->analysis.cost) {
            m->cost = m->analysis.cost->input;
        }
        m->checks = evaluateRules(m->analysis, CheckRules::defaults(), options);
    } else if (analysed.error().code == trace::ErrorCode::Cancelled) {
        return analysed.error();
    } else {
        m->analysisProblem = analysed.error().describe();
        timelines.clear();
    }
    if (progress && !progress(0.9, "Preparing the timelines")) {
        return trace::Error::cancelled(m->title);
    }
    if (timelines.size() != ranks) {
        // The analyses failed before making every timeline: make them here.
        timelines.assign(ranks, {});
        for (size_t r = 0; r < ranks; ++r) {
            timelines[r] = buildMemoryTimelines(*inputs[r].data);
        }
    }
    int colorIndex = 0;
    for (size_t r = 0; r < ranks; ++r) {
        for (MemoryTimeline& t : timelines[r]) {
            m->gpus.push_back(seriesOf(*m, r, std::move(t), colorIndex++));
        }
    }
    if (m->analysisProblem.empty()) {
        indexGpus(*m);
    } else {
        m->flames = std::make_shared<FlameService>();
    }
    if (progress && !progress(1.0, "Done")) {
        return trace::Error::cancelled(m->title);
    }
    return std::shared_ptr<const JobModel>(std::move(m));
}

JobTimeAxis jobTimeAxis(const trace::Job& job) {
    int64_t origin = std::numeric_limits<int64_t>::max();
    int64_t end = std::numeric_limits<int64_t>::min();
    for (const trace::RankTrace& r : job.ranks) {
        // Collectives count too (trace/time_span.h): one recorded from the host before every
        // kernel must not land before job time 0.
        if (const auto span = trace::traceTimeSpan(r.trace.data)) {
            origin = std::min(origin, span->firstNs);
            end = std::max(end, span->lastNs);
        }
    }
    if (origin > end) {
        origin = 0;
        end = 1;
    }
    JobTimeAxis axis;
    axis.originNs = origin;
    axis.durationNs = std::max<int64_t>(1, end - origin);
    axis.toJobNs.assign(job.ranks.size(), -origin);
    return axis;
}

}  // namespace vramscope::analysis
