// Kineto / Chrome trace JSON importer: the collectives of NCCL kernels, from the kernel's own
// args, the enclosing record_param_comms / nccl:* op, or the kernel name.

#include <algorithm>
#include <limits>

#include "import/kineto/kineto_text.h"
#include "import/kineto/kineto_trace_builder.h"
#include "vramscope/trace/kernel_names.h"

namespace vramscope::trace::kineto {

void TraceBuilder::buildCollectives() {
    for (size_t i = 0; i < m_raw.comms.size(); ++i) {
        m_commsByThread[m_raw.comms[i].threadId].push_back(i);
    }
    for (auto& [tid, rows] : m_commsByThread) {
        std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
            return m_raw.comms[a].startNs < m_raw.comms[b].startNs;
        });
    }
    for (size_t row = 0; row < m_kernelOrder.size(); ++row) {
        if (m_data.kernels.category[row] != KernelCategory::Communication) {
            continue;
        }
        const auto& k = m_raw.kernels[m_kernelOrder[row]];
        const CollectiveArgs* args =
            k.collectiveArgs >= 0 ? &m_raw.kernelCollectives[static_cast<size_t>(k.collectiveArgs)]
                                  : nullptr;
        addCollective(row, args, k.name);
    }
}

/// The record_param_comms op (with `opName`: the "nccl:<collective>" op) that encloses the
/// kernel's launch on the launching thread (the innermost one when they nest), or nullptr.
const CollectiveArgs* TraceBuilder::matchComms(size_t kernelRow, bool opName) const {
    const auto& k = m_raw.kernels[m_kernelOrder[kernelRow]];
    if (k.correlation == 0) {
        return nullptr;
    }
    const RawLaunch* launch = findLaunch(k.correlation);
    if (launch == nullptr) {
        return nullptr;
    }
    auto thread = m_commsByThread.find(launch->threadId);
    if (thread == m_commsByThread.end()) {
        return nullptr;
    }
    const auto& rows = thread->second;
    const int64_t t = launch->tsNs;
    auto it = std::upper_bound(rows.begin(), rows.end(), t, [&](int64_t value, size_t r) {
        return value < m_raw.comms[r].startNs;
    });
    for (int steps = 0; it != rows.begin() && steps < 16; ++steps) {
        --it;
        if (m_raw.comms[*it].opName == opName && m_raw.comms[*it].endNs >= t) {
            return &m_raw.comms[*it].args;
        }
    }
    return nullptr;
}

namespace {

/// `elems` x `width` bytes, 0 when either is not positive or the product overflows.
uint64_t timesWidth(int64_t elems, uint64_t width) {
    if (elems <= 0 || width == 0 ||
        static_cast<uint64_t>(elems) > std::numeric_limits<uint64_t>::max() / width) {
        return 0;
    }
    return static_cast<uint64_t>(elems) * width;
}

}  // namespace

uint64_t TraceBuilder::messageBytes(std::string_view function, const CollectiveArgs& a) {
    // NOTE(nccl): the message is NCCL's count x type size, and NCCL's count is per rank for
    // AllGather (the input: In msg nelems) and ReduceScatter (the output: Out msg nelems, the
    // input being n x count); the other collectives move their input (In = Out for AllReduce,
    // Broadcast; the whole send buffer for AllToAll, as nccl-tests count its size).
    const uint64_t width = dtypeSize(a.dtype);
    const bool perRankOut = function == "ReduceScatter";
    const int64_t first = perRankOut ? a.outNelems : a.inNelems;
    const int64_t second = perRankOut ? a.inNelems : a.outNelems;
    if (first > 0) {
        return timesWidth(first, width);
    }
    // Only one side written: AllGather / ReduceScatter's other side is n x count.
    if (function == "AllGather" || function == "ReduceScatter") {
        return a.groupSize > 0 && second > 0 && second % a.groupSize == 0
                   ? timesWidth(second / a.groupSize, width)
                   : 0;
    }
    return timesWidth(second, width);
}

uint64_t TraceBuilder::inputMessageBytes(std::string_view function, const CollectiveArgs& op,
                                         int32_t nranks) {
    const uint64_t bytes = timesWidth(op.inputElems, inputTypeSize(op.inputType));
    if (function != "ReduceScatter") {
        return bytes;  // the input is the message (AllGather: this rank's part)
    }
    // ReduceScatter's one input tensor (_reduce_scatter_base, reduce_scatter_tensor) is n x the
    // message; the list form's first input is one rank's part, which the op name does not tell
    // apart, so only the tensor forms are used.
    const bool tensorForm = op.collectiveName.find("base") != std::string_view::npos ||
                            op.collectiveName.find("tensor") != std::string_view::npos;
    const uint64_t width = inputTypeSize(op.inputType);
    return tensorForm && nranks > 0 && width > 0 && bytes % (uint64_t(nranks) * width) == 0
               ? bytes / uint64_t(nranks)
               : 0;
}

