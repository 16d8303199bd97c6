#include "vramscope/trace/trace_data.h"

#include <gtest/gtest.h>

using namespace vramscope::trace;

TEST(TraceData, InternReturnsSameIdForSameString) {
    TraceData data;
    EXPECT_EQ(data.intern(""), 0u);
    const StringId a = data.intern("ncclKernel_AllReduce");
    const StringId b = data.intern("gemm");
    EXPECT_NE(a, b);
    EXPECT_EQ(data.intern("ncclKernel_AllReduce"), a);
    EXPECT_EQ(data.string(a), "ncclKernel_AllReduce");
    EXPECT_EQ(data.strings.size(), 3u);
}

TEST(TraceData, InternStackSharesFramesAndEmptyStackIsZero) {
    TraceData data;
    const FrameId f1 = data.internFrame({data.intern("forward"), data.intern("model.py"), 10});
    const FrameId f2 = data.internFrame({data.intern("main"), data.intern("train.py"), 3});
    EXPECT_EQ(data.internFrame({data.intern("forward"), data.intern("model.py"), 10}), f1);
    EXPECT_EQ(data.internStack({}), StackId{0});
    const StackId s = data.internStack({f1, f2});
    EXPECT_EQ(data.internStack({f1, f2}), s);
    EXPECT_NE(data.internStack({f2, f1}), s);
}

TEST(TraceData, RebuildIndexesKeepsIdsOfDirectlyFilledTables) {
    TraceData data;
    data.strings = {"", "x", "y"};
    data.rebuildIndexes();
    EXPECT_EQ(data.intern("y"), 2u);
    EXPECT_EQ(data.intern("z"), 3u);
}

TEST(MemoryEvents, AppendAndAtRoundTripEveryColumn) {
    MemoryEvents m;
    const MemoryEvent e{123,
                        0x7f00,
                        4096,
                        MemoryAction::Free,
                        MemoryLevel::Reserved,
                        MemoryKind::Pool,
                        DeviceIndex{3},
                        7,
                        StackId{5},
                        2};
    m.append(e);
    const MemoryEvent r = m.at(0);
    EXPECT_EQ(r.timestampNs, 123);
    EXPECT_EQ(r.address, 0x7f00u);
    EXPECT_EQ(r.sizeBytes, 4096u);
    EXPECT_EQ(r.action, MemoryAction::Free);
    EXPECT_EQ(r.level, MemoryLevel::Reserved);
    EXPECT_EQ(r.kind, MemoryKind::Pool);
    EXPECT_EQ(r.device, DeviceIndex{3});
    EXPECT_EQ(r.stream, 7u);
    EXPECT_EQ(r.stack, StackId{5});
    EXPECT_EQ(r.nvtxRange, 2u);
}
