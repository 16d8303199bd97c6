// vramscope-capture-summary on a trace written with known events: the peaks and the live bytes at
// iteration ends are worked out by hand below.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "vramscope/trace/trace_file.h"

using namespace vramscope::trace;

namespace {

std::string runTool(const std::string& path, int& exitCode) {
    FILE* p = popen((std::string(VRAMSCOPE_SUMMARY_PATH) + " " + path + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n = 0;
    while (p != nullptr && (n = fread(buf, 1, sizeof(buf), p)) > 0) {
        out.append(buf, n);
    }
    const int status = p != nullptr ? pclose(p) : -1;
    exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

void add(TraceData& d, TimestampNs t, uint64_t address, uint64_t bytes, MemoryAction action,
         MemoryLevel level, MemoryKind kind = MemoryKind::Device) {
    MemoryEvent e;
    e.timestampNs = t;
    e.address = address;
    e.sizeBytes = bytes;
    e.action = action;
    e.level = level;
    e.kind = kind;
    d.memory.append(e);
}

}  // namespace

TEST(CaptureSummary, ComputesPeaksIterationsOomsAndLoss) {
    TraceData d;
    d.header.producer = "test";
    d.header.rank = RankId{3};
    d.header.worldSize = 4;
    d.header.captureSettings = {{"flush_ms", "200"}, {"PYTORCH_ALLOC_CONF", "a:\"b\""}};
    d.header.devices.push_back({DeviceIndex{0}, "GPU-x", "Test GPU", 80ull << 30});
    // reserved: +100 (t1), +50 (t2) -> 150 peak, free 100 (t3) -> 50 (the static 300 at t5 aside)
    add(d, 1, 0x1000, 100, MemoryAction::Alloc, MemoryLevel::Reserved);
    add(d, 2, 0x2000, 50, MemoryAction::Alloc, MemoryLevel::Reserved);
    // the free carries size 0: the tool must use the size the address was allocated with
    add(d, 3, 0x1000, 0, MemoryAction::Free, MemoryLevel::Reserved);
    // module globals: 300 B at t5 would make the reserved peak 350 if counted; they are not
    add(d, 5, 0x3000, 300, MemoryAction::Alloc, MemoryLevel::Reserved, MemoryKind::DeviceStatic);
    // allocated: +10, +20 -> 30 peak, free 10 -> 20
    add(d, 2, 0x9000, 10, MemoryAction::Alloc, MemoryLevel::Allocated, MemoryKind::Pool);
    add(d, 4, 0x9100, 20, MemoryAction::Alloc, MemoryLevel::Allocated, MemoryKind::Pool);
    add(d, 6, 0x9000, 10, MemoryAction::Free, MemoryLevel::Allocated, MemoryKind::Pool);
    // host memory never counts
    MemoryEvent host;
    host.timestampNs = 2;
    host.sizeBytes = 1000;
    host.device = kHostDevice;
    host.level = MemoryLevel::Reserved;
    d.memory.append(host);
    RangeEvent it0{0, 3, d.intern("iteration 0"), 0, 1, kHostDevice, RangeKind::Nvtx};
    RangeEvent fwd{0, 1, d.intern("forward"), 1, 1, kHostDevice, RangeKind::Nvtx};
    RangeEvent it1{3, 7, d.intern("iteration 1"), 0, 1, kHostDevice, RangeKind::Nvtx};
    d.ranges.append(it0);
    d.ranges.append(fwd);
    d.ranges.append(it1);
    d.ooms.push_back({8, DeviceIndex{0}, 7, 4096, 100});
    d.dataLoss.push_back({LossCounter::WriterQueueOverflow, 5, "kernel records", 0, 0});

    const std::string path = ::testing::TempDir() + "capture_summary_test.vscope";
    ASSERT_TRUE(writeTraceFile(path, d).ok());
    int exitCode = -1;
    const std::string json = runTool(path, exitCode);
    EXPECT_EQ(exitCode, 0) << json;
    EXPECT_NE(json.find("\"peak_reserved_bytes\":150"), std::string::npos) << json;
    EXPECT_NE(json.find("\"peak_allocated_bytes\":30"), std::string::npos) << json;
    EXPECT_NE(json.find("\"device_static_bytes\":300"), std::string::npos) << json;
    EXPECT_NE(json.find("\"rank\":3"), std::string::npos) << json;
    // the settings as written above, the quotes in the value escaped
    EXPECT_NE(json.find("\"capture_settings\":{\"flush_ms\":\"200\","
                        "\"PYTORCH_ALLOC_CONF\":\"a:\\\"b\\\"\"}}"),
              std::string::npos)
        << json;
    // iteration 0 ends at t=3; events at its end time count: reserved 150 - 100 = 50,
    // allocated 10
    EXPECT_NE(json.find("{\"index\":0,\"start_ns\":0,\"end_ns\":3,\"reserved_at_end\":50,"
                        "\"allocated_at_end\":10}"),
              std::string::npos)
        << json;
    // iteration 1 ends at t=7, after everything: reserved 50 (module globals aside), allocated 20
    EXPECT_NE(json.find("\"reserved_at_end\":50,\"allocated_at_end\":20"), std::string::npos)
        << json;
    EXPECT_NE(json.find("\"max_range_depth\":1"), std::string::npos) << json;
    EXPECT_NE(json.find("\"requested_bytes\":4096"), std::string::npos) << json;
    EXPECT_NE(json.find("\"data_loss_count\":5"), std::string::npos) << json;
}

TEST(CaptureSummary, FailsOnAFileThatIsNotATrace) {
    const std::string path = ::testing::TempDir() + "capture_summary_bad.vscope";
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("not a trace", f);
    std::fclose(f);
    int exitCode = -1;
    const std::string json = runTool(path, exitCode);
    EXPECT_EQ(exitCode, 1);
    EXPECT_NE(json.find("\"error\":"), std::string::npos) << json;
}
