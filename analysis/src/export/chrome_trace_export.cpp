#include "vramscope/analysis/export/chrome_trace_export.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "export/export_walk.h"

namespace vramscope::analysis {

namespace {

using exporting::ExportArg;
using exporting::ExportSlice;
using exporting::FlowStep;
using exporting::TrackKind;

/// First tid of tracks that are no OS thread (above Linux's PID_MAX_LIMIT, 2^22).
constexpr uint64_t kFirstTrackTid = 5'000'000;

/// Writes the walk as JSON events, one per line. A track is a (pid, tid) pair.
class ChromeSink final : public exporting::ExportSink {
public:
    explicit ChromeSink(std::ostream& out) : m_out(out) { m_out << "{\"traceEvents\":[\n"; }

    /// Closes the event list. A job of one rank also gets Kineto's own top-level metadata
    /// (distributedInfo: rank and world size; deviceProperties: id, name, totalGlobalMem, uuid),
    /// so that reading the file back keeps the rank and the GPUs' names and capacities.
    void finish(const JobModel& model) {
        m_out << "\n],\"displayTimeUnit\":\"ns\"";
        if (model.job.ranks.size() == 1) {
            const trace::FileHeader& h = model.job.ranks.front().trace.data.header;
            nlohmann::json info = nlohmann::json::object();
            if (h.rank != trace::kUnknownRank) {
                info["rank"] = toInt(h.rank);
            }
            if (h.worldSize > 0) {
                info["world_size"] = h.worldSize;
            }
            if (!info.empty()) {
                m_out << ",\"distributedInfo\":" << info.dump();
            }
            nlohmann::json devices = nlohmann::json::array();
            for (const trace::DeviceInfo& d : h.devices) {
                nlohmann::json dev = {{"id", toInt(d.index)}, {"name", d.name}};
                if (d.totalMemoryBytes > 0) {
                    dev["totalGlobalMem"] = d.totalMemoryBytes;
                }
                if (!d.uuid.empty()) {
                    dev["uuid"] = d.uuid;
                }
                devices.push_back(std::move(dev));
            }
            if (!devices.empty()) {
                m_out << ",\"deviceProperties\":"
                      << devices.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            }
        }
        m_out << "}\n";
    }

    void process(int rankIndex, std::string_view name) override {
        const int pid = rankIndex + 1;
        begin();
        m_out << R"({"ph":"M","name":"process_name","pid":)" << pid << R"(,"args":{"name":)";
        string(name);
        m_out << "}}";
        begin();
        m_out << R"({"ph":"M","name":"process_sort_index","pid":)" << pid
              << R"(,"args":{"sort_index":)" << pid << "}}";
    }

    uint64_t track(int rankIndex, TrackKind kind, std::string_view name,
                   uint64_t threadId) override {
        Track t{rankIndex + 1, kind == TrackKind::HostThread ? threadId : m_nextTid++};
        m_tracks.push_back(t);
        if (kind != TrackKind::Counter) {  // a counter is drawn under its own name
            begin();
            m_out << R"({"ph":"M","name":"thread_name","pid":)" << t.pid << ",\"tid\":" << t.tid
                  << R"(,"args":{"name":)";
            string(name);
            m_out << "}}";
        }
        m_counterNames.emplace_back(kind == TrackKind::Counter ? name : std::string_view());
        return m_tracks.size() - 1;
    }

    void slice(uint64_t track, const ExportSlice& s) override {
        const Track& t = m_tracks[track];
        begin();
        m_out << R"({"ph":"X","name":)";
        string(s.name);
        m_out << R"(,"cat":)";
        string(s.category);
        m_out << ",\"pid\":" << t.pid << ",\"tid\":" << t.tid << ",\"ts\":";
        micros(s.startNs);
        m_out << ",\"dur\":";
        micros(s.endNs - s.startNs);
        args(s.args);
        m_out << '}';
        if (s.flowStep != FlowStep::None) {
            flow(t, s);
        }
    }

