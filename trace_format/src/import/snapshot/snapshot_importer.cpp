// Import of PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot).
//
// Layout facts (PyTorch torch/cuda/memory.py `_snapshot` docstring and c10/cuda/
// CUDACachingAllocator.h TraceEntry): the pickle is a dict with
//   segments: [{device, address, total_size, stream, is_expandable, frames,
//               blocks: [{address (newer) | offset by size (older), size, requested_size, state,
//                         frames | history}]}]
//   device_traces: [[{action, addr, size, stream, time_us, frames, device_free}] per device]
//   external_annotations: [{name, stage: START|END, time_us, device}]   (newer)
//   allocator_settings: {...}                                            (newer)
// Very old dumps (torch.cuda.memory_snapshot()) are a bare list of segments.
// Trace sizes are the requested sizes (the allocator records orig_size / requested_size), so the
// blocks reconstructed from the dump use requested_size too. time_us is Unix time in microseconds.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <new>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "import/kineto/kineto_text.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/pickle_reader.h"

namespace vramscope::trace {

namespace {

constexpr const char* kProducer = "pytorch-snapshot import";
constexpr const char* kClockDomain = "pytorch-snapshot-us";

using AddressRange = std::pair<uint64_t, uint64_t>;  // [first, second)

/// Disjoint address ranges [start, end) believed reserved; used for segments, whose expandable
/// form maps and unmaps ranges that need not match the ranges mapped earlier.
class RangeSet {
public:
    /// Appends to `out` the parts of [a, b) not covered.
    void gaps(uint64_t a, uint64_t b, std::vector<AddressRange>& out) const {
        auto it = m_ranges.upper_bound(a);
        if (it != m_ranges.begin() && std::prev(it)->second > a) {
            --it;
        }
        uint64_t cursor = a;
        for (; it != m_ranges.end() && it->first < b; ++it) {
            if (it->first > cursor) {
                out.emplace_back(cursor, it->first);
            }
            cursor = std::max(cursor, it->second);
        }
        if (cursor < b) {
            out.emplace_back(cursor, b);
        }
    }
    /// Covers [a, b) (merging with what it touches).
    void add(uint64_t a, uint64_t b) {
        auto it = m_ranges.upper_bound(a);
        if (it != m_ranges.begin() && std::prev(it)->second >= a) {
            --it;
        }
        while (it != m_ranges.end() && it->first <= b) {
            a = std::min(a, it->first);
            b = std::max(b, it->second);
            it = m_ranges.erase(it);
        }
        m_ranges.emplace(a, b);
    }
    /// Uncovers [a, b).
    void remove(uint64_t a, uint64_t b) {
        auto it = m_ranges.upper_bound(a);
        if (it != m_ranges.begin() && std::prev(it)->second > a) {
            --it;
        }
        std::vector<AddressRange> keep;
        while (it != m_ranges.end() && it->first < b) {
            if (it->first < a) {
                keep.emplace_back(it->first, a);
            }
            if (it->second > b) {
                keep.emplace_back(b, it->second);
            }
            it = m_ranges.erase(it);
        }
        for (const auto& r : keep) {
            m_ranges.emplace(r.first, r.second);
        }
    }

private:
    std::map<uint64_t, uint64_t> m_ranges;
};

uint64_t totalBytes(const std::vector<AddressRange>& ranges) {
    uint64_t n = 0;
    for (const auto& r : ranges) {
        n += r.second - r.first;
    }
    return n;
}

// Marks a pickle node whose frame or stack is not interned yet.
constexpr FrameId kNotInternedFrame{UINT32_MAX};
constexpr StackId kNotInternedStack{UINT32_MAX};

/// Replay state of one device.
struct DeviceReplay {
    std::vector<MemoryEvent> preExisting;  ///< memory alive before the trace began, at t0
    std::vector<MemoryEvent> events;       ///< the trace's own events, in file order
    std::unordered_map<uint64_t, uint64_t> liveBlocks;  ///< address -> bytes
    std::unordered_set<uint64_t> seenBlocks;            ///< every address the trace touched
    RangeSet liveReserved;
    RangeSet seenReserved;
    bool used = false;
};

/// One kind of problem, counted, with the first place it was seen.
struct Tally {
    uint64_t count = 0;
    std::string example;  ///< e.g. the first unknown action's name
    int64_t firstRecord = -1;
    DeviceIndex firstDevice{0};
};

class SnapshotImporter {
public:
    SnapshotImporter(const PickleDocument& doc, const std::string& name)
        : m_doc(doc),
          m_name(name),
          m_frameCache(doc.nodeCount(), kNotInternedFrame),
          m_stackCache(doc.nodeCount(), kNotInternedStack) {}

