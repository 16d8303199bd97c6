#include "export/export_walk.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis::exporting {

namespace {

using trace::DeviceIndex;
using trace::KernelCategory;
using trace::RangeKind;
using trace::TraceData;

/// A slice before it is placed: job time, and the position of its source row.
struct Interval {
    int64_t startNs = 0;
    int64_t endNs = 0;
    size_t row = 0;
};

/// Splits slices into lanes in which they nest properly, first fit: a slice goes on the first
/// lane where every slice still open when it begins also ends no earlier than it does. Trace
/// viewers draw one track as a stack of nested slices, so two kernels of a stream that overlap
/// in the trace (a profiler's clock jitter, or truly concurrent work) would otherwise be drawn
/// as parent and child or rejected. Sorts `items` (start, then longer first); returns per lane
/// the positions in `items`.
std::vector<std::vector<size_t>> packLanes(std::vector<Interval>& items) {
    std::stable_sort(items.begin(), items.end(), [](const Interval& a, const Interval& b) {
        return a.startNs != b.startNs ? a.startNs < b.startNs : a.endNs > b.endNs;
    });
    std::vector<std::vector<int64_t>> open;  // per lane, the ends of the open slices
    std::vector<std::vector<size_t>> lanes;
    for (size_t i = 0; i < items.size(); ++i) {
        const Interval& s = items[i];
        size_t lane = 0;
        for (; lane < open.size(); ++lane) {
            std::vector<int64_t>& ends = open[lane];
            while (!ends.empty() && ends.back() <= s.startNs) {
                ends.pop_back();
            }
            if (ends.empty() || ends.back() >= s.endNs) {
                break;
            }
        }
        if (lane == open.size()) {
            open.emplace_back();
            lanes.emplace_back();
        }
        open[lane].push_back(s.endNs);
        lanes[lane].push_back(i);
    }
    return lanes;
}

/// Announces the track(s) of `items` and sends their slices, made by `make(row)`; nothing when
/// `items` is empty.
template <class MakeSlice>
void emitSlices(ExportSink& sink, int rank, TrackKind kind, const std::string& name,
                uint64_t threadId, std::vector<Interval> items, const MakeSlice& make) {
    const std::vector<std::vector<size_t>> lanes = packLanes(items);
    for (size_t lane = 0; lane < lanes.size() && sink.good(); ++lane) {
        // Extra lanes are no thread of their own: only lane 0 keeps the thread's identity.
        const uint64_t track =
            lane == 0 ? sink.track(rank, kind, name, threadId)
                      : sink.track(rank, TrackKind::Slices,
                                   name + " (overlap " + std::to_string(lane) + ")", 0);
        for (const size_t i : lanes[lane]) {
            ExportSlice slice = make(items[i].row);
            slice.startNs = items[i].startNs;
            slice.endNs = items[i].endNs;
            sink.slice(track, slice);
        }
        sink.endTrack(track);
    }
}

/// "GPU 3": how the names of a device's tracks start, inside its rank's process.
std::string gpuTrackPrefix(DeviceIndex device) {
    return "GPU " + std::to_string(trace::toInt(device));
}

std::string_view kinetoCategory(KernelCategory c) {
    switch (c) {
        case KernelCategory::Memcpy:
            return "gpu_memcpy";
        case KernelCategory::Memset:
            return "gpu_memset";
        case KernelCategory::Compute:
        case KernelCategory::Communication:
            return "kernel";
    }
    return "kernel";
}

/// A matched collective's part on one rank, with its place in the collective's flow.
struct CollectivePart {
    size_t collective = 0;
    size_t participant = 0;
    FlowStep step = FlowStep::None;
};

/// Per rank index, the collective parts it took (participants map back through collectiveRanks).
std::vector<std::vector<CollectivePart>> collectivesByRank(const JobModel& m) {
    std::vector<std::vector<CollectivePart>> out(m.ranks.size());
    std::vector<trace::RankId> given;
    for (const RankInfo& r : m.ranks) {
        given.push_back(r.rank);
    }
    std::unordered_map<int32_t, size_t> indexOf;
    const std::vector<trace::RankId> used = collectiveRanks(given);
    for (size_t i = 0; i < used.size(); ++i) {
        indexOf[trace::toInt(used[i])] = i;
    }
    const std::vector<MatchedCollective>& all = m.collectives().collectives;
    for (size_t c = 0; c < all.size(); ++c) {
        const std::vector<CollectiveParticipant>& ps = all[c].participants;
        std::vector<size_t> byArrival(ps.size());
        for (size_t p = 0; p < ps.size(); ++p) {
            byArrival[p] = p;
        }
        std::stable_sort(byArrival.begin(), byArrival.end(),
                         [&](size_t a, size_t b) { return ps[a].startNs < ps[b].startNs; });
        for (size_t k = 0; k < byArrival.size(); ++k) {
            const size_t p = byArrival[k];
            const auto it = indexOf.find(trace::toInt(ps[p].rank));
            if (it == indexOf.end()) {
                continue;
            }
            const FlowStep step = k == 0                      ? FlowStep::First
                                  : k + 1 == byArrival.size() ? FlowStep::Last
                                                              : FlowStep::Middle;
            out[it->second].push_back({c, p, step});
        }
    }
    return out;
}

void walkMemory(const JobModel& m, int r, ExportSink& sink) {
    for (const GpuSeries& g : m.gpus) {
        if (g.key.rankIndex != r) {
            continue;
        }
        for (const trace::MemoryLevel level :
             {trace::MemoryLevel::Allocated, trace::MemoryLevel::Reserved}) {
            const StepSeries& s =
                level == trace::MemoryLevel::Allocated ? g.allocated.series() : g.reserved.series();
            if (s.empty() || !sink.good()) {
                continue;
            }
            const uint64_t track =
                sink.track(r, TrackKind::Counter, memoryCounterName(g.key.device, level), 0);
            for (size_t i = 0; i < s.size(); ++i) {
                sink.counter(track, s.timeNs[i], s.bytes[i]);
            }
        }
        if (!g.ooms.empty()) {
            const uint64_t track = sink.track(r, TrackKind::Slices,
                                              gpuTrackPrefix(g.key.device) + " · out of memory", 0);
            for (const OomMark& o : g.ooms) {
                sink.instant(track, o.timeNs, "out of memory", "oom",
                             {ExportArg::ofUint("requested_bytes", o.requestedBytes)});
            }
        }
    }
}

void walkKernels(const JobModel& m, int r, ExportSink& sink) {
    const TraceData& d = m.job.ranks[static_cast<size_t>(r)].trace.data;
    std::map<std::pair<int32_t, uint64_t>, std::vector<Interval>> byStream;
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        const int64_t start = m.toJob(r, d.kernels.startNs[i]);
        // A kernel ending before it starts (a producer's error) is kept as a zero-length slice.
        const int64_t end = std::max(m.toJob(r, d.kernels.endNs[i]), start);
        byStream[{trace::toInt(d.kernels.device[i]), d.kernels.stream[i]}].push_back(
            {start, end, i});
    }
    for (auto& [key, items] : byStream) {
        const std::string name =
            gpuTrackPrefix(DeviceIndex{key.first}) + " · stream " + std::to_string(key.second);
        emitSlices(sink, r, TrackKind::Slices, name, 0, std::move(items), [&](size_t i) {
            ExportSlice s;
            s.name = d.string(d.kernels.name[i]);
            s.category = kinetoCategory(d.kernels.category[i]);
            s.args = {ExportArg::ofInt("device", trace::toInt(d.kernels.device[i])),
                      ExportArg::ofUint("stream", d.kernels.stream[i])};
            if (d.kernels.category[i] == KernelCategory::Communication) {
                s.args.push_back(ExportArg::ofString("kind", "communication"));
            }
            if (d.kernels.correlationId[i] != 0) {
                s.args.push_back(ExportArg::ofUint("correlation", d.kernels.correlationId[i]));
            }
            if (d.kernels.bytes[i] != 0) {
                s.args.push_back(ExportArg::ofUint("bytes", d.kernels.bytes[i]));
            }
            return s;
        });
    }
}

