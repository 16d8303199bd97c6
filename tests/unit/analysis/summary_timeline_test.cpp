// Timelines from summaries on hand-made summaries: precedence and lift as buildMemoryTimelines
// documents them, and queryBlocks against LodSeries::query over the steps the blocks were cut from.

#include "vramscope/analysis/model/summary_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace vramscope::analysis {
namespace {

using trace::MemoryEnvelope;
using trace::MemoryLevel;
using trace::SeriesOrigin;
using trace::SummaryBlock;

/// Cuts a series of distinct, increasing times into blocks of `per` steps (the test's own cut).
std::vector<SummaryBlock> cutBlocks(const StepSeries& s, size_t per) {
    std::vector<SummaryBlock> out;
    for (size_t i = 0; i < s.size(); i += per) {
        const size_t j = std::min(s.size(), i + per);
        SummaryBlock b;
        b.startNs = s.timeNs[i];
        b.endNs = s.timeNs[j - 1];
        b.firstBytes = s.bytes[i];
        b.lastBytes = s.bytes[j - 1];
        b.minBytes = *std::min_element(s.bytes.begin() + i, s.bytes.begin() + j);
        b.maxBytes = *std::max_element(s.bytes.begin() + i, s.bytes.begin() + j);
        b.steps = static_cast<uint32_t>(j - i);
        out.push_back(b);
    }
    return out;
}

StepSeries randomSteps(std::mt19937_64& rng, size_t n) {
    StepSeries s;
    TimestampNs t = 1000;
    for (size_t i = 0; i < n; ++i) {
        t += static_cast<TimestampNs>(1 + rng() % 40);
        s.timeNs.push_back(t);
        s.bytes.push_back(static_cast<int64_t>(rng() % 5001));
    }
    return s;
}

TEST(QueryBlocks, EnvelopeContainsLodEnvelopeAndIsAtMostOneBlockWider) {
    std::mt19937_64 rng(11);
    for (size_t n : {1u, 7u, 256u, 1000u, 3000u}) {
        const StepSeries s = randomSteps(rng, n);
        const size_t per = 16;
        const auto blocks = cutBlocks(s, per);
        const LodSeries lod(s);
        const TimestampNs first = s.timeNs.front();
        const TimestampNs last = s.timeNs.back();
        for (auto [t0, t1, buckets] :
             {std::tuple{first - 50, last + 50, size_t{37}}, std::tuple{first, last + 1, size_t{1}},
              std::tuple{first + (last - first) / 3, last - (last - first) / 4, size_t{500}}}) {
            if (t1 <= t0) {
                continue;
            }
            const auto got = queryBlocks(blocks, t0, t1, buckets);
            const auto want = lod.query(t0, t1, buckets);
            ASSERT_EQ(got.size(), want.size());
            for (size_t i = 0; i < got.size(); ++i) {
                ASSERT_EQ(got[i].startNs, want[i].startNs);
                ASSERT_EQ(got[i].endNs, want[i].endNs);
                EXPECT_LE(got[i].minBytes, want[i].minBytes) << "n " << n << " bucket " << i;
                EXPECT_GE(got[i].maxBytes, want[i].maxBytes) << "n " << n << " bucket " << i;
                // Wider only by steps of blocks that overlap the bucket (the one holding the value
                // at its start, the ones inside it, the one reaching past its end).
                int64_t lo = want[i].minBytes;
                int64_t hi = want[i].maxBytes;
                for (const auto& b : blocks) {
                    if (b.endNs >= want[i].startNs && b.startNs < want[i].endNs) {
                        lo = std::min(lo, b.minBytes);
                        hi = std::max(hi, b.maxBytes);
                    }
                }
                EXPECT_GE(got[i].minBytes, lo) << "n " << n << " bucket " << i;
                EXPECT_LE(got[i].maxBytes, hi) << "n " << n << " bucket " << i;
            }
        }
    }
}

TEST(QueryBlocks, EmptyForEmptyWindowOrNoBuckets) {
    const std::vector<SummaryBlock> blocks{{10, 20, 1, 5, 1, 5, 3}};
    EXPECT_TRUE(queryBlocks(blocks, 30, 30, 10).empty());
    EXPECT_TRUE(queryBlocks(blocks, 0, 30, 0).empty());
    // Before the first block the value is 0 (StepSeries::valueAt), after the last it is lastBytes.
    const auto b = queryBlocks(blocks, 0, 40, 4);
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[0].maxBytes, 0);
    EXPECT_EQ(b[3].minBytes, 5);
    EXPECT_EQ(b[3].maxBytes, 5);
}

