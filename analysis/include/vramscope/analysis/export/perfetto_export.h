#pragma once
// A job as a Perfetto trace (the TracePacket protobuf stream that the Perfetto UI and
// trace_processor load), for `vramscope-cli export --format perfetto` and the GUI's
// File > Export Data...

#include <iosfwd>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/error.h"

namespace vramscope::analysis {

/// Writes `model` to `out` as Perfetto's native protobuf trace: a serialized
/// perfetto.protos.Trace, written packet by packet (each TracePacket as Trace field 1,
/// length-delimited), so memory stays flat whatever the job's size. The schema subset is
/// analysis/proto/perfetto/trace_subset.proto (field numbers from Perfetto v58.2).
///
/// Content (what export_walk.h's walkJob visits): per rank a process track ("rank 3 · host",
/// pid = position of the rank in the job + 1, which keeps ranks of different hosts apart); per
/// GPU the counter tracks "GPU d allocated" and "GPU d reserved" (CounterDescriptor unit
/// UNIT_SIZE_BYTES, one value per step of the model's full-resolution step series); per
/// (GPU, stream) a track of kernel, memcpy and memset slices (categories "kernel",
/// "gpu_memcpy", "gpu_memset"); NVTX ranges, annotations and profiler steps nested on thread
/// tracks of the rank's host threads; per GPU the matched collectives, each linked across its
/// participants by one flow (flow id = 1 + the collective's position in
/// JobModel::collectives().collectives; earliest arrival first, the last arrival terminates it),
/// the idle gaps named by cause (the largest 1,000 per GPU, as the analysis keeps them), the OOM
/// events as instants, the trace's notes. Slice and instant names are interned (EventName) on
/// the one packet sequence (id 1) the writer uses.
///
/// Timestamps: ns of job time (JobModel's axis: 0 = the earliest event of any rank, i.e.
/// rank trace time + RankInfo::toJobNs), the same times the GUI shows; the trace clock is
/// Perfetto's default. Job time is never negative, as Perfetto's uint64 timestamps need.
///
/// Errors: ErrorCode::Io when `out` fails (the file so far is incomplete).
trace::Status writePerfettoTrace(const JobModel& model, std::ostream& out);

}  // namespace vramscope::analysis