void walkRanges(const JobModel& m, int r, ExportSink& sink) {
    const TraceData& d = m.job.ranks[static_cast<size_t>(r)].trace.data;
    std::map<uint64_t, std::vector<Interval>> byThread;
    std::map<int32_t, std::vector<Interval>> byDevice;
    for (size_t i = 0; i < d.ranges.size(); ++i) {
        const int64_t start = m.toJob(r, d.ranges.startNs[i]);
        const Interval iv{start, std::max(m.toJob(r, d.ranges.endNs[i]), start), i};
        if (d.ranges.device[i] == trace::kHostDevice) {
            byThread[d.ranges.threadId[i]].push_back(iv);
        } else {
            byDevice[trace::toInt(d.ranges.device[i])].push_back(iv);
        }
    }
    const auto make = [&](size_t i) {
        ExportSlice s;
        s.name = d.string(d.ranges.name[i]);
        const RangeKind kind = d.ranges.kind[i];
        // Kineto's categories, so that a Chrome export reads back with its ranges and steps.
        s.category = kind == RangeKind::GpuAnnotation ? "gpu_user_annotation" : "user_annotation";
        s.args = {ExportArg::ofString("kind", trace::toString(kind))};
        if (kind == RangeKind::GpuAnnotation) {
            s.args.push_back(ExportArg::ofInt("device", trace::toInt(d.ranges.device[i])));
        }
        return s;
    };
    for (auto& [thread, items] : byThread) {
        // Thread 0 is "unknown" (a snapshot's annotations): a track of the rank, not a thread.
        if (thread == 0) {
            emitSlices(sink, r, TrackKind::Slices, "ranges (thread unknown)", 0, std::move(items),
                       make);
        } else {
            emitSlices(sink, r, TrackKind::HostThread, "thread " + std::to_string(thread), thread,
                       std::move(items), make);
        }
    }
    for (auto& [device, items] : byDevice) {
        emitSlices(sink, r, TrackKind::Slices,
                   gpuTrackPrefix(DeviceIndex{device}) + " · annotations", 0, std::move(items),
                   make);
    }
}

