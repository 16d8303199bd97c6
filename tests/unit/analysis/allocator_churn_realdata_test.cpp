// Allocator churn on the real PyTorch memory snapshots of ../shared/realdata: the segment
// allocations and frees of each iteration are counted here from the pickle's raw trace entries
// (the data-only pickle parser, not the importer), over the iterations the analysis found, and
// the rule's verdict is derived from those counts.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <iostream>

#include "gz_file.h"
#include "realdata.h"
#include "vramscope/analysis/memory/allocator_churn.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/pickle_reader.h"

namespace vramscope::analysis {
namespace {

using trace::PickleDocument;
using trace::PickleNodeId;

struct RawCount {
    uint64_t allocs = 0;
    uint64_t frees = 0;
    uint64_t allocBytes = 0;
};

/// The raw trace entries of device `device` of the snapshot, counted per iteration: segment_alloc
/// / segment_map, segment_free / segment_unmap with time_us * 1000 inside [start, end).
std::vector<RawCount> countRaw(const PickleDocument& doc, int device,
                               const std::vector<Iteration>& its) {
    std::vector<RawCount> out(its.size());
    const auto traces = doc.items(doc.get(doc.root(), "device_traces"));
    if (size_t(device) >= traces.size()) {
        return out;
    }
    for (PickleNodeId e : doc.items(traces[size_t(device)])) {
        const std::string action(doc.asString(doc.get(e, "action")).value_or(""));
        const bool alloc = action == "segment_alloc" || action == "segment_map";
        const bool free = action == "segment_free" || action == "segment_unmap";
        if (!alloc && !free) {
            continue;
        }
        const PickleNodeId tn = doc.get(e, "time_us");
        const auto us = doc.asInt(tn);
        const int64_t t = us ? *us * 1000 : int64_t(doc.asFloat(tn).value_or(-1) * 1000.0);
        for (size_t i = 0; i < its.size(); ++i) {
            if (t >= its[i].startNs && t < its[i].endNs) {
                out[i].allocs += alloc ? 1 : 0;
                out[i].frees += free ? 1 : 0;
                out[i].allocBytes +=
                    alloc ? uint64_t(doc.asInt(doc.get(e, "size")).value_or(0)) : 0;
            }
        }
    }
    return out;
}

struct ChurnSnapshot {
    const char* path;
};

class SnapshotChurn : public ::testing::TestWithParam<ChurnSnapshot> {};

TEST_P(SnapshotChurn, CountsMatchTheRawEntriesAndTheVerdictFollowsThem) {
    const std::string path = std::string(VRAMSCOPE_REALDATA_DIR) + "/" + GetParam().path;
    VRAMSCOPE_REQUIRE_INPUT(path);
    const std::string bytes = testdata::readGzFile(path);
    ASSERT_FALSE(bytes.empty());
    auto doc = trace::parsePickle(bytes, path);
    ASSERT_TRUE(doc.ok()) << doc.error().describe();
    auto t = trace::openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    std::vector<RankInput> in(1);
    in[0].data = &t->data;
    JobAnalysisOptions options;
    options.threads = 1;
    auto job = analyzeJob(in, options);
    ASSERT_TRUE(job.ok());
    ASSERT_FALSE(job->devices.empty());
    for (const DeviceAnalysis& d : job->devices) {
        const AllocatorChurn& c = d.churn;
        const AdviceAssessment* verdict = nullptr;
        for (const AdviceAssessment& a : job->assessments) {
            if (a.rule == "allocator-churn" && a.device == d.device) {
                verdict = &a;
            }
        }
        ASSERT_NE(verdict, nullptr);
        std::cout << "[ churn ] " << GetParam().path << " GPU " << toInt(d.device) << ": "
                  << d.iterations.count() << " iterations (" << toString(d.iterations.source)
                  << "), " << toString(verdict->outcome) << ": " << verdict->detail << "\n";
        EXPECT_FALSE(c.timeKnown);  // a snapshot records no kernels
        const int dev = int(toInt(d.device));
        const Iteration whole{0, INT64_MIN, INT64_MAX, "whole trace"};
        if (countRaw(*doc, dev, {whole})[0].allocs == 0) {  // MAGMA27: blocks only
            EXPECT_FALSE(c.assessable);
            EXPECT_EQ(verdict->outcome, AssessmentOutcome::NotAssessed);
            EXPECT_NE(verdict->detail.find("no segment allocation"), std::string::npos)
                << verdict->detail;
            continue;
        }
        if (d.iterations.count() == 0) {
            EXPECT_FALSE(c.assessable);
            EXPECT_EQ(verdict->outcome, AssessmentOutcome::NotAssessed);
            EXPECT_NE(verdict->detail.find("no iterations"), std::string::npos) << verdict->detail;
            continue;
        }
        ASSERT_TRUE(c.assessable) << c.reason;
        const std::vector<RawCount> raw = countRaw(*doc, dev, d.iterations.iterations);
        ASSERT_EQ(c.iterations.size(), raw.size());
        size_t churning = 0;
        for (size_t i = 0; i < raw.size(); ++i) {
            EXPECT_EQ(c.iterations[i].segmentAllocs, raw[i].allocs) << i;
            EXPECT_EQ(c.iterations[i].segmentFrees, raw[i].frees) << i;
            EXPECT_EQ(c.iterations[i].allocBytes, raw[i].allocBytes) << i;
            churning += i > 0 && raw[i].allocs > 0 && raw[i].frees > 0 ? 1 : 0;
        }
        const size_t steady = raw.size() - 1;
        EXPECT_EQ(c.churnIterations, churning);
        const AssessmentOutcome expected = steady < 2 ? AssessmentOutcome::NotAssessed
                                           : double(churning) / double(steady) > 0.5
                                               ? AssessmentOutcome::Fired
                                               : AssessmentOutcome::Clear;
        EXPECT_EQ(verdict->outcome, expected) << verdict->detail;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Realdata, SnapshotChurn,
    ::testing::Values(ChurnSnapshot{"vramscope_h200/gpt_h200_leak.snapshot.pickle.gz"},
                      ChurnSnapshot{"vramscope_h200/gpt_h200_oom.snapshot.pickle.gz"},
                      ChurnSnapshot{"ZidongLiu_DeComFL/memory.pickle"},
                      ChurnSnapshot{"MAGMA27_assignment2-systems/memory_snapshot.pickle"},
                      ChurnSnapshot{"silmont2000_assignment2-systems/mem_snapshot.pickle"}),
    [](const ::testing::TestParamInfo<ChurnSnapshot>& info) {
        std::string n = info.param.path;
        n = n.substr(0, n.find('/'));
        for (char& ch : n) {
            ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
        }
        return n + "_" + std::to_string(info.index);
    });

}  // namespace
}  // namespace vramscope::analysis