    Result<LoadedTrace> run(uint64_t inputBytes);

private:
    // --- field access
    std::optional<int64_t> intField(PickleNodeId dict, std::string_view key) const {
        return m_doc.asInt(m_doc.get(dict, key));
    }
    std::optional<uint64_t> unsignedField(PickleNodeId dict, std::string_view key) const {
        const auto v = intField(dict, key);
        return v && *v >= 0 ? std::optional<uint64_t>(uint64_t(*v)) : std::nullopt;
    }
    std::string_view stringField(PickleNodeId dict, std::string_view key) const {
        return text(m_doc.get(dict, key));
    }
    /// The str of `node` ("" when it is none), with invalid UTF-8 replaced by U+FFFD and counted:
    /// a pickle's str is UTF-8 (Python refuses to unpickle anything else), so invalid bytes are
    /// damage, and every string handed on (trace names, JSON output) must be valid UTF-8.
    std::string_view text(PickleNodeId node) const;
    std::optional<TimestampNs> timeField(PickleNodeId dict) const;
    StackId stackOf(PickleNodeId frames);
    void note(const std::string& what, DeviceIndex device, int64_t record,
              std::string_view example = {});

    DeviceReplay& device(DeviceIndex d);
    void replayTrace(DeviceIndex d, PickleNodeId entries);
    void replayEntry(DeviceIndex d, DeviceReplay& dev, PickleNodeId e, int64_t i);
    void freeBlock(DeviceIndex d, DeviceReplay& dev, const MemoryEvent& free, int64_t i);
    void reserve(DeviceReplay& dev, const MemoryEvent& alloc);
    void unreserve(DeviceIndex d, DeviceReplay& dev, MemoryEvent free, int64_t i);
    void reconstructFromSegments(PickleNodeId segments);
    void importAnnotations(PickleNodeId annotations);
    void importSettings(PickleNodeId settings);
    void finish(LoadedTrace& out, uint64_t inputBytes);

    const PickleDocument& m_doc;
    const std::string& m_name;
    TraceData m_data;
    std::vector<FrameId> m_frameCache;  // pickle node -> frame id
    std::vector<StackId> m_stackCache;  // pickle node -> stack id
    std::vector<FrameId> m_scratch;
    std::map<DeviceIndex, DeviceReplay> m_devices;
    mutable std::deque<std::string> m_repairedText;  ///< owns text() results that were repaired
    mutable uint64_t m_invalidUtf8 = 0;              ///< sequences replaced by text()
    std::map<std::string, Tally> m_problems;
    TimestampNs m_t0 = 0;
    TimestampNs m_tLast = 0;
};

std::optional<TimestampNs> SnapshotImporter::timeField(PickleNodeId dict) const {
    const PickleNodeId n = m_doc.get(dict, "time_us");
    constexpr int64_t kMaxUs = INT64_MAX / 1000;
    if (const auto us = m_doc.asInt(n); us) {
        if (*us > kMaxUs || *us < -kMaxUs) {
            return std::nullopt;
        }
        return *us * 1000;
    }
    if (const auto us = m_doc.asFloat(n); us && *us < double(kMaxUs) && *us > -double(kMaxUs)) {
        return static_cast<TimestampNs>(*us * 1000.0);
    }
    return std::nullopt;
}

// Frames are dicts {name, filename, line}, innermost first, as TraceData keeps stacks. Shared
// pickle values (the memo) make the same list or frame one node, so each is interned once.
StackId SnapshotImporter::stackOf(PickleNodeId frames) {
    if (m_doc.kind(frames) != PickleKind::List && m_doc.kind(frames) != PickleKind::Tuple) {
        return StackId{0};
    }
    if (m_stackCache[frames] != kNotInternedStack) {
        return m_stackCache[frames];
    }
    m_scratch.clear();
    for (const PickleNodeId f : m_doc.items(frames)) {
        if (m_frameCache[f] == kNotInternedFrame) {
            if (m_doc.kind(f) != PickleKind::Dict) {
                note("stack frames that are not {name, filename, line} dicts (left out)",
                     DeviceIndex{0}, -1);
                continue;
            }
            Frame frame;
            frame.name = m_data.intern(stringField(f, "name"));
            frame.file = m_data.intern(stringField(f, "filename"));
            const int64_t line = intField(f, "line").value_or(0);
            frame.line = line >= INT32_MIN && line <= INT32_MAX ? int32_t(line) : 0;
            m_frameCache[f] = m_data.internFrame(frame);
        }
        m_scratch.push_back(m_frameCache[f]);
    }
    m_stackCache[frames] = m_data.internStack(m_scratch);
    return m_stackCache[frames];
}

std::string_view SnapshotImporter::text(PickleNodeId node) const {
    const std::string_view s = m_doc.asString(node).value_or(std::string_view());
    if (std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; })) {
        return s;  // ASCII, the usual case
    }
    kineto::Utf8Repair fix = kineto::repairUtf8(s);
    if (fix.replaced == 0) {
        return s;
    }
    m_invalidUtf8 += fix.replaced;
    return m_repairedText.emplace_back(std::move(fix.text));
}

