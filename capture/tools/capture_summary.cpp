// vramscope-capture-summary FILE.vscope...: what a capture recorded, as one JSON object per file
// (a JSON array for several files). A check tool for GPU machines and scripts: it depends on the
// .vscope reader only, not on the analysis library, and computes its figures directly:
//   peak_reserved_bytes / peak_allocated_bytes: the largest running sum, over the device's memory
//   events in time order, of alloc sizes minus freed sizes at that level (a free subtracts the size
//   its address was allocated with), device-static memory (module globals) left out as the
//   viewer's timelines leave it out; device_static_bytes: the module globals on their own;
//   iterations: NVTX ranges named "iteration N", with the live bytes on the first device
//   at each one's end (events at the end time included); header.capture_settings: the agent's
//   capture settings (flush period, CUPTI version, allocator settings) as strings.

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "vramscope/trace/trace_file.h"

using namespace vramscope::trace;

namespace {

std::string quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

struct Level {
    int64_t live = 0;
    int64_t peak = 0;
};

struct DeviceMemory {
    Level reserved;
    Level allocated;
    int64_t deviceStatic = 0;
    uint64_t events = 0;
    std::map<uint64_t, uint64_t> reservedSize;  // address -> bytes
    std::map<uint64_t, uint64_t> allocatedSize;

    void apply(const MemoryEvent& e) {
        ++events;
        const bool reservedLevel = e.level == MemoryLevel::Reserved;
        Level& level = reservedLevel ? reserved : allocated;
        auto& sizes = reservedLevel ? reservedSize : allocatedSize;
        if (e.kind == MemoryKind::DeviceStatic) {
            // Module globals: reported on their own, not in the peaks (as in the viewer's
            // timelines and PyTorch's max_memory_reserved).
            if (e.action == MemoryAction::Alloc) {
                deviceStatic += static_cast<int64_t>(e.sizeBytes);
            }
            return;
        }
        if (e.action == MemoryAction::Alloc) {
            sizes[e.address] = e.sizeBytes;
            level.live += static_cast<int64_t>(e.sizeBytes);
            level.peak = std::max(level.peak, level.live);
            return;
        }
        auto it = sizes.find(e.address);
        const uint64_t bytes = it != sizes.end() ? it->second : e.sizeBytes;
        if (it != sizes.end()) {
            sizes.erase(it);
        }
        level.live -= static_cast<int64_t>(bytes);
    }
};

struct Iteration {
    int64_t index = 0;
    TimestampNs startNs = 0;
    TimestampNs endNs = 0;
    int64_t reservedAtEnd = 0;
    int64_t allocatedAtEnd = 0;
};

bool iterationIndex(std::string_view name, int64_t& index) {
    constexpr std::string_view kPrefix = "iteration ";
    if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size()) {
        return false;
    }
    int64_t v = 0;
    for (char c : name.substr(kPrefix.size())) {
        if (c < '0' || c > '9') {
            return false;
        }
        v = v * 10 + (c - '0');
    }
    index = v;
    return true;
}

