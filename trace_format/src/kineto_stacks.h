#pragma once
// Kineto importer, attribution: the stack of each `[memory]` event, from the CPU operators and
// Python calls that enclose it on its thread. Internal to trace_format.

#include <string_view>
#include <vector>

#include "kineto_parse.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::trace::kineto {

/// The most frames a memory event's stack keeps (the innermost ones): a bound for damaged files
/// whose spans never close, far above the depth of a real Python stack.
inline constexpr size_t kMaxStackFrames = 256;

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

/// The frame of a python_function event: "torch/nn/modules/linear.py(125): forward" is
/// Frame{"forward", "torch/nn/modules/linear.py", 125}; names not of that form ("nn.Module:
/// Linear_0", "<built-in method addmm ...>") are Frame{name, "", 0}. Strings are interned into
/// `data`.
Frame pythonFrame(std::string_view name, TraceData& data);

}  // namespace vramscope::trace::kineto