void SnapshotImporter::note(const std::string& what, DeviceIndex device, int64_t record,
                            std::string_view example) {
    Tally& t = m_problems[what];
    if (t.count++ == 0) {
        t.firstRecord = record;
        t.firstDevice = device;
        // At most 40 bytes, never ending inside a UTF-8 sequence.
        size_t n = std::min<size_t>(example.size(), 40);
        while (n > 0 && n < example.size() &&
               (static_cast<unsigned char>(example[n]) & 0xC0) == 0x80) {
            --n;
        }
        t.example = std::string(example.substr(0, n));
    }
}

DeviceReplay& SnapshotImporter::device(DeviceIndex d) {
    DeviceReplay& dev = m_devices[d];
    dev.used = true;
    return dev;
}

void SnapshotImporter::replayTrace(DeviceIndex d, PickleNodeId entries) {
    const auto items = m_doc.items(entries);
    if (items.empty()) {
        return;
    }
    DeviceReplay& dev = device(d);
    dev.events.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        replayEntry(d, dev, items[i], int64_t(i));
    }
}

void SnapshotImporter::replayEntry(DeviceIndex d, DeviceReplay& dev, PickleNodeId e, int64_t i) {
    const std::string_view action = stringField(e, "action");
    if (action.empty()) {
        note("trace entries without an 'action' (skipped)", d, i);
        return;
    }
    if (action == "free_requested" || action == "snapshot") {
        return;  // intent to free (the memory is free only at free_completed); a marker
    }
    const std::optional<TimestampNs> t = timeField(e);
    const std::optional<uint64_t> size = unsignedField(e, "size");
    if (action == "oom") {
        if (!t || !size) {
            note("oom entries without 'size' or 'time_us' (skipped)", d, i);
            return;
        }
        dev.used = true;
        m_data.ooms.push_back(OomEvent{*t, d, unsignedField(e, "stream").value_or(0), *size,
                                       unsignedField(e, "device_free").value_or(0)});
        return;
    }
    const bool alloc = action == "alloc";
    const bool free = action == "free_completed" || action == "free";  // "free": early 2.x name
    const bool segAlloc = action == "segment_alloc" || action == "segment_map";
    const bool segFree = action == "segment_free" || action == "segment_unmap";
    if (!alloc && !free && !segAlloc && !segFree) {
        note("trace entries with an unknown action (skipped)", d, i, action);
        return;
    }
    const std::optional<uint64_t> addr = unsignedField(e, "addr");
    if (!t || !addr || !size || *size > UINT64_MAX - *addr) {
        note("memory entries without an integer 'addr', 'size' or 'time_us' (skipped)", d, i);
        return;
    }
    MemoryEvent ev;
    ev.timestampNs = *t;
    ev.address = *addr;
    ev.sizeBytes = *size;
    ev.action = (alloc || segAlloc) ? MemoryAction::Alloc : MemoryAction::Free;
    ev.level = (alloc || free) ? MemoryLevel::Allocated : MemoryLevel::Reserved;
    ev.kind = MemoryKind::Device;
    ev.device = d;
    ev.stream = unsignedField(e, "stream").value_or(0);
    ev.stack = stackOf(m_doc.get(e, "frames"));
    if (alloc) {
        dev.seenBlocks.insert(ev.address);
        auto [it, fresh] = dev.liveBlocks.try_emplace(ev.address, ev.sizeBytes);
        if (!fresh) {
            // The block's free is missing: close it here so one address holds one block.
            note("allocs at an address already allocated (the earlier block is closed there)", d,
                 i);
            MemoryEvent close = ev;
            close.action = MemoryAction::Free;
            close.sizeBytes = it->second;
            close.stack = StackId{0};
            dev.events.push_back(close);
            it->second = ev.sizeBytes;
        }
        dev.events.push_back(ev);
    } else if (free) {
        freeBlock(d, dev, ev, i);
    } else if (segAlloc) {
        reserve(dev, ev);
    } else {
        unreserve(d, dev, ev, i);
    }
}

