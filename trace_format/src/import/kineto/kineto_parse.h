#pragma once
// First pass of the Kineto importer: streams the JSON with simdjson On-Demand and keeps the
// events vramscope maps, as raw rows (times in ns as written, before baseTimeNanoseconds).
// Internal to trace_format. String views point into the parser's string buffer or the input,
// so they live as long as the KinetoParser and the input buffer.

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "import/kineto/kineto_text.h"
#include "vramscope/trace/error.h"
#include "vramscope/trace/progress.h"
#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace::kineto {

/// Collective metadata that PyTorch writes into NCCL kernel args and record_param_comms ops.
struct CollectiveArgs {
    std::string_view collectiveName;  ///< "Collective name": "allreduce", "_allgather_base", ...
    std::string_view dtype;           ///< "dtype": "Float", "BFloat16", ...
    std::string_view groupName;       ///< "Process Group Name"
    std::string_view groupRanks;      ///< "Process Group Ranks": "[0, 1, 2]"
    int64_t inNelems = -1;            ///< "In msg nelems"
    int64_t outNelems = -1;           ///< "Out msg nelems"
    int64_t groupSize = -1;           ///< "Group size"
    int64_t seq = -1;                 ///< "Seq" / "seq"
    std::optional<uint64_t> groupId;  ///< "Process Group ID"
    /// Elements of the first tensor in "Input Dims" (the product of its dims; -1 when the first
    /// entry is not a tensor shape) and its "Input type": what older traces, without nelems,
    /// say of the message (record_param_comms, "nccl:<collective>" ops).
    int64_t inputElems = -1;
    std::string_view inputType;
    bool any() const {
        return !collectiveName.empty() || !groupName.empty() || inNelems >= 0 || outNelems >= 0 ||
               groupSize >= 0 || seq >= 0 || groupId.has_value();
    }
};

enum class GpuOpKind : uint8_t { Kernel, Memcpy, Memset };

/// A kernel, memcpy or memset (Kineto categories kernel / gpu_memcpy / gpu_memset, or the old
/// Kernel / Memcpy / Memset).
struct RawKernel {
    int64_t startNs = 0;
    int64_t durNs = 0;
    DeviceIndex device{0};
    uint64_t stream = 0;
    std::string_view name;
    GpuOpKind kind = GpuOpKind::Kernel;
    bool communication = false;  ///< an NCCL / RCCL kernel (name contains nccl or rccl)
    uint64_t correlation = 0;
    uint64_t bytes = 0;
    int32_t collectiveArgs = -1;  ///< index into RawKineto::kernelCollectives, -1 = none
};

/// A `[memory]` instant event of a CUDA device, or of the CPU (device kHostDevice).
struct RawMemory {
    int64_t tsNs = 0;
    uint64_t address = 0;
    int64_t bytes = 0;  ///< > 0 alloc, < 0 free
    DeviceIndex device{0};
    int64_t totalAllocated = -1;  ///< -1 = not in the event
    int64_t totalReserved = -1;
    int64_t eventIndex = -1;  ///< "Ev Idx": the producer's order, breaks timestamp ties
    int64_t pid = 0;          ///< the allocating process and thread (the CPU op lane it ran in)
    uint64_t threadId = 0;
};

/// A CPU interval that may enclose `[memory]` events of its thread: an operator (cpu_op, the 2021
/// Operator, user_annotation) or a Python call (python_function, with_stack=True).
struct RawSpan {
    int64_t startNs = 0;
    int64_t durNs = 0;  ///< >= 0
    int64_t pid = 0;
    uint64_t threadId = 0;
    std::string_view name;
    /// The first non-empty entry of args "Input type" (the element type of the op's first tensor
    /// input: "float", "c10::BFloat16"), kept only for matmul / convolution ops
    /// (isPrecisionOp, kineto_text.h); empty otherwise.
    std::string_view inputType;
    bool python = false;  ///< python_function
};

