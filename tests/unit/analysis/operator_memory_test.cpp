// The per-operator memory table on a hand-built trace; every expected figure is worked out by hand
// in the comments from the events below.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory_events.h"
#include "vramscope/analysis/memory/operator_memory.h"

namespace vramscope::analysis {
namespace {

using test::addMemory;
using trace::FrameId;
using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;
using trace::StackId;

FrameId frame(trace::TraceData& d, const char* name, const char* file = "", int line = 0) {
    return d.internFrame({d.intern(name), d.intern(file), line});
}

const OperatorMemoryRow* findRow(const OperatorMemoryTable& t, const std::string& name) {
    for (const OperatorMemoryRow& r : t.rows) {
        if (r.name == name) {
            return &r;
        }
    }
    return nullptr;
}

struct OperatorStacksTrace {
    trace::TraceData d;
    OperatorStacksTrace() {
        const FrameId linear = frame(d, "aten::linear");
        const FrameId addmm = frame(d, "aten::addmm");
        const FrameId empty = frame(d, "aten::empty");
        const FrameId forward = frame(d, "forward", "model.py", 3);
        const FrameId module = frame(d, "nn.Module: Linear_0");
        const FrameId builtin = frame(d, "<built-in function linear>");
        const FrameId train = frame(d, "train", "train.py", 10);
        const StackId s1 = d.internStack({addmm, linear, builtin, module, forward});
        const StackId s2 = d.internStack({empty, addmm, linear, forward});
        const StackId s3 = d.internStack({forward, train});        // Python only: no operator
        const StackId s4 = d.internStack({addmm, linear, addmm});  // addmm twice
        const auto dev = trace::DeviceIndex{0};
        addMemory(d, 0, 0, 1000, MemoryAction::Alloc, MemoryLevel::Allocated, dev, StackId{0},
                  MemoryKind::PreExisting);
        addMemory(d, 5, 0x9000, 4096, MemoryAction::Alloc, MemoryLevel::Reserved, dev, s1);
        addMemory(d, 10, 0x100, 100, MemoryAction::Alloc, MemoryLevel::Allocated, dev, s1);  // A1
        addMemory(d, 20, 0x200, 200, MemoryAction::Alloc, MemoryLevel::Allocated, dev, s2);  // A2
        addMemory(d, 30, 0x300, 400, MemoryAction::Alloc, MemoryLevel::Allocated, dev, s3);  // A3
        addMemory(d, 40, 0x100, 100, MemoryAction::Free, MemoryLevel::Allocated, dev, s1);
        addMemory(d, 50, 0x400, 800, MemoryAction::Alloc, MemoryLevel::Allocated, dev, s4);  // A4
        addMemory(d, 60, 0x500, 50, MemoryAction::Alloc);                                    // A5
        addMemory(d, 70, 0x400, 800, MemoryAction::Free, MemoryLevel::Allocated, dev, s4);
    }
};

TEST(OperatorMemory, OperatorFramesAreFilelessNonPythonNames) {
    trace::TraceData d;
    EXPECT_TRUE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "aten::addmm")))));
    EXPECT_TRUE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "SumBackward0")))));
    EXPECT_TRUE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "ProfilerStep#6")))));
    EXPECT_TRUE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "## forward ##")))));
    EXPECT_FALSE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "nn.Module: Linear_0")))));
    EXPECT_FALSE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "<built-in method addmm>")))));
    EXPECT_FALSE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "forward", "model.py", 3)))));
    EXPECT_FALSE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "at::empty", "??", 0)))));
    EXPECT_FALSE(isOperatorFrame(d, d.frames.at(toInt(frame(d, "")))));
}