void SnapshotImporter::freeBlock(DeviceIndex d, DeviceReplay& dev, const MemoryEvent& free,
                                 int64_t i) {
    MemoryEvent ev = free;
    if (auto it = dev.liveBlocks.find(ev.address); it != dev.liveBlocks.end()) {
        if (it->second != ev.sizeBytes) {
            note("frees whose size differs from their alloc (the alloc's size is used)", d, i);
            ev.sizeBytes = it->second;
        }
        dev.liveBlocks.erase(it);
        dev.events.push_back(ev);
        return;
    }
    if (!dev.seenBlocks.insert(ev.address).second) {
        note("frees of an address already freed (skipped)", d, i);
        return;
    }
    // Allocated before recording began: alive from the start of the trace.
    MemoryEvent pre = ev;
    pre.timestampNs = m_t0;
    pre.action = MemoryAction::Alloc;
    pre.kind = MemoryKind::PreExisting;
    pre.stack =
        StackId{0};  // the entry's frames are where it was freed, not where it was allocated
    dev.preExisting.push_back(pre);
    dev.events.push_back(ev);
}

void SnapshotImporter::reserve(DeviceReplay& dev, const MemoryEvent& alloc) {
    dev.liveReserved.add(alloc.address, alloc.address + alloc.sizeBytes);
    dev.seenReserved.add(alloc.address, alloc.address + alloc.sizeBytes);
    dev.events.push_back(alloc);
}

// A segment_free / segment_unmap: the part of its range that the trace never reserved was
// reserved before recording began; a part the trace already released is a double release.
void SnapshotImporter::unreserve(DeviceIndex d, DeviceReplay& dev, MemoryEvent free, int64_t i) {
    const uint64_t a = free.address;
    const uint64_t b = a + free.sizeBytes;
    std::vector<AddressRange> notLive;
    dev.liveReserved.gaps(a, b, notLive);
    uint64_t released = free.sizeBytes - totalBytes(notLive);
    for (const auto& gap : notLive) {
        std::vector<AddressRange> never;
        dev.seenReserved.gaps(gap.first, gap.second, never);
        for (const auto& n : never) {
            MemoryEvent pre = free;
            pre.timestampNs = m_t0;
            pre.action = MemoryAction::Alloc;
            pre.kind = MemoryKind::PreExisting;
            pre.address = n.first;
            pre.sizeBytes = n.second - n.first;
            pre.stack = StackId{0};
            dev.preExisting.push_back(pre);
            released += pre.sizeBytes;
        }
        if (totalBytes(never) != gap.second - gap.first) {
            note("segment frees of memory already released (that part is skipped)", d, i);
        }
    }
    dev.liveReserved.remove(a, b);
    dev.seenReserved.add(a, b);
    if (released > 0) {
        free.sizeBytes = released;
        dev.events.push_back(free);
    }
}

