// Kineto / Chrome trace JSON importer: the second pass, which turns the raw rows of
// kineto_parse.cpp into TraceData, plus the repairs that let damaged files load.
//
// Format facts used here come from PyTorch's profiler output (libkineto ChromeTraceLogger and
// torch.autograd.profiler), as seen in the real traces in the project's test data:
//  - `[memory]` instant events: args Device Type (c10::DeviceType, 0 = CPU, 1 = CUDA; CPU events
//    have Device Id -1 and become the host counter), Device Id,
//    Addr, Bytes (negative = free), Total Allocated and Total Reserved after the event (missing
//    in 2021 traces);
//  - kernels, memcpys and memsets carry args device, stream, correlation (the runtime call with
//    the same correlation is the launch), bytes for copies;
//  - NCCL kernels and record_param_comms ops carry Collective name, In/Out msg nelems, dtype,
//    Group size, Process Group Name / Ranks;
//  - ts and dur are microseconds; with `baseTimeNanoseconds` the ts are relative to it.

#include <simdjson.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <unordered_map>

#include "import/kineto/kineto_parse.h"
#include "import/kineto/kineto_stacks.h"
#include "import/kineto/kineto_text.h"
#include "import/kineto/kineto_trace_builder.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/input_bytes.h"

namespace vramscope::trace::kineto {
namespace {

/// Unix ns of 2001-09-09: timestamps above this are taken to be wall-clock (epoch) times.
constexpr int64_t kEpochLikeNs = 1'000'000'000'000'000'000;

}  // namespace

void TraceBuilder::sortLaunches() {
    const std::vector<std::string_view> types = kineto::launchOperandTypes(m_raw);
    std::vector<size_t> order(m_raw.launches.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return m_raw.launches[a].correlation < m_raw.launches[b].correlation;
    });
    m_launches.reserve(order.size());
    m_launchTypes.reserve(order.size());
    for (size_t i : order) {
        m_launches.push_back(m_raw.launches[i]);
        m_launchTypes.push_back(types[i]);
    }
}

void TraceBuilder::chooseTimeBase() {
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = std::numeric_limits<int64_t>::min();
    auto see = [&](int64_t start, int64_t dur) {
        lo = std::min(lo, start);
        hi = std::max(hi, start > std::numeric_limits<int64_t>::max() - dur ? start : start + dur);
    };
    for (const auto& k : m_raw.kernels) {
        see(k.startNs, k.durNs);
    }
    for (const auto& m : m_raw.memory) {
        see(m.tsNs, 0);
    }
    for (const auto& r : m_raw.ranges) {
        see(r.startNs, r.durNs);
    }
    for (const auto& l : m_raw.launches) {
        see(l.tsNs, 0);
    }
    if (m_raw.baseTimeNs && *m_raw.baseTimeNs != 0 && lo <= hi) {
        int64_t sum = 0;
        if (__builtin_add_overflow(hi, *m_raw.baseTimeNs, &sum) ||
            __builtin_add_overflow(lo, *m_raw.baseTimeNs, &sum)) {
            m_baseDropped = true;
        } else {
            m_offsetNs = *m_raw.baseTimeNs;
        }
    }
    if (lo <= hi) {
        m_firstNs = toTrace(lo);
    }
}

void TraceBuilder::buildKernels() {
    const auto& raw = m_raw.kernels;
    m_kernelOrder.resize(raw.size());
    std::iota(m_kernelOrder.begin(), m_kernelOrder.end(), size_t{0});
    std::stable_sort(m_kernelOrder.begin(), m_kernelOrder.end(),
                     [&](size_t a, size_t b) { return raw[a].startNs < raw[b].startNs; });
    KernelEvents& out = m_data.kernels;
    out.reserve(raw.size());
    for (size_t i : m_kernelOrder) {
        const auto& k = raw[i];
        KernelEvent e;
        e.startNs = toTrace(k.startNs);
        e.endNs = e.startNs + k.durNs;
        e.device = k.device;
        e.stream = k.stream;
        e.name = intern(k.name);
        switch (k.kind) {
            case GpuOpKind::Memcpy:
                e.category = KernelCategory::Memcpy;
                break;
            case GpuOpKind::Memset:
                e.category = KernelCategory::Memset;
                break;
            case GpuOpKind::Kernel:
                e.category =
                    k.communication ? KernelCategory::Communication : KernelCategory::Compute;
                break;
        }
        e.bytes = k.bytes;
        e.correlationId = k.correlation;
        if (const kineto::RawLaunch* launch =
                k.correlation != 0 ? findLaunch(k.correlation) : nullptr) {
            e.launchNs = toTrace(launch->tsNs);
            e.operandType = operandTypeOf(launch);
        }
        noteDevice(e.device);
        out.append(e);
    }
}

