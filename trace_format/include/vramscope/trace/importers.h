#pragma once
// Importers of foreign formats into TraceData (the same events the .vscope reader produces).

#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {

/// Name of an AllocatedBytes counter that an importer rebuilt by summing the sizes of memory
/// events because the producer wrote no totals (Kineto traces before "Total Allocated"), so that
/// readers can say the series is ours, not the producer's. A header-only fact, for the analyses.
inline constexpr std::string_view kRebuiltAllocatedCounterName =
    "Total Allocated (rebuilt from Bytes)";

/// Names of the HostAllocatedBytes counter the Kineto importer makes of the CPU's `[memory]`
/// events: the producer's Total Allocated, or (files without totals) the running sum of Bytes.
inline constexpr std::string_view kHostAllocatedCounterName = "CPU Total Allocated";
inline constexpr std::string_view kHostAllocatedRebuiltCounterName =
    "CPU Total Allocated (rebuilt from Bytes)";

/// Imports a PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot: a pickle of plain
/// data, already gunzipped). Never executes pickle code. `name` is used in messages.
/// Per device: alloc / free_completed become Allocated-level events (free_requested is only
/// intent and is left out), segment_alloc / segment_free / segment_map / segment_unmap become
/// Reserved-level events, oom entries OomEvents (requested size, device_free); time_us becomes ns
/// (clock domain "pytorch-snapshot-us", Unix time); frames become stacks, innermost first.
/// Memory alive before recording began (frees of addresses the trace never allocated, blocks and
/// segments alive at the dump that the trace does not hold) is added as MemoryKind::PreExisting
/// allocs at the first trace time (time 0 for dumps without a trace), so that a running sum never
/// goes below zero. external_annotations become UserAnnotation ranges. Entries with missing
/// fields or unknown actions are skipped and counted in report.problems and data.dataLoss.
/// Errors: a pickle that is damaged (Corrupt) or cut (Truncated), uses code-running opcodes
/// (GLOBAL, REDUCE, ...: Unsupported, naming the opcode and its byte offset), is not a snapshot
/// (Unsupported), or the progress callback cancelled (Cancelled).
Result<LoadedTrace> importPytorchSnapshot(std::string_view pickleBytes, const std::string& name,
                                          const ReadOptions& options = {});

/// Imports a Kineto / Chrome trace JSON document (PyTorch profiler export: an object with
/// traceEvents, or a bare array of events), already gunzipped. `name` is used in messages.
/// Streams the events with simdjson On-Demand (no DOM of the file). Timestamps become ns
/// (fractional microseconds kept to the ns, read from the number's text), made absolute with
/// `baseTimeNanoseconds` when the file has it; clock domain "kineto-us".
/// What is mapped (see kineto_importer.cpp for details): CUDA `[memory]` events to Allocated-level
/// memory events and the producer's Total Allocated / Total Reserved to counters; kernel,
/// gpu_memcpy, gpu_memset to kernels (NCCL / RCCL ones also to collectives); user_annotation,
/// gpu_user_annotation and ProfilerStep#N to ranges; distributedInfo and deviceProperties to
/// the header. Damage is tolerated and reported: invalid UTF-8 is replaced with U+FFFD, control
/// characters inside strings with spaces, a file cut in the middle loads every whole event before
/// the cut; each such repair adds a report problem (with the byte offset) and a DataLoss entry.
/// Errors: not JSON or no event could be read (Corrupt), no traceEvents (Unsupported), larger
/// than 4 GiB (Limit), cancelled by the progress callback, also by its closing call (Cancelled).
/// Copies the input once into a padded buffer; see importKinetoJsonBuffer() to avoid that.
Result<LoadedTrace> importKinetoJson(std::string_view jsonBytes, const std::string& name,
                                     const ReadOptions& options = {});

/// Same as importKinetoJson, parsing `json` in place when it has kInputPaddingBytes of spare
/// capacity (as readInputBytes() / decodeInputBytes() return it), else copying it once.
Result<LoadedTrace> importKinetoJsonBuffer(const std::string& json, const std::string& name,
                                           const ReadOptions& options = {});

/// Imports an Nsight Systems SQLite export (`nsys export --type sqlite`), opened read-only and
/// immutable (nothing is ever written beside or into the report, not even a journal). Returns one
/// LoadedTrace per profiled process that has GPU activity, GPU memory events or NVTX ranges (one
/// empty trace when none has), ordered by process id; each is one rank of a job (openJob).
/// What is mapped (details and the format facts' source in nsys_importer.cpp):
/// CUPTI_ACTIVITY_KIND_KERNEL (demangled name), _MEMCPY and _MEMSET to kernels (Memcpy / Memset
/// category with their bytes; NCCL / RCCL kernels also to collectives, function from the kernel
/// name), launch times from CUPTI_ACTIVITY_KIND_RUNTIME by correlation id within the process;
/// NVTX_EVENTS push/pop (with their depth per thread) and start/end to Nvtx ranges, those of the
/// "NCCL" domain named "NCCL: ..."; CUDA_GPU_MEMORY_USAGE_EVENTS to Reserved-level memory events
/// (host kinds left out); TARGET_INFO_GPU to the header's devices; "MPI Rank N" thread names and
/// MPI_RANKS to the rank. Times are ns made absolute (Unix) with the session start
/// (TARGET_INFO_SESSION_START_TIME.utcEpochNs) when the report has it. The header's capture
/// settings carry nsys.product_version, nsys.schema_version and one nsys.absent.* entry per
/// missing or empty table (and missing name column) with what that means. Environment,
/// command-line and user / host / path records of the report are never read.
/// Errors name the file: a file that is cut (Truncated, from the size the SQLite header
/// announces), not a database or damaged (Corrupt, with SQLite's words), an SQLite database
/// without the export's tables (Unsupported), cancelled by the progress callback (Cancelled).
Result<std::vector<LoadedTrace>> importNsysSqlite(const std::string& path,
                                                  const ReadOptions& options = {});

/// Same, for a database image in memory (an archive member, standard input); `name` is used in
/// messages. The bytes are copied once into SQLite's own buffer.
Result<std::vector<LoadedTrace>> importNsysSqliteBytes(std::string_view bytes,
                                                       const std::string& name,
                                                       const ReadOptions& options = {});

/// True when `bytes` starts with the SQLite 3 magic ("SQLite format 3" and a NUL).
bool looksLikeSqlite(std::string_view bytes);

/// The command that turns an Nsight Systems report (.nsys-rep, or .qdrep of nsys before 2021.3)
/// into the SQLite export vramscope reads: "nsys export --type sqlite --output R.sqlite
/// R.nsys-rep" (shell-quoted where the path needs it). Syntax from the nsys CLI's export command.
std::string nsysExportCommand(std::string_view reportPath);

}  // namespace vramscope::trace
