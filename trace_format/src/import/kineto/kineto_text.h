#pragma once
// Text helpers for the Kineto / Chrome trace JSON importer: numbers read from their JSON text,
// repairs that make a damaged document parseable, names of NCCL / RCCL collectives, and the GPU
// memory counter names of Chrome counter events ("GPU 0 allocated"), the matmul / convolution
// operator names.
// Internal to trace_format; pure functions, thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramscope/trace/kernel_names.h"  // the NCCL kernel-name rules the importers share
#include "vramscope/trace/trace_data.h"

namespace vramscope::trace::kineto {

/// Integer value of a JSON number's text ("123", "-4", "12.7" -> 12, "1e3" -> 1000, and "0x1f"
/// as ROCm traces write stream handles in strings), ignoring surrounding whitespace. nullopt when
/// the text is not a number or the value is outside int64 (e.g. 10159970886766084423 in a real
/// trace's args).
std::optional<int64_t> parseInt(std::string_view text);
/// Same for unsigned values (addresses, correlation ids) up to UINT64_MAX.
std::optional<uint64_t> parseUint(std::string_view text);
/// Microseconds written as JSON number text ("1669783687464300", "4458677009853.422") to
/// nanoseconds, rounded to the nearest ns. Reads the digits, never a double, so a 16-digit
/// epoch timestamp keeps its ns fraction. nullopt when not a number or outside int64 ns.
std::optional<int64_t> parseMicrosToNs(std::string_view text);
/// First run of decimal digits in `s` ("stream 7" -> 7), nullopt when there is none.
std::optional<uint64_t> firstNumberIn(std::string_view s);
/// True when the text looks like a JSON number (so a failed parse means "out of range").
bool looksNumeric(std::string_view text);

/// Positions where a repair changed the length of the text: (offset in the repaired text,
/// offset in the original) at the start of each replacement, in increasing order.
using OffsetMap = std::vector<std::pair<uint64_t, uint64_t>>;
/// Offset in the original text of `repairedOffset` (an offset in a text made by repairUtf8).
uint64_t originalOffset(const OffsetMap& map, uint64_t repairedOffset);

struct Utf8Repair {
    std::string text;             ///< the repaired copy
    uint64_t replaced = 0;        ///< invalid sequences replaced with U+FFFD
    int64_t firstBadOffset = -1;  ///< offset of the first invalid byte in the original
    OffsetMap offsets;
};
/// Copy of `in` in which each maximal ill-formed UTF-8 subsequence (Unicode 15, section 3.9,
/// "U+FFFD substitution of maximal subparts") is replaced by U+FFFD (EF BF BD).
Utf8Repair repairUtf8(std::string_view in);

struct StructureRepair {
    std::string text;                 ///< repaired copy (same offsets as the input up to cutOffset)
    uint64_t controlChars = 0;        ///< control characters inside strings replaced by spaces
    int64_t firstControlOffset = -1;  ///< offset of the first one
    bool cut = false;                 ///< the input ended inside a string or an open bracket
    int64_t cutOffset = -1;           ///< when cut: the kept text ends here (after a whole event)
    int64_t endOffset = -1;           ///< when cut: where the input ended (or became malformed)
    bool usable = false;              ///< false when no whole event lies before the cut
};
/// Makes a damaged JSON trace parseable: replaces raw control characters (< 0x20) inside strings
/// with spaces (JSON forbids them, RFC 8259 section 7); when the input ends inside a string or
/// with brackets open, or closes a bracket it did not open, keeps the text up to the end of the
/// last whole element of the event array (the outermost array, or the array in the outermost
/// object) and appends the closing brackets that were open there.
StructureRepair repairStructure(std::string_view in);

/// Bytes per element of a PyTorch dtype name as Kineto writes it ("Float", "BFloat16", "Long",
/// ...); 0 when unknown. Source: c10/core/ScalarType.h element sizes.
uint32_t dtypeSize(std::string_view dtype);
/// Bytes per element of an "Input type" entry as PyTorch's record_shapes writes it (C++ type
/// names: "float", "long int", "int", "c10::Half", "c10::BFloat16", "signed char", ...), else
/// dtypeSize of the name; 0 when unknown ("Scalar", "TensorList", ""). Sizes as c10's
/// ScalarType.h on LP64 Linux (long int = int64_t).
uint32_t inputTypeSize(std::string_view inputType);
/// PyTorch's "Collective name" arg in NCCL's spelling: "allreduce" -> "AllReduce",
/// "_allgather_base" / "all_gather_into_tensor" -> "AllGather", "reduce_scatter_tensor" ->
/// "ReduceScatter", "all_to_all" -> "AllToAll", "broadcast" -> "Broadcast", ... Unknown names
/// are returned as written.
std::string canonicalCollective(std::string_view collectiveName);
/// FNV-1a 64-bit hash (a stable id for a process group name across ranks).
uint64_t fnv1a64(std::string_view s);
/// Index of `rank` in a rank list written as text ("[0, 1, 2, 3]"), -1 when absent.
int32_t indexInRankList(std::string_view list, int32_t rank);

/// The GPU and level a Chrome counter name stands for ("GPU 0 allocated" -> {0, Allocated}), or
/// nullopt for any other name.
std::optional<std::pair<DeviceIndex, MemoryLevel>> memoryCounterOf(std::string_view name);

/// The cpu_op names whose "Input type" tells the operand precision of the kernels they launch:
/// aten::mm, addmm, bmm, baddbmm, linear, matmul and the convolutions (aten::conv*,
/// aten::_convolution, aten::cudnn_convolution, aten::miopen_convolution).
bool isPrecisionOp(std::string_view name);

/// Kineto event categories we distinguish. Old traces (2021) write Kernel, Runtime, Operator,
/// Memcpy, Memset; newer ones kernel, cuda_runtime, cpu_op, gpu_memcpy, gpu_memset.
enum class EventCategory : uint8_t {
    None,
    Other,
    Kernel,
    Memcpy,
    Memset,
    Runtime,
    CpuOp,
    UserAnnotation,
    GpuUserAnnotation,
    Instant,
    Python,  ///< python_function (with_stack=True)
};

/// The category of an event from its `cat` (any case); Other for one not listed, and for one
/// longer than any listed.
EventCategory eventCategory(std::string_view cat);

}  // namespace vramscope::trace::kineto
