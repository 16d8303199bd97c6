// The operator table and the share of peak memory that has a stack, on real Kineto traces.
// Expected values come from the JSON itself (tests/kineto_ops_json.h: the enclosing ops found by
// brute force with nlohmann-json), never from the importer.

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "kineto_ops_json.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/memory/memory_summary.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/memory/operator_memory.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

TEST(OperatorMemoryRealdata, BertSelfBytesAreTheInnermostOpsOfTheJsonAndSumToItsAllocations) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    const nlohmann::json doc = testdata::loadGzJson(realdata::kBertTrace);
    const auto spans = testdata::cpuSpans(doc);
    std::map<std::string, uint64_t> selfBytes;  // innermost enclosing op -> bytes, from the JSON
    std::map<std::string, uint64_t> selfCount;
    uint64_t allocBytes = 0;
    int64_t maxTotalAllocated = 0;
    for (const testdata::JsonMemory& m : testdata::cudaMemory(doc)) {
        if (m.bytes > 0) {
            const std::string op = testdata::innermostOperator(spans, m);
            const std::string row = op.empty() ? std::string(kNoOperatorRow) : op;
            selfBytes[row] += uint64_t(m.bytes);
            selfCount[row] += 1;
            allocBytes += uint64_t(m.bytes);
        }
    }
    for (const auto& e : testdata::eventsOf(doc)) {
        if (e.is_object() && e.value("name", "") == "[memory]" &&
            e["args"].value("Device Type", -1) == 1) {
            maxTotalAllocated =
                std::max(maxTotalAllocated, e["args"].value("Total Allocated", int64_t{0}));
        }
    }
    ASSERT_EQ(allocBytes, 47460864u);  // the positive Bytes of the CUDA [memory] events

    auto loaded = trace::openTrace(realdata::kBertTrace);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    const trace::TraceData& d = loaded.value().data;
    const AllocationIndex index(d, trace::DeviceIndex{0}, trace::MemoryLevel::Allocated);
    MemorySummary summary;
    for (const MemoryTimeline& tl : buildMemoryTimelines(d)) {
        if (tl.device == trace::DeviceIndex{0}) {
            summary = summarizeMemory(tl);
        }
    }
    const OperatorMemoryTable t = operatorMemory(d, index, summary.detailPeakTimeNs());
    ASSERT_TRUE(t.hasOperators());
    EXPECT_EQ(t.bytes, allocBytes);
    const OperatorMemoryRow all = sumRows(t.rows, 0, "all");
    EXPECT_EQ(all.selfBytes, allocBytes);
    EXPECT_EQ(all.selfAllocations, 109u);
    ASSERT_EQ(t.rows.size() >= selfBytes.size(), true);
    for (const OperatorMemoryRow& r : t.rows) {
        EXPECT_EQ(r.selfBytes, selfBytes.count(r.name) ? selfBytes[r.name] : 0u) << r.name;
        EXPECT_EQ(r.selfAllocations, selfCount.count(r.name) ? selfCount[r.name] : 0u) << r.name;
    }
    // At the peak the producer's Total Allocated is what is alive: the table's part plus the
    // memory allocated before the trace began.
    ASSERT_TRUE(t.peakKnown);
    EXPECT_EQ(int64_t(t.peakBytes + t.preExistingPeakBytes), maxTotalAllocated);
    EXPECT_EQ(all.selfPeakBytes, t.peakBytes);
}

/// Bytes alive at the detail level's peak, and those with a stack (any frame) or an operator.
struct PeakShare {
    bool known = false;  ///< the live set can be rebuilt
    uint64_t alive = 0;  ///< bytes alive at the peak (PreExisting included)
    uint64_t preExisting = 0;
    uint64_t withStack = 0;  ///< of `alive`, with a non-empty stack
    uint64_t allocated = 0;  ///< bytes of every allocation event of the level (PreExisting not)
    uint64_t allocatedWithStack = 0;
};

PeakShare peakShare(const trace::TraceData& d, trace::DeviceIndex dev) {
    PeakShare s;
    const trace::MemoryLevel level = detailLevel(d, dev);
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.device[i] == dev && d.memory.level[i] == level &&
            d.memory.action[i] == trace::MemoryAction::Alloc &&
            d.memory.kind[i] != trace::MemoryKind::PreExisting) {
            s.allocated += d.memory.sizeBytes[i];
            s.allocatedWithStack += toInt(d.memory.stack[i]) != 0 ? d.memory.sizeBytes[i] : 0;
        }
    }
    s.known = liveSetEvidence(d, dev, level).known;
    if (!s.known) {
        return s;
    }
    MemorySummary summary;
    for (const MemoryTimeline& tl : buildMemoryTimelines(d)) {
        if (tl.device == dev) {
            summary = summarizeMemory(tl);
        }
    }
    for (const LiveAllocation& a : liveSetAt(d, dev, level, summary.detailPeakTimeNs())) {
        s.alive += a.sizeBytes;
        s.preExisting += a.kind == trace::MemoryKind::PreExisting ? a.sizeBytes : 0;
        s.withStack += toInt(a.stack) != 0 ? a.sizeBytes : 0;
    }
    return s;
}

// The figures of the attribution (before it, every Kineto allocation had no stack: 0 %). Printed
// for the record; the checks are that they add up.
TEST(OperatorMemoryRealdata, ShareOfPeakBytesWithAStack) {
    for (const std::string& file :
         {realdata::kBertTrace, realdata::kResnetTrace, realdata::kDfIndexTrace}) {
        VRAMSCOPE_REQUIRE_INPUT(file);
        auto loaded = trace::openTrace(file);
        ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
        const trace::TraceData& d = loaded.value().data;
        std::map<int32_t, bool> devices;
        for (trace::DeviceIndex dev : d.memory.device) {
            devices[toInt(dev)] = true;
        }
        for (const auto& [dev, seen] : devices) {
            const PeakShare s = peakShare(d, trace::DeviceIndex{dev});
            EXPECT_LE(s.allocatedWithStack, s.allocated);
            EXPECT_GT(s.allocatedWithStack, 0u) << file << " GPU " << dev;
            std::printf("%s GPU %d: allocated %s, with a stack %s (%s)", file.c_str(), dev,
                        formatBytes(double(s.allocated)).c_str(),
                        formatBytes(double(s.allocatedWithStack)).c_str(),
                        formatPercent(double(s.allocatedWithStack) / double(s.allocated)).c_str());
            if (s.known && s.alive > 0) {
                EXPECT_LE(s.withStack + s.preExisting, s.alive);
                std::printf(
                    "; alive at the peak %s, with a stack %s (%s; %s of what the trace "
                    "saw allocated, PreExisting %s left out)\n",
                    formatBytes(double(s.alive)).c_str(), formatBytes(double(s.withStack)).c_str(),
                    formatPercent(double(s.withStack) / double(s.alive)).c_str(),
                    formatPercent(double(s.withStack) / double(s.alive - s.preExisting)).c_str(),
                    formatBytes(double(s.preExisting)).c_str());
            } else {
                std::printf("; live set unknown (allocations without an address)\n");
            }
            if (file == realdata::kBertTrace) {
                // Every allocation of bert-small is inside an op (checked against the JSON in
                // KinetoStacksRealdata): all but the PreExisting memory has a stack.
                EXPECT_EQ(s.allocatedWithStack, s.allocated);
                EXPECT_EQ(s.withStack + s.preExisting, s.alive);
            }
        }
    }
}

}  // namespace
}  // namespace vramscope::analysis