/// The analyses of one GPU: iterations not taken from ranges (those are on the thread tracks
/// already), then the idle gaps.
void walkDeviceAnalysis(const JobModel& m, int r, const DeviceAnalysis& a, ExportSink& sink) {
    const IterationSet& its = a.iterations;
    if (its.source != IterationSource::None && its.source != IterationSource::Ranges) {
        std::vector<Interval> items;
        for (size_t i = 0; i < its.iterations.size(); ++i) {
            const int64_t start = m.toJob(r, its.iterations[i].startNs);
            items.push_back({start, std::max(m.toJob(r, its.iterations[i].endNs), start), i});
        }
        emitSlices(sink, r, TrackKind::Slices,
                   gpuTrackPrefix(a.device) + " · iterations (" + toString(its.source) + ")", 0,
                   std::move(items), [&](size_t i) {
                       ExportSlice s;
                       s.name = its.iterations[i].name;
                       s.category = "iteration";
                       s.args = {ExportArg::ofInt("number", its.iterations[i].number)};
                       return s;
                   });
    }
    if (!a.breakdown) {
        return;
    }
    const std::vector<IdleGap>& gaps = a.breakdown->gaps;
    std::vector<std::string> names(gaps.size());
    std::vector<Interval> items;
    for (size_t i = 0; i < gaps.size(); ++i) {
        const int64_t start = m.toJob(r, gaps[i].startNs);
        items.push_back({start, start + gaps[i].durationNs, i});
        names[i] = std::string("idle: ") + toString(gaps[i].cause);
    }
    emitSlices(
        sink, r, TrackKind::Slices, gpuTrackPrefix(a.device) + " · idle gaps", 0, std::move(items),
        [&](size_t i) {
            ExportSlice s;
            s.name = names[i];
            s.category = "idle_gap";
            s.args = {ExportArg::ofString("cause", toString(gaps[i].cause))};
            if (i < a.gapKernelNames.size()) {
                s.args.push_back(ExportArg::ofString("kernel_before", a.gapKernelNames[i].first));
                s.args.push_back(ExportArg::ofString("kernel_after", a.gapKernelNames[i].second));
            }
            return s;
        });
}

