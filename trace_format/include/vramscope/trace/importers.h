#pragma once
// Importers of foreign formats into TraceData (the same events the .vscope reader produces).

#include <string>
#include <string_view>

#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {

/// Imports a PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot: a pickle of plain
/// data, already gunzipped). Never executes pickle code. `name` is used in messages.
Result<LoadedTrace> importPytorchSnapshot(std::string_view pickleBytes, const std::string& name,
                                          const ReadOptions& options = {});

/// Imports a Kineto / Chrome trace JSON document (object with traceEvents, or a bare array),
/// already gunzipped. `name` is used in messages.
Result<LoadedTrace> importKinetoJson(std::string_view jsonBytes, const std::string& name,
                                     const ReadOptions& options = {});

}  // namespace vramscope::trace
