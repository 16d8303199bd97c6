#include "vramscope/analysis/flame_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace vramscope::analysis {
namespace {

using trace::MemoryAction;
using trace::MemoryEvent;
using trace::MemoryKind;
using trace::MemoryLevel;
using trace::TraceData;

void alloc(TraceData& d, int64_t t, uint64_t addr, uint64_t size, trace::StackId stack,
           uint32_t range = 0, MemoryKind kind = MemoryKind::Pool) {
    d.memory.append(MemoryEvent{t, addr, size, MemoryAction::Alloc, MemoryLevel::Allocated, kind,
                                trace::DeviceIndex{0}, 0, stack, range});
}
void release(TraceData& d, int64_t t, uint64_t addr, uint64_t size) {
    d.memory.append(MemoryEvent{t, addr, size, MemoryAction::Free, MemoryLevel::Allocated,
                                MemoryKind::Pool, trace::DeviceIndex{0}, 0, trace::StackId{0}, 0});
}

/// main -> model -> {linear, attention}; one allocation without a stack.
struct Fixture {
    TraceData d;
    trace::StackId linear{0}, attention{0};
    Fixture() {
        const auto frame = [&](const char* name, int line) {
            return d.internFrame({d.intern(name), d.intern("train.py"), line});
        };
        const trace::FrameId main = frame("main", 1), model = frame("model", 2),
                             lin = frame("linear", 3), att = frame("attention", 4);
        linear = d.internStack({lin, model, main});
        attention = d.internStack({att, model, main});
        alloc(d, 10, 0x100, 1000, linear);
        alloc(d, 20, 0x200, 3000, attention);
        alloc(d, 30, 0x300, 500, linear);
        alloc(d, 40, 0x400, 7, trace::StackId{0});
        release(d, 50, 0x100, 1000);
        alloc(d, 60, 0x500, 2000, attention);
    }
};

TEST(FlameTree, GroupsTheLiveSetByStackRootFirst) {
    Fixture f;
    FlameTreeBuilder b(f.d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    const FlameTree t = b.at(45, FlameGrouping::Stack);
    ASSERT_FALSE(t.nodes.empty());
    EXPECT_EQ(t.root().bytes, 4507);
    EXPECT_EQ(t.root().count, 4);
    // Children largest first: main (4500), (no stack) (7).
    ASSERT_EQ(t.root().children.size(), 2u);
    const FlameNode& main = t.nodes[t.root().children[0]];
    EXPECT_EQ(main.name, "main (train.py:1)");
    EXPECT_EQ(main.bytes, 4500);
    const FlameNode& model = t.nodes[main.children[0]];
    ASSERT_EQ(model.children.size(), 2u);
    const FlameNode& first = t.nodes[model.children[0]];
    EXPECT_EQ(first.name, "attention (train.py:4)");
    EXPECT_EQ(first.bytes, 3000);
    EXPECT_EQ(first.selfBytes, 3000);
    EXPECT_EQ(t.nodes[model.children[1]].bytes, 1500);
    EXPECT_EQ(t.nodes[model.children[1]].count, 2);
    EXPECT_EQ(t.path(model.children[1]),
              (std::vector<std::string>{"main (train.py:1)", "model (train.py:2)",
                                        "linear (train.py:3)"}));
    EXPECT_EQ(toFolded(t),
              "main (train.py:1);model (train.py:2);attention (train.py:4) 3000\n"
              "main (train.py:1);model (train.py:2);linear (train.py:3) 1500\n"
              "(no stack) 7\n");
}

TEST(FlameTree, DiffShowsWhatGrew) {
    Fixture f;
    FlameTreeBuilder b(f.d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    const FlameTree t = b.diff(45, 70, FlameGrouping::Stack);
    EXPECT_TRUE(t.isDiff);
    EXPECT_EQ(t.root().bytes, 1000);  // +2000 attention, -1000 linear
    EXPECT_EQ(t.root().beforeBytes, 4507);
    EXPECT_EQ(t.root().afterBytes, 5507);
    EXPECT_EQ(toFolded(t),
              "main (train.py:1);model (train.py:2);attention (train.py:4) 3000 5000\n"
              "main (train.py:1);model (train.py:2);linear (train.py:3) 1500 500\n"
              "(no stack) 7 7\n");
}

TEST(FlameTree, GroupsByNvtxRangePathAndByCategory) {
    TraceData d;
    auto range = [&](const char* name, int64_t s, int64_t e, uint32_t depth) {
        trace::RangeEvent r;
        r.startNs = s;
        r.endNs = e;
        r.name = d.intern(name);
        r.depth = depth;
        r.threadId = 5;
        d.ranges.append(r);
        return uint32_t(d.ranges.size());  // 1-based
    };
    const uint32_t it = range("iteration 0", 0, 100, 0);
    const uint32_t fwd = range("forward", 0, 50, 1);
    alloc(d, 10, 0x10, 100, trace::StackId{0}, fwd);
    alloc(d, 60, 0x20, 300ull << 20, trace::StackId{0}, it, MemoryKind::Device);
    alloc(d, 70, 0x30, 5, trace::StackId{0}, 0);
    FlameTreeBuilder b(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    const FlameTree t = b.at(80, FlameGrouping::Nvtx);
    EXPECT_EQ(toFolded(t), "iteration 0 314572800\niteration 0;forward 100\n(no range) 5\n");
    const FlameTree c = b.at(80, FlameGrouping::Category);
    EXPECT_EQ(toFolded(c), "device;64 MiB-1 GiB 314572800\npool;<1 MiB 105\n");
}

TEST(FlameTree, PeakTimeIsWhereTheRunningBytesTopOut) {
    Fixture f;
    FlameTreeBuilder b(f.d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    // 1000, 4000, 4500, 4507, 3507, 5507
    EXPECT_EQ(peakTime(f.d, b.index()), 60);
}

TEST(AllocationIndex, LiveSetsMatchAFullReplayAcrossCheckpoints) {
    TraceData d;
    std::mt19937_64 rng(11);
    std::map<uint64_t, uint64_t> open;  // address -> size
    int64_t t = 0;
    for (int i = 0; i < 60000; ++i) {
        t += int64_t(rng() % 3);  // equal times happen
        if (!open.empty() && rng() % 2 == 0) {
            auto it = open.begin();
            std::advance(it, rng() % open.size());
            release(d, t, it->first, it->second);
            open.erase(it);
        } else {
            const uint64_t addr = (rng() % 5000) * 16;
            if (open.count(addr) == 0) {
                open[addr] = 1 + rng() % 1000;
                alloc(d, t, addr, open[addr], trace::StackId{0});
            }
        }
    }
    release(d, t + 1, 0xdeadbeef, 10);  // a free with no alloc is ignored
    const AllocationIndex index(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    for (int q = 0; q < 40; ++q) {
        const int64_t at = int64_t(rng() % uint64_t(t + 2));
        // Reference: replay every event with time <= at.
        std::map<uint64_t, uint32_t> live;
        for (size_t e = 0; e < d.memory.size() && d.memory.timestampNs[e] <= at; ++e) {
            if (d.memory.action[e] == MemoryAction::Alloc) {
                live[d.memory.address[e]] = uint32_t(e);
            } else {
                live.erase(d.memory.address[e]);
            }
        }
        std::vector<uint32_t> expected;
        for (auto& [addr, e] : live) {
            expected.push_back(e);
        }
        std::sort(expected.begin(), expected.end());
        std::vector<uint32_t> got = index.aliveEventsAt(at);
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, expected) << "at " << at;
    }
}

}  // namespace
}  // namespace vramscope::analysis