namespace {

/// Positions of `raw` in time order, ties broken by the producer's "Ev Idx".
std::vector<size_t> timeOrder(const std::vector<kineto::RawMemory>& raw) {
    std::vector<size_t> order(raw.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (raw[a].tsNs != raw[b].tsNs) {
            return raw[a].tsNs < raw[b].tsNs;
        }
        return raw[a].eventIndex >= 0 && raw[b].eventIndex >= 0 &&
               raw[a].eventIndex < raw[b].eventIndex;
    });
    return order;
}

/// Bytes alive before the first of `rows` (in time order): with Total Allocated, the first total
/// minus that event's Bytes; without, the deepest the running sum of Bytes goes below zero.
int64_t preExistingBytes(const std::vector<kineto::RawMemory>& raw, const std::vector<size_t>& rows,
                         bool hasTotals) {
    if (hasTotals) {
        const auto first = std::find_if(rows.begin(), rows.end(),
                                        [&](size_t i) { return raw[i].totalAllocated >= 0; });
        return raw[*first].totalAllocated - raw[*first].bytes;
    }
    int64_t sum = 0;
    int64_t deepest = 0;
    for (size_t i : rows) {
        sum += raw[i].bytes;
        deepest = std::max(deepest, -sum);
    }
    return deepest;
}

bool anyTotals(const std::vector<kineto::RawMemory>& raw, const std::vector<size_t>& rows) {
    return std::any_of(rows.begin(), rows.end(),
                       [&](size_t i) { return raw[i].totalAllocated >= 0; });
}

}  // namespace

void TraceBuilder::buildMemory() {
    const auto& raw = m_raw.memory;
    m_memoryStacks = kineto::memoryStacks(m_raw, m_data);
    std::map<DeviceIndex, std::vector<size_t>> byDevice;
    for (size_t i : timeOrder(raw)) {
        byDevice[raw[i].device].push_back(i);
    }
    for (const auto& [device, rows] : byDevice) {
        buildDeviceMemory(device, rows);
    }
    buildMemoryCounters(byDevice);
    buildHostMemory();
    // Rows were appended device by device; put them back in time order (stable per device).
    MemoryEvents& mem = m_data.memory;
    std::vector<size_t> idx(mem.size());
    std::iota(idx.begin(), idx.end(), size_t{0});
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return mem.timestampNs[a] < mem.timestampNs[b]; });
    MemoryEvents sorted;
    sorted.reserve(idx.size());
    for (size_t i : idx) {
        sorted.append(mem.at(i));
    }
    m_data.memory = std::move(sorted);
    CounterSamples& ctr = m_data.counters;
    idx.resize(ctr.size());
    std::iota(idx.begin(), idx.end(), size_t{0});
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return ctr.timestampNs[a] < ctr.timestampNs[b]; });
    CounterSamples sortedCounters;
    for (size_t i : idx) {
        sortedCounters.append(ctr.at(i));
    }
    m_data.counters = std::move(sortedCounters);
}

/// Chrome counter events of GPU memory ("GPU 0 allocated", "GPU 0 reserved": what a Chrome
/// trace written by vramscope's export carries instead of `[memory]` events) to counters, the
/// totals of their device and level. A device with `[memory]` events keeps the producer's totals
/// from those: the two are never mixed on one curve.
void TraceBuilder::buildMemoryCounters(const std::map<DeviceIndex, std::vector<size_t>>& memory) {
    for (const kineto::RawCounter& c : m_raw.counters) {
        if (memory.count(c.device) > 0) {
            continue;
        }
        noteDevice(c.device);
        const bool allocated = c.level == MemoryLevel::Allocated;
        m_data.counters.append(
            {toTrace(c.tsNs), m_data.intern(allocated ? "Total Allocated" : "Total Reserved"),
             c.device, allocated ? CounterKind::AllocatedBytes : CounterKind::ReservedBytes,
             static_cast<double>(c.bytes)});
    }
}

