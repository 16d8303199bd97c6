// Kineto / Chrome trace JSON, first pass: files one read event into its raw row (kernel, memory
// event, counter, range, CPU op, NCCL op).

#include "import/kineto/kineto_event_reader.h"

#include "vramscope/trace/kernel_names.h"

namespace vramscope::trace::kineto {

void EventReader::commit(const Fields& f) {
    const Cat cat = f.category;
    if (f.ph == 'C') {
        return commitCounter(f);
    }
    if (f.ph == 'i' || f.ph == 'I') {
        if (f.name == kMemoryEventName) {
            commitMemory(f);
        }
        return;
    }
    if (f.ph != 'X') {
        return;
    }
    switch (cat) {
        case Cat::Kernel:
            return commitGpuOp(f, GpuOpKind::Kernel);
        case Cat::Memcpy:
            return commitGpuOp(f, GpuOpKind::Memcpy);
        case Cat::Memset:
            return commitGpuOp(f, GpuOpKind::Memset);
        case Cat::Runtime:
            noteHostPid(f);
            if (f.args.correlation && f.tsNs) {
                m_out.launches.push_back(
                    {*f.args.correlation, *f.tsNs, f.tid.value_or(0), f.pid.value_or(0)});
            }
            return;
        case Cat::GpuUserAnnotation: {
            const auto device = f.args.device ? *f.args.device : f.pid.value_or(0);
            return commitRange(f, RangeKind::GpuAnnotation, static_cast<DeviceIndex>(device));
        }
        case Cat::UserAnnotation:
            noteHostPid(f);
            noteNcclOp(f);  // newer PyTorch writes "nccl:<collective>" as a user annotation
            noteSpan(f, false);
            return commitRange(f, isStep(f.name) ? RangeKind::Iteration : RangeKind::UserAnnotation,
                               kHostDevice);
        case Cat::Python:
            return noteSpan(f, true);
        case Cat::CpuOp:
        case Cat::None:
        case Cat::Other:
        case Cat::Instant:
            if (cat == Cat::CpuOp) {
                noteHostPid(f);
                noteSpan(f, false);
            }
            if (isStep(f.name)) {
                return commitRange(f, RangeKind::Iteration, kHostDevice);
            }
            if (cat == Cat::CpuOp && f.name == kCommsOpName && f.tsNs) {
                m_out.comms.push_back(
                    RawComms{*f.tsNs, *f.tsNs + f.durNs, f.tid.value_or(0), f.args.collective});
            } else if (cat == Cat::CpuOp) {
                noteNcclOp(f);
            }
            return;
    }
}

void EventReader::noteNcclOp(const Fields& f) {
    if (f.tsNs && f.name.starts_with(kNcclOpPrefix)) {
        CollectiveArgs named;
        named.collectiveName = f.name.substr(kNcclOpPrefix.size());
        named.inputElems = f.args.collective.inputElems;
        named.inputType = f.args.inputType;
        m_out.comms.push_back(RawComms{*f.tsNs, *f.tsNs + f.durNs, f.tid.value_or(0), named, true});
    }
}

void EventReader::commitGpuOp(const Fields& f, GpuOpKind kind) {
    if (!f.tsNs) {
        ++m_out.eventsWithoutTime;
        return;
    }
    RawKernel k;
    k.startNs = *f.tsNs;
    k.durNs = f.durNs < 0 ? 0 : f.durNs;
    k.device = static_cast<DeviceIndex>(f.args.device ? *f.args.device : f.pid.value_or(0));
    k.stream = f.args.stream ? static_cast<uint64_t>(*f.args.stream) : f.tid.value_or(0);
    k.name = f.name;
    k.kind = kind;
    k.correlation = f.args.correlation.value_or(0);
    k.bytes = kind == GpuOpKind::Kernel ? 0 : f.args.bytes.value_or(0);
    k.communication = kind == GpuOpKind::Kernel && isCommunicationKernel(f.name);
    if (k.communication && f.args.collective.any()) {
        k.collectiveArgs = static_cast<int32_t>(m_out.kernelCollectives.size());
        m_out.kernelCollectives.push_back(f.args.collective);
    }
    m_out.kernels.push_back(k);
}

void EventReader::commitMemory(const Fields& f) {
    noteHostPid(f);
    const Args& a = f.args;
    const int64_t deviceType = a.deviceType.value_or(-1);  // c10::DeviceType: 0 = CPU, 1 = CUDA
    if (deviceType != 0 && deviceType != 1) {
        ++m_out.otherMemoryEvents;
        return;
    }
    if (!f.tsNs || !a.memBytes) {
        ++m_out.eventsWithoutTime;
        return;
    }
    RawMemory m;
    m.tsNs = *f.tsNs;
    m.address = a.address.value_or(0);
    m.bytes = *a.memBytes;
    // CPU events carry Device Id -1; they are the host's, whatever the id says.
    m.device = deviceType == 0 ? kHostDevice : static_cast<DeviceIndex>(a.deviceId.value_or(0));
    m.totalAllocated = a.totalAllocated.value_or(-1);
    m.totalReserved = a.totalReserved.value_or(-1);
    m.eventIndex = a.eventIndex.value_or(-1);
    m.pid = f.pid.value_or(0);
    m.threadId = f.tid.value_or(0);
    (deviceType == 0 ? m_out.hostMemory : m_out.memory).push_back(m);
}

void EventReader::commitCounter(const Fields& f) {
    const auto counter = memoryCounterOf(f.name);
    if (!counter) {
        return;
    }
    if (!f.tsNs || !f.args.bytes) {
        ++m_out.eventsWithoutTime;
        return;
    }
    m_out.counters.push_back({*f.tsNs, counter->first, counter->second, *f.args.bytes});
}

void EventReader::commitRange(const Fields& f, RangeKind kind, DeviceIndex device) {
    if (!f.tsNs) {
        ++m_out.eventsWithoutTime;
        return;
    }
    RawRange r;
    r.startNs = *f.tsNs;
    r.durNs = f.durNs < 0 ? 0 : f.durNs;
    r.name = f.name;
    r.kind = kind;
    r.device = device;
    r.threadId = kind == RangeKind::GpuAnnotation && f.args.stream
                     ? static_cast<uint64_t>(*f.args.stream)
                     : f.tid.value_or(0);
    m_out.ranges.push_back(r);
}

}  // namespace vramscope::trace::kineto
