#include "vramscope/analysis/export/speedscope_export.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "memory_events.h"
#include "refusal.h"

// speedscope files of hand-built flame trees: the frames, samples and weights written out by
// hand from the tree, and the facts of speedscope's file-format-schema.json.
namespace vramscope::analysis {
namespace {

using Json = nlohmann::json;
using ::vramscope::test::refused;

FlameNode node(std::string name, uint32_t parent, int64_t bytes, int64_t self,
               std::vector<uint32_t> children = {}) {
    FlameNode n;
    n.name = std::move(name);
    n.parent = parent;
    n.bytes = bytes;
    n.selfBytes = self;
    n.children = std::move(children);
    return n;
}

/// all (350) -> main (300, self 100) -> layer (200, self 200); all -> "(no stack)" (50, self 50);
/// "main" appears twice as a name (again under "(no stack)") to check that frames are shared.
FlameTree handTree() {
    FlameTree t;
    t.device = trace::DeviceIndex{2};
    t.timeNs = 1234;
    t.nodes.push_back(node("all", 0, 350, 0, {1, 3}));
    t.nodes.push_back(node("main", 0, 300, 100, {2}));
    t.nodes.push_back(node("layer", 1, 200, 200));
    t.nodes.push_back(node("(no stack)", 0, 50, 0, {4}));
    t.nodes.push_back(node("main", 3, 50, 50));
    return t;
}

Json written(const FlameTree& tree) {
    std::ostringstream out;
    EXPECT_TRUE(writeSpeedscope(tree, {"job.json", trace::RankId{1}}, out).ok());
    return Json::parse(out.str());
}

TEST(SpeedscopeExport, WritesOneSampledProfileInBytesWithRootFirstStacks) {
    const Json j = written(handTree());
    EXPECT_EQ(j["$schema"], "https://www.speedscope.app/file-format-schema.json");
    const Json expectedFrames = {{{"name", "main"}}, {{"name", "layer"}}, {{"name", "(no stack)"}}};
    EXPECT_EQ(j["shared"]["frames"], expectedFrames);
    ASSERT_EQ(j["profiles"].size(), 1u);
    const Json& p = j["profiles"][0];
    EXPECT_EQ(p["type"], "sampled");
    EXPECT_EQ(p["unit"], "bytes");
    EXPECT_EQ(p["startValue"], 0);
    EXPECT_EQ(p["endValue"], 350);
    EXPECT_EQ(p["samples"], Json::parse("[[0], [0, 1], [2, 0]]"));
    EXPECT_EQ(p["weights"], Json::parse("[100, 200, 50]"));
    EXPECT_EQ(p["name"], "job.json, rank 1 GPU 2, allocated at 1234 ns (trace clock), by stack");
    EXPECT_EQ(j["activeProfileIndex"], 0);
}

TEST(SpeedscopeExport, RefusesADiffTreeWhoseBytesMayBeNegative) {
    FlameTree t = handTree();
    t.isDiff = true;
    std::ostringstream out;
    const trace::Status s = writeSpeedscope(t, {}, out);
    EXPECT_TRUE(refused(s, trace::ErrorCode::Invalid,
                        {"a difference between two times has negative bytes"}));
    EXPECT_TRUE(out.str().empty());
}

TEST(SpeedscopeExport, AnEmptyLiveSetIsAProfileWithoutSamples) {
    FlameTree t;
    t.nodes.push_back(node("all", 0, 0, 0));
    const Json j = written(t);
    EXPECT_EQ(j["profiles"][0]["samples"], Json::array());
    EXPECT_EQ(j["profiles"][0]["endValue"], 0);
}

TEST(SpeedscopeExport, WeightsSumToTheLiveBytesOfABuiltTree) {
    // 100 B at 10 and 40 B at 20 alive at 25; 7 B freed at 22 before then: 140 B live.
    trace::TraceData d;
    test::addMemory(d, 10, 0xa, 100, trace::MemoryAction::Alloc);
    test::addMemory(d, 20, 0xb, 40, trace::MemoryAction::Alloc);
    test::addMemory(d, 21, 0xc, 7, trace::MemoryAction::Alloc);
    test::addMemory(d, 22, 0xc, 7, trace::MemoryAction::Free);
    FlameTreeBuilder builder(d, trace::DeviceIndex{0}, trace::MemoryLevel::Allocated);
    const Json j = written(builder.at(25, FlameGrouping::Category));
    int64_t sum = 0;
    for (const Json& w : j["profiles"][0]["weights"]) {
        sum += w.get<int64_t>();
    }
    EXPECT_EQ(sum, 140);
    for (const Json& sample : j["profiles"][0]["samples"]) {
        for (const Json& f : sample) {
            EXPECT_LT(f.get<size_t>(), j["shared"]["frames"].size());
        }
    }
}

}  // namespace
}  // namespace vramscope::analysis