/// One CUDA device's `[memory]` events (in time order) to memory events and counters.
/// Memory alive before the trace began becomes one PreExisting allocation at address 0 at the
/// first event, so that replaying the events reproduces the producer's totals:
///  - with Total Allocated: first Total Allocated minus the first event's Bytes;
///  - without (old traces): the deepest the running sum of Bytes goes below zero.
/// Counters: the producer's Total Allocated / Total Reserved; without them, AllocatedBytes is
/// rebuilt as that PreExisting size plus the running sum of Bytes, under
/// kRebuiltAllocatedCounterName so that the analyses do not call it the producer's.
void TraceBuilder::buildDeviceMemory(DeviceIndex device, const std::vector<size_t>& rows) {
    noteDevice(device);
    const auto& raw = m_raw.memory;
    const bool hasTotals = anyTotals(raw, rows);
    const int64_t preExisting = preExistingBytes(raw, rows, hasTotals);
    const int64_t t0 = toTrace(raw[rows.front()].tsNs);
    if (preExisting > 0) {
        MemoryEvent pre;
        pre.timestampNs = t0;
        pre.sizeBytes = static_cast<uint64_t>(preExisting);
        pre.kind = MemoryKind::PreExisting;
        pre.device = device;
        m_data.memory.append(pre);
    }
    const StringId allocatedName =
        m_data.intern(hasTotals ? "Total Allocated" : std::string(kRebuiltAllocatedCounterName));
    const StringId reservedName = m_data.intern("Total Reserved");
    int64_t running = std::max<int64_t>(preExisting, 0);
    for (size_t i : rows) {
        const auto& r = raw[i];
        const int64_t t = toTrace(r.tsNs);
        running += r.bytes;
        if (r.bytes != 0) {
            MemoryEvent e;
            e.timestampNs = t;
            e.address = r.address;
            e.sizeBytes = r.bytes > 0 ? static_cast<uint64_t>(r.bytes)
                                      : static_cast<uint64_t>(0) - static_cast<uint64_t>(r.bytes);
            e.action = r.bytes > 0 ? MemoryAction::Alloc : MemoryAction::Free;
            e.device = device;
            e.stack = m_memoryStacks[i];
            m_data.memory.append(e);
        }
        if (!hasTotals) {
            m_data.counters.append({t, allocatedName, device, CounterKind::AllocatedBytes,
                                    static_cast<double>(running)});
            continue;
        }
        if (r.totalAllocated >= 0) {
            m_data.counters.append({t, allocatedName, device, CounterKind::AllocatedBytes,
                                    static_cast<double>(r.totalAllocated)});
        }
        if (r.totalReserved >= 0) {
            m_data.counters.append({t, reservedName, device, CounterKind::ReservedBytes,
                                    static_cast<double>(r.totalReserved)});
        }
    }
}

/// The CPU's `[memory]` events (the CPU allocator's tensors) to one HostAllocatedBytes counter on
/// kHostDevice: the producer's Total Allocated; without totals (2021 traces), what was alive
/// before the first event (preExistingBytes) plus the running sum of Bytes, as for a GPU. Host
/// memory is no GPU memory: no memory events, no device.
void TraceBuilder::buildHostMemory() {
    const auto& raw = m_raw.hostMemory;
    if (raw.empty()) {
        return;
    }
    const std::vector<size_t> rows = timeOrder(raw);
    const bool hasTotals = anyTotals(raw, rows);
    const StringId name =
        m_data.intern(hasTotals ? kHostAllocatedCounterName : kHostAllocatedRebuiltCounterName);
    int64_t running = std::max<int64_t>(preExistingBytes(raw, rows, hasTotals), 0);
    for (size_t i : rows) {
        running += raw[i].bytes;
        const int64_t value = hasTotals ? raw[i].totalAllocated : running;
        if (value >= 0) {
            m_data.counters.append({toTrace(raw[i].tsNs), name, kHostDevice,
                                    CounterKind::HostAllocatedBytes, static_cast<double>(value)});
        }
    }
}

