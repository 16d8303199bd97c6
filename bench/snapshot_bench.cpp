// snapshot_bench: speed of the PyTorch memory snapshot import (pickle parse, then mapping) on real
// snapshots, with the figures a reader wants beside it (entries, devices, peaks, memory that was
// alive before recording began).
//
// Usage: snapshot_bench [FILE...]   (default: the five snapshots in ../shared/realdata)
// .gz files are gunzipped first (not timed). Times are CPU time of this single-threaded process,
// best of 20 runs.

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "vramscope/trace/importers.h"
#include "vramscope/trace/pickle_reader.h"

namespace vt = vramscope::trace;

namespace {

double cpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string gunzip(const std::string& in) {
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        return {};
    }
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = uInt(in.size());
    std::string out;
    std::vector<char> buf(1 << 16);
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf.data());
        z.avail_out = uInt(buf.size());
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf.data(), buf.size() - z.avail_out);
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : std::string();
}

template <class F>
double bestOf(int runs, F&& f) {
    double best = 1e30;
    for (int i = 0; i < runs; ++i) {
        const double t0 = cpuSeconds();
        f();
        best = std::min(best, cpuSeconds() - t0);
    }
    return best;
}

void benchOne(const std::string& path) {
    std::string bytes = readFile(path);
    if (bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b) {
        bytes = gunzip(bytes);
    }
    auto doc = vt::parsePickle(bytes, path);
    auto imported = vt::importPytorchSnapshot(bytes, path);
    if (!doc.ok() || !imported.ok()) {
        std::printf("%s: %s\n", path.c_str(),
                    (doc.ok() ? imported.error() : doc.error()).describe().c_str());
        return;
    }
    size_t entries = 0;
    for (const vt::PickleNodeId t : doc->items(doc->get(doc->root(), "device_traces"))) {
        entries += doc->items(t).size();
    }
    const double parseS = bestOf(20, [&] { (void)vt::parsePickle(bytes, path).ok(); });
    const double importS = bestOf(20, [&] { (void)vt::importPytorchSnapshot(bytes, path).ok(); });

    const vt::TraceData& d = imported->data;
    struct Sums {
        int64_t alloc = 0, res = 0, peakAlloc = 0, peakRes = 0;
        size_t preBlocks = 0, preSegments = 0;
    };
    std::map<vt::DeviceIndex, Sums> sums;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        const vt::MemoryEvent e = d.memory.at(i);
        Sums& s = sums[e.device];
        const int64_t delta =
            e.action == vt::MemoryAction::Alloc ? int64_t(e.sizeBytes) : -int64_t(e.sizeBytes);
        const bool allocated = e.level == vt::MemoryLevel::Allocated;
        (allocated ? s.alloc : s.res) += delta;
        s.peakAlloc = std::max(s.peakAlloc, s.alloc);
        s.peakRes = std::max(s.peakRes, s.res);
        if (e.kind == vt::MemoryKind::PreExisting) {
            ++(allocated ? s.preBlocks : s.preSegments);
        }
    }
    std::printf(
        "%s\n  %.2f MB pickle, %zu pickle values, %zu trace entries, %zu devices, "
        "%zu memory events, %zu stacks, %zu OOMs, %zu ranges\n"
        "  parse %.2f ms (%.0f MB/s), whole import %.2f ms (%.0f MB/s)\n",
        path.c_str(), double(bytes.size()) / 1e6, doc->nodeCount(), entries,
        d.header.devices.size(), d.memory.size(), d.stacks.size(), d.ooms.size(), d.ranges.size(),
        parseS * 1e3, double(bytes.size()) / 1e6 / parseS, importS * 1e3,
        double(bytes.size()) / 1e6 / importS);
    for (const auto& [device, s] : sums) {
        std::printf(
            "  device %d: peak allocated %lld B (%.2f GiB), peak reserved %lld B "
            "(%.2f GiB); alive before recording: %zu blocks, %zu segment ranges\n",
            toInt(device), (long long)s.peakAlloc, double(s.peakAlloc) / (1ull << 30),
            (long long)s.peakRes, double(s.peakRes) / (1ull << 30), s.preBlocks, s.preSegments);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> files(argv + 1, argv + argc);
    if (files.empty()) {
        const std::string dir = VRAMSCOPE_BENCH_REALDATA_DIR;
        files = {dir + "/silmont2000_assignment2-systems/mem_snapshot.pickle",
                 dir + "/MAGMA27_assignment2-systems/memory_snapshot.pickle",
                 dir + "/ZidongLiu_DeComFL/memory.pickle",
                 dir + "/vramscope_h200/gpt_h200_leak.snapshot.pickle.gz",
                 dir + "/vramscope_h200/gpt_h200_oom.snapshot.pickle.gz"};
    }
    for (const std::string& f : files) {
        benchOne(f);
    }
    return 0;
}
