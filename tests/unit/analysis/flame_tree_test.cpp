#include "vramscope/analysis/memory/flame_tree.h"
#include "vramscope/analysis/memory/role_layers.h"

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

void allocWithStack(TraceData& d, int64_t t, uint64_t addr, uint64_t size, trace::StackId stack,
                    uint32_t range = 0, MemoryKind kind = MemoryKind::Pool) {
    d.memory.append(MemoryEvent{t, addr, size, MemoryAction::Alloc, MemoryLevel::Allocated, kind,
                                trace::DeviceIndex{0}, 0, stack, range});
}
void release(TraceData& d, int64_t t, uint64_t addr, uint64_t size) {
    d.memory.append(MemoryEvent{t, addr, size, MemoryAction::Free, MemoryLevel::Allocated,
                                MemoryKind::Pool, trace::DeviceIndex{0}, 0, trace::StackId{0}, 0});
}

/// main -> model -> {linear, attention}; one allocation without a stack.
struct TwoBranchTrace {
    TraceData d;
    trace::StackId linear{0}, attention{0};
    TwoBranchTrace() {
        const auto frame = [&](const char* name, int line) {
            return d.internFrame({d.intern(name), d.intern("train.py"), line});
        };
        const trace::FrameId main = frame("main", 1), model = frame("model", 2),
                             lin = frame("linear", 3), att = frame("attention", 4);
        linear = d.internStack({lin, model, main});
        attention = d.internStack({att, model, main});
        allocWithStack(d, 10, 0x100, 1000, linear);
        allocWithStack(d, 20, 0x200, 3000, attention);
        allocWithStack(d, 30, 0x300, 500, linear);
        allocWithStack(d, 40, 0x400, 7, trace::StackId{0});
        release(d, 50, 0x100, 1000);
        allocWithStack(d, 60, 0x500, 2000, attention);
    }
};

