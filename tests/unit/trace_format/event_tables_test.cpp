// The per-column operations each event table gets from its one column list (trace_data.h,
// VRAMSCOPE_EVENT_TABLE): every field of the row struct is a column, and reserve, append, at,
// clear, keepRows, columnsAgree and == reach all of them.

#include <gtest/gtest.h>

#include "vramscope/trace/trace_data.h"

namespace vramscope::trace {
namespace {

/// Rows whose every field differs from its default and from the other row, so a field missing
/// from a column list reads back as its default and fails the round trip.
const MemoryEvent kMemoryRow{5,
                             0x7f00,
                             4096,
                             MemoryAction::Free,
                             MemoryLevel::Reserved,
                             MemoryKind::Pool,
                             DeviceIndex{3},
                             7,
                             StackId{5},
                             2};
const KernelEvent kKernelRow{10, 20, DeviceIndex{1}, 9, 4, KernelCategory::Memcpy, 8, 64, 77, 6};
const CollectiveEvent kCollectiveRow{
    100, 250, DeviceIndex{2},         11, 0xabc, RankId{3}, 8, 5, 42, 1 << 20, 6, 7, 8, 16,
    33,  1,   CollectiveTiming::Proxy};
const RangeEvent kRangeRow{1, 2, 3, 4, 5, DeviceIndex{6}, RangeKind::Iteration};
const CounterSample kCounterRow{9, 3, DeviceIndex{0}, CounterKind::ReservedBytes, 1.5};

template <class Table>
size_t tableColumnCount(const Table& t) {
    size_t n = 0;
    t.forEachColumn([&n](const auto&, auto) { ++n; });
    return n;
}

TEST(EventTables, EveryFieldOfTheRowIsAColumn) {
    // Counted by hand from the row structs in trace_data.h.
    EXPECT_EQ(tableColumnCount(MemoryEvents{}), 10u);
    EXPECT_EQ(tableColumnCount(KernelEvents{}), 10u);
    EXPECT_EQ(tableColumnCount(CollectiveEvents{}), 17u);
    EXPECT_EQ(tableColumnCount(RangeEvents{}), 7u);
    EXPECT_EQ(tableColumnCount(CounterSamples{}), 5u);
}

template <class Table, class Row>
void expectTableRoundTrip(const Row& row) {
    Table t;
    t.reserve(4);
    t.append(Row{});
    t.append(row);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_TRUE(t.columnsAgree());
    EXPECT_TRUE(t.at(0) == Row{});
    EXPECT_TRUE(t.at(1) == row);
    EXPECT_FALSE(t.at(0) == row);
}

TEST(EventTables, AppendAndAtRoundTripEveryField) {
    expectTableRoundTrip<MemoryEvents>(kMemoryRow);
    expectTableRoundTrip<KernelEvents>(kKernelRow);
    expectTableRoundTrip<CollectiveEvents>(kCollectiveRow);
    expectTableRoundTrip<RangeEvents>(kRangeRow);
    expectTableRoundTrip<CounterSamples>(kCounterRow);
}

TEST(EventTables, KeepRowsFiltersEveryColumnInOrder) {
    CollectiveEvents c;
    for (int64_t i = 0; i < 4; ++i) {
        CollectiveEvent e = kCollectiveRow;
        e.startNs = i;
        e.timing = i % 2 == 0 ? CollectiveTiming::Kernel : CollectiveTiming::Host;
        c.append(e);
    }
    c.keepRows({true, false, false, true});
    ASSERT_EQ(c.size(), 2u);
    EXPECT_TRUE(c.columnsAgree());
    EXPECT_EQ(c.at(0).startNs, 0);
    EXPECT_EQ(c.at(0).timing, CollectiveTiming::Kernel);
    EXPECT_EQ(c.at(1).startNs, 3);
    EXPECT_EQ(c.at(1).timing, CollectiveTiming::Host);
    EXPECT_EQ(c.at(1).peer, kCollectiveRow.peer);
}

TEST(EventTables, ClearEmptiesEveryColumn) {
    KernelEvents k;
    k.append(kKernelRow);
    k.clear();
    EXPECT_EQ(k.size(), 0u);
    EXPECT_TRUE(k.operandType.empty());
    EXPECT_TRUE(k == KernelEvents{});
}

TEST(EventTables, ColumnsAgreeFindsAShortColumn) {
    RangeEvents r;
    r.append(kRangeRow);
    EXPECT_TRUE(r.columnsAgree());
    r.kind.pop_back();  // the last column of the list
    EXPECT_FALSE(r.columnsAgree());
}

TEST(EventTables, EqualityComparesEveryColumn) {
    MemoryEvents a;
    a.append(kMemoryRow);
    MemoryEvents b = a;
    EXPECT_TRUE(a == b);
    b.nvtxRange[0] = 3;  // the last column of the list
    EXPECT_FALSE(a == b);
}

}  // namespace
}  // namespace vramscope::trace
