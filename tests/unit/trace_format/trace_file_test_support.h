#pragma once
// Shared by the trace tests: a trace that sets every field, a field-by-field comparison, a sink
// that records frame boundaries, hand-made frames, and a trace's data-loss entries by counter.

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"

namespace vramscope::trace::testing {

/// A trace with every event kind, every field set to non-default values in some rows and left at
/// the default in others, and negative deltas (unsorted times, falling addresses).
/// `rows` scales the number of events of each kind (>= 3).
inline TraceData makeFullTrace(size_t rows) {
    TraceData d;
    d.header.producer = "vramscope-test 1.2";
    d.header.host = "node-17";
    d.header.pid = 424242;
    d.header.rank = RankId{3};
    d.header.localRank = RankId{1};
    d.header.worldSize = 16;
    d.header.jobId = "job-9f";
    d.header.clockDomain = "CLOCK_MONOTONIC_RAW";
    d.header.wallClockAnchorNs = 1'700'000'000'123'456'789;
    d.header.anchorTraceNs = 55'000'000;
    d.header.devices = {{DeviceIndex{0}, "GPU-aaaa", "NVIDIA H200", 150'000'000'000ull},
                        {DeviceIndex{1}, "GPU-bbbb", "NVIDIA H200", 0}};
    d.header.captureSettings = {{"flush_ms", "250"}, {"nvtx", "on"}};

    const StringId fwd = d.intern("forward");
    const StringId model = d.intern("model.py");
    const FrameId f0 = d.internFrame({fwd, model, 10});
    const FrameId f1 = d.internFrame({d.intern("main"), d.intern("train.py"), 0});
    const FrameId f2 = d.internFrame({0, 0, -5});
    const StackId s1 = d.internStack({f0, f1});
    const StackId s2 = d.internStack({f2, f0, f1});
    const StringId gemm = d.intern("sm90_gemm");
    const StringId nccl = d.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    const StringId allReduce = d.intern("AllReduce");
    const StringId f32 = d.intern("ncclFloat32");
    const StringId ring = d.intern("RING");
    const StringId ll = d.intern("LL");
    const StringId step = d.intern("ProfilerStep#7");
    const StringId allocated = d.intern("Total Allocated");

    for (size_t i = 0; i < rows; ++i) {
        const auto t = static_cast<TimestampNs>(1'000'000 + 7'919 * i) - (i % 3 == 1 ? 50'000 : 0);
        MemoryEvent m;
        m.timestampNs = t;
        m.address = i % 4 == 3 ? 0xFFFF'FFFF'FFFF'FF00ull : 0x7f00'0000'0000ull + 256 * (rows - i);
        m.sizeBytes = i % 5 == 0 ? 0 : 4096ull * (i + 1);
        m.action = i % 2 ? MemoryAction::Free : MemoryAction::Alloc;
        m.level = i % 3 ? MemoryLevel::Allocated : MemoryLevel::Reserved;
        m.kind = static_cast<MemoryKind>(i % 8);
        m.device = static_cast<DeviceIndex>(i % 2);
        m.stream = i % 3 == 0 ? 0 : 7 + i;
        m.stack = i % 3 == 0 ? StackId{0} : (i % 3 == 1 ? s1 : s2);
        m.nvtxRange = static_cast<uint32_t>(i % rows);  // 1-based range index, 0 = none
        d.memory.append(m);

        KernelEvent k;
        k.startNs = t + 3;
        k.endNs = i == 2 ? t - 10 : t + 3 + 12'345 * static_cast<TimestampNs>(i % 4);
        k.device = static_cast<DeviceIndex>(i % 2);
        k.stream = 13 + i % 3;
        k.name = i % 4 == 0 ? 0 : (i % 2 ? gemm : nccl);
        k.category = static_cast<KernelCategory>(i % 4);
        k.launchNs = i % 3 == 2 ? -1 : t - 2'000 - static_cast<TimestampNs>(i);
        k.bytes = i % 4 >= 2 ? 1'048'576 * i : 0;
        k.correlationId = i % 5 == 4 ? 0 : 90'000 + 3 * i;
        // Any string ids (no new strings: the truncation tests count the string chunks).
        k.operandType = i % 3 == 0 ? fwd : (i % 3 == 1 ? StringId{0} : f32);
        d.kernels.append(k);

        CollectiveEvent c;
        c.startNs = t + 100;
        c.endNs = t + 100 + 80'000;
        c.device = static_cast<DeviceIndex>(i % 2);
        c.stream = 21;
        c.communicatorHash = 0xDEADBEEF'CAFEF00Dull + (i % 2);
        c.rank = i % 3 == 0 ? kUnknownRank : static_cast<RankId>(i % 16);
        c.nranks = i % 3 == 0 ? 0 : 16;
        c.function = allReduce;
        c.seqNumber = i % 4 == 0 ? -1 : static_cast<int64_t>(i);
        c.bytes = 64ull << 20;
        c.datatype = f32;
        c.algorithm = i % 2 ? ring : 0;
        c.protocol = ll;
        c.channels = i % 5 == 0 ? 0 : static_cast<uint32_t>(i % 32 + 1);
        c.enqueueLeadNs = i % 7 == 0 ? -1 : static_cast<int64_t>(3'000 + i);
        c.peer = i % 2 ? -1 : static_cast<int32_t>(i % 16);
        c.timing = static_cast<CollectiveTiming>(i % 5);
        d.collectives.append(c);

        RangeEvent r;
        r.startNs = t - 1'000;
        r.endNs = t + 9'000;
        r.name = step;
        r.depth = static_cast<uint32_t>(i % 3);
        r.threadId = i % 2 ? 0 : 31337 + i;
        r.device = i % 3 == 0 ? kHostDevice : static_cast<DeviceIndex>(i % 2);
        r.kind = static_cast<RangeKind>(i % 4);
        d.ranges.append(r);

        CounterSample s;
        s.timestampNs = t + 1;
        s.name = allocated;
        s.device = i % 3 == 0 ? kHostDevice : DeviceIndex{0};
        s.kind = static_cast<CounterKind>(i % 3);
        s.value = i % 4 == 0 ? 0.0 : (i % 4 == 1 ? -0.5 * static_cast<double>(i) : 1e300);
        d.counters.append(s);
    }
    d.ooms.push_back({1'500'000, DeviceIndex{1}, 21, 2ull << 30, 1ull << 20});
    d.ooms.push_back({2'000'000, DeviceIndex{0}, 0, 512, 0});
    d.dataLoss.push_back(
        {LossCounter::CuptiRecordsDropped, 8193, "CUPTI buffer overflowed", 10, 20});
    d.dataLoss.push_back({LossCounter::WriterQueueOverflow, 0, "", 0, 0});
    d.communicators.push_back({0x9E3779B97F4A7C15ull, RankId{3}, 16, 2, "dp", 50, DeviceIndex{1}});
    d.communicators.push_back({7, kUnknownRank, 0, 0, "", -20, kHostDevice});
    d.annotations.push_back({100, 200, kHostDevice, "leak starts here", "alice"});
    d.annotations.push_back({-5, 5, DeviceIndex{1}, "", ""});
    return d;
}

/// Compares every column of two event tables, in the table's column list (trace_data.h);
/// doubles by bit pattern, so that -0.0 and NaN payloads must survive too.
template <class Table>
void expectSameColumns(const Table& a, const Table& b, const char* table) {
    size_t index = 0;
    Table::forEachColumnMember([&](auto column, auto) {
        const auto& x = a.*column;
        const auto& y = b.*column;
        using T = typename std::decay_t<decltype(x)>::value_type;
        if constexpr (std::is_same_v<T, double>) {
            ASSERT_EQ(x.size(), y.size()) << table << " column " << index;
            for (size_t i = 0; i < x.size(); ++i) {
                EXPECT_EQ(std::bit_cast<uint64_t>(x[i]), std::bit_cast<uint64_t>(y[i]))
                    << table << " column " << index << " row " << i;
            }
        } else {
            EXPECT_EQ(x, y) << table << " column " << index;
        }
        ++index;
    });
}

/// Compares every header field, table and column.
inline void expectSameTrace(const TraceData& a, const TraceData& b) {
    EXPECT_EQ(a.header.producer, b.header.producer);
    EXPECT_EQ(a.header.host, b.header.host);
    EXPECT_EQ(a.header.pid, b.header.pid);
    EXPECT_EQ(a.header.rank, b.header.rank);
    EXPECT_EQ(a.header.localRank, b.header.localRank);
    EXPECT_EQ(a.header.worldSize, b.header.worldSize);
    EXPECT_EQ(a.header.jobId, b.header.jobId);
    EXPECT_EQ(a.header.clockDomain, b.header.clockDomain);
    EXPECT_EQ(a.header.wallClockAnchorNs, b.header.wallClockAnchorNs);
    EXPECT_EQ(a.header.anchorTraceNs, b.header.anchorTraceNs);
    ASSERT_EQ(a.header.devices.size(), b.header.devices.size());
    for (size_t i = 0; i < a.header.devices.size(); ++i) {
        EXPECT_EQ(a.header.devices[i].index, b.header.devices[i].index);
        EXPECT_EQ(a.header.devices[i].uuid, b.header.devices[i].uuid);
        EXPECT_EQ(a.header.devices[i].name, b.header.devices[i].name);
        EXPECT_EQ(a.header.devices[i].totalMemoryBytes, b.header.devices[i].totalMemoryBytes);
    }
    EXPECT_EQ(a.header.captureSettings, b.header.captureSettings);
    EXPECT_EQ(a.strings, b.strings);
    EXPECT_EQ(a.frames, b.frames);
    EXPECT_EQ(a.stacks, b.stacks);

    expectSameColumns(a.memory, b.memory, "memory");
    expectSameColumns(a.kernels, b.kernels, "kernels");
    expectSameColumns(a.collectives, b.collectives, "collectives");
    ASSERT_EQ(a.communicators.size(), b.communicators.size());
    for (size_t i = 0; i < a.communicators.size(); ++i) {
        const Communicator &x = a.communicators[i], &y = b.communicators[i];
        EXPECT_EQ(x.hash, y.hash);
        EXPECT_EQ(x.rank, y.rank);
        EXPECT_EQ(x.nranks, y.nranks);
        EXPECT_EQ(x.nodes, y.nodes);
        EXPECT_EQ(x.name, y.name);
        EXPECT_EQ(x.initNs, y.initNs);
        EXPECT_EQ(x.device, y.device);
    }

    expectSameColumns(a.ranges, b.ranges, "ranges");
    expectSameColumns(a.counters, b.counters, "counters");

    ASSERT_EQ(a.ooms.size(), b.ooms.size());
    for (size_t i = 0; i < a.ooms.size(); ++i) {
        EXPECT_EQ(a.ooms[i].timestampNs, b.ooms[i].timestampNs);
        EXPECT_EQ(a.ooms[i].device, b.ooms[i].device);
        EXPECT_EQ(a.ooms[i].stream, b.ooms[i].stream);
        EXPECT_EQ(a.ooms[i].requestedBytes, b.ooms[i].requestedBytes);
        EXPECT_EQ(a.ooms[i].freeBytes, b.ooms[i].freeBytes);
    }
    ASSERT_EQ(a.dataLoss.size(), b.dataLoss.size());
    for (size_t i = 0; i < a.dataLoss.size(); ++i) {
        EXPECT_EQ(a.dataLoss[i].counter, b.dataLoss[i].counter);
        EXPECT_EQ(a.dataLoss[i].count, b.dataLoss[i].count);
        EXPECT_EQ(a.dataLoss[i].reason, b.dataLoss[i].reason);
        EXPECT_EQ(a.dataLoss[i].startNs, b.dataLoss[i].startNs);
        EXPECT_EQ(a.dataLoss[i].endNs, b.dataLoss[i].endNs);
    }
    ASSERT_EQ(a.annotations.size(), b.annotations.size());
    for (size_t i = 0; i < a.annotations.size(); ++i) {
        EXPECT_EQ(a.annotations[i].startNs, b.annotations[i].startNs);
        EXPECT_EQ(a.annotations[i].endNs, b.annotations[i].endNs);
        EXPECT_EQ(a.annotations[i].device, b.annotations[i].device);
        EXPECT_EQ(a.annotations[i].text, b.annotations[i].text);
        EXPECT_EQ(a.annotations[i].author, b.annotations[i].author);
    }
}

/// Sink that keeps the bytes and the offset after every write; the writer hands it the preamble
/// and then each frame in one write, so `ends` lists the preamble end and every frame end.
class RecordingSink final : public ByteSink {
public:
    RecordingSink(std::string& out, std::vector<size_t>& ends) : m_out(out), m_ends(ends) {}
    Status write(std::string_view bytes) override {
        m_out.append(bytes);
        m_ends.push_back(m_out.size());
        return Status::success();
    }

private:
    std::string& m_out;
    std::vector<size_t>& m_ends;
};

inline void putLe32(std::string& s, uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }
}

/// A preamble: magic, u16 major, u16 minor (little-endian).
inline std::string preamble(uint16_t major = 1, uint16_t minor = 0) {
    std::string s(kMagic);
    s.push_back(static_cast<char>(major & 0xFF));
    s.push_back(static_cast<char>(major >> 8));
    s.push_back(static_cast<char>(minor & 0xFF));
    s.push_back(static_cast<char>(minor >> 8));
    return s;
}

/// A frame as the format defines it: u32 length, u8 encoding, payload, u32 CRC-32C of the
/// encoding byte and payload.
inline std::string frame(std::string_view payload, uint8_t encoding = 0) {
    std::string s;
    putLe32(s, static_cast<uint32_t>(payload.size()));
    s.push_back(static_cast<char>(encoding));
    s.append(payload);
    putLe32(s, crc32c(std::string_view(s).substr(4)));
    return s;
}

/// A frame holding only a header chunk (producer "hand-made"), to follow preamble().
inline std::string headerFrame() {
    v1::Chunk c;
    c.mutable_header()->set_producer("hand-made");
    return frame(c.SerializeAsString());
}

/// The first data-loss entry of `d` with `counter`; null when there is none.
inline const DataLoss* findLoss(const TraceData& d, LossCounter counter) {
    for (const DataLoss& l : d.dataLoss) {
        if (l.counter == counter) {
            return &l;
        }
    }
    return nullptr;
}

}  // namespace vramscope::trace::testing
