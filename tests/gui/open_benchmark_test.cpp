// The opening benchmark's line, which bench/run_gui_open_bench.sh parses, from a hand-written
// /proc/self/status (proc(5): "VmRSS:" and "VmHWM:" in kB).
#include <gtest/gtest.h>

#include "open_benchmark.h"

using namespace vramscope;

TEST(OpenBenchmark, LineCarriesTheTimeAndBothMemoryFieldsWhenTheStatusHasThem) {
    const QByteArray status =
        "Name:\tvramscope\nVmPeak:\t  900000 kB\nVmHWM:\t   50000 kB\n"
        "VmRSS:\t   45348 kB\nThreads:\t12\n";
    EXPECT_EQ(app::openStageLine(app::OpenStage::Overview, 68, status),
              QStringLiteral("bench-open overview ms=68 rss_kb=45348 hwm_kb=50000"));
    EXPECT_EQ(app::openStageLine(app::OpenStage::Detail, 2369, status),
              QStringLiteral("bench-open detail ms=2369 rss_kb=45348 hwm_kb=50000"));
    EXPECT_EQ(app::openStageLine(app::OpenStage::Index, 0, status),
              QStringLiteral("bench-open index ms=0 rss_kb=45348 hwm_kb=50000"));
}

TEST(OpenBenchmark, MissingFieldReadsMinusOneWhenTheStatusLacksIt) {
    EXPECT_EQ(app::openStageLine(app::OpenStage::Detail, 5, "Name:\tx\nVmRSS:\t 12 kB\n"),
              QStringLiteral("bench-open detail ms=5 rss_kb=12 hwm_kb=-1"));
    EXPECT_EQ(app::openStageLine(app::OpenStage::Detail, 5, QByteArray()),
              QStringLiteral("bench-open detail ms=5 rss_kb=-1 hwm_kb=-1"));
}
