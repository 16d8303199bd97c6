#pragma once
// Reading an exported Perfetto trace back in a test: parsed as perfetto.protos.Trace with the
// libprotobuf classes generated from analysis/proto/perfetto/trace_subset.proto, then replayed
// packet by packet the way a trace viewer does (interned names per sequence, begin / end pairs
// per track), written here without the exporter's code.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "perfetto/trace_subset.pb.h"

namespace vramscope::testdata {

struct PfSlice {
    uint64_t track = 0;
    uint64_t startNs = 0;
    uint64_t endNs = 0;
    std::string name;
    std::string category;
    std::vector<uint64_t> flowIds;           ///< flow_ids and terminating_flow_ids together
    bool terminates = false;                 ///< carries terminating_flow_ids
    std::map<std::string, int64_t> intArgs;  ///< int and uint debug annotations
    std::map<std::string, std::string> stringArgs;
};

struct PfInstant {
    uint64_t track = 0;
    uint64_t timeNs = 0;
    std::string name;
};

/// A replayed trace. `problems` lists what a viewer would reject (empty when sound).
struct PfTrace {
    std::map<uint64_t, perfetto::protos::TrackDescriptor> tracks;
    std::map<uint64_t, std::vector<std::pair<uint64_t, int64_t>>> counters;  ///< (t, value)
    std::vector<PfSlice> slices;  ///< in the order they ended
    std::vector<PfInstant> instants;
    std::vector<std::string> problems;
    size_t packets = 0;

    /// The pid of the process a track belongs to (its thread's pid, or its parent's process).
    int32_t pidOf(uint64_t track) const {
        const auto it = tracks.find(track);
        if (it == tracks.end()) {
            return -1;
        }
        if (it->second.has_thread()) {
            return it->second.thread().pid();
        }
        if (it->second.has_process()) {
            return it->second.process().pid();
        }
        return it->second.has_parent_uuid() ? pidOf(it->second.parent_uuid()) : -1;
    }
    std::string nameOf(uint64_t track) const {
        const auto it = tracks.find(track);
        if (it == tracks.end()) {
            return {};
        }
        return it->second.has_thread() ? it->second.thread().thread_name() : it->second.name();
    }
    /// The counter track named `name` of process `pid`, 0 when there is none.
    uint64_t counterTrack(int32_t pid, const std::string& name) const {
        for (const auto& [uuid, t] : tracks) {
            if (t.has_counter() && t.name() == name && pidOf(uuid) == pid) {
                return uuid;
            }
        }
        return 0;
    }
    /// Step lookup: the last value at or before t on a counter track (0 before the first).
    int64_t counterAt(uint64_t track, uint64_t t) const {
        int64_t v = 0;
        for (const auto& [time, value] : counters.at(track)) {
            if (time > t) {
                break;
            }
            v = value;
        }
        return v;
    }
};

inline PfTrace replayPerfetto(const std::string& bytes) {
    namespace pp = perfetto::protos;
    PfTrace out;
    pp::Trace trace;
    if (!trace.ParseFromString(bytes)) {
        out.problems.push_back("not a perfetto.protos.Trace");
        return out;
    }
    std::map<uint64_t, std::string> names;
    std::map<uint64_t, std::vector<PfSlice>> open;
    bool cleared = false;
    for (const pp::TracePacket& p : trace.packet()) {
        ++out.packets;
        if ((p.sequence_flags() & pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) != 0) {
            cleared = true;
            names.clear();
        }
        for (const pp::EventName& n : p.interned_data().event_names()) {
            names[n.iid()] = n.name();
        }
        if (p.has_track_descriptor()) {
            out.tracks[p.track_descriptor().uuid()] = p.track_descriptor();
            continue;
        }
        if (!p.has_track_event()) {
            continue;
        }
        const pp::TrackEvent& e = p.track_event();
        if (out.tracks.count(e.track_uuid()) == 0) {
            out.problems.push_back("event before its track descriptor");
        }
        std::string name = e.name();
        if (e.has_name_iid()) {
            if (!cleared ||
                (p.sequence_flags() & pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) == 0 ||
                names.count(e.name_iid()) == 0) {
                out.problems.push_back("name iid used without its interned state");
            }
            name = names[e.name_iid()];
        }
        switch (e.type()) {
            case pp::TrackEvent::TYPE_COUNTER:
                out.counters[e.track_uuid()].push_back({p.timestamp(), e.counter_value()});
                break;
            case pp::TrackEvent::TYPE_INSTANT:
                out.instants.push_back({e.track_uuid(), p.timestamp(), name});
                break;
            case pp::TrackEvent::TYPE_SLICE_BEGIN: {
                PfSlice s;
                s.track = e.track_uuid();
                s.startNs = p.timestamp();
                s.name = name;
                s.category = e.categories_size() > 0 ? e.categories(0) : "";
                s.flowIds.assign(e.flow_ids().begin(), e.flow_ids().end());
                s.flowIds.insert(s.flowIds.end(), e.terminating_flow_ids().begin(),
                                 e.terminating_flow_ids().end());
                s.terminates = e.terminating_flow_ids_size() > 0;
                for (const pp::DebugAnnotation& a : e.debug_annotations()) {
                    if (a.has_int_value()) {
                        s.intArgs[a.name()] = a.int_value();
                    } else if (a.has_uint_value()) {
                        s.intArgs[a.name()] = static_cast<int64_t>(a.uint_value());
                    } else if (a.has_string_value()) {
                        s.stringArgs[a.name()] = a.string_value();
                    }
                }
                open[s.track].push_back(std::move(s));
                break;
            }
            case pp::TrackEvent::TYPE_SLICE_END: {
                std::vector<PfSlice>& stack = open[e.track_uuid()];
                if (stack.empty()) {
                    out.problems.push_back("slice end without a begin");
                    break;
                }
                PfSlice s = std::move(stack.back());
                stack.pop_back();
                if (p.timestamp() < s.startNs) {
                    out.problems.push_back("slice ends before it begins");
                }
                s.endNs = p.timestamp();
                out.slices.push_back(std::move(s));
                break;
            }
            default:
                out.problems.push_back("event of an unknown type");
        }
    }
    for (const auto& [track, stack] : open) {
        if (!stack.empty()) {
            out.problems.push_back("slice never ended on track " + std::to_string(track));
        }
    }
    return out;
}

}  // namespace vramscope::testdata
