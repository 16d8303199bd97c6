// Chrome counter events ("ph":"C") of GPU memory, as vramscope's Chrome trace export writes them
// ("GPU <d> allocated" / "GPU <d> reserved", value in args "bytes"), become the device's totals;
// other counters are skipped, and a device with [memory] events keeps the totals written there.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vramscope/trace/importers.h"

namespace vramscope::trace {
namespace {

struct Sample {
    int64_t t;
    int device;
    CounterKind kind;
    double value;
    bool operator==(const Sample&) const = default;
};

std::vector<Sample> samplesOf(const TraceData& d) {
    std::vector<Sample> out;
    for (size_t i = 0; i < d.counters.size(); ++i) {
        const CounterSample s = d.counters.at(i);
        out.push_back({s.timestampNs, toInt(s.device), s.kind, s.value});
    }
    return out;
}

TEST(KinetoCounters, GpuMemoryCountersBecomeTheDevicesTotals) {
    const std::string json = R"({"traceEvents":[
      {"ph":"C","name":"GPU 1 allocated","pid":1,"ts":2.500,"args":{"bytes":4096}},
      {"ph":"C","name":"GPU 1 reserved","pid":1,"ts":1.000,"args":{"bytes":2097152}},
      {"ph":"C","name":"GPU 1 allocated","pid":1,"ts":3.001,"args":{"bytes":0}},
      {"ph":"C","name":"queue depth","pid":1,"ts":1.0,"args":{"bytes":7}},
      {"ph":"C","name":"GPU x allocated","pid":1,"ts":1.0,"args":{"bytes":7}},
      {"ph":"C","name":"GPU 2 allocated","pid":1,"ts":1.0,"args":{"value":7}}
    ],"displayTimeUnit":"ns"})";
    auto t = importKinetoJson(json, "counters.json");
    ASSERT_TRUE(t.ok()) << t.error().describe();
    // In time order; ts in microseconds with ns fractions.
    EXPECT_EQ(samplesOf(t->data),
              (std::vector<Sample>{{1000, 1, CounterKind::ReservedBytes, 2097152.0},
                                   {2500, 1, CounterKind::AllocatedBytes, 4096.0},
                                   {3001, 1, CounterKind::AllocatedBytes, 0.0}}));
}

TEST(KinetoCounters, MemoryEventsOfTheSameDeviceWinOverCounters) {
    const std::string json = R"({"traceEvents":[
      {"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1.0,
       "args":{"Device Type":1,"Device Id":0,"Addr":64,"Bytes":512,
               "Total Allocated":512,"Total Reserved":2048}},
      {"ph":"C","name":"GPU 0 allocated","pid":1,"ts":5.0,"args":{"bytes":999}}
    ]})";
    auto t = importKinetoJson(json, "both.json");
    ASSERT_TRUE(t.ok()) << t.error().describe();
    EXPECT_EQ(samplesOf(t->data),
              (std::vector<Sample>{{1000, 0, CounterKind::AllocatedBytes, 512.0},
                                   {1000, 0, CounterKind::ReservedBytes, 2048.0}}));
}

}  // namespace
}  // namespace vramscope::trace