    void endTrack(uint64_t) override {}

    void counter(uint64_t track, int64_t timeNs, int64_t bytes) override {
        const Track& t = m_tracks[track];
        begin();
        m_out << R"({"ph":"C","name":)";
        string(m_counterNames[track]);
        m_out << ",\"pid\":" << t.pid << ",\"ts\":";
        micros(timeNs);
        m_out << R"(,"args":{"bytes":)" << bytes << "}}";
    }

    void instant(uint64_t track, int64_t timeNs, std::string_view name, std::string_view category,
                 const std::vector<ExportArg>& a) override {
        const Track& t = m_tracks[track];
        begin();
        m_out << R"({"ph":"i","s":"t","name":)";
        string(name);
        m_out << R"(,"cat":)";
        string(category);
        m_out << ",\"pid\":" << t.pid << ",\"tid\":" << t.tid << ",\"ts\":";
        micros(timeNs);
        args(a);
        m_out << '}';
    }

    bool good() const override { return static_cast<bool>(m_out); }

private:
    struct Track {
        int pid = 0;
        uint64_t tid = 0;
    };

    void begin() {
        if (!m_firstEvent) {
            m_out << ",\n";
        }
        m_firstEvent = false;
    }

    /// A JSON string; bytes that are no UTF-8 become U+FFFD (kernel names are the producer's).
    void string(std::string_view s) {
        m_scratch = std::string(s);
        m_out << m_scratch.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }

    /// ns as microseconds with three decimals: exact, and what Kineto's "ts" means.
    void micros(int64_t ns) {
        if (ns < 0) {
            m_out << '-';
            ns = -ns;
        }
        const int64_t frac = ns % 1000;
        m_out << ns / 1000 << '.' << static_cast<char>('0' + frac / 100)
              << static_cast<char>('0' + frac / 10 % 10) << static_cast<char>('0' + frac % 10);
    }

    void args(const std::vector<ExportArg>& a) {
        if (a.empty()) {
            return;
        }
        m_out << ",\"args\":{";
        for (size_t i = 0; i < a.size(); ++i) {
            m_out << (i == 0 ? "" : ",");
            string(a[i].name);
            m_out << ':';
            switch (a[i].type) {
                case ExportArg::Type::Int:
                    m_out << a[i].intValue;
                    break;
                case ExportArg::Type::Uint:
                    m_out << a[i].uintValue;
                    break;
                case ExportArg::Type::String:
                    string(a[i].stringValue);
                    break;
            }
        }
        m_out << '}';
    }

    /// The flow event bound to slice `s` (at its start, on its track): "s" on the first
    /// participant, "t" on the next ones, "f" binding to the enclosing slice on the last.
    void flow(const Track& t, const ExportSlice& s) {
        const char ph = s.flowStep == FlowStep::First  ? 's'
                        : s.flowStep == FlowStep::Last ? 'f'
                                                       : 't';
        begin();
        m_out << R"({"ph":")" << ph << R"(","name":"collective","cat":"collective","id":)"
              << s.flowId << ",\"pid\":" << t.pid << ",\"tid\":" << t.tid << ",\"ts\":";
        micros(s.startNs);
        m_out << (ph == 'f' ? R"(,"bp":"e"})" : "}");
    }

    std::ostream& m_out;
    bool m_firstEvent = true;
    uint64_t m_nextTid = kFirstTrackTid;
    std::vector<Track> m_tracks;
    std::vector<std::string> m_counterNames;  ///< per track; empty for tracks of slices
    nlohmann::json m_scratch;
};

}  // namespace

trace::Status writeChromeTrace(const JobModel& model, std::ostream& out) {
    ChromeSink sink(out);
    exporting::walkJob(model, sink);
    sink.finish(model);
    out.flush();
    if (!out) {
        return trace::Error::make(trace::ErrorCode::Io, model.title,
                                  "the Chrome trace could not be written in full");
    }
    return trace::Status::success();
}

}  // namespace vramscope::analysis
