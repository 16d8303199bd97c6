// The formulas and titles of the exportable views (analysis/view_formulas.h), which views have
// nothing to show, and the job's title (analysis/job_title.h).

#include <gtest/gtest.h>

#include <algorithm>

#include "vramscope/analysis/memory/memory_summary.h"
#include "vramscope/analysis/model/job_title.h"
#include "vramscope/analysis/model/view_formulas.h"

using namespace vramscope::analysis;

TEST(ViewFormulas, EveryExportableViewHasATitleAndFormulas) {
    ASSERT_EQ(exportableViews().size(), 8u);
    for (std::string_view v : exportableViews()) {
        EXPECT_TRUE(isExportableView(v));
        EXPECT_FALSE(viewTitle(v).empty()) << v;
        EXPECT_FALSE(viewFormulas(v).empty()) << v;
    }
    EXPECT_FALSE(isExportableView("heatmap"));
    EXPECT_TRUE(viewFormulas("heatmap").empty());
    EXPECT_TRUE(viewTitle("heatmap").empty());
}

TEST(ViewFormulas, SayWhatDesignMdDefines) {
    const auto has = [](std::string_view view, std::string_view words) {
        const auto f = viewFormulas(view);
        return std::any_of(f.begin(), f.end(), [&](const std::string& s) {
            return s.find(words) != std::string::npos;
        });
    };
    // docs/DESIGN.md "Metric definitions" and "NCCL collectives".
    EXPECT_TRUE(has("lanes", "minus the union of all its kernel intervals"));
    EXPECT_TRUE(has("lanes", "algBw x 2(n-1)/n for all-reduce"));
    EXPECT_TRUE(has("timeline", "sum of the sizes of live allocations"));
    // The share's formula as MemorySummary::peakShare computes it (memory_summary.h): the larger
    // of the two peaks, so that a trace of the allocated level alone still has a share.
    EXPECT_TRUE(has("timeline", "max(peak reserved, peak allocated) / device total memory"));
    EXPECT_TRUE(has("timeline", "docs/DESIGN.md, \"The 80 % capacity rule\""));
    MemorySummary allocatedOnly;
    allocatedOnly.capacityBytes = 1000;
    allocatedOnly.hasAllocated = true;
    allocatedOnly.peakAllocatedBytes = 600;
    allocatedOnly.peakReservedBytes = 0;
    ASSERT_TRUE(allocatedOnly.peakShare().has_value());
    EXPECT_DOUBLE_EQ(*allocatedOnly.peakShare(), 0.6);  // 600 / 1000, not 0 / 1000
    // The warning line's share is the one the plots draw (kCapacityWarningShare = 0.8).
    EXPECT_DOUBLE_EQ(kCapacityWarningShare, 0.8);
    EXPECT_TRUE(has("timeline", "80 % of capacity"));
    EXPECT_TRUE(has("advice", "GPUs x step time [h] x steps"));
    EXPECT_TRUE(has("segments", "1 - largest free block / all free space"));
}

TEST(JobTitle, NamesOneInputByItsNameAndSeveralByTheirCount) {
    EXPECT_EQ(jobTitle({"/data/run.vscope"}), "run.vscope");
    EXPECT_EQ(jobTitle({"/data/job/"}), "job");
    // The GUI said "2 files" and `export` "2 inputs": an input may be a directory or an archive.
    EXPECT_EQ(jobTitle({"a.vscope", "dir"}), "2 inputs");
    EXPECT_EQ(jobTitle({}), "bundled sample");
}