/// Ranges in time order; depth = how many ranges of the same thread (CPU) or device stream
/// (GPU annotations) enclose it.
void TraceBuilder::buildRanges() {
    const auto& raw = m_raw.ranges;
    std::vector<size_t> order(raw.size());
    std::iota(order.begin(), order.end(), size_t{0});
    auto lane = [&](size_t i) {
        return std::make_tuple(raw[i].kind == RangeKind::GpuAnnotation, raw[i].device,
                               raw[i].threadId);
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (lane(a) != lane(b)) {
            return lane(a) < lane(b);
        }
        if (raw[a].startNs != raw[b].startNs) {
            return raw[a].startNs < raw[b].startNs;
        }
        return raw[a].durNs > raw[b].durNs;
    });
    std::vector<uint32_t> depth(raw.size(), 0);
    std::vector<int64_t> openEnds;
    for (size_t k = 0; k < order.size(); ++k) {
        const size_t i = order[k];
        if (k > 0 && lane(order[k - 1]) != lane(i)) {
            openEnds.clear();
        }
        while (!openEnds.empty() && openEnds.back() <= raw[i].startNs) {
            openEnds.pop_back();
        }
        depth[i] = static_cast<uint32_t>(openEnds.size());
        openEnds.push_back(raw[i].startNs + raw[i].durNs);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return raw[a].startNs != raw[b].startNs ? raw[a].startNs < raw[b].startNs
                                                : depth[a] < depth[b];
    });
    for (size_t i : order) {
        const auto& r = raw[i];
        RangeEvent e;
        e.startNs = toTrace(r.startNs);
        e.endNs = e.startNs + r.durNs;
        e.name = intern(r.name);
        e.depth = depth[i];
        e.threadId = r.threadId;
        e.device = r.device;
        e.kind = r.kind;
        noteDevice(r.device);
        m_data.ranges.append(e);
    }
}

void TraceBuilder::buildHeader() {
    FileHeader& h = m_data.header;
    h.formatMajor = kFormatMajor;
    h.formatMinor = kFormatMinor;
    h.producer = "kineto-json import";
    h.clockDomain = "kineto-us";
    h.pid = m_raw.hostPid.value_or(0);
    h.rank = m_raw.rank;
    h.worldSize = m_raw.worldSize;
    if (m_firstNs != std::numeric_limits<int64_t>::max() && m_firstNs > kEpochLikeNs) {
        h.wallClockAnchorNs = m_firstNs;  // trace time is Unix time (ns)
        h.anchorTraceNs = m_firstNs;
    }
    for (const auto& entry : m_devicesSeen) {
        // A plain copy, not a structured binding: clang 14 cannot capture bindings in lambdas.
        const auto index = entry.first;
        auto it = std::find_if(m_raw.devices.begin(), m_raw.devices.end(),
                               [&](const DeviceInfo& d) { return d.index == index; });
        if (it != m_raw.devices.end()) {
            h.devices.push_back(*it);
        } else {
            DeviceInfo d;
            d.index = index;
            h.devices.push_back(d);
        }
    }
    h.captureSettings = m_raw.settings;
    if (m_raw.baseTimeNs) {
        h.captureSettings.emplace_back("kineto.baseTimeNanoseconds",
                                       std::to_string(*m_raw.baseTimeNs));
    }
}

}  // namespace vramscope::trace::kineto

