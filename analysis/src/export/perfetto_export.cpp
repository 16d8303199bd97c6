#include "vramscope/analysis/export/perfetto_export.h"

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/export_walk.h"
#include "perfetto/trace_subset.pb.h"

namespace vramscope::analysis {

namespace {

namespace pp = perfetto::protos;
using exporting::ExportArg;
using exporting::ExportSlice;
using exporting::FlowStep;
using exporting::TrackKind;

/// The one packet sequence the writer uses; interned names are scoped to it.
constexpr uint32_t kSequenceId = 1;
/// startPacket's time for packets that have none.
constexpr int64_t kNoTime = INT64_MIN;

/// Turns the walk into TracePackets, written to the stream as they are made. Slices become
/// SLICE_BEGIN / SLICE_END pairs (Perfetto has no complete events): the ends of the open slices
/// of the current track wait on a stack until a later slice begins after them or the track ends.
class PerfettoSink final : public exporting::ExportSink {
public:
    explicit PerfettoSink(std::ostream& out) : m_out(out) {}

    void process(int rankIndex, std::string_view name) override {
        pp::TracePacket& p = startPacket(kNoTime, false);
        pp::TrackDescriptor* t = p.mutable_track_descriptor();
        const uint64_t uuid = m_nextUuid++;
        t->set_uuid(uuid);
        pp::ProcessDescriptor* proc = t->mutable_process();
        proc->set_pid(pidOf(rankIndex));
        proc->set_process_name(std::string(name));
        if (static_cast<size_t>(rankIndex) >= m_processUuid.size()) {
            m_processUuid.resize(static_cast<size_t>(rankIndex) + 1, 0);
        }
        m_processUuid[static_cast<size_t>(rankIndex)] = uuid;
        writePacket();
    }

    uint64_t track(int rankIndex, TrackKind kind, std::string_view name,
                   uint64_t threadId) override {
        pp::TracePacket& p = startPacket(kNoTime, false);
        pp::TrackDescriptor* t = p.mutable_track_descriptor();
        const uint64_t uuid = m_nextUuid++;
        t->set_uuid(uuid);
        if (kind == TrackKind::HostThread) {
            pp::ThreadDescriptor* thread = t->mutable_thread();
            thread->set_pid(pidOf(rankIndex));
            thread->set_tid(static_cast<int64_t>(threadId));
            thread->set_thread_name(std::string(name));
        } else {
            t->set_parent_uuid(m_processUuid.at(static_cast<size_t>(rankIndex)));
            t->set_name(std::string(name));
            if (kind == TrackKind::Counter) {
                t->mutable_counter()->set_unit(pp::CounterDescriptor::UNIT_SIZE_BYTES);
            }
        }
        writePacket();
        return uuid;
    }

    void slice(uint64_t track, const ExportSlice& s) override {
        closeUntil(track, s.startNs);
        pp::TracePacket& p = startPacket(s.startNs, true);
        pp::TrackEvent* e = p.mutable_track_event();
        e->set_type(pp::TrackEvent::TYPE_SLICE_BEGIN);
        e->set_track_uuid(track);
        e->set_name_iid(intern(p, s.name));
        e->add_categories(std::string(s.category));
        addArgs(*e, s.args);
        if (s.flowStep == FlowStep::Last) {
            e->add_terminating_flow_ids(s.flowId);
        } else if (s.flowStep != FlowStep::None) {
            e->add_flow_ids(s.flowId);
        }
        writePacket();
        m_openTrack = track;
        m_openEnds.push_back(s.endNs);
    }

    void endTrack(uint64_t track) override { closeUntil(track, INT64_MAX); }

    void counter(uint64_t track, int64_t timeNs, int64_t bytes) override {
        pp::TracePacket& p = startPacket(timeNs, false);
        pp::TrackEvent* e = p.mutable_track_event();
        e->set_type(pp::TrackEvent::TYPE_COUNTER);
        e->set_track_uuid(track);
        e->set_counter_value(bytes);
        writePacket();
    }

    void instant(uint64_t track, int64_t timeNs, std::string_view name, std::string_view category,
                 const std::vector<ExportArg>& args) override {
        pp::TracePacket& p = startPacket(timeNs, true);
        pp::TrackEvent* e = p.mutable_track_event();
        e->set_type(pp::TrackEvent::TYPE_INSTANT);
        e->set_track_uuid(track);
        e->set_name_iid(intern(p, name));
        e->add_categories(std::string(category));
        addArgs(*e, args);
        writePacket();
    }

