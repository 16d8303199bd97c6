// The segment layout on the H200 OOM snapshot, checked against the pickle's own fields read here
// with the data-only pickle parser (not through the importer): the dump's `segments` list at the
// trace's end, and at the OOM a replay of the raw trace entries written in this test.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gz_file.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "vramscope/analysis/memory/segments.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/pickle_reader.h"

namespace vramscope::analysis {
namespace {

using trace::PickleDocument;
using trace::PickleNodeId;

int64_t field(const PickleDocument& doc, PickleNodeId node, const char* key) {
    return doc.asInt(doc.get(node, key)).value_or(-1);
}

std::string text(const PickleDocument& doc, PickleNodeId node, const char* key) {
    return std::string(doc.asString(doc.get(node, key)).value_or(""));
}

/// What the test reads of the raw pickle for device 0.
struct Raw {
    /// The dump's segments: address -> (total_size, sum of requested_size of active blocks).
    std::map<int64_t, std::pair<int64_t, int64_t>> dumpSegments;
    /// The blocks active at the dump: address -> requested_size.
    std::map<int64_t, int64_t> dumpBlocks;
    std::vector<PickleNodeId> entries;  ///< device_traces[0]
};

Raw readRaw(const PickleDocument& doc) {
    Raw r;
    for (PickleNodeId s : doc.items(doc.get(doc.root(), "segments"))) {
        if (field(doc, s, "device") != 0) {
            continue;
        }
        int64_t active = 0;
        for (PickleNodeId b : doc.items(doc.get(s, "blocks"))) {
            const std::string state = text(doc, b, "state");
            if (state == "active_allocated" || state == "active_pending_free") {
                active += field(doc, b, "requested_size");
                r.dumpBlocks[field(doc, b, "address")] = field(doc, b, "requested_size");
            }
        }
        r.dumpSegments[field(doc, s, "address")] = {field(doc, s, "total_size"), active};
    }
    const auto traces = doc.items(doc.get(doc.root(), "device_traces"));
    if (!traces.empty()) {
        const auto e = doc.items(traces[0]);
        r.entries.assign(e.begin(), e.end());
    }
    return r;
}

/// Largest gap and free bytes of segments `segs` (address -> size) around `blocks` (address ->
/// size), each segment on its own.
std::pair<int64_t, int64_t> freeSpace(const std::map<int64_t, int64_t>& segs,
                                      const std::map<int64_t, int64_t>& blocks) {
    int64_t largest = 0;
    int64_t free = 0;
    for (const auto& [start, size] : segs) {
        const int64_t end = start + size;
        int64_t cursor = start;
        for (const auto& [a, s] : blocks) {
            if (a >= end || a + s <= start) {
                continue;
            }
            if (a > cursor) {
                free += a - cursor;
                largest = std::max(largest, a - cursor);
            }
            cursor = std::max(cursor, std::min(end, a + s));
        }
        if (end > cursor) {
            free += end - cursor;
            largest = std::max(largest, end - cursor);
        }
    }
    return {largest, free};
}

class H200OomSegments : public ::testing::Test {
protected:
    void SetUp() override {
        VRAMSCOPE_REQUIRE_INPUT(realdata::kGptOomSnapshot);
        m_bytes = testdata::readGzFile(realdata::kGptOomSnapshot);
        ASSERT_FALSE(m_bytes.empty());
        auto doc = trace::parsePickle(m_bytes, realdata::kGptOomSnapshot);
        ASSERT_TRUE(doc.ok()) << doc.error().describe();
        m_doc = std::move(doc).value();
        m_raw = readRaw(m_doc);
        auto t = trace::openTrace(realdata::kGptOomSnapshot);
        ASSERT_TRUE(t.ok()) << t.error().describe();
        m_trace = std::make_unique<trace::LoadedTrace>(std::move(t).value());
    }

    SegmentLayout layoutAt(trace::TimestampNs t) const {
        const trace::TraceData& d = m_trace->data;
        const AllocationIndex segments(d, trace::DeviceIndex{0}, trace::MemoryLevel::Reserved);
        const AllocationIndex blocks(d, trace::DeviceIndex{0}, trace::MemoryLevel::Allocated);
        return segmentLayoutAt(d, segments, blocks, t);
    }