namespace vramscope::trace {
namespace {

using kineto::RawKineto;
using kineto::TraceBuilder;

static_assert(kInputPaddingBytes >= simdjson::SIMDJSON_PADDING,
              "readInputBytes must leave simdjson's padding");

/// Leaves kInputPaddingBytes of zeroed spare capacity after the content of `s`.
void padInPlace(std::string& s) {
    const size_t n = s.size();
    s.resize(n + kInputPaddingBytes, '\0');
    s.resize(n);
}

/// Problems found while preparing and parsing the text, for the report and DataLoss.
struct ImportNotes {
    std::vector<Error> problems;
    std::vector<DataLoss> losses;
    bool truncated = false;
    int64_t truncatedAt = -1;
};

/// Where a parse stopped, in the caller's (original) bytes.
int64_t toOriginal(const kineto::OffsetMap& map, int64_t offset) {
    return offset < 0
               ? offset
               : static_cast<int64_t>(kineto::originalOffset(map, static_cast<uint64_t>(offset)));
}

void noteCounts(const RawKineto& raw, ImportNotes& notes) {
    if (raw.valuesOutOfRange > 0) {
        notes.losses.push_back({LossCounter::JsonValuesOutOfRange, raw.valuesOutOfRange, {}, 0, 0});
    }
    if (raw.eventsWithoutTime > 0) {
        notes.losses.push_back(
            {LossCounter::JsonEventsWithoutTime, raw.eventsWithoutTime, {}, 0, 0});
    }
    if (raw.nonObjects > 0) {
        notes.losses.push_back({LossCounter::JsonNonObjectEntries, raw.nonObjects, {}, 0, 0});
    }
}

/// Parses `text` (padded), repairing control characters and a cut end when simdjson refuses
/// to start. Fills `raw`; returns an Error when nothing usable could be read.
Result<bool> parseWithRepairs(std::string_view text, const std::string& name,
                              const kineto::OffsetMap& offsets, std::string& repairedStorage,
                              kineto::KinetoParser& parser, std::unique_ptr<RawKineto>& raw,
                              const ReadOptions& options, ImportNotes& notes) {
    simdjson::error_code e =
        parser.parse(text.data(), text.size(), text.size() + kInputPaddingBytes, *raw,
                     options.progress, "Reading " + name);
    if (e == simdjson::CAPACITY) {
        return Error::make(ErrorCode::Limit, name,
                           "the JSON text is larger than the 4 GiB simdjson can parse");
    }
    if (e == simdjson::SUCCESS) {
        return true;
    }
    kineto::StructureRepair fix = kineto::repairStructure(text);
    if (!fix.usable || (fix.controlChars == 0 && !fix.cut)) {
        return Error::make(ErrorCode::Corrupt, name,
                           std::string("not a readable JSON trace (") + simdjson::error_message(e) +
                               (fix.cut ? "); no whole event before the damage" : ")"))
            .atByte(fix.cut ? toOriginal(offsets, fix.endOffset) : -1);
    }
    if (fix.controlChars > 0) {
        const int64_t at = toOriginal(offsets, fix.firstControlOffset);
        const char* what = fix.controlChars == 1
                               ? " raw control character inside a string (JSON forbids them) was "
                                 "replaced by a space"
                               : " raw control characters inside strings (JSON forbids them) "
                                 "were replaced by spaces";
        notes.problems.push_back(
            Error::make(ErrorCode::Corrupt, name, std::to_string(fix.controlChars) + what)
                .atByte(at));
        notes.losses.push_back(
            {LossCounter::JsonControlCharactersReplaced, fix.controlChars, {}, 0, 0});
    }
    if (fix.cut) {
        notes.truncated = true;
        notes.truncatedAt = toOriginal(offsets, fix.endOffset);
        const int64_t cutAt = toOriginal(offsets, fix.cutOffset);
        const int64_t after = int64_t(text.size()) - notes.truncatedAt;
        // Damage well before the end is no cut file: say how much was left unread.
        const std::string why =
            after > 1024 ? "the JSON is malformed here; every whole event before byte " +
                               std::to_string(cutAt) + " was loaded, the " + std::to_string(after) +
                               " bytes after this point were not read"
                         : "the JSON ends early or is malformed here; every whole event before "
                           "byte " +
                               std::to_string(cutAt) +
                               " was loaded. The file was probably cut while it was written.";
        notes.problems.push_back(
            Error::make(ErrorCode::Truncated, name, why).atByte(notes.truncatedAt));
        notes.losses.push_back(
            {LossCounter::JsonEventsAfterDamage, 0,
             "the file is cut or malformed at byte " + std::to_string(notes.truncatedAt), 0, 0});
    }
    repairedStorage = std::move(fix.text);
    padInPlace(repairedStorage);
    raw = std::make_unique<RawKineto>();
    e = parser.parse(repairedStorage.data(), repairedStorage.size(),
                     repairedStorage.size() + kInputPaddingBytes, *raw, options.progress,
                     "Reading " + name);
    if (e != simdjson::SUCCESS) {
        return Error::make(
            ErrorCode::Corrupt, name,
            std::string("not a readable JSON trace (") + simdjson::error_message(e) + ")");
    }
    return true;
}

/// `data` must be readable up to data + size + kInputPaddingBytes.
Result<LoadedTrace> importPadded(const char* data, size_t size, const std::string& name,
                                 const ReadOptions& options) {
    ImportNotes notes;
    std::string_view text(data, size);
    kineto::OffsetMap offsets;
    std::string utf8Storage;
    if (!simdjson::validate_utf8(data, size)) {
        kineto::Utf8Repair fix = kineto::repairUtf8(text);
        notes.problems.push_back(
            Error::make(
                ErrorCode::Corrupt, name,
                std::to_string(fix.replaced) +
                    " invalid UTF-8 sequences were replaced with U+FFFD (first at this byte)")
                .atByte(fix.firstBadOffset));
        notes.losses.push_back({LossCounter::JsonInvalidUtf8Replaced, fix.replaced, {}, 0, 0});
        utf8Storage = std::move(fix.text);
        padInPlace(utf8Storage);
        text = utf8Storage;
        offsets = std::move(fix.offsets);
    }
    auto parser = std::make_unique<kineto::KinetoParser>();
    auto raw = std::make_unique<RawKineto>();
    std::string repairedStorage;
    auto parsed =
        parseWithRepairs(text, name, offsets, repairedStorage, *parser, raw, options, notes);
    if (!parsed) {
        return parsed.error();
    }
    if (raw->stop && raw->stop->code == ErrorCode::Cancelled) {
        return Error::cancelled(name);
    }
    const bool stoppedEarly = raw->stop.has_value();
    if (stoppedEarly) {
        const int64_t at = toOriginal(offsets, raw->stop->byteOffset);
        Error stop = *raw->stop;
        stop.file = name;
        stop.byteOffset = at;
        stop.message += "; the " + std::to_string(raw->events) + " events before it were loaded";
        if (const int64_t after = int64_t(size) - at; after > 0) {
            stop.message += ", the " + std::to_string(after) + " bytes from there on were not read";
        }
        notes.problems.push_back(std::move(stop));
        notes.losses.push_back({LossCounter::JsonEventsAfterDamage, 0,
                                "malformed JSON found at byte " + std::to_string(at) +
                                    " (the damage is at or before it)",
                                0, 0});
        if (!notes.truncated) {
            notes.truncated = true;
            notes.truncatedAt = at;
        }
    }
    if (!raw->sawEventArray && !stoppedEarly && !notes.truncated) {
        return Error::make(ErrorCode::Unsupported, name,
                           "the JSON has no traceEvents array: not a Kineto / Chrome trace");
    }
    if (raw->events == 0 && (stoppedEarly || notes.truncated)) {
        return Error::make(ErrorCode::Corrupt, name,
                           "no event could be read before the JSON became unreadable")
            .atByte(notes.truncatedAt);
    }
    noteCounts(*raw, notes);

    LoadedTrace out;
    TraceBuilder builder(*raw, out.data);
    builder.build();
    if (builder.baseDropped()) {
        notes.problems.push_back(Error::make(
            ErrorCode::Corrupt, name,
            "baseTimeNanoseconds plus the event times overflows 64-bit ns; times are kept "
            "relative to the base"));
    }
    ReadReport& report = out.report;
    report.fileName = name;
    report.fileBytes = size;
    report.bytesLoaded = notes.truncatedAt >= 0 ? static_cast<uint64_t>(notes.truncatedAt) : size;
    report.framesLoaded = raw->events;
    report.eventStream = true;
    report.framesSkipped = raw->nonObjects;
    report.truncated = notes.truncated;
    report.truncatedAtByte = notes.truncatedAt;
    report.complete = notes.problems.empty();
    report.problems = std::move(notes.problems);
    for (auto& loss : notes.losses) {
        out.data.dataLoss.push_back(std::move(loss));
    }
    // The closing call may cancel too, as it does for the .vscope reader and the snapshot importer.
    if (!reportProgress(options.progress, size, size, "Reading " + name)) {
        return Error::cancelled(name);
    }
    return out;
}

}  // namespace

Result<LoadedTrace> importKinetoJson(std::string_view jsonBytes, const std::string& name,
                                     const ReadOptions& options) {
    std::string copy;
    copy.reserve(jsonBytes.size() + kInputPaddingBytes);
    copy.assign(jsonBytes);
    padInPlace(copy);
    return importPadded(copy.data(), copy.size(), name, options);
}

Result<LoadedTrace> importKinetoJsonBuffer(const std::string& json, const std::string& name,
                                           const ReadOptions& options) {
    if (json.capacity() - json.size() >= kInputPaddingBytes) {
        return importPadded(json.data(), json.size(), name, options);
    }
    return importKinetoJson(json, name, options);
}

}  // namespace vramscope::trace
