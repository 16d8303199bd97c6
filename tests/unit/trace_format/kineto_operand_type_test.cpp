// The operand type of each kernel (KernelEvents::operandType): the "Input type" of the matmul /
// convolution op around the runtime call that launched it. A hand-written trace with the
// expected type of every kernel written out, and two real traces whose expected types this test
// links itself from the raw JSON (nlohmann-json): kernel correlation -> runtime event (ts, pid,
// tid) -> the shortest matmul / convolution cpu_op on that thread whose [ts, ts + dur) holds it.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

using nlohmann::json;

/// The operand type of the kernel named `name` ("" when unknown); fails when it is not there.
std::string typeOf(const TraceData& d, const std::string& name) {
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        if (d.string(d.kernels.name[i]) == name) {
            return std::string(d.string(d.kernels.operandType[i]));
        }
    }
    ADD_FAILURE() << "no kernel " << name;
    return "?";
}

// Process 1, thread 1 (times in us):
//   aten::linear  [0, 100)   Input type c10::BFloat16
//   aten::addmm   [10, 50)   Input type "", c10::Half  (the first non-empty entry counts)
//   aten::t       [60, 70)   not a matmul op
//   aten::add     [290, 310) Input type c10::BFloat16, not a matmul op: not kept
// Process 1, thread 2: aten::conv2d [0, 100) Input type float, its args written before its name.
// Launches (cudaLaunchKernel, correlation -> ts / thread) and the type each kernel must get:
//   1: 20 on 1/1 -> addmm "c10::Half"        2: 55 on 1/1 -> linear "c10::BFloat16"
//   3: 50 on 1/1 (addmm's end: outside it) -> linear "c10::BFloat16"
//   4: 65 on 1/1, inside aten::t -> linear "c10::BFloat16"
//   5: 20 on 1/2 -> conv2d "float"           6: 200 on 1/1 -> no op ""
//   7: 20 on process 2, thread 1 -> ""       8: 300 on 1/1 inside aten::add -> ""
//   9: no runtime event -> ""
const char* kOperandTypesTrace = R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10, "dur": 40,
   "args": {"Input type": ["", "c10::Half", "c10::Half", "Scalar"], "Input Dims": [[], [4, 4]]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 0, "dur": 100,
   "args": {"Input type": ["c10::BFloat16", "c10::BFloat16", ""]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::t", "pid": 1, "tid": 1, "ts": 60, "dur": 10,
   "args": {"Input type": ["c10::BFloat16"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 290, "dur": 20,
   "args": {"Input type": ["c10::BFloat16"]}},
  {"ph": "X", "args": {"Input type": ["float", "float"]}, "cat": "cpu_op",
   "name": "aten::conv2d", "pid": 1, "tid": 2, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20,
   "dur": 1, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 55,
   "dur": 1, "args": {"correlation": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 50,
   "dur": 1, "args": {"correlation": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 65,
   "dur": 1, "args": {"correlation": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 20,
   "dur": 1, "args": {"correlation": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 200,
   "dur": 1, "args": {"correlation": 6}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 2, "tid": 1, "ts": 20,
   "dur": 1, "args": {"correlation": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 300,
   "dur": 1, "args": {"correlation": 8}},
  {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 1001, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 1011, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 7, "ts": 1021, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 3}},
  {"ph": "X", "cat": "kernel", "name": "k4", "pid": 0, "tid": 7, "ts": 1031, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 4}},
  {"ph": "X", "cat": "kernel", "name": "k5", "pid": 0, "tid": 7, "ts": 1041, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "k6", "pid": 0, "tid": 7, "ts": 1051, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 6}},
  {"ph": "X", "cat": "kernel", "name": "k7", "pid": 0, "tid": 7, "ts": 1061, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "k8", "pid": 0, "tid": 7, "ts": 1071, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 8}},
  {"ph": "X", "cat": "kernel", "name": "k9", "pid": 0, "tid": 7, "ts": 1081, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 9}}
]})";

TEST(KinetoOperandType, EachKernelGetsTheInputTypeOfTheInnermostMatmulOpAroundItsLaunch) {
    auto r = importKinetoJson(kOperandTypesTrace, "optype.json");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const TraceData& d = r->data;
    ASSERT_EQ(d.kernels.size(), 9u);
    ASSERT_EQ(d.kernels.operandType.size(), 9u);
    const std::map<std::string, std::string> expected = {{"k1", "c10::Half"},
                                                         {"k2", "c10::BFloat16"},
                                                         {"k3", "c10::BFloat16"},
                                                         {"k4", "c10::BFloat16"},
                                                         {"k5", "float"},
                                                         {"k6", ""},
                                                         {"k7", ""},
                                                         {"k8", ""},
                                                         {"k9", ""}};
    for (const auto& [name, type] : expected) {
        EXPECT_EQ(typeOf(d, name), type) << name;
    }
}

// --- real traces ---

