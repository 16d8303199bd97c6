// Kineto attribution on a real with_stack trace: each CUDA `[memory]` event's stack against the
// CPU ops and Python calls that enclose it, recomputed by brute force from the JSON
// (tests/kineto_ops_json.h, nlohmann-json), independently of the importer.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kineto_ops_json.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

std::vector<std::string> frameTexts(const TraceData& d, StackId stack) {
    std::vector<std::string> out;
    for (FrameId f : d.stacks.at(toInt(stack))) {
        const Frame& fr = d.frames.at(toInt(f));
        out.push_back(std::string(d.string(fr.name)) + "|" + std::string(d.string(fr.file)) + "|" +
                      std::to_string(fr.line));
    }
    return out;
}

TEST(KinetoStacksRealdata, BertEveryCudaMemoryEventGetsItsEnclosingOpsAndPythonCalls) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    const nlohmann::json doc = testdata::loadGzJson(realdata::kBertTrace);
    const std::vector<testdata::JsonSpan> spans = testdata::cpuSpans(doc);
    const std::vector<testdata::JsonMemory> memory = testdata::cudaMemory(doc);
    ASSERT_EQ(memory.size(), 218u);  // counted in the file: 218 CUDA [memory] events, 109 allocs

    auto loaded = openTrace(realdata::kBertTrace);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    const TraceData& d = loaded.value().data;
    // The importer's events of the trace (PreExisting is not a [memory] event), in time order
    // as the JSON's, checked to be the same events by address and size before comparing stacks.
    std::vector<size_t> rows;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.kind[i] != MemoryKind::PreExisting) {
            rows.push_back(i);
        }
    }
    ASSERT_EQ(rows.size(), memory.size());
    size_t allocsWithOp = 0;
    size_t allocs = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
        const size_t i = rows[k];
        const testdata::JsonMemory& m = memory[k];
        ASSERT_EQ(d.memory.address[i], m.address) << k;
        ASSERT_EQ(int64_t(d.memory.sizeBytes[i]), m.bytes > 0 ? m.bytes : -m.bytes) << k;
        const std::vector<std::string> got = frameTexts(d, d.memory.stack[i]);
        EXPECT_EQ(got, testdata::expectedStack(spans, m)) << "event " << k;
        if (m.bytes > 0) {
            ++allocs;
            const std::string op = testdata::innermostOperator(spans, m);
            ASSERT_FALSE(op.empty()) << "alloc " << k << " outside every op";
            ASSERT_FALSE(got.empty());
            EXPECT_EQ(got.front(), op + "||0") << "alloc " << k;
            ++allocsWithOp;
        }
    }
    EXPECT_EQ(allocs, 109u);
    EXPECT_EQ(allocsWithOp, allocs);
}

}  // namespace
}  // namespace vramscope::trace