    std::string m_bytes;
    PickleDocument m_doc;
    Raw m_raw;
    std::unique_ptr<trace::LoadedTrace> m_trace;
};

TEST_F(H200OomSegments, AtTheTraceEndTheLayoutIsTheDumpsSegments) {
    trace::TimestampNs last = 0;
    for (trace::TimestampNs t : m_trace->data.memory.timestampNs) {
        last = std::max(last, t);
    }
    const SegmentLayout l = layoutAt(last);
    ASSERT_TRUE(l.known) << l.reason;
    ASSERT_EQ(l.segments.size(), m_raw.dumpSegments.size());
    for (const Segment& s : l.segments) {
        auto it = m_raw.dumpSegments.find(int64_t(s.address));
        ASSERT_NE(it, m_raw.dumpSegments.end()) << "segment 0x" << std::hex << s.address;
        EXPECT_EQ(int64_t(s.sizeBytes), it->second.first) << std::hex << s.address;
        EXPECT_EQ(s.allocatedBytes, it->second.second) << std::hex << s.address;
    }
    EXPECT_EQ(l.totals.blocksOutsideSegments, 0u);
    EXPECT_EQ(l.totals.straddlingBlocks, 0u);
    EXPECT_EQ(l.totals.overlappingSegments, 0u);
}

TEST_F(H200OomSegments, AtTheOomTheLargestFreeBlockIsTheReplaysAndSmallerThanTheRequest) {
    // The state before recording: the dump's segments less those the trace allocates, and the
    // blocks active at the dump that the trace never allocates, plus those it frees unallocated.
    std::set<int64_t> allocatedInTrace;
    std::set<int64_t> segmentsInTrace;
    for (PickleNodeId e : m_raw.entries) {
        const std::string a = text(m_doc, e, "action");
        if (a == "alloc") {
            allocatedInTrace.insert(field(m_doc, e, "addr"));
        } else if (a == "segment_alloc") {
            segmentsInTrace.insert(field(m_doc, e, "addr"));
        }
    }
    std::map<int64_t, int64_t> segs;
    for (const auto& [address, sizes] : m_raw.dumpSegments) {
        if (!segmentsInTrace.count(address)) {
            segs[address] = sizes.first;
        }
    }
    std::map<int64_t, int64_t> blocks;
    for (const auto& [address, size] : m_raw.dumpBlocks) {
        if (!allocatedInTrace.count(address)) {
            blocks[address] = size;
        }
    }
    std::set<int64_t> seen;
    for (PickleNodeId e : m_raw.entries) {
        const std::string a = text(m_doc, e, "action");
        const int64_t addr = field(m_doc, e, "addr");
        if (a == "alloc") {
            seen.insert(addr);
        } else if (a == "free_completed" && seen.insert(addr).second) {
            blocks[addr] = field(m_doc, e, "size");
        }
    }
    // Replay up to the oom entry.
    int64_t requestBytes = -1;
    int64_t oomTimeUs = -1;
    for (PickleNodeId e : m_raw.entries) {
        const std::string a = text(m_doc, e, "action");
        const int64_t addr = field(m_doc, e, "addr");
        if (a == "oom") {
            requestBytes = field(m_doc, e, "size");
            oomTimeUs = field(m_doc, e, "time_us");
            break;
        }
        if (a == "alloc") {
            blocks[addr] = field(m_doc, e, "size");
        } else if (a == "free_completed") {
            blocks.erase(addr);
        } else if (a == "segment_alloc") {
            segs[addr] = field(m_doc, e, "size");
        } else if (a == "segment_free") {
            segs.erase(addr);
        }
    }
    // PyTorch's message: "Tried to allocate 1000.00 MiB".
    ASSERT_EQ(requestBytes, 1048576000);
    const auto [largest, free] = freeSpace(segs, blocks);
    int64_t reserved = 0;
    for (const auto& [a, s] : segs) {
        reserved += s;
    }

    ASSERT_EQ(m_trace->data.ooms.size(), 1u);
    const trace::OomEvent& oom = m_trace->data.ooms[0];
    EXPECT_EQ(oom.timestampNs, oomTimeUs * 1000);
    const SegmentLayout l = layoutAt(oom.timestampNs);
    ASSERT_TRUE(l.known) << l.reason;
    EXPECT_EQ(l.totals.segments, segs.size());
    EXPECT_EQ(l.totals.reservedBytes, reserved);
    EXPECT_EQ(l.totals.largestFreeBlockBytes, largest);
    EXPECT_EQ(l.totals.freeBytes, free);
    EXPECT_DOUBLE_EQ(l.totals.fragmentation, 1.0 - double(largest) / double(free));
    EXPECT_LT(l.totals.largestFreeBlockBytes, requestBytes);

    // What the report prints at the OOM is the same layout.
    std::vector<RankInput> inputs(1);
    inputs[0].data = &m_trace->data;
    JobAnalysisOptions options;
    options.threads = 1;
    auto job = analyzeJob(inputs, options);
    ASSERT_TRUE(job.ok());
    ASSERT_FALSE(job->devices.empty());
    ASSERT_EQ(job->devices[0].ooms.size(), 1u);
    const OomFacts& f = job->devices[0].ooms[0];
    ASSERT_TRUE(f.segments.known) << f.segments.reason;
    EXPECT_EQ(f.requestedBytes, uint64_t(requestBytes));
    EXPECT_EQ(f.largestFreeBlockBytes, largest);
    EXPECT_EQ(f.segmentFreeBytes, free);
    EXPECT_EQ(f.segments.totals.segments, segs.size());
    ASSERT_EQ(f.segments.largest.size(), 10u);
    EXPECT_EQ(f.segments.largest[0].sizeBytes, 1048576000u);  // the largest segments, 1000 MiB
}

}  // namespace
}  // namespace vramscope::analysis
