#pragma once
// A synthetic job (synthetic_job.h) generated and analysed whole, for the tests that check an
// analysis against the generator's formulas.

#include <gtest/gtest.h>

#include <vector>

#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis::test {

/// The generated ranks and their analysis (which points into `ranks`: keep them together).
struct AnalysedSyntheticJob {
    std::vector<trace::TraceData> ranks;
    JobAnalysis job;
};

/// Generates `spec` (a failed check if it gives fewer ranks than asked for) and analyses all its
/// ranks as one job.
inline AnalysedSyntheticJob analyseSyntheticJob(const SyntheticJobSpec& spec,
                                                const JobAnalysisOptions& options = {}) {
    AnalysedSyntheticJob a;
    a.ranks = generateSyntheticJob(spec);
    EXPECT_EQ(a.ranks.size(), size_t(spec.ranks)) << validateSyntheticJobSpec(spec);
    std::vector<RankInput> in;
    for (const trace::TraceData& d : a.ranks) {
        in.push_back({&d, d.header.rank, 0});
    }
    auto job = analyzeJob(in, options);
    EXPECT_TRUE(job.ok());
    a.job = std::move(job).value();
    return a;
}

}  // namespace vramscope::analysis::test