void TraceBuilder::addCollective(size_t row, const CollectiveArgs* args,
                                 std::string_view kernelName) {
    const CollectiveArgs* comms = nullptr;
    const std::string_view fromKernel = collectiveFromKernelName(kernelName);
    if (args == nullptr || args->collectiveName.empty()) {
        comms = matchComms(row);
    }
    std::string function;
    if (args != nullptr && !args->collectiveName.empty()) {
        function = canonicalCollective(args->collectiveName);
    } else if (!fromKernel.empty() && fromKernel != "Generic") {
        function = std::string(fromKernel);
    } else if (comms != nullptr && !comms->collectiveName.empty()) {
        function = canonicalCollective(comms->collectiveName);
    } else {
        function = std::string(fromKernel);
    }
    // NOTE(nccl): NCCL runs all-to-all (and, in some versions, other collectives) as grouped
    // sends and receives, so the kernel is named SendRecv, the same as true point-to-point
    // traffic; only the PyTorch op that launched it ("nccl:all_to_all") tells a collective apart.
    // Without such an op (nccl:send, nccl:recv, or none found) it stays SendRecv.
    if (function == "SendRecv") {
        const CollectiveArgs* op = matchComms(row, true);
        const std::string named =
            op != nullptr ? canonicalCollective(op->collectiveName) : std::string();
        if (!named.empty() && named != "Send" && named != "Recv" && named != "SendRecv") {
            function = named;
        }
    }
    const CollectiveArgs* meta = args != nullptr && args->any() ? args : comms;
    CollectiveEvent c;
    c.startNs = m_data.kernels.startNs[row];
    c.endNs = m_data.kernels.endNs[row];
    c.device = m_data.kernels.device[row];
    c.stream = m_data.kernels.stream[row];
    c.function = function.empty() ? 0 : m_data.intern(function);
    c.timing = CollectiveTiming::Kernel;  // the kernel's own GPU interval
    if (const std::string_view algorithm = algorithmFromKernelName(kernelName);
        !algorithm.empty()) {
        c.algorithm = m_data.intern(algorithm);
    }
    if (meta != nullptr) {
        c.bytes = messageBytes(function, *meta);
        c.nranks = meta->groupSize > 0 && meta->groupSize <= INT32_MAX
                       ? static_cast<int32_t>(meta->groupSize)
                       : 0;
        c.seqNumber = meta->seq;
        if (meta->groupId) {
            c.communicatorHash = *meta->groupId;
        } else if (!meta->groupName.empty()) {
            c.communicatorHash = fnv1a64(meta->groupName);
        }
        if (m_raw.rank != kUnknownRank) {
            if (!meta->groupRanks.empty()) {
                const int32_t index = indexInRankList(meta->groupRanks, toInt(m_raw.rank));
                c.rank = index >= 0 ? RankId{index} : kUnknownRank;
            } else if (c.nranks > 0 && c.nranks == m_raw.worldSize) {
                c.rank = m_raw.rank;
            }
        }
        c.datatype = meta->dtype.empty() ? 0 : intern(meta->dtype);
    }
    // Older traces carry no nelems: the message is the first input tensor of the
    // "nccl:<collective>" op that launched the kernel, else of its record_param_comms.
    if (c.bytes == 0) {
        for (const CollectiveArgs* op : {matchComms(row, true), comms ? comms : matchComms(row)}) {
            if (op != nullptr && c.bytes == 0) {
                c.bytes = inputMessageBytes(function, *op, c.nranks > 0 ? c.nranks : worldGroup());
                if (c.bytes != 0 && c.datatype == 0 && !op->inputType.empty()) {
                    c.datatype = intern(op->inputType);
                }
            }
        }
    }
    // NOTE(nccl): PyTorch before 2.1 records no group size or process group for a collective;
    // a trace that names none for it runs it on the default group, whose size is the world size
    // of distributedInfo.
    if (c.nranks == 0 && (meta == nullptr || (meta->groupName.empty() && meta->groupRanks.empty() &&
                                              !meta->groupId && meta->groupSize < 0))) {
        c.nranks = worldGroup();
        if (c.nranks > 0 && m_raw.rank != kUnknownRank) {
            c.rank = m_raw.rank;
        }
    }
    m_data.collectives.append(c);
}

}  // namespace vramscope::trace::kineto
