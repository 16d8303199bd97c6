#include "vramscope/analysis/advice/auto_notes.h"

#include <algorithm>

#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {

namespace {

trace::Note generatedNote(const char* kind, int rankIndex, trace::DeviceIndex device,
                          int64_t startNs, int64_t endNs) {
    trace::Note n;
    n.generated = true;
    n.kind = kind;
    n.rankIndex = rankIndex;
    n.device = toInt(device);
    n.startNs = startNs;
    n.endNs = std::max(startNs, endNs);
    n.author = "vramscope";
    return n;
}

int64_t rankToJob(const JobModel& job, size_t input) {
    return input < job.ranks.size() ? job.ranks[input].toJobNs : 0;
}

void addPeaks(const JobModel& job, std::vector<trace::Note>& out) {
    for (const GpuSeries& g : job.gpus) {
        const MemorySummary& m = g.memory;
        if (!m.hasData() || m.peakBytes() <= 0) {
            continue;
        }
        const bool allocated = m.hasAllocated && m.peakAllocatedBytes > 0;
        const int64_t bytes = allocated ? m.peakAllocatedBytes : m.peakReservedBytes;
        trace::Note n = generatedNote("peak", g.key.rankIndex, g.key.device,
                                      allocated ? m.peakAllocatedTimeNs : m.peakReservedTimeNs,
                                      allocated ? m.peakAllocatedTimeNs : m.peakReservedTimeNs);
        n.title = "Peak " + std::string(allocated ? "allocated " : "reserved ") +
                  formatBytes(static_cast<double>(bytes));
        n.text = deviceLabel(g.rank, g.key.device) + ": the highest " +
                 (allocated ? "allocated" : "reserved") + " memory of the trace";
        if (m.hasReserved && allocated) {
            n.text += "; peak reserved " + formatBytes(static_cast<double>(m.peakReservedBytes));
        }
        if (const auto share = m.peakShare()) {
            n.text += "; " + formatPercent(*share) + " of the " +
                      formatBytes(static_cast<double>(m.capacityBytes)) + " capacity";
        }
        out.push_back(std::move(n));
    }
}

void addOoms(const JobModel& job, std::vector<trace::Note>& out) {
    for (const DeviceAnalysis& d : job.analysis.devices) {
        for (const OomFacts& o : d.ooms) {
            const int64_t t = o.timeNs + rankToJob(job, d.input);
            trace::Note n = generatedNote("oom", static_cast<int>(d.input), d.device, t, t);
            n.title = "OOM: " + formatBytes(static_cast<double>(o.requestedBytes)) + " refused";
            n.text = deviceLabel(d.rank, d.device) + ": an allocation of " +
                     formatBytes(static_cast<double>(o.requestedBytes)) + " failed";
            if (o.allocatedBytes >= 0) {
                n.text += "; allocated " + formatBytes(static_cast<double>(o.allocatedBytes));
            }
            if (o.reservedBytes >= 0) {
                n.text += ", reserved " + formatBytes(static_cast<double>(o.reservedBytes));
            }
            if (o.freeBytes > 0) {
                n.text += ", free on the device " + formatBytes(static_cast<double>(o.freeBytes));
            }
            out.push_back(std::move(n));
        }
    }
}

void addStaircases(const JobModel& job, std::vector<trace::Note>& out) {
    for (const DeviceAnalysis& d : job.analysis.devices) {
        const LeakReport& leak = d.leak;
        if (leak.verdict != LeakVerdict::Staircase || leak.iterations.empty()) {
            continue;
        }
        const int64_t shift = rankToJob(job, d.input);
        trace::Note n = generatedNote("staircase", static_cast<int>(d.input), d.device,
                                      leak.iterations.front().startNs + shift,
                                      leak.iterations.back().endNs + shift);
        n.title = "Staircase: +" + formatBytes(static_cast<double>(leak.growthBytesPerIteration)) +
                  " per iteration";
        n.text = deviceLabel(d.rank, d.device) + ": " + leak.reason;
        out.push_back(std::move(n));
    }
}

void addStraggler(const JobModel& job, std::vector<trace::Note>& out) {
    const auto& finding = job.analysis.straggler;
    if (!finding || !finding->meetsEvidence) {
        return;  // the advice does not name it either
    }
    const MatchedCollective* worst = nullptr;
    for (const MatchedCollective& c : job.analysis.collectives.collectives) {
        if (c.stragglerRank == finding->rank && (!worst || c.skewNs > worst->skewNs)) {
            worst = &c;
        }
    }
    if (!worst || worst->participants.empty()) {
        return;
    }
    const auto late =
        std::find_if(worst->participants.begin(), worst->participants.end(),
                     [&](const CollectiveParticipant& p) { return p.rank == finding->rank; });
    int rankIndex = -1;
    for (size_t i = 0; i < job.ranks.size(); ++i) {
        if (job.ranks[i].rank == finding->rank) {
            rankIndex = static_cast<int>(i);
        }
    }
    if (late == worst->participants.end() || rankIndex < 0) {
        return;
    }
    // Collective times are job time already (analyzeJob ran with the ranks' offsets).
    trace::Note n = generatedNote("straggler", rankIndex, late->device,
                                  late->startNs - worst->skewNs, late->startNs);
    n.title = "Straggler: " + rankLabel(finding->rank) + " " +
              formatDuration(static_cast<double>(worst->skewNs)) + " late";
    n.text = rankLabel(finding->rank) + " arrived last in " + worst->function +
             (worst->seqNumber >= 0 ? " #" + std::to_string(worst->seqNumber) : "") +
             ", the others waiting " + formatDuration(static_cast<double>(worst->skewNs)) +
             "; last in " + std::to_string(finding->timesLast) + " of " +
             std::to_string(finding->collectives) + " matched collectives";
    out.push_back(std::move(n));
}

void addLargestGap(const JobModel& job, std::vector<trace::Note>& out) {
    const DeviceAnalysis* where = nullptr;
    const IdleGap* largest = nullptr;
    for (const DeviceAnalysis& d : job.analysis.devices) {
        if (!d.breakdown) {
            continue;
        }
        for (const IdleGap& g : d.breakdown->gaps) {
            if (!largest || g.durationNs > largest->durationNs) {
                largest = &g;
                where = &d;
            }
        }
    }
    if (!largest || largest->durationNs <= 0) {
        return;
    }
    const int64_t t = largest->startNs + rankToJob(job, where->input);
    trace::Note n = generatedNote("idle-gap", static_cast<int>(where->input), where->device, t,
                                  t + largest->durationNs);
    n.title = "Largest idle gap: " + formatDuration(static_cast<double>(largest->durationNs));
    n.text = deviceLabel(where->rank, where->device) + ": no kernel ran for " +
             formatDuration(static_cast<double>(largest->durationNs)) + " (" +
             toString(largest->cause) + ")";
    out.push_back(std::move(n));
}

}  // namespace