    bool good() const override { return static_cast<bool>(m_out); }

private:
    static int32_t pidOf(int rankIndex) { return rankIndex + 1; }

    /// Clears the reused packet and stamps it (kNoTime: a track descriptor, which has no time;
    /// job time is never negative, a negative time is written as 0); the first packet of the
    /// sequence says that the interned state starts here.
    pp::TracePacket& startPacket(int64_t timeNs, bool usesInterned) {
        m_packet.Clear();
        if (timeNs != kNoTime) {
            m_packet.set_timestamp(static_cast<uint64_t>(std::max<int64_t>(timeNs, 0)));
        }
        m_packet.set_trusted_packet_sequence_id(kSequenceId);
        uint32_t flags = 0;
        if (m_first) {
            flags |= pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED;
            m_first = false;
        }
        if (usesInterned) {
            flags |= pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE;
        }
        if (flags != 0) {
            m_packet.set_sequence_flags(flags);
        }
        return m_packet;
    }

    /// The iid of `name`, adding its EventName to the packet the first time.
    uint64_t intern(pp::TracePacket& p, std::string_view name) {
        auto it = m_names.find(std::string(name));
        if (it != m_names.end()) {
            return it->second;
        }
        const uint64_t iid = m_names.size() + 1;
        m_names.emplace(std::string(name), iid);
        pp::EventName* n = p.mutable_interned_data()->add_event_names();
        n->set_iid(iid);
        n->set_name(std::string(name));
        return iid;
    }

    static void addArgs(pp::TrackEvent& e, const std::vector<ExportArg>& args) {
        for (const ExportArg& a : args) {
            pp::DebugAnnotation* d = e.add_debug_annotations();
            d->set_name(std::string(a.name));
            switch (a.type) {
                case ExportArg::Type::Int:
                    d->set_int_value(a.intValue);
                    break;
                case ExportArg::Type::Uint:
                    d->set_uint_value(a.uintValue);
                    break;
                case ExportArg::Type::String:
                    d->set_string_value(std::string(a.stringValue));
                    break;
            }
        }
    }

    /// Ends the open slices of `track` that end at or before `timeNs` (innermost first).
    void closeUntil(uint64_t track, int64_t timeNs) {
        if (track != m_openTrack) {
            m_openEnds.clear();  // the walk closes every track before the next one
            return;
        }
        while (!m_openEnds.empty() && m_openEnds.back() <= timeNs) {
            pp::TracePacket& p = startPacket(m_openEnds.back(), false);
            pp::TrackEvent* e = p.mutable_track_event();
            e->set_type(pp::TrackEvent::TYPE_SLICE_END);
            e->set_track_uuid(track);
            writePacket();
            m_openEnds.pop_back();
        }
    }

    /// Writes m_packet as one `packet` field of Trace: tag (field 1, length-delimited), length
    /// as a varint, the packet's bytes.
    void writePacket() {
        m_buffer.clear();
        m_packet.SerializeToString(&m_buffer);
        char head[11];
        size_t n = 0;
        head[n++] = static_cast<char>((1 << 3) | 2);
        uint64_t len = m_buffer.size();
        do {
            const auto byte = static_cast<uint8_t>(len & 0x7f);
            len >>= 7;
            head[n++] = static_cast<char>(len != 0 ? byte | 0x80 : byte);
        } while (len != 0);
        m_out.write(head, static_cast<std::streamsize>(n));
        m_out.write(m_buffer.data(), static_cast<std::streamsize>(m_buffer.size()));
    }

    std::ostream& m_out;
    pp::TracePacket m_packet;
    std::string m_buffer;
    bool m_first = true;
    uint64_t m_nextUuid = 1;
    std::vector<uint64_t> m_processUuid;
    std::unordered_map<std::string, uint64_t> m_names;
    uint64_t m_openTrack = 0;
    std::vector<int64_t> m_openEnds;
};

}  // namespace

trace::Status writePerfettoTrace(const JobModel& model, std::ostream& out) {
    PerfettoSink sink(out);
    exporting::walkJob(model, sink);
    out.flush();
    if (!out) {
        return trace::Error::make(trace::ErrorCode::Io, model.title,
                                  "the Perfetto trace could not be written in full");
    }
    return trace::Status::success();
}

}  // namespace vramscope::analysis