TEST(OperatorMemory, SelfIsTheInnermostOperatorAndTotalCountsEachAllocationOnce) {
    OperatorStacksTrace f;
    const AllocationIndex index(f.d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    // At 60 ns: A1 was freed at 40; A2, A3, A4, A5 and the PreExisting 1000 B are alive.
    const OperatorMemoryTable t = operatorMemory(f.d, index, 60);
    EXPECT_TRUE(t.hasOperators());
    EXPECT_TRUE(t.peakKnown);
    EXPECT_EQ(t.allocations, 5u);   // A1..A5 (PreExisting and the Reserved event are not)
    EXPECT_EQ(t.bytes, 1550u);      // 100 + 200 + 400 + 800 + 50
    EXPECT_EQ(t.peakBytes, 1450u);  // 200 + 400 + 800 + 50
    EXPECT_EQ(t.preExistingPeakBytes, 1000u);
    EXPECT_EQ(t.attributedAllocations, 3u);  // A1, A2, A4

    ASSERT_EQ(t.rows.size(), 4u);  // addmm, (no operator), empty, linear by self bytes
    EXPECT_EQ(t.rows[0].name, "aten::addmm");
    EXPECT_EQ(t.rows[1].name, kNoOperatorRow);
    EXPECT_EQ(t.rows[2].name, "aten::empty");
    EXPECT_EQ(t.rows[3].name, "aten::linear");
    const OperatorMemoryRow& addmm = t.rows[0];  // self A1, A4; total A1, A2, A4 (A4 once)
    EXPECT_EQ(addmm.selfAllocations, 2u);
    EXPECT_EQ(addmm.selfBytes, 900u);
    EXPECT_EQ(addmm.selfPeakBytes, 800u);
    EXPECT_EQ(addmm.totalAllocations, 3u);
    EXPECT_EQ(addmm.totalBytes, 1100u);
    EXPECT_EQ(addmm.totalPeakBytes, 1000u);
    const OperatorMemoryRow& none = t.rows[1];  // A3 (Python only) and A5 (no stack)
    EXPECT_EQ(none.selfAllocations, 2u);
    EXPECT_EQ(none.selfBytes, 450u);
    EXPECT_EQ(none.selfPeakBytes, 450u);
    EXPECT_EQ(none.totalBytes, 450u);
    const OperatorMemoryRow& empty = t.rows[2];
    EXPECT_EQ(empty.selfBytes, 200u);
    EXPECT_EQ(empty.totalPeakBytes, 200u);
    const OperatorMemoryRow& linear = t.rows[3];  // never innermost
    EXPECT_EQ(linear.selfAllocations, 0u);
    EXPECT_EQ(linear.totalAllocations, 3u);
    EXPECT_EQ(linear.totalBytes, 1100u);
    EXPECT_EQ(linear.totalPeakBytes, 1000u);
    EXPECT_EQ(findRow(t, "nn.Module: Linear_0"), nullptr);
    EXPECT_EQ(findRow(t, "forward"), nullptr);

    // The self columns account for every allocation.
    const OperatorMemoryRow all = sumRows(t.rows, 0, "all");
    EXPECT_EQ(all.selfAllocations, t.allocations);
    EXPECT_EQ(all.selfBytes, t.bytes);
    EXPECT_EQ(all.selfPeakBytes, t.peakBytes);
    const OperatorMemoryRow rest = sumRows(t.rows, 1, "rest");
    EXPECT_EQ(rest.name, "rest");
    EXPECT_EQ(rest.selfBytes, 650u);  // 450 + 200 + 0
}

TEST(OperatorMemory, PeakColumnsUnknownWhenAnAllocationHasNoAddress) {
    OperatorStacksTrace f;
    addMemory(f.d, 80, 0, 10, MemoryAction::Alloc);  // a producer that gave no address
    const AllocationIndex index(f.d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    const OperatorMemoryTable t = operatorMemory(f.d, index, 60);
    EXPECT_FALSE(t.peakKnown);
    EXPECT_EQ(t.allocations, 6u);
    EXPECT_EQ(t.bytes, 1560u);
    EXPECT_EQ(t.peakBytes, 0u);
    for (const OperatorMemoryRow& r : t.rows) {
        EXPECT_EQ(r.selfPeakBytes, 0u) << r.name;
        EXPECT_EQ(r.totalPeakBytes, 0u) << r.name;
    }
}

TEST(OperatorMemory, NoOperatorFramesMeansNoTable) {
    trace::TraceData d;
    const StackId python = d.internStack({frame(d, "forward", "model.py", 3)});
    addMemory(d, 10, 0x100, 64, MemoryAction::Alloc, MemoryLevel::Allocated, trace::DeviceIndex{0},
              python);
    const AllocationIndex index(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    const OperatorMemoryTable t = operatorMemory(d, index, 10);
    EXPECT_FALSE(t.hasOperators());
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_EQ(t.rows[0].name, kNoOperatorRow);
    EXPECT_EQ(t.rows[0].selfBytes, 64u);
}

}  // namespace
}  // namespace vramscope::analysis