// Blocks and segments alive at the dump that the replay does not hold were alive before the
// trace began (PyTorch's MemoryViz reconstructs its "initially allocated" set the same way).
void SnapshotImporter::reconstructFromSegments(PickleNodeId segments) {
    int64_t index = -1;
    for (const PickleNodeId seg : m_doc.items(segments)) {
        ++index;
        const auto d = intField(seg, "device");
        const auto base = unsignedField(seg, "address");
        const auto total = unsignedField(seg, "total_size");
        if (!d || *d < 0 || *d > INT32_MAX || !base || !total || *total > UINT64_MAX - *base) {
            note("segments without an integer 'device', 'address' or 'total_size' (skipped)",
                 kHostDevice, index);
            continue;
        }
        DeviceReplay& dev = device(DeviceIndex(*d));
        MemoryEvent pre;
        pre.timestampNs = m_t0;
        pre.action = MemoryAction::Alloc;
        pre.kind = MemoryKind::PreExisting;
        pre.device = DeviceIndex(*d);
        pre.stream = unsignedField(seg, "stream").value_or(0);

        std::vector<AddressRange> notLive;
        dev.liveReserved.gaps(*base, *base + *total, notLive);
        pre.level = MemoryLevel::Reserved;
        pre.stack = stackOf(m_doc.get(seg, "frames"));
        for (const auto& gap : notLive) {
            pre.address = gap.first;
            pre.sizeBytes = gap.second - gap.first;
            dev.preExisting.push_back(pre);
        }

        pre.level = MemoryLevel::Allocated;
        uint64_t offset = 0;  // older dumps give no block address: blocks tile the segment
        for (const PickleNodeId block : m_doc.items(m_doc.get(seg, "blocks"))) {
            const auto size = unsignedField(block, "size");
            const std::string_view state = stringField(block, "state");
            if (!size || state.empty()) {
                note("blocks without an integer 'size' or a 'state' (skipped)", DeviceIndex(*d),
                     index);
                break;  // later offsets would be wrong
            }
            const uint64_t address = unsignedField(block, "address").value_or(*base + offset);
            offset += *size;
            // active_pending_free: freed by the program, not yet by the allocator (its stream
            // uses are pending): still held, as at free_requested.
            if (state != "active_allocated" && state != "active_pending_free") {
                continue;
            }
            if (dev.liveBlocks.count(address)) {
                continue;
            }
            pre.address = address;
            pre.sizeBytes = unsignedField(block, "requested_size").value_or(*size);
            PickleNodeId frames = m_doc.get(block, "frames");
            if (frames == kNoPickleNode) {  // PyTorch 2.0: history[-1].frames
                const auto history = m_doc.items(m_doc.get(block, "history"));
                frames = history.empty() ? kNoPickleNode : m_doc.get(history.back(), "frames");
            }
            pre.stack = stackOf(frames);
            dev.liveBlocks.emplace(address, pre.sizeBytes);
            dev.preExisting.push_back(pre);
        }
    }
}

void SnapshotImporter::importAnnotations(PickleNodeId annotations) {
    struct Open {
        TimestampNs start;
        uint32_t depth;
    };
    std::map<std::pair<DeviceIndex, std::string_view>, std::vector<Open>> open;
    std::map<DeviceIndex, uint32_t> depth;
    std::vector<RangeEvent> ranges;
    int64_t index = -1;
    for (const PickleNodeId a : m_doc.items(annotations)) {
        ++index;
        const std::string_view name = stringField(a, "name");
        const std::string_view stage = stringField(a, "stage");
        const auto t = timeField(a);
        const auto d = intField(a, "device").value_or(toInt(kHostDevice));
        if (!t || (stage != "START" && stage != "END") || d < INT32_MIN || d > INT32_MAX) {
            note("annotations without 'time_us' or a START/END 'stage' (skipped)", kHostDevice,
                 index);
            continue;
        }
        const auto key = std::make_pair(DeviceIndex(d), name);
        if (stage == "START") {
            open[key].push_back(Open{*t, depth[DeviceIndex(d)]++});
            continue;
        }
        auto it = open.find(key);
        if (it == open.end() || it->second.empty()) {
            note("annotation ENDs without a START (skipped)", kHostDevice, index);
            continue;
        }
        const Open o = it->second.back();
        it->second.pop_back();
        --depth[DeviceIndex(d)];
        ranges.push_back(RangeEvent{o.start, std::max(o.start, *t), m_data.intern(name), o.depth, 0,
                                    DeviceIndex(d), RangeKind::UserAnnotation});
    }
    for (const auto& [key, starts] : open) {
        for (const Open& o : starts) {
            note("annotation STARTs without an END (closed at the last trace time)", kHostDevice,
                 -1);
            ranges.push_back(RangeEvent{o.start, std::max(o.start, m_tLast),
                                        m_data.intern(key.second), o.depth, 0, key.first,
                                        RangeKind::UserAnnotation});
        }
    }
    std::stable_sort(ranges.begin(), ranges.end(), [](const RangeEvent& x, const RangeEvent& y) {
        return x.startNs < y.startNs || (x.startNs == y.startNs && x.depth < y.depth);
    });
    for (const RangeEvent& r : ranges) {
        m_data.ranges.append(r);
    }
}

