// The agent's host-memory sample, on this machine's procfs (no GPU needed): the statm parser on
// hand-written lines, and the live value against the kernel's VmRSS in /proc/self/status.
#include "host_memory_sampler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace vramscope::capture {
namespace {

TEST(HostMemorySampler, ResidentIsTheSecondStatmFieldTimesThePageSize) {
    // proc(5): size resident shared text lib data dt, in pages.
    EXPECT_EQ(residentBytesFromStatm("2613 1234 567 8 0 300 0\n", 4096), 1234u * 4096u);
    EXPECT_EQ(residentBytesFromStatm("  10   3 1 1 0 1 0", 65536), 3u * 65536u);
    EXPECT_FALSE(residentBytesFromStatm("2613", 4096).has_value());
    EXPECT_FALSE(residentBytesFromStatm("", 4096).has_value());
    EXPECT_FALSE(residentBytesFromStatm("a b", 4096).has_value());
    EXPECT_FALSE(residentBytesFromStatm("1 2", 0).has_value());
}

/// VmRSS of /proc/self/status in bytes (the kernel prints kB), 0 when absent.
uint64_t vmRssBytes() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024u;
        }
    }
    return 0;
}

TEST(HostMemorySampler, LiveValueAgreesWithTheKernelsVmRss) {
    const uint64_t status = vmRssBytes();
    if (status == 0) {
        GTEST_SKIP() << "no /proc/self/status VmRSS on this system";
    }
    const auto resident = readResidentBytes();
    ASSERT_TRUE(resident.has_value());
    // Both read the same counters a moment apart; allow 8 MiB of drift between the two reads.
    const uint64_t diff = *resident > status ? *resident - status : status - *resident;
    EXPECT_LT(diff, 8u << 20) << "statm " << *resident << " B, VmRSS " << status << " B";
}

TEST(HostMemorySampler, SampleIsAHostResidentCounterOnTheHost) {
    const trace::CounterSample s = hostResidentSample(7, 123, 5'000'000'000);
    EXPECT_EQ(s.name, 7u);
    EXPECT_EQ(s.timestampNs, 123);
    EXPECT_EQ(s.device, trace::kHostDevice);
    EXPECT_EQ(s.kind, trace::CounterKind::HostResidentBytes);
    EXPECT_EQ(s.value, 5e9);
}

}  // namespace
}  // namespace vramscope::capture
