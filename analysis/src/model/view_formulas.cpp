#include "vramscope/analysis/model/view_formulas.h"

#include <algorithm>

#include "vramscope/analysis/memory/memory_summary.h"
#include "vramscope/analysis/model/job_model.h"

namespace vramscope::analysis {

namespace {

// The sentences restate the definitions documented next to the code that computes them
// (memory_timeline.h, memory_summary.h, time_breakdown.h, leak.h, advice.h, segments.h,
// collectives.h) and docs/DESIGN.md "Metric definitions"; change them together.
const char* const kBytes = "Sizes in binary units: 1 GiB = 2^30 bytes.";
const char* const kAllocated =
    "allocated = sum of the sizes of live allocations (tensors, cudaMallocAsync blocks) at each "
    "time; the producer's own totals when it records them (Kineto \"Total Allocated\").";
const char* const kReserved =
    "reserved = sum of the sizes of live segments the driver handed out (cudaMalloc, PyTorch "
    "segment_alloc): what an OOM is about and what nvidia-smi shows.";
std::string shareSentence() {
    return "share of capacity = max(peak reserved, peak allocated) / device total memory (trace "
           "header); the dashed line is " +
           std::to_string(int(kCapacityWarningShare * 100 + 0.5)) +
           " % of capacity, the rule of thumb for headroom (vramscope's docs/DESIGN.md, \"The 80 % "
           "capacity rule\").";
}

}  // namespace

const std::vector<std::string_view>& exportableViews() {
    static const std::vector<std::string_view> views = {"timeline", "roles", "lanes",  "flame",
                                                        "gaps",     "leak",  "advice", "segments"};
    return views;
}

bool isExportableView(std::string_view view) {
    const auto& views = exportableViews();
    return std::find(views.begin(), views.end(), view) != views.end();
}

std::string viewTitle(std::string_view view) {
    if (view == "timeline")
        return "Memory timeline";
    if (view == "roles")
        return "Memory by role";
    if (view == "lanes")
        return "Communication lanes";
    if (view == "flame")
        return "Allocation flame view";
    if (view == "gaps")
        return "Idle gaps";
    if (view == "leak")
        return "Leak check";
    if (view == "advice")
        return "Advice and cost";
    if (view == "segments")
        return "Reserved segments";
    return {};
}

std::vector<std::string> viewFormulas(std::string_view view) {
    if (view == "timeline")
        return {kAllocated, kReserved, shareSentence(), kBytes};
    if (view == "roles")
        return {kAllocated,
                "Each allocation's role (parameters, gradients, optimizer state, activations, "
                "temporaries, inputs, unknown) comes from its lifetime and the phase it was "
                "allocated and freed in (NVTX ranges, else stack frames, else iterations); "
                "missing evidence gives unknown. Layers are stacked: their sum is allocated.",
                shareSentence(), kBytes};
    if (view == "lanes")
        return {
            "idle = span from the first to the last kernel on a GPU minus the union of all "
            "its kernel intervals.",
            "overlap = |union of communication kernels intersect union of compute kernels|; "
            "exposed communication = communication - overlap; overlap % = overlap / "
            "communication.",
            "busBw = algBw x 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter "
            "and all-to-all, 1 for broadcast and reduce, with algBw = bytes / time and n "
            "ranks (nccl-tests, doc/PERFORMANCE.md).",
            "A collective's wait = last arrival - this rank's arrival, ranks joined on "
            "(communicator, function, sequence number)."};
    if (view == "flame")
        return {
            "A frame's width = the bytes of the allocations alive at the cursor whose call "
            "stack passes through it (the live set); the root is allocated at that time.",
            kBytes};
    if (view == "gaps")
        return {
            "A gap = time between two kernels on a GPU with no kernel running; it is classified "
            "by what ends it: a communication kernel (waiting on a collective or a straggler), "
            "a late launch from the host (host-bound), or other.",
            "idle = span from the first to the last kernel minus the union of all kernel "
            "intervals."};
    if (view == "leak")
        return {"Per iteration: baseline = lowest and peak = highest memory in the iteration.",
                "slope = Theil-Sen median of pairwise baseline slopes; growth = slope x "
                "(iterations - 1); noise = 1.4826 x MAD of the residuals. Staircase (a leak) "
                "when growth is above the noise and rises in most iterations; sawtooth when it "
                "is not.",
                "iterations to OOM = (capacity - last iteration's peak) / growth per iteration.",
                "Survivors: allocations of iteration k still alive at the end of iteration k+2 "
                "(the first iteration is warm-up), grouped by stack and size."};
    if (view == "advice")
        return {
            "GPU-hours = GPUs x step time [h] x steps; cost = GPU-hours x price per "
            "GPU-hour; idle cost = cost x (sum of idle / sum of span).",
            "idle = span from the first to the last kernel minus the union of all kernel "
            "intervals.",
            shareSentence()};
    if (view == "segments")
        return {"A segment's free space = its size - the sizes of the live blocks inside it.",
                "fragmentation = 1 - largest free block / all free space inside the segments "
                "(0: one free block; near 1: scattered in small pieces).",
                kReserved, kBytes};
    return {};
}

std::string viewEmptyReason(const JobModel& job, std::string_view view) {
    const bool memory = std::any_of(job.gpus.begin(), job.gpus.end(),
                                    [](const GpuSeries& g) { return g.memory.hasData(); });
    const bool liveSet = std::any_of(job.memory.begin(), job.memory.end(),
                                     [](const GpuMemoryAnalysis& g) { return g.liveSet.known; });
    const bool segments = std::any_of(
        job.memory.begin(), job.memory.end(),
        [](const GpuMemoryAnalysis& g) { return g.device != nullptr && g.device->segments; });
    const bool roles = std::any_of(
        job.memory.begin(), job.memory.end(),
        [](const GpuMemoryAnalysis& g) { return g.device != nullptr && g.device->roles; });
    if (view == "timeline" || view == "leak")
        return memory ? "" : "no memory events or counters were recorded";
    if (view == "roles") {
        if (!memory)
            return "no memory events or counters were recorded";
        return roles ? "" : "no allocation events to give roles to";
    }
    if (view == "lanes" || view == "gaps")
        return job.kernels.empty() ? "no kernels were recorded" : "";
    if (view == "flame") {
        if (job.memory.empty())
            return "no allocation events were recorded";
        return liveSet ? "" : "the allocations alive at a time cannot be rebuilt (no addresses)";
    }
    if (view == "segments")
        return segments ? "" : "no reserved segments together with allocator blocks were recorded";
    if (view == "advice")
        return "";
    return "unknown view";
}

}  // namespace vramscope::analysis
