#pragma once
// A job as Chrome trace event JSON (the older format of chrome://tracing, Perfetto's legacy
// importer and the PyTorch profiler), for `vramscope-cli export --format chrome-json` and the
// GUI's File > Export Data...

#include <iosfwd>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/error.h"

namespace vramscope::analysis {

/// Writes `model` to `out` as {"traceEvents":[...],"displayTimeUnit":"ns"}, one event per line,
/// streamed (nothing but the current event is held in memory). The same content as
/// writePerfettoTrace (export_walk.h), in the JSON event forms of the Trace Event Format:
///  - "ph":"M" process_name / thread_name metadata: pid = position of the rank + 1; host
///    threads keep their OS thread id as tid, other tracks get tids from 5,000,000 up (above
///    Linux's largest thread id, 2^22);
///  - "ph":"X" complete events for kernels, memcpys and memsets (cat "kernel", "gpu_memcpy",
///    "gpu_memset" and args device, stream, as the PyTorch profiler writes them), NVTX ranges
///    and steps (cat "user_annotation" / "gpu_user_annotation"), collectives, idle gaps,
///    iterations and notes;
///  - "ph":"C" counters per GPU, named "GPU d allocated" and "GPU d reserved" with the value
///    in args "bytes" (trace::importKinetoJson reads these back as the device's totals);
///  - "ph":"s" / "t" / "f" (bp "e") flows, one per matched collective (id as in the Perfetto
///    export), from the earliest arrival to the last, bound to the collective slices;
///  - "ph":"i" instants for OOM events.
/// Timestamps: job time (as writePerfettoTrace), written as microseconds with three decimals,
/// so every ns is kept exactly ("ts":1234.567 is 1,234,567 ns).
///
/// Errors: ErrorCode::Io when `out` fails (the file so far is incomplete).
trace::Status writeChromeTrace(const JobModel& model, std::ostream& out);

}  // namespace vramscope::analysis