MemoryEnvelope envelope(DeviceIndex d, MemoryLevel level, SeriesOrigin origin, int64_t lowest,
                        int64_t peak) {
    MemoryEnvelope e;
    e.device = d;
    e.level = level;
    e.origin = origin;
    e.events = 2;
    e.totalSteps = 2;
    e.blocks = {{100, 200, lowest, peak, lowest, peak, 2}};
    e.peakBytes = peak;
    e.peakTimeNs = 200;
    e.lowestBytes = lowest;
    return e;
}

TEST(SummaryTimelines, CounterWinsOverEventsAndNegativeSumIsLifted) {
    trace::TraceSummary s;
    trace::DeviceInfo gpu0;
    gpu0.index = DeviceIndex{0};
    gpu0.totalMemoryBytes = 80;
    trace::DeviceInfo gpu2;
    gpu2.index = DeviceIndex{2};  // header entry only: a timeline without series
    s.header.devices = {gpu0, gpu2};
    // Device 0: allocated from events (running sum down to -30: lifted by 30), reserved from
    // both, where the counter wins.
    s.memory.push_back(
        envelope(DeviceIndex{0}, MemoryLevel::Reserved, SeriesOrigin::MemoryEvents, 0, 999));
    s.memory.push_back(
        envelope(DeviceIndex{0}, MemoryLevel::Reserved, SeriesOrigin::ProducerCounter, 0, 64));
    s.memory.push_back(
        envelope(DeviceIndex{0}, MemoryLevel::Allocated, SeriesOrigin::MemoryEvents, -30, 20));
    s.memory.push_back(
        envelope(DeviceIndex{1}, MemoryLevel::Allocated, SeriesOrigin::MemoryEvents, 0, 7));
    std::sort(s.memory.begin(), s.memory.end(), [](const auto& a, const auto& b) {
        return std::tuple(a.device, a.level, a.origin) < std::tuple(b.device, b.level, b.origin);
    });
    const auto tls = summaryTimelines(s);
    ASSERT_EQ(tls.size(), 3u);
    const auto& t0 = tls[0];
    EXPECT_EQ(t0.device, DeviceIndex{0});
    EXPECT_EQ(t0.capacityBytes, 80u);
    EXPECT_EQ(t0.reservedSource, SeriesSource::ProducerCounter);
    EXPECT_EQ(t0.peakReservedBytes, 64);
    EXPECT_EQ(t0.allocatedSource, SeriesSource::MemoryEvents);
    EXPECT_EQ(t0.allocatedPreTraceBytes, 30);
    EXPECT_EQ(t0.peakAllocatedBytes, 50);  // 20 + 30
    ASSERT_EQ(t0.allocated.size(), 1u);
    EXPECT_EQ(t0.allocated[0].minBytes, 0);  // -30 + 30
    EXPECT_EQ(t0.memoryEvents, 4u);          // events of both levels' event series
    EXPECT_TRUE(t0.exact);
    EXPECT_EQ(tls[1].device, DeviceIndex{1});
    EXPECT_EQ(tls[1].capacityBytes, 0u);
    EXPECT_EQ(tls[1].reservedSource, SeriesSource::None);
    EXPECT_EQ(tls[2].device, DeviceIndex{2});
    EXPECT_EQ(tls[2].allocatedSource, SeriesSource::None);
    EXPECT_TRUE(tls[2].allocated.empty());
}

}  // namespace
}  // namespace vramscope::analysis