// Scalar allocator settings become capture settings ("expandable_segments" = "False", ...).
void SnapshotImporter::importSettings(PickleNodeId settings) {
    const auto kv = m_doc.items(settings);
    if (m_doc.kind(settings) != PickleKind::Dict) {
        return;
    }
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
        if (m_doc.kind(kv[i]) != PickleKind::String) {
            continue;
        }
        const std::string_view key = text(kv[i]);
        const PickleNodeId v = kv[i + 1];
        std::string value;
        switch (m_doc.kind(v)) {
            case PickleKind::String:
                value = std::string(text(v));
                break;
            case PickleKind::Bool:
                value = *m_doc.asInt(v) ? "True" : "False";
                break;
            case PickleKind::Int:
                value = std::to_string(*m_doc.asInt(v));
                break;
            case PickleKind::Float:
                value = std::to_string(*m_doc.asFloat(v));
                break;
            default:
                continue;
        }
        m_data.header.captureSettings.emplace_back("allocator." + std::string(key), value);
    }
}

Result<LoadedTrace> SnapshotImporter::run(uint64_t inputBytes) {
    const PickleNodeId root = m_doc.root();
    PickleNodeId segments = kNoPickleNode;
    PickleNodeId traces = kNoPickleNode;
    if (m_doc.kind(root) == PickleKind::List) {
        segments = root;  // torch.cuda.memory_snapshot(): the segments alone
    } else if (m_doc.kind(root) == PickleKind::Dict) {
        segments = m_doc.get(root, "segments");
        traces = m_doc.get(root, "device_traces");
    }
    if (m_doc.kind(segments) != PickleKind::List && m_doc.kind(traces) != PickleKind::List) {
        return Error::make(ErrorCode::Unsupported, m_name,
                           "not a PyTorch memory snapshot: expected a dict with 'segments' or "
                           "'device_traces' (torch.cuda.memory._dump_snapshot)");
    }

    // The first and last trace times: reconstructed memory is placed at the first.
    bool anyTime = false;
    for (const PickleNodeId perDevice : m_doc.items(traces)) {
        for (const PickleNodeId e : m_doc.items(perDevice)) {
            if (const auto t = timeField(e); t) {
                m_t0 = anyTime ? std::min(m_t0, *t) : *t;
                m_tLast = anyTime ? std::max(m_tLast, *t) : *t;
                anyTime = true;
            }
        }
    }
    const auto perDevice = m_doc.items(traces);
    for (size_t d = 0; d < perDevice.size() && d <= size_t(INT32_MAX); ++d) {
        replayTrace(DeviceIndex(d), perDevice[d]);
    }
    reconstructFromSegments(segments);
    if (m_doc.kind(root) == PickleKind::Dict) {
        importAnnotations(m_doc.get(root, "external_annotations"));
        importSettings(m_doc.get(root, "allocator_settings"));
    }
    m_data.header.wallClockAnchorNs = anyTime ? m_t0 : 0;  // time_us is Unix time
    m_data.header.anchorTraceNs = anyTime ? m_t0 : 0;

    LoadedTrace out;
    finish(out, inputBytes);
    return out;
}

