#include "vramscope/analysis/export/csv_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "memory_events.h"

// CSV tables of hand-built jobs: quoting, the memory rows and their --points reduction, tables
// a job cannot give. Expected texts are written out by hand from the events below.
namespace vramscope::analysis {
namespace {

using test::addMemory;
using trace::MemoryAction;
using trace::MemoryLevel;

trace::Job oneRank(trace::TraceData d, std::string path = "hand.vscope") {
    trace::Job job;
    trace::RankTrace rt;
    rt.path = std::move(path);
    rt.trace.data = std::move(d);
    job.ranks.push_back(std::move(rt));
    return job;
}

/// Rank 3, GPU 0: allocated 100 B at 1000, +50 B at 2000, -100 B at 4000; a 256 B segment at
/// 1000 (the same time as the first block); an iteration range [1500, 4500); two kernels with
/// commas and quotes in their names, [1000, 1200) and [1700, 1900): one gap [1200, 1700).
std::shared_ptr<const JobModel> handModel() {
    trace::TraceData d;
    d.header.rank = trace::RankId{3};
    addMemory(d, 1000, 0xa, 100, MemoryAction::Alloc);
    addMemory(d, 1000, 0x100, 256, MemoryAction::Alloc, MemoryLevel::Reserved);
    addMemory(d, 2000, 0xb, 50, MemoryAction::Alloc);
    addMemory(d, 4000, 0xa, 100, MemoryAction::Free);
    trace::RangeEvent range;
    range.startNs = 1500;
    range.endNs = 4500;
    range.name = d.intern("iteration 0");
    range.kind = trace::RangeKind::Iteration;
    d.ranges.append(range);
    trace::KernelEvent k;
    k.startNs = 1000;
    k.endNs = 1200;
    k.name = d.intern("gemm<float, 2>");
    d.kernels.append(k);
    k.startNs = 1700;
    k.endNs = 1900;
    k.name = d.intern("say \"relu\"");
    d.kernels.append(k);
    auto built = buildJobModel(oneRank(std::move(d)), "hand");
    EXPECT_TRUE(built.ok());
    return built.ok() ? built.value() : nullptr;
}

std::string csvOf(const JobModel& m, CsvTable table, size_t points = 0) {
    std::ostringstream out;
    auto written = writeCsv(m, {table, points}, out);
    EXPECT_TRUE(written.ok()) << (written.ok() ? "" : written.error().describe());
    return out.str();
}

TEST(CsvExport, FieldsAreQuotedAsRfc4180WhenTheyHoldCommasQuotesOrLineBreaks) {
    EXPECT_EQ(csvField("plain name"), "plain name");
    EXPECT_EQ(csvField("a,b"), "\"a,b\"");
    EXPECT_EQ(csvField("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csvField("two\nlines"), "\"two\nlines\"");
    EXPECT_EQ(csvField("cr\r"), "\"cr\r\"");
    EXPECT_EQ(csvField(""), "");
}

TEST(CsvExport, MemoryTableHasOneRowPerStepOnJobTimeWhenFullResolution) {
    auto m = handModel();
    ASSERT_TRUE(m);
    // Job time 0 = the first event, trace time 1000: rows at 0, 1000 and 3000 (ns), with their
    // trace times 1000, 2000 and 4000 (the events' own), both levels each.
    EXPECT_EQ(csvOf(*m, CsvTable::Memory),
              "rank,device,time_ns,trace_time_ns,allocated_bytes,reserved_bytes\r\n"
              "3,0,0,1000,100,256\r\n"
              "3,0,1000,2000,150,256\r\n"
              "3,0,3000,4000,50,256\r\n");
}

TEST(CsvExport, GapsTableQuotesKernelNamesAndGivesJobTime) {
    auto m = handModel();
    ASSERT_TRUE(m);
    EXPECT_EQ(csvOf(*m, CsvTable::Gaps),
              "rank,device,start_ns,end_ns,duration_ns,cause,kernel_before,kernel_after\r\n"
              "3,0,200,700,500," +
                  std::string(toString(GapCause::Other)) +
                  ",\"gemm<float, 2>\",\"say \"\"relu\"\"\"\r\n");
}

TEST(CsvExport, IterationsTableGivesEachIterationsPeaksAndLowsOnJobTime) {
    auto m = handModel();
    ASSERT_TRUE(m);
    // [1500, 4500) trace time = [500, 3500) job time: allocated 100 at its start, 150 from
    // 1000, 50 from 3000; reserved 256 throughout.
    EXPECT_EQ(csvOf(*m, CsvTable::Iterations),
              "rank,device,index,number,name,source,start_ns,end_ns,duration_ns,"
              "peak_allocated_bytes,peak_reserved_bytes,lowest_allocated_bytes,"
              "lowest_reserved_bytes\r\n"
              "3,0,0,0,iteration 0,ranges,500,3500,3000,150,256,50,256\r\n");
}

TEST(CsvExport, TableTheJobCannotGiveIsAnErrorNotAnEmptyFile) {
    trace::TraceData d;
    addMemory(d, 10, 0xa, 100, MemoryAction::Alloc);
    auto built = buildJobModel(oneRank(std::move(d)), "memory only");
    ASSERT_TRUE(built.ok());
    const JobModel& m = *built.value();
    for (CsvTable t : {CsvTable::Gaps, CsvTable::Collectives, CsvTable::Iterations}) {
        std::ostringstream out;
        auto written = writeCsv(m, {t, 0}, out);
        ASSERT_FALSE(written.ok()) << toString(t);
        EXPECT_EQ(written.error().code, trace::ErrorCode::Invalid);
        EXPECT_EQ(written.error().message, csvTableUnavailable(m, t));
        EXPECT_TRUE(out.str().empty()) << toString(t);
    }
    EXPECT_NE(csvTableUnavailable(m, CsvTable::Gaps).find("no GPU ran kernels"), std::string::npos);
    EXPECT_EQ(csvTableUnavailable(m, CsvTable::Memory), "");

    auto empty = buildJobModel(trace::Job{}, "nothing");
    ASSERT_TRUE(empty.ok());
    EXPECT_NE(csvTableUnavailable(*empty.value(), CsvTable::Memory), "");
}

TEST(CsvExport, MemoryRowsLeaveALevelEmptyBeforeItsFirstStep) {
    StepSeries a{{10, 30}, {5, 7}};
    StepSeries r{{20}, {64}};
    const std::vector<MemoryRow> rows = memoryRows(a, r);
    const std::vector<MemoryRow> expected = {{10, 5, std::nullopt}, {20, 5, 64}, {30, 7, 64}};
    EXPECT_EQ(rows, expected);
    EXPECT_EQ(memoryRows({}, {}).size(), 0u);
}

TEST(CsvExport, ReducedRowsKeepEachBucketsMaximaByHand) {
    // Ten rows at t = 0..9; two buckets of 5 ns: [0, 5) and [5, 10).
    std::vector<MemoryRow> rows;
    const int64_t alloc[] = {1, 9, 3, 2, 2, 4, 4, 8, 1, 0};
    const int64_t reserved[] = {10, 10, 10, 12, 12, 12, 12, 12, 20, 20};
    for (int64_t t = 0; t < 10; ++t) {
        rows.push_back({t, alloc[t], reserved[t]});
    }
    const std::vector<MemoryRow> expected = {
        {1, 9, 10},
        {3, 2, 12},  // bucket 0: allocated max at t=1, reserved max first at t=3
        {7, 8, 12},
        {8, 1, 20},  // bucket 1: allocated max at t=7, reserved max first at t=8
    };
    EXPECT_EQ(reduceMemoryRows(rows, 2), expected);
    EXPECT_EQ(reduceMemoryRows(rows, 0), rows);   // 0 = full resolution
    EXPECT_EQ(reduceMemoryRows(rows, 10), rows);  // no more rows than buckets
}

TEST(CsvExport, ReducedRowsNeverLoseEitherPeakWhateverTheBucketCount) {
    // A sawtooth with one narrow allocated spike and a reserved step that is held briefly.
    std::vector<MemoryRow> rows;
    for (int64_t i = 0; i < 997; ++i) {
        const int64_t t = i * 13 + (i % 7);
        int64_t a = 1000 + (i % 50) * 10;
        int64_t r = 4096 + (i / 100) * 512;
        if (i == 613) {
            a = 999'999;  // the allocated peak, one step wide
        }
        if (i == 271) {
            r = 77'777;  // the reserved peak, one step wide, elsewhere
        }
        rows.push_back({t, a, r});
    }
    auto maxOf = [](const std::vector<MemoryRow>& v, bool allocated) {
        int64_t best = 0;
        for (const MemoryRow& row : v) {
            best = std::max(best, allocated ? *row.allocatedBytes : *row.reservedBytes);
        }
        return best;
    };
    for (size_t buckets : {1u, 2u, 3u, 7u, 64u, 500u, 996u}) {
        const std::vector<MemoryRow> out = reduceMemoryRows(rows, buckets);
        EXPECT_LE(out.size(), 2 * buckets);
        EXPECT_EQ(maxOf(out, true), 999'999) << buckets;
        EXPECT_EQ(maxOf(out, false), 77'777) << buckets;
        for (const MemoryRow& row : out) {  // every row is a real step of the input
            EXPECT_NE(std::find(rows.begin(), rows.end(), row), rows.end());
        }
        EXPECT_TRUE(std::is_sorted(out.begin(), out.end(), [](const auto& x, const auto& y) {
            return x.timeNs < y.timeNs;
        }));
    }
}

TEST(CsvExport, TableNamesRoundTrip) {
    for (CsvTable t : csvTables()) {
        EXPECT_EQ(csvTableNamed(toString(t)), t);
    }
    EXPECT_FALSE(csvTableNamed("kernels").has_value());
}

}  // namespace
}  // namespace vramscope::analysis
