// The PyTorch memory snapshot importer: hand-built snapshots with known answers, and the real
// snapshots in realdata checked against tests/tools/snapshot_replay.py, an independent replay
// written in Python.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gz_file.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "refusal.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/open_trace.h"

using namespace std::string_literals;

namespace vramscope::trace {
namespace {
using ::vramscope::test::refused;

// --- A tiny pickle writer (protocol 2 opcodes, after CPython's pickletools) for test inputs.

struct Py {
    enum class K { None, Bool, Int, Str, List, Dict } k = K::None;
    int64_t i = 0;
    std::string s;
    std::vector<Py> list;
    std::vector<std::pair<std::string, Py>> dict;

    Py() = default;
    Py(int64_t v) : k(K::Int), i(v) {}
    Py(int v) : k(K::Int), i(v) {}
    Py(uint64_t v) : k(K::Int), i(int64_t(v)) {}
    Py(const char* v) : k(K::Str), s(v) {}
    Py(std::string v) : k(K::Str), s(std::move(v)) {}
    static Py boolean(bool b) {
        Py p;
        p.k = K::Bool;
        p.i = b;
        return p;
    }
};

Py list(std::vector<Py> items) {
    Py p;
    p.k = Py::K::List;
    p.list = std::move(items);
    return p;
}

Py dict(std::vector<std::pair<std::string, Py>> items) {
    Py p;
    p.k = Py::K::Dict;
    p.dict = std::move(items);
    return p;
}

void writeLe(std::string& out, uint64_t v, int n) {
    for (int b = 0; b < n; ++b) {
        out += char((v >> (8 * b)) & 0xff);
    }
}

void writeStr(std::string& out, const std::string& s) {
    out += 'X';
    writeLe(out, s.size(), 4);
    out += s;
}

void write(std::string& out, const Py& v) {
    switch (v.k) {
        case Py::K::None:
            out += 'N';
            break;
        case Py::K::Bool:
            out += v.i ? '\x88' : '\x89';
            break;
        case Py::K::Int:
            if (v.i >= INT32_MIN && v.i <= INT32_MAX) {
                out += 'J';
                writeLe(out, uint64_t(v.i), 4);
            } else {
                out += "\x8a\x08";  // LONG1, 8 bytes, two's complement
                writeLe(out, uint64_t(v.i), 8);
            }
            break;
        case Py::K::Str:
            writeStr(out, v.s);
            break;
        case Py::K::List:
            out += "](";
            for (const Py& item : v.list) {
                write(out, item);
            }
            out += 'e';
            break;
        case Py::K::Dict:
            out += "}(";
            for (const auto& [key, value] : v.dict) {
                writeStr(out, key);
                write(out, value);
            }
            out += 'u';
            break;
    }
}

std::string toPickle(const Py& v) {
    std::string out = "\x80\x02";
    write(out, v);
    out += '.';
    return out;
}

Py frame(const char* name, const char* file, int line) {
    return dict({{"name", name}, {"filename", file}, {"line", line}});
}

Py entry(const char* action, uint64_t addr, uint64_t size, int64_t timeUs,
         std::vector<Py> frames = {}) {
    return dict({{"action", action},
                 {"addr", addr},
                 {"size", size},
                 {"stream", 7},
                 {"time_us", timeUs},
                 {"frames", list(std::move(frames))}});
}

Py block(uint64_t address, uint64_t size, uint64_t requested, const char* state,
         std::vector<Py> frames = {}) {
    return dict({{"address", address},
                 {"size", size},
                 {"requested_size", requested},
                 {"state", state},
                 {"frames", list(std::move(frames))}});
}

Py segment(int device, uint64_t address, uint64_t total, std::vector<Py> blocks) {
    return dict({{"device", device},
                 {"address", address},
                 {"total_size", total},
                 {"stream", 0},
                 {"is_expandable", Py::boolean(false)},
                 {"blocks", list(std::move(blocks))}});
}

LoadedTrace importSnapshotOk(const Py& snapshot) {
    auto r = importPytorchSnapshot(toPickle(snapshot), "test.pickle");
    EXPECT_TRUE(r.ok()) << r.error().describe();
    return r.ok() ? std::move(r).value() : LoadedTrace{};
}

struct Levels {
    int64_t allocated = 0;
    int64_t reserved = 0;
    int64_t peakAllocated = 0;
    int64_t peakReserved = 0;
    int64_t minAllocated = 0;
    int64_t minReserved = 0;
};

// Running sums over the imported events in their order, per device.
std::map<DeviceIndex, Levels> runningSums(const TraceData& d) {
    std::map<DeviceIndex, Levels> out;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        const MemoryEvent e = d.memory.at(i);
        Levels& l = out[e.device];
        const int64_t delta =
            e.action == MemoryAction::Alloc ? int64_t(e.sizeBytes) : -int64_t(e.sizeBytes);
        if (e.level == MemoryLevel::Allocated) {
            l.allocated += delta;
            l.peakAllocated = std::max(l.peakAllocated, l.allocated);
            l.minAllocated = std::min(l.minAllocated, l.allocated);
        } else {
            l.reserved += delta;
            l.peakReserved = std::max(l.peakReserved, l.reserved);
            l.minReserved = std::min(l.minReserved, l.reserved);
        }
    }
    return out;
}

std::vector<std::string> stackNames(const TraceData& d, StackId s) {
    std::vector<std::string> names;
    for (const FrameId f : d.stacks[toInt(s)]) {
        names.emplace_back(d.string(d.frames[toInt(f)].name));
    }
    return names;
}

// --- Hand-built snapshots

TEST(SnapshotImporter, RefusesAPickleThatWouldRunAShellCommand) {
    const std::filesystem::path marker =
        std::filesystem::path(::testing::TempDir()) / "vramscope_snapshot_marker";
    std::filesystem::remove(marker);
    std::string cmd = "touch " + marker.string();
    std::string bytes =
        "\x80\x02"
        "cos\nsystem\n"s +
        "X";
    writeLe(bytes, cmd.size(), 4);
    bytes += cmd + "\x85R.";
    auto r = importPytorchSnapshot(bytes, "evil.pickle");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().file, "evil.pickle");
    EXPECT_EQ(r.error().byteOffset, 2);
    EXPECT_NE(r.error().message.find("GLOBAL"), std::string::npos) << r.error().message;
    EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(SnapshotImporter, MapsTraceEntriesToEventsWhenTheTraceCoversEverything) {
    const Py fwd = frame("forward", "model.py", 12);
    const Py main = frame("<module>", "train.py", 3);
    const Py snap = dict({
        {"segments", list({segment(0, 0x1000000, 2097152,
                                   {block(0x1000000, 1024, 1000, "active_allocated", {fwd}),
                                    block(0x1000400, 2096128, 2096128, "inactive")})})},
        {"device_traces", list({list({
                              entry("segment_alloc", 0x1000000, 2097152, 100, {main}),
                              entry("alloc", 0x1000000, 1000, 101, {fwd, main}),
                              entry("alloc", 0x1000400, 512, 102, {main}),
                              entry("free_requested", 0x1000400, 512, 103),
                              entry("free_completed", 0x1000400, 512, 105),
                              dict({{"action", "oom"},
                                    {"size", 1048576000},
                                    {"device_free", 123456},
                                    {"stream", 7},
                                    {"time_us", 106}}),
                              dict({{"action", "snapshot"}, {"time_us", 107}}),
                          })})},
        {"allocator_settings", dict({{"expandable_segments", Py::boolean(false)}})},
    });
    LoadedTrace t = importSnapshotOk(snap);
    const TraceData& d = t.data;
    EXPECT_TRUE(t.report.complete);
    EXPECT_TRUE(t.report.problems.empty());
    EXPECT_EQ(d.header.producer, "pytorch-snapshot import");
    EXPECT_EQ(d.header.clockDomain, "pytorch-snapshot-us");
    ASSERT_EQ(d.header.devices.size(), 1u);
    EXPECT_EQ(d.header.devices[0].index, DeviceIndex{0});
    EXPECT_EQ(d.header.devices[0].totalMemoryBytes, 0u);
    ASSERT_EQ(d.memory.size(), 4u);  // segment_alloc, 2 allocs, free_completed

    const MemoryEvent seg = d.memory.at(0);
    EXPECT_EQ(seg.level, MemoryLevel::Reserved);
    EXPECT_EQ(seg.kind, MemoryKind::Device);
    EXPECT_EQ(seg.sizeBytes, 2097152u);
    EXPECT_EQ(seg.timestampNs, 100'000);
    const MemoryEvent a = d.memory.at(1);
    EXPECT_EQ(a.action, MemoryAction::Alloc);
    EXPECT_EQ(a.level, MemoryLevel::Allocated);
    EXPECT_EQ(a.address, 0x1000000u);
    EXPECT_EQ(a.sizeBytes, 1000u);
    EXPECT_EQ(a.stream, 7u);
    EXPECT_EQ(a.timestampNs, 101'000);
    EXPECT_EQ(stackNames(d, a.stack), (std::vector<std::string>{"forward", "<module>"}));
    EXPECT_EQ(d.string(d.frames[toInt(d.stacks[toInt(a.stack)][0])].file), "model.py");
    EXPECT_EQ(d.frames[toInt(d.stacks[toInt(a.stack)][0])].line, 12);
    const MemoryEvent f = d.memory.at(3);
    EXPECT_EQ(f.action, MemoryAction::Free);
    EXPECT_EQ(f.timestampNs, 105'000);  // free_completed, not free_requested
    EXPECT_EQ(f.sizeBytes, 512u);

    ASSERT_EQ(d.ooms.size(), 1u);
    EXPECT_EQ(d.ooms[0].requestedBytes, 1048576000u);
    EXPECT_EQ(d.ooms[0].freeBytes, 123456u);
    EXPECT_EQ(d.ooms[0].timestampNs, 106'000);
    EXPECT_EQ(d.ooms[0].stream, 7u);
    EXPECT_EQ(d.header.anchorTraceNs, 100'000);
    bool sawSetting = false;
    for (const auto& [k, v] : d.header.captureSettings) {
        sawSetting = sawSetting || (k == "allocator.expandable_segments" && v == "False");
    }
    EXPECT_TRUE(sawSetting);
}

TEST(SnapshotImporter, ReconstructsMemoryAllocatedBeforeRecordingBegan) {
    const Py fwd = frame("forward", "model.py", 12);
    // Recording began at t=1000us. Alive before: segment S (4 MiB at 0x10000000) holding block
    // P (1 MiB, still alive at the dump, with frames) and block Q (256 KiB, freed in the trace).
    // The trace then allocates and frees block R (512 KiB).
    const uint64_t s = 0x10000000, mib = 1 << 20;
    const Py snap = dict({
        {"segments", list({segment(0, s, 4 * mib,
                                   {block(s, mib, mib - 8, "active_allocated", {fwd}),
                                    block(s + mib, 3 * mib, 3 * mib, "inactive")})})},
        {"device_traces", list({list({
                              entry("free_completed", s + 2 * mib, mib / 4, 1000),
                              entry("alloc", s + 3 * mib, mib / 2, 1001),
                              entry("free_completed", s + 3 * mib, mib / 2, 1002),
                              entry("free_completed", s + 3 * mib, mib / 2, 1003),  // twice
                          })})},
    });
    LoadedTrace t = importSnapshotOk(snap);
    const TraceData& d = t.data;
    std::vector<MemoryEvent> pre;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.kind[i] == MemoryKind::PreExisting) {
            pre.push_back(d.memory.at(i));
            EXPECT_LT(i, 3u) << "reconstructed memory comes first";
        }
    }
    ASSERT_EQ(pre.size(), 3u);
    for (const MemoryEvent& e : pre) {
        EXPECT_EQ(e.timestampNs, 1'000'000);
        EXPECT_EQ(e.action, MemoryAction::Alloc);
    }
    // Q, from the free of an address the trace never allocated (no stack: that is the free's).
    EXPECT_EQ(pre[0].level, MemoryLevel::Allocated);
    EXPECT_EQ(pre[0].address, s + 2 * mib);
    EXPECT_EQ(pre[0].sizeBytes, mib / 4);
    EXPECT_EQ(pre[0].stack, StackId{0});
    // S, from the dump.
    EXPECT_EQ(pre[1].level, MemoryLevel::Reserved);
    EXPECT_EQ(pre[1].sizeBytes, 4 * mib);
    // P, from the dump: its requested size, as the trace's sizes are, and its frames.
    EXPECT_EQ(pre[2].level, MemoryLevel::Allocated);
    EXPECT_EQ(pre[2].address, s);
    EXPECT_EQ(pre[2].sizeBytes, mib - 8);
    EXPECT_EQ(stackNames(d, pre[2].stack), std::vector<std::string>{"forward"});

    const Levels l = runningSums(d)[DeviceIndex{0}];
    EXPECT_EQ(l.peakAllocated, int64_t(mib - 8 + mib / 2));  // P + R (P + Q at the start is less)
    EXPECT_EQ(l.allocated, int64_t(mib - 8));                // P at the end
    EXPECT_EQ(l.minAllocated, 0);
    EXPECT_EQ(l.reserved, int64_t(4 * mib));
    // The second free of R was counted, not applied.
    EXPECT_FALSE(t.report.complete);
    ASSERT_EQ(t.report.problems.size(), 1u);
    EXPECT_NE(t.report.problems[0].message.find("already freed"), std::string::npos);
    EXPECT_EQ(t.report.problems[0].recordIndex, 3);
}

TEST(SnapshotImporter, ReconstructsReservedMemoryOfExpandableSegments) {
    const uint64_t base = 0x40000000, mib = 1 << 20;
    // Mapped before recording: [base, base+2M). The trace maps [base+2M, base+6M), then unmaps
    // [base, base+4M) (2 MiB of which it never mapped). The dump shows [base+4M, base+6M) and
    // [base+8M, base+10M), the latter never seen in the trace.
    Py seg1 = segment(0, base + 4 * mib, 2 * mib, {});
    Py seg2 = segment(0, base + 8 * mib, 2 * mib, {});
    const Py snap = dict({
        {"segments", list({seg1, seg2})},
        {"device_traces", list({list({
                              entry("segment_map", base + 2 * mib, 4 * mib, 10),
                              entry("segment_unmap", base, 4 * mib, 20),
                          })})},
    });
    LoadedTrace t = importSnapshotOk(snap);
    EXPECT_TRUE(t.report.complete) << t.report.problems.size();
    const TraceData& d = t.data;
    uint64_t preBytes = 0;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.kind[i] == MemoryKind::PreExisting) {
            EXPECT_EQ(d.memory.level[i], MemoryLevel::Reserved);
            preBytes += d.memory.sizeBytes[i];
        }
    }
    EXPECT_EQ(preBytes, 4 * mib);  // [base, base+2M) and [base+8M, base+10M)
    const Levels l = runningSums(d)[DeviceIndex{0}];
    EXPECT_EQ(l.peakReserved, int64_t(8 * mib));  // 4 at the start, +4 mapped
    EXPECT_EQ(l.reserved, int64_t(4 * mib));      // what the dump shows
    EXPECT_EQ(l.minReserved, 0);
}

TEST(SnapshotImporter, ReadsOlderLayoutsWithoutATrace) {
    // No device_traces and no block addresses: blocks tile their segment in order.
    const uint64_t s = 0x7f0000000000;
    Py oldBlock1 = dict({{"size", 4096}, {"state", "active_allocated"}});
    Py oldBlock2 = dict({{"size", 8192}, {"state", "inactive"}});
    Py oldBlock3 = dict({{"size", 2048}, {"state", "active_pending_free"}});
    Py seg = dict({{"device", 2},
                   {"address", s},
                   {"total_size", 14336},
                   {"stream", 0},
                   {"blocks", list({oldBlock1, oldBlock2, oldBlock3})}});
    for (const Py& snap : {dict({{"segments", list({seg})}}), list({seg})}) {
        LoadedTrace t = importSnapshotOk(snap);
        const TraceData& d = t.data;
        ASSERT_EQ(d.memory.size(), 3u);
        EXPECT_EQ(d.memory.level[0], MemoryLevel::Reserved);
        EXPECT_EQ(d.memory.address[1], s);
        EXPECT_EQ(d.memory.sizeBytes[1], 4096u);
        EXPECT_EQ(d.memory.address[2], s + 4096 + 8192);
        EXPECT_EQ(d.memory.sizeBytes[2], 2048u);
        for (size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(d.memory.timestampNs[i], 0);
            EXPECT_EQ(d.memory.device[i], DeviceIndex{2});
            EXPECT_EQ(d.memory.kind[i], MemoryKind::PreExisting);
        }
        ASSERT_EQ(d.header.devices.size(), 1u);
        EXPECT_EQ(d.header.devices[0].index, DeviceIndex{2});
    }
}

TEST(SnapshotImporter, KeepsDevicesApartAndMergesThemByTime) {
    const Py snap = dict({
        {"segments", list({})},
        {"device_traces",
         list({list({}), list({entry("alloc", 0x100, 10, 5), entry("alloc", 0x200, 20, 9)}),
               list({entry("alloc", 0x100, 30, 7)})})},
    });
    LoadedTrace t = importSnapshotOk(snap);
    const TraceData& d = t.data;
    ASSERT_EQ(d.header.devices.size(), 2u);
    EXPECT_EQ(d.header.devices[0].index, DeviceIndex{1});
    EXPECT_EQ(d.header.devices[1].index, DeviceIndex{2});
    ASSERT_EQ(d.memory.size(), 3u);
    EXPECT_EQ(d.memory.device[0], DeviceIndex{1});
    EXPECT_EQ(d.memory.device[1], DeviceIndex{2});
    EXPECT_EQ(d.memory.device[2], DeviceIndex{1});
    EXPECT_EQ(d.memory.timestampNs[1], 7000);
    auto sums = runningSums(d);
    EXPECT_EQ(sums[DeviceIndex{1}].allocated, 30);
    EXPECT_EQ(sums[DeviceIndex{2}].allocated, 30);
}

TEST(SnapshotImporter, CountsBadEntriesWithoutFailing) {
    const Py snap = dict({
        {"segments", list({dict({{"address", 1}})})},  // no device, no size
        {"device_traces",
         list({list({
             entry("alloc", 0x100, 10, 5),
             dict({{"action", "alloc"}, {"addr", 0x200}, {"time_us", 6}}),  // no size
             entry("teleport", 0x300, 10, 7), entry("teleport", 0x300, 10, 8),
             dict({{"addr", 0x300}}),       // no action
             42,                            // not even a dict
             entry("alloc", 0x100, 16, 9),  // the free of the first is missing
         })})},
        {"external_annotations",
         list({dict({{"name", "step"}, {"stage", "START"}, {"time_us", 5}, {"device", 0}}),
               dict({{"name", "lost"}, {"stage", "END"}, {"time_us", 6}, {"device", 0}})})},
    });
    LoadedTrace t = importSnapshotOk(snap);
    const TraceData& d = t.data;
    EXPECT_FALSE(t.report.complete);
    ASSERT_EQ(d.memory.size(), 3u);  // alloc, implicit close, alloc
    EXPECT_EQ(d.memory.action[1], MemoryAction::Free);
    EXPECT_EQ(d.memory.sizeBytes[1], 10u);
    EXPECT_EQ(runningSums(d)[DeviceIndex{0}].allocated, 16);
    std::string all;
    uint64_t lost = 0;
    for (const Error& e : t.report.problems) {
        all += e.message + "\n";
    }
    for (const DataLoss& l : d.dataLoss) {
        lost += l.count;
    }
    EXPECT_NE(all.find("2 trace entries with an unknown action (skipped) (e.g. 'teleport')"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("without an 'action'"), std::string::npos) << all;
    EXPECT_NE(all.find("segments without"), std::string::npos) << all;
    EXPECT_NE(all.find("already allocated"), std::string::npos) << all;
    EXPECT_NE(all.find("END"), std::string::npos) << all;
    EXPECT_NE(all.find("START"), std::string::npos) << all;
    // 1 no size + 2 unknown + 2 no action (one is not a dict) + 1 segment + 1 double alloc
    // + 1 END without START + 1 START without END.
    EXPECT_EQ(lost, 9u) << all;
}

// Found by the corruption sweep: a flipped byte in a pickled str made invalid UTF-8 that went
// on into the trace's strings and made `report --json` throw (nlohmann-json refuses it). Python
// refuses such a pickle; we keep it, with the bad sequences replaced (Unicode's U+FFFD
// substitution, EF BF BD) and counted.
TEST(SnapshotImporter, ReplacesInvalidUtf8InStringsAndCountsIt) {
    const Py bad = frame("fwd\xff", "m\xc3.py", 1);  // a stray byte; a sequence cut short
    // 39 ASCII bytes then a 2-byte character across the 40-byte example limit.
    const std::string longAction = std::string(39, 'x') + "\xc3\xa9tail";
    const Py snap = dict({
        {"device_traces", list({list({
                              entry("alloc", 0x100, 10, 5, {bad}),
                              entry(longAction.c_str(), 0x200, 10, 6),
                          })})},
    });
    LoadedTrace t = importSnapshotOk(snap);
    const TraceData& d = t.data;
    ASSERT_EQ(d.memory.size(), 1u);
    const std::vector<std::string> names = stackNames(d, d.memory.stack[0]);
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names[0], "fwd\xef\xbf\xbd");
    EXPECT_EQ(d.string(d.frames[toInt(d.stacks[toInt(d.memory.stack[0])][0])].file),
              "m\xef\xbf\xbd.py");
    uint64_t replaced = 0;
    std::string reasons;
    for (const DataLoss& l : d.dataLoss) {
        replaced += l.counter == LossCounter::JsonInvalidUtf8Replaced ? l.count : 0;
        reasons += l.reason + "\n";
    }
    EXPECT_EQ(replaced, 2u) << reasons;
    // The unknown action's example stops before the character it cannot hold whole.
    EXPECT_NE(reasons.find("(e.g. '" + std::string(39, 'x') + "')"), std::string::npos) << reasons;
}

TEST(SnapshotImporter, PairsExternalAnnotationsIntoRanges) {
    auto ann = [](const char* name, const char* stage, int64_t t) {
        return dict({{"name", name}, {"stage", stage}, {"time_us", t}, {"device", 0}});
    };
    const Py snap = dict({
        {"segments", list({})},
        {"device_traces",
         list({list({entry("alloc", 0x100, 10, 1), entry("alloc", 0x200, 10, 50)})})},
        {"external_annotations", list({ann("step", "START", 10), ann("zero_grad", "START", 12),
                                       ann("zero_grad", "END", 15), ann("step", "END", 40)})},
    });
    LoadedTrace t = importSnapshotOk(snap);
    const TraceData& d = t.data;
    ASSERT_EQ(d.ranges.size(), 2u);
    const RangeEvent outer = d.ranges.at(0);
    const RangeEvent inner = d.ranges.at(1);
    EXPECT_EQ(d.string(outer.name), "step");
    EXPECT_EQ(outer.startNs, 10'000);
    EXPECT_EQ(outer.endNs, 40'000);
    EXPECT_EQ(outer.depth, 0u);
    EXPECT_EQ(outer.kind, RangeKind::UserAnnotation);
    EXPECT_EQ(outer.device, DeviceIndex{0});
    EXPECT_EQ(d.string(inner.name), "zero_grad");
    EXPECT_EQ(inner.startNs, 12'000);
    EXPECT_EQ(inner.endNs, 15'000);
    EXPECT_EQ(inner.depth, 1u);
}

TEST(SnapshotImporter, RefusesAPickleThatIsNotASnapshot) {
    auto r = importPytorchSnapshot(toPickle(dict({{"hello", 1}})), "x.pickle");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("not a PyTorch memory snapshot"), std::string::npos);
    EXPECT_TRUE(refused(importPytorchSnapshot("", "empty.pickle"), ErrorCode::Truncated,
                        {"empty.pickle", "the pickle ends without a STOP opcode"}, 0));
    EXPECT_TRUE(refused(importPytorchSnapshot("{\"json\": 1}", "x.json"), ErrorCode::Corrupt,
                        {"x.json", "is not a pickle opcode"}, 0));
}

// Damaged input (cut anywhere, bytes flipped) gives an error or a trace, never a crash, and a
// trace that loads still never goes below zero at either level.
TEST(SnapshotImporter, NeverCrashesOnDamagedInput) {
    const Py fwd = frame("forward", "model.py", 12);
    const uint64_t s = 0x10000000, mib = 1 << 20;
    const Py snap = dict({
        {"segments",
         list({segment(0, s, 4 * mib, {block(s, mib, mib - 8, "active_allocated", {fwd})}),
               segment(1, s * 2, 2 * mib, {block(s * 2, mib, mib, "active_pending_free")})})},
        {"device_traces", list({list({entry("free_completed", s + 2 * mib, mib / 4, 1000, {fwd}),
                                      entry("segment_map", s * 3, 4 * mib, 1000),
                                      entry("alloc", s + 3 * mib, mib / 2, 1001, {fwd, fwd}),
                                      entry("segment_unmap", s * 3 - mib, 2 * mib, 1002),
                                      entry("free_completed", s + 3 * mib, mib / 2, 1002)}),
                                list({entry("alloc", s * 2, mib, 1003)})})},
        {"external_annotations",
         list({dict({{"name", "a"}, {"stage", "START"}, {"time_us", 1000}, {"device", 0}})})},
    });
    const std::string base = toPickle(snap);
    ASSERT_TRUE(importPytorchSnapshot(base, "base").ok());
    for (size_t cut = 0; cut < base.size(); ++cut) {
        // Every cut ends the pickle early: inside an opcode, or before its STOP.
        EXPECT_TRUE(refused(importPytorchSnapshot(base.substr(0, cut), "cut"), ErrorCode::Truncated,
                            {"cut", "cannot read the PyTorch memory snapshot"}))
            << cut;
    }
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    auto next = [&rng] {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
    };
    size_t loaded = 0;
    for (int trial = 0; trial < 5000; ++trial) {
        std::string damaged = base;
        const int flips = 1 + int(next() % 4);
        for (int f = 0; f < flips; ++f) {
            damaged[next() % damaged.size()] = char(next() & 0xff);
        }
        auto r = importPytorchSnapshot(damaged, "damaged");
        if (!r.ok()) {
            EXPECT_FALSE(r.error().message.empty());
            continue;
        }
        ++loaded;
        for (const auto& [device, l] : runningSums(r->data)) {
            ASSERT_GE(l.minAllocated, 0) << "trial " << trial;
            ASSERT_GE(l.minReserved, 0) << "trial " << trial;
        }
    }
    EXPECT_GT(loaded, 0u);
}

// --- Real snapshots

struct Replayed {
    std::map<std::string, int64_t> fields;
};

struct PythonReplay {
    std::map<DeviceIndex, Replayed> devices;
    std::vector<std::pair<DeviceIndex, uint64_t>> ooms;  // device, size
    bool ran = false;
};

PythonReplay runPythonReplay(const std::string& path) {
    PythonReplay out;
    const std::string cmd =
        "python3 '" VRAMSCOPE_SOURCE_DIR "/tests/tools/snapshot_replay.py' '" + path + "' 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe) {
        return out;
    }
    std::string text;
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0) {
        text.append(buf, n);
    }
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream ls(line);
        std::string head;
        int device = 0;
        ls >> head;
        if (head == "device") {
            ls >> device;
            std::string key;
            int64_t value = 0;
            while (ls >> key >> value) {
                out.devices[DeviceIndex{device}].fields[key] = value;
            }
            out.ran = true;
        } else if (head == "oom") {
            std::string k1, k2;
            uint64_t size = 0;
            ls >> k1 >> device >> k2 >> size;
            out.ooms.emplace_back(DeviceIndex{device}, size);
        } else {
            ADD_FAILURE() << "snapshot_replay.py: " << line;
        }
    }
    return out;
}

struct RealSnapshot {
    const char* path;  // under VRAMSCOPE_REALDATA_DIR
};

void PrintTo(const RealSnapshot& s, std::ostream* os) {
    *os << s.path;
}

class SnapshotImporterRealData : public ::testing::TestWithParam<RealSnapshot> {};

TEST_P(SnapshotImporterRealData, PeaksEqualAnIndependentReplayOfTheSnapshotsOwnTrace) {
    const std::string path = std::string(VRAMSCOPE_REALDATA_DIR) + "/" + GetParam().path;
    VRAMSCOPE_REQUIRE_INPUT(path);
    VRAMSCOPE_REQUIRE_PYTHON();
    const std::string bytes = testdata::readGzFile(path);
    ASSERT_FALSE(bytes.empty()) << "cannot read " << path;
    auto imported = importPytorchSnapshot(bytes, path);
    ASSERT_TRUE(imported.ok()) << imported.error().describe();
    const TraceData& d = imported->data;
    EXPECT_TRUE(imported->report.complete) << imported->report.problems.front().describe();

    const PythonReplay py = runPythonReplay(path);
    ASSERT_TRUE(py.ran) << "snapshot_replay.py printed nothing";

    const auto sums = runningSums(d);
    std::map<DeviceIndex, int64_t> allocs, preBlocks, preSegments;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        const MemoryEvent e = d.memory.at(i);
        if (e.kind == MemoryKind::PreExisting) {
            ++(e.level == MemoryLevel::Allocated ? preBlocks : preSegments)[e.device];
        } else if (e.level == MemoryLevel::Allocated && e.action == MemoryAction::Alloc) {
            ++allocs[e.device];
        }
    }
    ASSERT_EQ(d.header.devices.size(), py.devices.size());
    for (const auto& [device, r] : py.devices) {
        SCOPED_TRACE("device " + std::to_string(toInt(device)));
        ASSERT_TRUE(sums.count(device));
        const Levels& l = sums.at(device);
        EXPECT_EQ(l.peakAllocated, r.fields.at("peak_allocated"));
        EXPECT_EQ(l.peakReserved, r.fields.at("peak_reserved"));
        EXPECT_EQ(l.allocated, r.fields.at("final_allocated"));
        EXPECT_GE(l.minAllocated, 0);
        EXPECT_GE(l.minReserved, 0);
        EXPECT_EQ(allocs[device], r.fields.at("allocs"));
        EXPECT_EQ(preBlocks[device], r.fields.at("preexisting_blocks"));
        EXPECT_EQ(preSegments[device], r.fields.at("preexisting_segments"));
    }
    ASSERT_EQ(d.ooms.size(), py.ooms.size());
    for (size_t i = 0; i < d.ooms.size(); ++i) {
        EXPECT_EQ(d.ooms[i].device, py.ooms[i].first);
        EXPECT_EQ(d.ooms[i].requestedBytes, py.ooms[i].second);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Files, SnapshotImporterRealData,
    ::testing::Values(RealSnapshot{"silmont2000_assignment2-systems/mem_snapshot.pickle"},
                      RealSnapshot{"MAGMA27_assignment2-systems/memory_snapshot.pickle"},
                      RealSnapshot{"ZidongLiu_DeComFL/memory.pickle"},
                      RealSnapshot{"vramscope_h200/gpt_h200_leak.snapshot.pickle.gz"},
                      RealSnapshot{"vramscope_h200/gpt_h200_oom.snapshot.pickle.gz"}),
    [](const ::testing::TestParamInfo<RealSnapshot>& info) {
        std::string name = std::filesystem::path(info.param.path).parent_path().string();
        for (char& c : name) {
            c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        }
        return name + "_" + std::to_string(info.index);
    });

TEST(SnapshotImporterRealData, ShowsTheH200OutOfMemoryErrorWithItsRequestedSize) {
    const std::string path = realdata::kGptOomSnapshot;
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto imported = importPytorchSnapshot(testdata::readGzFile(path), path);
    ASSERT_TRUE(imported.ok()) << imported.error().describe();
    ASSERT_EQ(imported->data.ooms.size(), 1u);
    // PyTorch's message: "Tried to allocate 1000.00 MiB" = 1000 * 2^20 bytes.
    EXPECT_EQ(imported->data.ooms[0].requestedBytes, 1000ull * 1024 * 1024);
    EXPECT_EQ(imported->data.ooms[0].device, DeviceIndex{0});
    EXPECT_GT(imported->data.ooms[0].freeBytes, 0u);
}

}  // namespace
}  // namespace vramscope::trace

