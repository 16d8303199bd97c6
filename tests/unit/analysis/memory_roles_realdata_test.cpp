// Roles of memory on the two H200 snapshots, against the model's own definition
// (../shared/device/gpt_train.py): parameter bytes from its modules, AdamW's state from PyTorch's
// documented algorithm (two fp32 moments per parameter; `step` is a CPU tensor unless capturable
// or fused, so it takes no GPU memory).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "gpt_h200_workload.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "test_files.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

/// Parameter bytes of the model gpt_train.py defines, from its constants line
/// "V, D, L, H, T, B = ..." and the parameter counts of the torch.nn modules it uses (PyTorch
/// docs): Embedding(n, d) n*d; LayerNorm(d) 2d; MultiheadAttention(d) in_proj 3d*d + 3d and
/// out_proj d*d + d; Linear(i, o) i*o + o (no + o with bias=False). fp32 (the model is built in
/// fp32; autocast does not change parameters). Checks the definition still has that shape.
int64_t modelParameterBytes(const std::string& source) {
    std::smatch m;
    const std::regex constants(R"(V, D, L, H, T, B = (\d+), (\d+), (\d+), (\d+), (\d+), (\d+))");
    EXPECT_TRUE(std::regex_search(source, m, constants)) << "constants line changed";
    if (m.empty()) {
        return -1;
    }
    const int64_t V = std::stoll(m[1]), D = std::stoll(m[2]), L = std::stoll(m[3]),
                  T = std::stoll(m[5]);
    for (const char* part :
         {"nn.LayerNorm(D), nn.LayerNorm(D)", "nn.MultiheadAttention(D, H, batch_first=True)",
          "nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D)",
          "nn.Embedding(V, D), nn.Embedding(T, D)", "nn.Linear(D, V, bias=False)",
          "nn.ModuleList([Block() for _ in range(L)])", "self.ln, self.head = nn.LayerNorm(D)",
          "torch.optim.AdamW(model.parameters()"}) {
        EXPECT_NE(source.find(part), std::string::npos) << "model definition changed: " << part;
    }
    const int64_t block =
        2 * (2 * D) + (3 * D * D + 3 * D) + (D * D + D) + (D * 4 * D + 4 * D) + (4 * D * D + D);
    const int64_t params = V * D + T * D + L * block + 2 * D + D * V;
    return params * 4;
}

using testdata::readFile;

const DeviceAnalysis* analyze(const std::string& path, trace::LoadedTrace& keep, JobAnalysis& job) {
    auto t = trace::openTrace(path);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().describe());
    if (!t.ok()) {
        return nullptr;
    }
    keep = std::move(t).value();
    auto j = analyzeJob({RankInput{&keep.data, keep.data.header.rank, 0}});
    EXPECT_TRUE(j.ok());
    if (!j.ok() || j->devices.empty()) {
        return nullptr;
    }
    job = std::move(j).value();
    return &job.devices[0];
}

bool within(int64_t value, int64_t expected, double share) {
    return std::abs(double(value - expected)) <= share * double(expected);
}

TEST(MemoryRolesRealdata, LeakSnapshotParametersAndAdamStateMatchTheModel) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptLeakSnapshot);
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptTrainScript);
    const int64_t P = modelParameterBytes(readFile(realdata::kGptTrainScript));
    ASSERT_GT(P, 0);
    trace::LoadedTrace t;
    JobAnalysis job;
    const DeviceAnalysis* d = analyze(realdata::kGptLeakSnapshot, t, job);
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(d->rolesAtPeak.has_value());
    const RolesAt& r = *d->rolesAtPeak;
    EXPECT_TRUE(within(r.bytes[MemoryRole::Parameters], P, 0.01))
        << r.bytes[MemoryRole::Parameters] << " vs " << P;
    EXPECT_TRUE(within(r.bytes[MemoryRole::OptimizerState], 2 * P, 0.01))
        << r.bytes[MemoryRole::OptimizerState] << " vs " << 2 * P;
    EXPECT_LE(r.bytes[MemoryRole::Gradients], P);
    EXPECT_GT(r.bytes[MemoryRole::Gradients], 0);
    // The roles of the live set at the peak add up to the allocated peak.
    EXPECT_EQ(r.bytes.total(), d->memory.peakAllocatedBytes);
    // The kept logits (bf16 B x T x V, 2 bytes each) are activations kept past their iteration.
    EXPECT_GT(r.keptActivationBytes, 0);
    EXPECT_EQ(r.keptActivationBytes % int64_t(test::gpt_h200::kLogitsBytes), 0);
    // Every iteration's roles add up to its own peak.
    ASSERT_FALSE(d->iterationRoles.empty());
    for (const IterationRoles& it : d->iterationRoles) {
        EXPECT_EQ(it.roles.bytes.total(), it.peakBytes) << it.number;
    }
}

TEST(MemoryRolesRealdata, OomSnapshotPersistentIsParametersPlusAdamState) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptOomSnapshot);
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptTrainScript);
    const int64_t P = modelParameterBytes(readFile(realdata::kGptTrainScript));
    ASSERT_GT(P, 0);
    trace::LoadedTrace t;
    JobAnalysis job;
    const DeviceAnalysis* d = analyze(realdata::kGptOomSnapshot, t, job);
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(d->rolesAtPeak.has_value());
    const RolesAt& r = *d->rolesAtPeak;
    // Both were alive before recording began: not told apart, named persistent.
    EXPECT_EQ(r.bytes[MemoryRole::Parameters], 0);
    EXPECT_EQ(r.bytes[MemoryRole::OptimizerState], 0);
    EXPECT_TRUE(within(r.bytes[MemoryRole::Persistent], 3 * P, 0.01))
        << r.bytes[MemoryRole::Persistent] << " vs " << 3 * P;
    EXPECT_LE(r.bytes[MemoryRole::Gradients], P);
    EXPECT_EQ(r.bytes.total(), d->memory.peakAllocatedBytes);
}

}  // namespace
}  // namespace vramscope::analysis
