// Kineto attribution on a hand-written trace: the stack each `[memory]` event gets from the CPU
// ops and Python calls around it. Every expected stack is written by hand from the intervals.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vramscope/trace/importers.h"

namespace vramscope::trace {
namespace {

/// "name|file|line" of each frame of a stack, innermost first.
std::vector<std::string> frames(const TraceData& d, StackId stack) {
    std::vector<std::string> out;
    for (FrameId f : d.stacks.at(toInt(stack))) {
        const Frame& fr = d.frames.at(toInt(f));
        out.push_back(std::string(d.string(fr.name)) + "|" + std::string(d.string(fr.file)) + "|" +
                      std::to_string(fr.line));
    }
    return out;
}

/// The row of the memory event at `address` (addresses are unique in the trace below).
size_t rowAt(const TraceData& d, uint64_t address) {
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.address[i] == address) {
            return i;
        }
    }
    ADD_FAILURE() << "no memory event at " << address;
    return 0;
}

// Thread 1/1, times in us (the file is unsorted: memory first, children before parents):
//   Q  python "/opt/run (1)/train.py(7): <module>"  [0, 400)
//   P  python "model.py(12): forward"               [0, 200)
//   N  python "nn.Module: Net_0"                    [1, 150)
//   A  cpu_op "aten::linear"                        [0, 100)
//   U  user_annotation "## forward ##"              [5, 95)
//   B  cpu_op "aten::addmm"                         [10, 50)
//   C  cpu_op "aten::empty_strided"                 [50, 60)   starts where B ends
//   Z  cpu_op "aten::zero_dur"                      [20, 20)   no duration: encloses nothing
// Thread 1/2: D cpu_op "aten::copy_" [15, 25). Process 2, thread 1: nothing.
const char* kStacksTrace = R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 50,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 2000, "Bytes": 64, "Total Allocated": 216,
            "Total Reserved": 1024}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 20,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 1000, "Bytes": 128, "Total Allocated": 128,
            "Total Reserved": 1024}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 100,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 1000, "Bytes": -128, "Total Allocated": 88,
            "Total Reserved": 1024}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 500,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 3000, "Bytes": 32, "Total Allocated": 120,
            "Total Reserved": 1024}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 21,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 4000, "Bytes": 16, "Total Allocated": 144,
            "Total Reserved": 1024}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 2, "tid": 1, "ts": 22,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 5000, "Bytes": 8, "Total Allocated": 152,
            "Total Reserved": 1024}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::empty_strided", "pid": 1, "tid": 1, "ts": 50,
   "dur": 10, "args": {"Input Dims": [[4]]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10, "dur": 40},
  {"ph": "X", "cat": "cpu_op", "name": "aten::zero_dur", "pid": 1, "tid": 1, "ts": 20, "dur": 0},
  {"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 1, "tid": 1, "ts": 5,
   "dur": 90},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 2, "ts": 15, "dur": 10},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Net_0", "pid": 1, "tid": 1, "ts": 1,
   "dur": 149, "args": {"Python id": 3}},
  {"ph": "X", "cat": "python_function", "name": "model.py(12): forward", "pid": 1, "tid": 1,
   "ts": 0, "dur": 200},
  {"ph": "X", "cat": "python_function", "name": "/opt/run (1)/train.py(7): <module>", "pid": 1,
   "tid": 1, "ts": 0, "dur": 400}
]})";

TEST(KinetoStacks, MemoryEventGetsItsEnclosingSpansInnermostFirst) {
    auto r = importKinetoJson(kStacksTrace, "stacks.json");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const TraceData& d = r.value().data;
    const std::string linear = "aten::linear||0";
    const std::string forwardRange = "## forward ##||0";
    const std::string python[] = {"nn.Module: Net_0||0", "forward|model.py|12",
                                  "<module>|/opt/run (1)/train.py|7"};

    // 20 us: inside B, U, N, A, P, Q, innermost (latest start) first, operators and Python calls
    // as they nest (Z has no duration).
    const size_t m20 = rowAt(d, 1000);
    EXPECT_EQ(frames(d, d.memory.stack[m20]),
              (std::vector<std::string>{"aten::addmm||0", forwardRange, python[0], linear,
                                        python[1], python[2]}));
    // 50 us: B [10, 50) has ended, C [50, 60) has begun.
    const size_t m50 = rowAt(d, 2000);
    EXPECT_EQ(frames(d, d.memory.stack[m50]),
              (std::vector<std::string>{"aten::empty_strided||0", forwardRange, python[0], linear,
                                        python[1], python[2]}));
    // 100 us (the free of 1000): A [0, 100) has ended; only Python calls remain.
    size_t free100 = 0;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        free100 = d.memory.action[i] == MemoryAction::Free ? i : free100;
    }
    ASSERT_EQ(d.memory.action[free100], MemoryAction::Free);
    EXPECT_EQ(d.memory.timestampNs[free100], 100'000);
    EXPECT_EQ(frames(d, d.memory.stack[free100]),
              (std::vector<std::string>{python[0], python[1], python[2]}));
    // 500 us: after everything.
    EXPECT_EQ(toInt(d.memory.stack[rowAt(d, 3000)]), 0u);
    // Another thread of the same process has its own op.
    EXPECT_EQ(frames(d, d.memory.stack[rowAt(d, 4000)]),
              (std::vector<std::string>{"aten::copy_||0"}));
    // Another process with the same tid has none.
    EXPECT_EQ(toInt(d.memory.stack[rowAt(d, 5000)]), 0u);
}

TEST(KinetoStacks, AttributionKeepsSizesTimesAndAddresses) {
    auto r = importKinetoJson(kStacksTrace, "stacks.json");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const TraceData& d = r.value().data;
    // By hand from the file: (address, bytes, time) of each event, in time order.
    struct Row {
        uint64_t address;
        uint64_t bytes;
        TimestampNs ns;
        MemoryAction action;
    };
    const std::vector<Row> expected = {
        {1000, 128, 20'000, MemoryAction::Alloc}, {4000, 16, 21'000, MemoryAction::Alloc},
        {5000, 8, 22'000, MemoryAction::Alloc},   {2000, 64, 50'000, MemoryAction::Alloc},
        {1000, 128, 100'000, MemoryAction::Free}, {3000, 32, 500'000, MemoryAction::Alloc}};
    ASSERT_EQ(d.memory.size(), expected.size());  // Total Allocated starts at 128: nothing before
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(d.memory.address[i], expected[i].address) << i;
        EXPECT_EQ(d.memory.sizeBytes[i], expected[i].bytes) << i;
        EXPECT_EQ(d.memory.timestampNs[i], expected[i].ns) << i;
        EXPECT_EQ(d.memory.action[i], expected[i].action) << i;
    }
}

TEST(KinetoStacks, EventsWithoutEnclosingOpsKeepNoStack) {
    const char* trace = R"({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 5,
       "args": {"Device Type": 1, "Device Id": 0, "Addr": 64, "Bytes": 64}}]})";
    auto r = importKinetoJson(trace, "end.json");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const TraceData& d = r.value().data;
    ASSERT_EQ(d.memory.size(), 1u);
    EXPECT_EQ(toInt(d.memory.stack[0]), 0u);  // at the op's end: the op has returned
    EXPECT_EQ(d.stacks.size(), 1u);
}

}  // namespace
}  // namespace vramscope::trace
