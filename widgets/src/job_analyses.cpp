#include "vramscope/widgets/job_analyses.h"

#include <QString>

#include <algorithm>
#include <set>

namespace vramscope::widgets {

const GpuMemoryAnalysis* JobAnalyses::memoryOf(GpuKey key) const {
    for (const GpuMemoryAnalysis& g : memory) {
        if (g.key == key) {
            return &g;
        }
    }
    return nullptr;
}

const GpuKernelAnalysis* JobAnalyses::kernelsOf(GpuKey key) const {
    for (const GpuKernelAnalysis& g : kernels) {
        if (g.key == key) {
            return &g;
        }
    }
    return nullptr;
}

QString gpuLabel(const LoadedJob& job, GpuKey key) {
    const bool known = key.rankIndex >= 0 && size_t(key.rankIndex) < job.ranks.size() &&
                       job.ranks[size_t(key.rankIndex)].rank >= 0;
    if (!known) {
        return QStringLiteral("rank ? \u00b7 GPU %1").arg(key.device);
    }
    return QStringLiteral("rank %1 \u00b7 GPU %2")
        .arg(job.ranks[size_t(key.rankIndex)].rank)
        .arg(key.device);
}

namespace {

std::set<trace::DeviceIndex> memoryDevices(const trace::TraceData& data) {
    std::set<trace::DeviceIndex> devices;
    for (size_t i = 0; i < data.memory.size(); ++i) {
        if (data.memory.device[i] != trace::kHostDevice &&
            data.memory.kind[i] != trace::MemoryKind::DeviceStatic) {
            devices.insert(data.memory.device[i]);
        }
    }
    return devices;
}

const analysis::DeviceAnalysis* deviceAnalysis(const analysis::JobAnalysis& a, GpuKey key) {
    for (const analysis::DeviceAnalysis& d : a.devices) {
        if (int(d.input) == key.rankIndex && d.device == key.device) {
            return &d;
        }
    }
    return nullptr;
}

}  // namespace

std::shared_ptr<const JobAnalyses> analyzeJob(std::shared_ptr<const LoadedJob> job) {
    auto a = std::make_shared<JobAnalyses>();
    a->job = std::move(job);
    if (!a->job) {
        return a;
    }
    const LoadedJob& j = *a->job;
    std::vector<analysis::RankInput> inputs;
    for (size_t r = 0; r < j.job.ranks.size() && r < j.ranks.size(); ++r) {
        // An unknown rank stays -1: the analyses say "rank ?" and match collectives by position.
        const int32_t rank = j.ranks[r].rank >= 0 ? j.ranks[r].rank : -1;
        inputs.push_back(analysis::RankInput{&j.job.ranks[r].trace.data, rank, j.ranks[r].toJobNs});
    }
    analysis::JobAnalysisOptions options;
    options.gpuHourPrice = 0.0;  // the cost inputs; the advice panel prices them
    auto result = analysis::analyzeJob(inputs, options);
    if (result.ok()) {
        a->analysis = std::move(result).value();
        if (a->analysis.cost) {
            a->cost = a->analysis.cost->input;
        }
    } else {
        a->problem = result.error().describe();
    }
    for (size_t r = 0; r < inputs.size(); ++r) {
        const trace::TraceData& data = *inputs[r].data;
        for (trace::DeviceIndex d : memoryDevices(data)) {
            GpuMemoryAnalysis g;
            g.key = GpuKey{int(r), d};
            g.device = deviceAnalysis(a->analysis, g.key);
            if (!g.device) {
                continue;
            }
            g.level = analysis::detailLevel(data, d);
            g.flame = std::make_shared<analysis::FlameTreeBuilder>(data, d, g.level);
            g.peakTimeNs = analysis::peakTime(data, g.flame->index());
            a->memory.push_back(std::move(g));
        }
        for (const analysis::DeviceAnalysis& d : a->analysis.devices) {
            if (d.input == r && d.breakdown) {
                GpuKernelAnalysis k;
                k.key = GpuKey{int(r), d.device};
                k.lanes = analysis::KernelLaneIndex(data, d.device);
                k.breakdown = &*d.breakdown;
                a->kernels.push_back(std::move(k));
            }
        }
    }
    return a;
}

}  // namespace vramscope::widgets