TEST(FlameTree, GroupsTheLiveSetByStackRootFirst) {
    TwoBranchTrace f;
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

TEST(FlameTree, SaysWhichStacklessMemoryWasAliveBeforeTheTrace) {
    // 64 B alive before recording began (an importer's PreExisting block, no stack) and 7 B the
    // producer gave no stack: two nodes, each named for what it is.
    TraceData d;
    allocWithStack(d, 0, 0x10, 64, trace::StackId{0}, 0, MemoryKind::PreExisting);
    allocWithStack(d, 5, 0x20, 7, trace::StackId{0});
    FlameTreeBuilder b(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    EXPECT_EQ(toFolded(b.at(10, FlameGrouping::Stack)),
              std::string(kPreExistingLabel) + " 64\n(no stack) 7\n");
}

TEST(FlameTree, DiffShowsWhatGrew) {
    TwoBranchTrace f;
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
    allocWithStack(d, 10, 0x10, 100, trace::StackId{0}, fwd);
    allocWithStack(d, 60, 0x20, 300ull << 20, trace::StackId{0}, it, MemoryKind::Device);
    allocWithStack(d, 70, 0x30, 5, trace::StackId{0}, 0);
    FlameTreeBuilder b(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    const FlameTree t = b.at(80, FlameGrouping::Nvtx);
    EXPECT_EQ(toFolded(t), "iteration 0 314572800\niteration 0;forward 100\n(no range) 5\n");
    const FlameTree c = b.at(80, FlameGrouping::Category);
    EXPECT_EQ(toFolded(c), "device;64 MiB-1 GiB 314572800\npool;<1 MiB 105\n");
}

TEST(FlameTree, PeakTimeIsWhereTheRunningBytesTopOut) {
    TwoBranchTrace f;
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
                allocWithStack(d, t, addr, open[addr], trace::StackId{0});
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

/// One training step with NVTX phase ranges, forward [100, 200), backward [200, 300), optimizer
/// [300, 400), and one allocation per row of the roles table that it exercises. The roles below are
/// read off memory_roles.h's decision table by hand:
/// - weights: 1000 B at 50, before any phase, never freed, a gradient's size, and the optimizer
///   creates state -> Parameter (parameters);
/// - buffer: 700 B at 60, never freed, no gradient of its size -> NoRule (unknown);
/// - act: 4000 B at 150 (forward), freed at 250 (backward) -> activations;
/// - scratch: 300 B at 160, freed at 180, both in forward -> temporaries;
/// - grad: 1000 B at 220 (backward), freed at 350 (optimizer) -> gradients;
/// - state: 2000 B at 320 (optimizer), never freed -> optimizer state.
struct RoleFixture {
    TraceData d;
    trace::StackId model{0}, block{0}, scratch{0}, accumulate{0}, update{0};
    RoleFixture() {
        const auto frame = [&](const char* name, int line) {
            return d.internFrame({d.intern(name), d.intern("train.py"), line});
        };
        const trace::FrameId main = frame("main", 1);
        model = d.internStack({frame("build_model", 2), main});
        block = d.internStack({frame("block", 3), main});
        scratch = d.internStack({frame("tmp_buffer", 4), frame("block", 3), main});
        accumulate = d.internStack({frame("accumulate", 5), main});
        update = d.internStack({frame("update", 6), main});
        const auto range = [&](const char* name, int64_t start, int64_t end) {
            trace::RangeEvent r;
            r.startNs = start;
            r.endNs = end;
            r.name = d.intern(name);
            r.threadId = 1;
            d.ranges.append(r);
        };
        range("forward", 100, 200);
        range("backward", 200, 300);
        range("optimizer", 300, 400);
        allocWithStack(d, 50, 0x10, 1000, model);
        allocWithStack(d, 60, 0x60, 700, model);
        allocWithStack(d, 150, 0x20, 4000, block);
        allocWithStack(d, 160, 0x30, 300, scratch);
        release(d, 180, 0x30, 300);
        allocWithStack(d, 220, 0x40, 1000, accumulate);
        release(d, 250, 0x20, 4000);
        allocWithStack(d, 320, 0x50, 2000, update);
        release(d, 350, 0x40, 1000);
    }
    std::shared_ptr<const AllocationIndex> index() const {
        return std::make_shared<const AllocationIndex>(d, trace::DeviceIndex{0},
                                                       MemoryLevel::Allocated);
    }
};

/// The top-level nodes of a tree as (name, bytes), in the tree's order.
std::vector<std::pair<std::string, int64_t>> topLevel(const FlameTree& t) {
    std::vector<std::pair<std::string, int64_t>> out;
    for (uint32_t c : t.root().children) {
        out.emplace_back(t.nodes[c].name, t.nodes[c].bytes);
    }
    return out;
}

TEST(FlameTree, GroupsTheLiveSetByRoleThenStack) {
    RoleFixture f;
    const auto index = f.index();
    const auto roles =
        std::make_shared<const MemoryRoles>(MemoryRoles::classify(f.d, *index, IterationSet{}));
    FlameTreeBuilder b(f.d, index, roles);
    // At 230 (in backward): weights, buffer, act and grad are alive; scratch was freed at 180.
    const FlameTree t = b.at(230, FlameGrouping::Role);
    EXPECT_EQ(t.grouping, FlameGrouping::Role);
    EXPECT_EQ(t.root().bytes, 1000 + 700 + 4000 + 1000);
    EXPECT_EQ(t.root().count, 4);
    using Top = std::vector<std::pair<std::string, int64_t>>;
    // Largest first, ties by name.
    EXPECT_EQ(
        topLevel(t),
        (Top{{"activations", 4000}, {"gradients", 1000}, {"parameters", 1000}, {"unknown", 700}}));
    // Below the role: the stack, outermost frame first, as in Stack grouping.
    const FlameNode& act = t.nodes[t.root().children[0]];
    ASSERT_EQ(act.children.size(), 1u);
    const FlameNode& actMain = t.nodes[act.children[0]];
    EXPECT_EQ(actMain.name, "main (train.py:1)");
    ASSERT_EQ(actMain.children.size(), 1u);
    EXPECT_EQ(t.nodes[actMain.children[0]].name, "block (train.py:3)");
    EXPECT_EQ(t.path(actMain.children[0]),
              (std::vector<std::string>{"activations", "main (train.py:1)", "block (train.py:3)"}));

    // At 360 (after the gradients were freed in the optimizer step): weights, buffer, state.
    const FlameTree later = b.at(360, FlameGrouping::Role);
    EXPECT_EQ(topLevel(later),
              (Top{{"optimizer state", 2000}, {"parameters", 1000}, {"unknown", 700}}));
    // At 170 the scratch buffer is alive inside forward: a temporary.
    const FlameTree early = b.at(170, FlameGrouping::Role);
    EXPECT_EQ(
        topLevel(early),
        (Top{{"activations", 4000}, {"parameters", 1000}, {"unknown", 700}, {"temporaries", 300}}));
    // A diff by role: from 230 to 360 activations and gradients went, optimizer state came.
    const FlameTree grew = b.diff(230, 360, FlameGrouping::Role);
    EXPECT_EQ(topLevel(grew), (Top{{"optimizer state", 2000},
                                   {"parameters", 0},
                                   {"unknown", 0},
                                   {"gradients", -1000},
                                   {"activations", -4000}}));
}

TEST(FlameTree, RoleGroupingWithoutRolesIsOneNodeThatSaysSo) {
    RoleFixture f;
    FlameTreeBuilder b(f.d, f.index());
    const FlameTree t = b.at(230, FlameGrouping::Role);
    using Top = std::vector<std::pair<std::string, int64_t>>;
    EXPECT_EQ(topLevel(t), (Top{{kNoRolesLabel, 6700}}));
    EXPECT_TRUE(t.nodes[t.root().children[0]].children.empty());
}

TEST(RoleLayers, StacksTheRolesInTheFixedOrderOnTheShiftedAxis) {
    RoleFixture f;
    const auto index = f.index();
    const MemoryRoles roles = MemoryRoles::classify(f.d, *index, IterationSet{});
    const RoleLayers layers = buildRoleLayers(buildRoleSeries(f.d, *index, roles), 1000);
    // Roles that hold bytes at some time, bottom first (no inputs, no persistent memory).
    EXPECT_EQ(layers.roles,
              (std::vector<MemoryRole>{MemoryRole::Parameters, MemoryRole::OptimizerState,
                                       MemoryRole::Gradients, MemoryRole::Activations,
                                       MemoryRole::Temporaries, MemoryRole::Unknown}));
    ASSERT_EQ(layers.tops.size(), layers.roles.size());
    // At trace time 230 = 1230 on the shifted axis; by hand from the fixture's comment.
    const std::vector<int64_t> at230 = {1000, 0, 1000, 4000, 0, 700};
    for (size_t k = 0; k < at230.size(); ++k) {
        EXPECT_EQ(layers.layerBytesAt(k, 1230), at230[k]) << k;
    }
    EXPECT_EQ(layers.tops.back().series().valueAt(1230), 6700);
    EXPECT_EQ(layers.tops.back().series().valueAt(1170), 1000 + 700 + 4000 + 300);
    EXPECT_EQ(layers.layerBytesAt(4, 1170), 300);
    EXPECT_EQ(layers.tops.back().series().valueAt(1360), 1000 + 700 + 2000);
    // Before the first allocation nothing is stacked; the trace-time 230 is before the shift.
    EXPECT_EQ(layers.tops.back().series().valueAt(1049), 0);
    EXPECT_EQ(layers.tops.back().series().valueAt(230), 0);
}

}  // namespace
}  // namespace vramscope::analysis