/// One file as a JSON object; `ok` is false when the file could not be read at all.
std::string summarize(const std::string& path, bool& ok) {
    ok = false;
    Result<LoadedTrace> loaded = readTraceFile(path);
    if (!loaded.ok()) {
        return "{\"file\":" + quote(path) + ",\"error\":" + quote(loaded.error().describe()) + "}";
    }
    ok = true;
    const TraceData& d = loaded->data;
    const ReadReport& report = loaded->report;

    std::vector<size_t> order(d.memory.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return d.memory.timestampNs[a] < d.memory.timestampNs[b];
    });

    std::vector<Iteration> iterations;
    uint32_t maxDepth = 0;
    TimestampNs lastNs = 0;
    for (size_t i = 0; i < d.ranges.size(); ++i) {
        const RangeEvent r = d.ranges.at(i);
        maxDepth = std::max(maxDepth, r.depth);
        lastNs = std::max(lastNs, r.endNs);
        Iteration it;
        if (iterationIndex(d.string(r.name), it.index)) {
            it.startNs = r.startNs;
            it.endNs = r.endNs;
            iterations.push_back(it);
        }
    }
    std::sort(iterations.begin(), iterations.end(),
              [](const Iteration& a, const Iteration& b) { return a.endNs < b.endNs; });

    std::map<DeviceIndex, DeviceMemory> devices;
    size_t nextIteration = 0;
    DeviceIndex firstDevice =
        d.header.devices.empty() ? DeviceIndex{0} : d.header.devices.front().index;
    for (size_t k = 0; k <= order.size(); ++k) {
        const TimestampNs t = k < order.size() ? d.memory.timestampNs[order[k]] : INT64_MAX;
        while (nextIteration < iterations.size() && iterations[nextIteration].endNs < t) {
            const DeviceMemory& m = devices[firstDevice];
            iterations[nextIteration].reservedAtEnd = m.reserved.live;
            iterations[nextIteration].allocatedAtEnd = m.allocated.live;
            ++nextIteration;
        }
        if (k == order.size()) {
            break;
        }
        const MemoryEvent e = d.memory.at(order[k]);
        lastNs = std::max(lastNs, e.timestampNs);
        if (e.device != kHostDevice) {
            devices[e.device].apply(e);
        }
    }

    uint64_t communication = 0, memcpys = 0, memsets = 0;
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        lastNs = std::max(lastNs, d.kernels.endNs[i]);
        switch (d.kernels.category[i]) {
            case KernelCategory::Communication:
                ++communication;
                break;
            case KernelCategory::Memcpy:
                ++memcpys;
                break;
            case KernelCategory::Memset:
                ++memsets;
                break;
            default:
                break;
        }
    }

    std::string o = "{\"file\":" + quote(path);
    o += ",\"complete\":" + std::string(report.complete ? "true" : "false");
    o += ",\"frames_loaded\":" + std::to_string(report.framesLoaded);
    o += ",\"read_summary\":" + quote(report.summary());
    const FileHeader& h = d.header;
    o += ",\"header\":{\"producer\":" + quote(h.producer) + ",\"host\":" + quote(h.host) +
         ",\"pid\":" + std::to_string(h.pid) + ",\"rank\":" + std::to_string(toInt(h.rank)) +
         ",\"local_rank\":" + std::to_string(toInt(h.localRank)) +
         ",\"world_size\":" + std::to_string(h.worldSize) + ",\"job\":" + quote(h.jobId) +
         ",\"clock_domain\":" + quote(h.clockDomain) +
         ",\"wall_clock_anchor_ns\":" + std::to_string(h.wallClockAnchorNs) +
         ",\"anchor_trace_ns\":" + std::to_string(h.anchorTraceNs) + ",\"capture_settings\":{";
    for (size_t i = 0; i < h.captureSettings.size(); ++i) {
        o += (i ? "," : "") + quote(h.captureSettings[i].first) + ":" +
             quote(h.captureSettings[i].second);
    }
    o += "}}";
    o += ",\"devices\":[";
    bool first = true;
    auto emitDevice = [&](DeviceIndex index, const DeviceInfo* info, const DeviceMemory& m) {
        o += first ? "" : ",";
        first = false;
        o += "{\"index\":" + std::to_string(toInt(index));
        if (info != nullptr) {
            o += ",\"name\":" + quote(info->name) + ",\"uuid\":" + quote(info->uuid) +
                 ",\"total_memory_bytes\":" + std::to_string(info->totalMemoryBytes);
        }
        o += ",\"memory_events\":" + std::to_string(m.events) +
             ",\"peak_reserved_bytes\":" + std::to_string(m.reserved.peak) +
             ",\"peak_allocated_bytes\":" + std::to_string(m.allocated.peak) +
             ",\"device_static_bytes\":" + std::to_string(m.deviceStatic) + "}";
    };
    for (const DeviceInfo& info : h.devices) {
        auto it = devices.find(info.index);
        emitDevice(info.index, &info, it != devices.end() ? it->second : DeviceMemory{});
    }
    for (const auto& [index, m] : devices) {
        if (d.device(index) == nullptr) {
            emitDevice(index, nullptr, m);
        }
    }
    o += "],\"kernels\":" + std::to_string(d.kernels.size()) +
         ",\"communication_kernels\":" + std::to_string(communication) +
         ",\"memcpys\":" + std::to_string(memcpys) + ",\"memsets\":" + std::to_string(memsets) +
         ",\"memory_events\":" + std::to_string(d.memory.size()) +
         ",\"ranges\":" + std::to_string(d.ranges.size()) +
         ",\"max_range_depth\":" + std::to_string(maxDepth) +
         ",\"last_event_ns\":" + std::to_string(lastNs);
    o += ",\"iterations\":[";
    for (size_t i = 0; i < iterations.size(); ++i) {
        const Iteration& it = iterations[i];
        o += (i ? "," : "") + std::string("{\"index\":") + std::to_string(it.index) +
             ",\"start_ns\":" + std::to_string(it.startNs) +
             ",\"end_ns\":" + std::to_string(it.endNs) +
             ",\"reserved_at_end\":" + std::to_string(it.reservedAtEnd) +
             ",\"allocated_at_end\":" + std::to_string(it.allocatedAtEnd) + "}";
    }
    o += "],\"ooms\":[";
    for (size_t i = 0; i < d.ooms.size(); ++i) {
        const OomEvent& e = d.ooms[i];
        o += (i ? "," : "") + std::string("{\"timestamp_ns\":") + std::to_string(e.timestampNs) +
             ",\"device\":" + std::to_string(toInt(e.device)) +
             ",\"stream\":" + std::to_string(e.stream) +
             ",\"requested_bytes\":" + std::to_string(e.requestedBytes) +
             ",\"free_bytes\":" + std::to_string(e.freeBytes) + "}";
    }
    // NCCL: what the profiler plugin recorded (communicators need format 1.2 files).
    o += "],\"collectives\":" + std::to_string(d.collectives.size()) + ",\"communicators\":[";
    for (size_t i = 0; i < d.communicators.size(); ++i) {
        const Communicator& c = d.communicators[i];
        o += (i ? "," : "") + std::string("{\"hash\":") + std::to_string(c.hash) +
             ",\"rank\":" + std::to_string(toInt(c.rank)) +
             ",\"nranks\":" + std::to_string(c.nranks) + ",\"nodes\":" + std::to_string(c.nodes) +
             ",\"name\":" + quote(c.name) + ",\"device\":" + std::to_string(toInt(c.device)) +
             ",\"init_ns\":" + std::to_string(c.initNs) + "}";
    }
    uint64_t lost = 0;
    o += "],\"data_loss\":[";
    for (size_t i = 0; i < d.dataLoss.size(); ++i) {
        const DataLoss& l = d.dataLoss[i];
        lost += l.count;
        const LossCounterInfo& c = lossCounterInfo(l.counter);
        o += (i ? "," : "") + std::string("{\"name\":") + quote(c.name) +
             ",\"kind\":" + quote(toString(c.severity)) + ",\"count\":" + std::to_string(l.count) +
             ",\"description\":" + quote(c.description) + ",\"reason\":" + quote(l.reason) + "}";
    }
    o += "],\"data_loss_count\":" + std::to_string(lost) + "}";
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: vramscope-capture-summary FILE.vscope...\n");
        return 2;
    }
    int failures = 0;
    std::string out = argc > 2 ? "[" : "";
    for (int i = 1; i < argc; ++i) {
        bool ok = false;
        const std::string one = summarize(argv[i], ok);
        failures += ok ? 0 : 1;
        out += (i > 1 ? "," : "") + one;
    }
    out += argc > 2 ? "]" : "";
    std::puts(out.c_str());
    return failures > 0 ? 1 : 0;
}