bool isMatmulOp(const std::string& n) {
    for (const char* op :
         {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::linear", "aten::matmul",
          "aten::_convolution", "aten::cudnn_convolution", "aten::miopen_convolution"}) {
        if (n == op) {
            return true;
        }
    }
    return n.rfind("aten::conv", 0) == 0;
}

/// (kernel name, expected operand type) -> kernels, linked from the raw JSON by this test.
std::map<std::pair<std::string, std::string>, size_t> expectedTypes(const json& doc) {
    struct Op {
        double ts, dur;
        size_t index;
        std::string type;
    };
    std::map<std::pair<int64_t, int64_t>, std::vector<Op>> opsByThread;  // (pid, tid)
    std::map<uint64_t, std::pair<double, std::pair<int64_t, int64_t>>> launches;
    size_t index = 0;
    for (const json& e : testdata::eventsOf(doc)) {
        ++index;
        const std::string cat = e.value("cat", "");
        if (!e.contains("args") || !e["pid"].is_number() || !e["tid"].is_number()) {
            continue;
        }
        const std::pair<int64_t, int64_t> lane{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
        const json& a = e["args"];
        if (cat == "cpu_op" && isMatmulOp(e.value("name", "")) && a.contains("Input type")) {
            std::string type;
            for (const json& t : a["Input type"]) {
                if (t.is_string() && !t.get<std::string>().empty()) {
                    type = t.get<std::string>();
                    break;
                }
            }
            opsByThread[lane].push_back(
                {e["ts"].get<double>(), e["dur"].get<double>(), index, type});
        } else if ((cat == "cuda_runtime" || cat == "cuda_driver") && a.contains("correlation")) {
            launches[a["correlation"].get<uint64_t>()] = {e["ts"].get<double>(), lane};
        }
    }
    std::map<std::pair<std::string, std::string>, size_t> out;
    for (const json& e : testdata::eventsOf(doc)) {
        if (e.value("cat", "") != "kernel") {
            continue;
        }
        std::string type;
        const uint64_t correlation =
            e.contains("args") ? e["args"].value("correlation", uint64_t{0}) : 0;
        const auto l = launches.find(correlation);
        if (l != launches.end()) {
            const Op* inner = nullptr;
            for (const Op& op : opsByThread[l->second.second]) {
                const double t = l->second.first;
                // Innermost: the shortest; at equal length the later in the file (a child op).
                if (op.ts <= t && t < op.ts + op.dur && op.dur > 0 &&
                    (inner == nullptr || op.dur < inner->dur ||
                     (op.dur == inner->dur && op.index > inner->index))) {
                    inner = &op;
                }
            }
            type = inner ? inner->type : "";
        }
        ++out[{e["name"].get<std::string>(), type}];
    }
    return out;
}

std::map<std::pair<std::string, std::string>, size_t> importedTypes(const TraceData& d) {
    std::map<std::pair<std::string, std::string>, size_t> out;
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        if (d.kernels.category[i] == KernelCategory::Compute ||
            d.kernels.category[i] == KernelCategory::Communication) {
            ++out[{std::string(d.string(d.kernels.name[i])),
                   std::string(d.string(d.kernels.operandType[i]))}];
        }
    }
    return out;
}

size_t count(const std::map<std::pair<std::string, std::string>, size_t>& m,
             const std::string& prefix, const std::string& type) {
    size_t n = 0;
    for (const auto& [key, c] : m) {
        n += key.first.find(prefix) != std::string::npos && key.second == type ? c : 0;
    }
    return n;
}

TEST(KinetoOperandTypeRealdata, B200NvjetKernelsTakeBFloat16FromTheirAddmm) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kB200Trace);
    const json doc = testdata::loadGzJson(realdata::kB200Trace);
    const auto expected = expectedTypes(doc);
    // 108 under aten::addmm and 1 under aten::mm, every one c10::BFloat16 (vLLM bf16 model).
    ASSERT_EQ(count(expected, "nvjet_", "c10::BFloat16"), 109u);
    EXPECT_EQ(count(expected, "nvjet_", ""), 0u);
    auto t = openTrace(realdata::kB200Trace);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(importedTypes(t->data), expected);
}

TEST(KinetoOperandTypeRealdata, Mi300ConvolutionKernelsTakeBFloat16FromTheirMiopenOp) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kMi300Trace);
    const json doc = testdata::loadGzJson(realdata::kMi300Trace);
    const auto expected = expectedTypes(doc);
    // Composable-kernel convolutions (mangled names that say no type) under bf16 ops.
    EXPECT_GT(count(expected, "kernel_grouped_conv_fwd", "c10::BFloat16"), 0u);
    EXPECT_GT(count(expected, "kernel_batched_gemm_xdlops_bwd_weight", "c10::BFloat16"), 0u);
    auto t = openTrace(realdata::kMi300Trace);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(importedTypes(t->data), expected);
}

}  // namespace
}  // namespace vramscope::trace
