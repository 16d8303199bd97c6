#pragma once
// Kineto importer, attribution: the stack of each `[memory]` event, from the CPU operators and
// Python calls that enclose it on its thread. Internal to trace_format.

#include <functional>
#include <string_view>
#include <vector>

#include "import/kineto/kineto_parse.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::trace::kineto {

/// The most frames a memory event's stack keeps (the innermost ones): a bound for damaged files
/// whose spans never close, far above the depth of a real Python stack.
inline constexpr size_t kMaxStackFrames = 256;

/// A moment on a CPU thread: a memory event or a runtime launch call (raw ns as written).
struct LanePoint {
    int64_t pid = 0;
    uint64_t threadId = 0;
    int64_t tsNs = 0;
};

/// Receives a point's index and the spans (indices into the span list) that enclose it,
/// innermost first; the vector is reused between calls.
using EnclosingVisitor = std::function<void(size_t point, const std::vector<uint32_t>& spans)>;

/// Calls `visit` once per point with the spans that enclose it (the rule and nesting order
/// are memoryStacks'), at most `maxSpans` of them (the innermost). Points are visited by
/// thread, then time. Cost: O((spans + points) log(spans + points)) and per point O(depth).
void forEachEnclosing(const std::vector<RawSpan>& spans, const std::vector<LanePoint>& points,
                      size_t maxSpans, const EnclosingVisitor& visit);

/// One stack per entry of raw.memory (same order), interned into `data`; StackId 0 when no span
/// encloses the event.
///
/// A span (RawSpan: cpu_op / Operator / user_annotation, or python_function) encloses a memory
/// event when both have the same pid and tid and span.ts <= event.ts < span.ts + span.dur: an
/// event at the very start of an op is inside it, one at its end is not (the op has returned).
/// Spans nest by interval; at equal start the longer one is outside, at equal interval a Python
/// call is outside an operator (Python calls into ops) and otherwise the earlier in the file is
/// outside (PyTorch writes a parent op before its children).
/// Frames, innermost first, in nesting order: the innermost enclosing span (the operator that
/// allocated, e.g. aten::empty_strided), then each span around it out to the outermost, operators
/// and Python calls interleaved as they nest (aten::addmm, aten::linear, the module's forward in
/// Python, nn.Module: Linear_0, ..., ProfilerStep#6, the training loop's Python frames). An
/// operator is Frame{op name, "", 0}; Python frames are as pythonFrame(). Cost: O((spans + events)
/// log(spans + events)) for the sorts, and per event O(depth).
std::vector<StackId> memoryStacks(const RawKineto& raw, TraceData& data);

/// Per entry of raw.launches (same order): the input type (RawSpan::inputType) of the innermost
/// matmul / convolution op enclosing the launch call on its pid and thread, by the memoryStacks
/// rule (an op encloses a call at ts when op.ts <= ts < op.ts + op.dur); empty when none does.
/// The views point where the spans' do.
std::vector<std::string_view> launchOperandTypes(const RawKineto& raw);

/// The frame of a python_function event: "torch/nn/modules/linear.py(125): forward" is
/// Frame{"forward", "torch/nn/modules/linear.py", 125}; names not of that form ("nn.Module:
/// Linear_0", "<built-in method addmm ...>") are Frame{name, "", 0}. Strings are interned into
/// `data`.
Frame pythonFrame(std::string_view name, TraceData& data);

}  // namespace vramscope::trace::kineto