std::vector<trace::Note> autoNotes(const JobModel& job) {
    std::vector<trace::Note> out;
    addPeaks(job, out);
    addOoms(job, out);
    addStaircases(job, out);
    addStraggler(job, out);
    addLargestGap(job, out);
    std::stable_sort(out.begin(), out.end(), [](const trace::Note& a, const trace::Note& b) {
        return a.startNs < b.startNs;
    });
    return out;
}

std::vector<trace::Note> notesInTraces(const JobModel& job) {
    std::vector<trace::Note> out;
    size_t counter = 0;
    for (size_t r = 0; r < job.job.ranks.size(); ++r) {
        const int64_t shift = rankToJob(job, r);
        for (const trace::Annotation& a : job.job.ranks[r].trace.data.annotations) {
            ++counter;
            trace::Note n;
            n.id = a.id;
            n.title = a.title;
            n.text = a.text;
            n.color = a.color;
            n.author = a.author;
            n.createdUnixMs = a.createdUnixMs;
            n.startNs = a.startNs + shift;
            n.endNs = std::max(a.startNs, a.endNs) + shift;
            if (toInt(a.device) >= 0) {
                n.rankIndex = static_cast<int>(r);
                n.device = toInt(a.device);
            }
            if (a.allocationAddress != 0) {
                n.allocationAddress = a.allocationAddress;
                n.allocationTimeNs = a.allocationTimeNs + shift;
            }
            n.flameFrame = a.flameFrame;
            n.generated = a.generated;
            n.kind = a.kind;
            const bool taken = n.id.empty() || std::any_of(out.begin(), out.end(),
                                                           [&](auto& o) { return o.id == n.id; });
            if (taken) {
                n.id = "f" + std::to_string(counter);
            }
            out.push_back(std::move(n));
        }
    }
    return out;
}

std::vector<trace::Annotation> annotationsForRank(const std::vector<trace::Note>& notes,
                                                  int rankIndex, int64_t toJobNs) {
    std::vector<trace::Annotation> out;
    for (const trace::Note& n : notes) {
        const bool mine = n.pinnedToGpu() ? n.rankIndex == rankIndex : rankIndex == 0;
        if (!mine) {
            continue;
        }
        trace::Annotation a;
        a.startNs = n.startNs - toJobNs;
        a.endNs = n.endNs - toJobNs;
        a.device = trace::DeviceIndex{n.pinnedToGpu() ? n.device : -1};
        a.text = n.text;
        a.author = n.author;
        a.title = n.title;
        a.color = n.color;
        a.createdUnixMs = n.createdUnixMs;
        if (n.allocationAddress != 0) {
            a.allocationAddress = n.allocationAddress;
            a.allocationTimeNs = n.allocationTimeNs - toJobNs;
        }
        a.flameFrame = n.flameFrame;
        a.generated = n.generated;
        a.kind = n.kind;
        a.id = n.id;
        a.allRanks = !n.pinnedToGpu();
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace vramscope::analysis