void walkCollectives(const JobModel& m, int r, const std::vector<CollectivePart>& parts,
                     ExportSink& sink) {
    const std::vector<MatchedCollective>& all = m.collectives().collectives;
    std::map<int32_t, std::vector<Interval>> byDevice;
    for (size_t i = 0; i < parts.size(); ++i) {
        const CollectiveParticipant& p =
            all[parts[i].collective].participants[parts[i].participant];
        byDevice[trace::toInt(p.device)].push_back({p.startNs, std::max(p.endNs, p.startNs), i});
    }
    for (auto& [device, items] : byDevice) {
        emitSlices(sink, r, TrackKind::Slices,
                   gpuTrackPrefix(DeviceIndex{device}) + " · collectives", 0, std::move(items),
                   [&](size_t i) {
                       const MatchedCollective& c = all[parts[i].collective];
                       const CollectiveParticipant& p = c.participants[parts[i].participant];
                       ExportSlice s;
                       s.name = c.function;
                       s.category = "collective";
                       s.args = {ExportArg::ofInt("seq", c.seqNumber),
                                 ExportArg::ofUint("ranks", c.participants.size()),
                                 ExportArg::ofInt("wait_ns", p.waitNs)};
                       if (c.bytes != 0) {
                           s.args.push_back(ExportArg::ofUint("bytes", c.bytes));
                       }
                       if (c.communicatorHash != 0) {
                           s.args.push_back(ExportArg::ofUint("communicator", c.communicatorHash));
                       }
                       s.flowId = parts[i].collective + 1;
                       s.flowStep = parts[i].step;
                       return s;
                   });
    }
}

/// Notes of the rank's trace (its annotations). A job's notes sidecar (docs/DESIGN.md "Notes and
/// review exports") is not read here: `convert` carries it into a trace's annotations;
/// to export a sidecar directly, add its notes to `items` here, so that both exports carry them
/// on the same track.
void walkNotes(const JobModel& m, int r, ExportSink& sink) {
    const TraceData& d = m.job.ranks[static_cast<size_t>(r)].trace.data;
    std::vector<Interval> items;
    for (size_t i = 0; i < d.annotations.size(); ++i) {
        const int64_t start = m.toJob(r, d.annotations[i].startNs);
        items.push_back({start, std::max(m.toJob(r, d.annotations[i].endNs), start), i});
    }
    emitSlices(sink, r, TrackKind::Slices, "notes", 0, std::move(items), [&](size_t i) {
        const trace::Annotation& a = d.annotations[i];
        ExportSlice s;
        s.name = a.text.empty() ? std::string_view("note") : std::string_view(a.text);
        s.category = "note";
        if (!a.author.empty()) {
            s.args.push_back(ExportArg::ofString("author", a.author));
        }
        if (a.device != trace::kHostDevice) {
            s.args.push_back(ExportArg::ofInt("device", trace::toInt(a.device)));
        }
        return s;
    });
}

}  // namespace

std::string memoryCounterName(DeviceIndex device, trace::MemoryLevel level) {
    return gpuTrackPrefix(device) +
           (level == trace::MemoryLevel::Allocated ? " allocated" : " reserved");
}

void walkJob(const JobModel& model, ExportSink& sink) {
    const std::vector<std::vector<CollectivePart>> parts = collectivesByRank(model);
    for (size_t i = 0; i < model.ranks.size() && sink.good(); ++i) {
        const int r = static_cast<int>(i);
        const RankInfo& info = model.ranks[i];
        sink.process(r, rankLabel(info.rank) + " · " +
                            (info.host.empty() ? std::string("host unknown") : info.host));
        walkMemory(model, r, sink);
        walkKernels(model, r, sink);
        walkRanges(model, r, sink);
        for (const DeviceAnalysis& a : model.analysis.devices) {
            if (a.input == i && sink.good()) {
                walkDeviceAnalysis(model, r, a, sink);
            }
        }
        walkCollectives(model, r, parts[i], sink);
        walkNotes(model, r, sink);
    }
}

}  // namespace vramscope::analysis::exporting