namespace vramscope::trace {
namespace {

// An allocation of 8 EiB (2^63 - 1 bytes) in a snapshot: the importer reads it as it is, and
// openTraceBytes keeps it (and its free) out of the trace, counted as sizes_out_of_range, so
// the peak is the 512 B allocation beside it.
TEST(SnapshotImporter, KeepsAnAllocationOfEightExbibytesOutOfThePeak) {
    const int64_t eight = INT64_MAX;
    const Py snap = dict({
        {"segments",
         list({segment(0, 0x1000000, 2097152, {block(0x1000000, 2097152, 2097152, "inactive")})})},
        {"device_traces", list({list({
                              entry("alloc", 0x1000000, uint64_t(eight), 101),
                              entry("free_completed", 0x1000000, uint64_t(eight), 102),
                              entry("alloc", 0x1000000, 512, 103),
                          })})},
    });
    const std::string bytes = toPickle(snap);
    LoadedTrace raw = importSnapshotOk(snap);
    size_t absurd = 0;
    for (uint64_t size : raw.data.memory.sizeBytes) {
        absurd += size > (1ull << 50) ? 1 : 0;
    }
    EXPECT_EQ(absurd, 2u);  // the alloc and its free, as the file says
    EXPECT_EQ(runningSums(raw.data)[DeviceIndex{0}].peakAllocated, eight);  // what peaks saw
    auto opened = openTraceBytes(bytes, "eight.pickle");
    ASSERT_TRUE(opened.ok()) << opened.error().describe();
    const TraceData& d = opened->data;
    EXPECT_EQ(d.memory.size(), raw.data.memory.size() - 2);
    for (uint64_t size : d.memory.sizeBytes) {
        EXPECT_LE(size, 1ull << 50);
    }
    EXPECT_EQ(runningSums(d)[DeviceIndex{0}].peakAllocated, 512);
    uint64_t counted = 0;
    for (const DataLoss& l : d.dataLoss) {
        counted += l.counter == LossCounter::SizesOutOfRange ? l.count : 0;
    }
    EXPECT_EQ(counted, 2u);
}

}  // namespace
}  // namespace vramscope::trace
