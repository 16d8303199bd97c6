// The id types of trace_data.h are distinct: a rank, a device index, a stack id and a frame id do
// not convert into one another or into an integer, so swapping two of them does not compile.
// The static_asserts are the test; the runtime cases check toInt() and what the ids are used for
// (ordered and hashed keys, the typed constants).

#include "vramscope/trace/trace_data.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <type_traits>
#include <unordered_set>

using namespace vramscope::trace;

namespace {

template <typename A, typename B>
constexpr bool kConvertsEitherWay = std::is_convertible_v<A, B> || std::is_convertible_v<B, A>;

// No id converts to another id.
static_assert(!kConvertsEitherWay<DeviceIndex, RankId>);
static_assert(!kConvertsEitherWay<DeviceIndex, StackId>);
static_assert(!kConvertsEitherWay<DeviceIndex, FrameId>);
static_assert(!kConvertsEitherWay<RankId, StackId>);
static_assert(!kConvertsEitherWay<RankId, FrameId>);
static_assert(!kConvertsEitherWay<StackId, FrameId>);

// No id converts to or from an integer (or a size, as an index into a table would be).
static_assert(!kConvertsEitherWay<DeviceIndex, int>);
static_assert(!kConvertsEitherWay<RankId, int>);
static_assert(!kConvertsEitherWay<StackId, int>);
static_assert(!kConvertsEitherWay<FrameId, int>);
static_assert(!kConvertsEitherWay<StackId, uint32_t>);
static_assert(!kConvertsEitherWay<FrameId, uint32_t>);
static_assert(!kConvertsEitherWay<DeviceIndex, size_t>);
static_assert(!kConvertsEitherWay<RankId, size_t>);

// Not assignable from one another either (assignment is what a mixed-up field would do).
static_assert(!std::is_assignable_v<DeviceIndex&, RankId>);
static_assert(!std::is_assignable_v<RankId&, DeviceIndex>);
static_assert(!std::is_assignable_v<StackId&, FrameId>);
static_assert(!std::is_assignable_v<FrameId&, StackId>);
static_assert(!std::is_assignable_v<DeviceIndex&, int>);

// Each is its own type, as small as the integer it wraps, and toInt gives that integer back.
static_assert(!std::is_same_v<DeviceIndex, RankId>);
static_assert(!std::is_same_v<StackId, FrameId>);
static_assert(sizeof(DeviceIndex) == sizeof(int32_t) && sizeof(RankId) == sizeof(int32_t));
static_assert(sizeof(StackId) == sizeof(uint32_t) && sizeof(FrameId) == sizeof(uint32_t));
static_assert(std::is_same_v<decltype(toInt(DeviceIndex{})), int32_t>);
static_assert(std::is_same_v<decltype(toInt(RankId{})), int32_t>);
static_assert(std::is_same_v<decltype(toInt(StackId{})), uint32_t>);
static_assert(std::is_same_v<decltype(toInt(FrameId{})), uint32_t>);

// The fields that hold them have the id type, not a bare integer.
static_assert(std::is_same_v<decltype(FileHeader::rank), RankId>);
static_assert(std::is_same_v<decltype(FileHeader::localRank), RankId>);
static_assert(std::is_same_v<decltype(CollectiveEvent::rank), RankId>);
static_assert(std::is_same_v<decltype(MemoryEvent::device), DeviceIndex>);
static_assert(std::is_same_v<decltype(MemoryEvent::stack), StackId>);
static_assert(std::is_same_v<decltype(DeviceInfo::index), DeviceIndex>);
static_assert(std::is_same_v<decltype(TraceData::stacks)::value_type::value_type, FrameId>);

// toInt accepts the four ids and nothing else (a plain integer or another enum is refused).
template <typename T>
concept HasToInt = requires(T t) {
    toInt(t);
};
static_assert(HasToInt<DeviceIndex> && HasToInt<RankId> && HasToInt<StackId> && HasToInt<FrameId>);
static_assert(!HasToInt<int> && !HasToInt<MemoryKind>);

TEST(StrongIds, ToIntGivesBackTheNumberAnIdWasMadeFrom) {
    EXPECT_EQ(toInt(DeviceIndex{7}), 7);
    EXPECT_EQ(toInt(DeviceIndex{-1}), -1);
    EXPECT_EQ(toInt(RankId{127}), 127);
    EXPECT_EQ(toInt(RankId{INT32_MAX}), INT32_MAX);
    EXPECT_EQ(toInt(StackId{0}), 0u);
    EXPECT_EQ(toInt(StackId{UINT32_MAX}), UINT32_MAX);
    EXPECT_EQ(toInt(FrameId{42}), 42u);
    // And back: an id made from toInt's result is the same id.
    const DeviceIndex d{3};
    EXPECT_EQ(DeviceIndex{toInt(d)}, d);
    const FrameId f{9};
    EXPECT_EQ(FrameId{toInt(f)}, f);
}

TEST(StrongIds, ConstantsAreMinusOneOfTheirType) {
    EXPECT_EQ(toInt(kHostDevice), -1);
    EXPECT_EQ(toInt(kUnknownRank), -1);
    EXPECT_EQ(FileHeader{}.rank, kUnknownRank);
    EXPECT_EQ(RangeEvent{}.device, kHostDevice);
}

TEST(StrongIds, IdsOrderAndHashAsTheirNumbers) {
    // Maps and sets keyed by an id order as the numbers do (the CLI lists devices and ranks in
    // that order), and an unordered set tells ids apart.
    const std::set<DeviceIndex> devices{DeviceIndex{2}, kHostDevice, DeviceIndex{0}};
    std::vector<int32_t> order;
    for (DeviceIndex d : devices) {
        order.push_back(toInt(d));
    }
    EXPECT_EQ(order, (std::vector<int32_t>{-1, 0, 2}));
    std::map<RankId, int> byRank{{RankId{5}, 1}, {RankId{1}, 2}};
    EXPECT_EQ(byRank.begin()->first, RankId{1});
    const std::unordered_set<StackId> stacks{StackId{1}, StackId{1}, StackId{4}};
    EXPECT_EQ(stacks.size(), 2u);
    EXPECT_LT(RankId{-1}, RankId{0});
    EXPECT_NE(DeviceIndex{1}, DeviceIndex{2});
}

TEST(StrongIds, StackIdsIndexTheStackTableThroughToInt) {
    TraceData data;
    const FrameId f = data.internFrame({data.intern("forward"), data.intern("model.py"), 3});
    const StackId s = data.internStack({f});
    ASSERT_EQ(toInt(s), 1u);  // stack 0 is the empty stack, so the first real one is 1
    ASSERT_EQ(data.stacks.size(), 2u);
    EXPECT_EQ(data.stacks[toInt(s)], std::vector<FrameId>{f});
    EXPECT_EQ(data.string(data.frames[toInt(f)].name), "forward");
}

}  // namespace