/// A Chrome counter event ("ph":"C") naming one level of a GPU's memory: name "GPU <d> allocated"
/// or "GPU <d> reserved", value in args "bytes" (the form vramscope's Chrome trace export writes;
/// other counters are skipped).
struct RawCounter {
    int64_t tsNs = 0;
    DeviceIndex device{0};
    MemoryLevel level = MemoryLevel::Allocated;
    uint64_t bytes = 0;
};

struct RawRange {
    int64_t startNs = 0;
    int64_t durNs = 0;
    std::string_view name;
    uint64_t threadId = 0;
    DeviceIndex device = kHostDevice;
    RangeKind kind = RangeKind::UserAnnotation;
};

/// A record_param_comms CPU op (PyTorch's record of a collective call), or a ProcessGroupNCCL op
/// "nccl:<collective>" (opName set; args holds only collectiveName, the text after "nccl:").
struct RawComms {
    int64_t startNs = 0;
    int64_t endNs = 0;
    uint64_t threadId = 0;
    CollectiveArgs args;
    bool opName = false;
};

/// A runtime / driver call (cudaLaunchKernel, hipExtLaunchKernel, cudaMemcpyAsync, ...).
struct RawLaunch {
    uint64_t correlation = 0;
    int64_t tsNs = 0;
    uint64_t threadId = 0;
    int64_t pid = 0;
};

/// Everything the first pass keeps.
struct RawKineto {
    RankId rank = kUnknownRank;
    int32_t worldSize = 0;
    std::optional<int64_t> baseTimeNs;
    std::vector<DeviceInfo> devices;  ///< from deviceProperties
    std::vector<std::pair<std::string, std::string>> settings;
    std::optional<int64_t> hostPid;

    std::vector<RawKernel> kernels;
    std::vector<CollectiveArgs> kernelCollectives;
    std::vector<RawMemory> memory;
    /// `[memory]` events of the CPU (Device Type 0), in file order: the CPU allocator's tensors,
    /// recorded with profile_memory=True; they become a host counter, never GPU memory.
    std::vector<RawMemory> hostMemory;
    std::vector<RawCounter> counters;  ///< GPU memory counters ("ph":"C"), in file order
    std::vector<RawRange> ranges;
    std::vector<RawComms> comms;
    std::vector<RawLaunch> launches;  ///< in file order; see sortLaunches()
    std::vector<RawSpan> spans;       ///< CPU ops and Python calls, in file order

    bool sawEventArray = false;      ///< the root is an array, or has a traceEvents array
    uint64_t events = 0;             ///< traceEvents elements read
    uint64_t nonObjects = 0;         ///< traceEvents elements that were not objects
    uint64_t otherMemoryEvents = 0;  ///< `[memory]` events of other device types, skipped
    uint64_t valuesOutOfRange = 0;   ///< numbers outside int64 in fields we read, skipped
    uint64_t eventsWithoutTime = 0;  ///< events we map that had no usable ts, skipped

    /// Why the pass stopped before the end of the events, when it did: Corrupt (a structural
    /// JSON error; byteOffset in the parsed buffer, recordIndex = events read before it) or
    /// Cancelled. The file name is left empty for the importer to fill.
    std::optional<Error> stop;
};

/// Streams one JSON document. `data` must be readable up to data + capacity, with capacity >=
/// size + simdjson::SIMDJSON_PADDING. Returns an error code when the document cannot be started
/// (not JSON, cut so that the root does not close, forbidden characters): the caller may repair
/// and retry. Errors met while streaming the events stop the pass and are recorded in `out`
/// (RawKineto::stop), keeping every event read before them.
class KinetoParser {
public:
    /// `progress` hears the share of `size` parsed, with `stage`, about every 16384 events.
    simdjson::error_code parse(const char* data, size_t size, size_t capacity, RawKineto& out,
                               const Progress& progress, std::string_view stage);

private:
    simdjson::ondemand::parser m_parser;
    simdjson::ondemand::document m_doc;
};

}  // namespace vramscope::trace::kineto