void SnapshotImporter::finish(LoadedTrace& out, uint64_t inputBytes) {
    FileHeader& h = m_data.header;
    h.producer = kProducer;
    h.clockDomain = kClockDomain;
    size_t total = 0;
    for (auto& [d, dev] : m_devices) {
        if (dev.used) {
            h.devices.push_back(DeviceInfo{d, {}, {}, 0});  // the snapshot gives no capacity
        }
        total += dev.preExisting.size() + dev.events.size();
    }
    // Merge the devices by time; each device keeps its file order (pre-existing memory first).
    struct Head {
        TimestampNs t;
        DeviceIndex d;
        size_t i;
        bool operator>(const Head& o) const { return t != o.t ? t > o.t : d > o.d; }
    };
    auto at = [&](DeviceReplay& dev, size_t i) -> const MemoryEvent& {
        return i < dev.preExisting.size() ? dev.preExisting[i]
                                          : dev.events[i - dev.preExisting.size()];
    };
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
    for (auto& [d, dev] : m_devices) {
        if (!dev.preExisting.empty() || !dev.events.empty()) {
            heads.push(Head{at(dev, 0).timestampNs, d, 0});
        }
    }
    m_data.memory.reserve(total);
    while (!heads.empty()) {
        const Head head = heads.top();
        heads.pop();
        DeviceReplay& dev = m_devices[head.d];
        m_data.memory.append(at(dev, head.i));
        if (head.i + 1 < dev.preExisting.size() + dev.events.size()) {
            heads.push(Head{at(dev, head.i + 1).timestampNs, head.d, head.i + 1});
        }
    }

    out.report.fileBytes = inputBytes;
    out.report.bytesLoaded = inputBytes;
    for (const auto& [what, tally] : m_problems) {
        std::string where;
        if (!tally.example.empty()) {
            where += " (e.g. '" + tally.example + "')";
        }
        if (tally.firstRecord >= 0 && toInt(tally.firstDevice) >= 0) {
            where += " (first: device " + std::to_string(toInt(tally.firstDevice)) +
                     " trace entry " + std::to_string(tally.firstRecord) + ")";
        }
        out.report.problems.push_back(Error::make(ErrorCode::Corrupt, m_name,
                                                  std::to_string(tally.count) + " " + what + where)
                                          .atRecord(tally.firstRecord));
        m_data.dataLoss.push_back(
            DataLoss{LossCounter::SnapshotEntriesSkipped, tally.count, what + where, 0, 0});
        out.report.complete = false;
    }
    if (m_invalidUtf8 > 0) {
        const std::string what =
            std::to_string(m_invalidUtf8) +
            " invalid UTF-8 sequences in the snapshot's strings (a pickled str "
            "is UTF-8) were replaced with U+FFFD";
        out.report.problems.push_back(Error::make(ErrorCode::Corrupt, m_name, what));
        m_data.dataLoss.push_back(
            DataLoss{LossCounter::JsonInvalidUtf8Replaced, m_invalidUtf8, what, 0, 0});
        out.report.complete = false;
    }
    out.data = std::move(m_data);
}

}  // namespace

Result<LoadedTrace> importPytorchSnapshot(std::string_view pickleBytes, const std::string& name,
                                          const ReadOptions& options) {
    if (!reportProgress(options.progress, 0, pickleBytes.size(), "Reading " + name)) {
        return Error::cancelled(name);
    }
    try {
        Result<PickleDocument> doc = parsePickle(pickleBytes, name);
        if (!doc.ok()) {
            Error e = doc.error();
            e.message = "cannot read the PyTorch memory snapshot: " + e.message;
            return e;
        }
        Result<LoadedTrace> out = SnapshotImporter(*doc, name).run(pickleBytes.size());
        if (out.ok()) {
            out->report.fileName = name;
        }
        if (!reportProgress(options.progress, pickleBytes.size(), pickleBytes.size(),
                            "Reading " + name)) {
            return Error::cancelled(name);
        }
        return out;
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, name,
                           "out of memory while importing the PyTorch memory snapshot");
    }
}

}  // namespace vramscope::trace
