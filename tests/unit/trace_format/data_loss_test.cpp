// The data-loss registry: its rows, the text every front end prints, the .vscope round trip by
// name (older files' labels included), and the counters the reader and importers really fill.

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

#include "trace_file_test_support.h"
#include "vramscope/trace/data_loss.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"

using namespace vramscope::trace;
using namespace vramscope::trace::testing;

namespace {

bool isSnakeCase(std::string_view s) {
    if (s.empty() || !std::islower(static_cast<unsigned char>(s.front()))) {
        return false;
    }
    for (char c : s) {
        if (!std::islower(static_cast<unsigned char>(c)) &&
            !std::isdigit(static_cast<unsigned char>(c)) && c != '_') {
            return false;
        }
    }
    return true;
}

/// Each registered counter appears in `losses` with a registered name other than "other".
void expectRegistered(const std::vector<DataLoss>& losses) {
    for (const DataLoss& l : losses) {
        const LossCounterInfo& info = lossCounterInfo(l.counter);
        EXPECT_EQ(info.counter, l.counter);
        EXPECT_NE(l.counter, LossCounter::Other) << describe(l);
        EXPECT_EQ(lossCounterFromName(info.name), l.counter);
    }
}

bool has(const std::vector<DataLoss>& losses, LossCounter c) {
    for (const DataLoss& l : losses) {
        if (l.counter == c) {
            return true;
        }
    }
    return false;
}

TEST(DataLossRegistry, DamageInTheMiddleOfAJsonTraceIsNotCalledACutFile) {
    // 200 whole kernel events, garbage, then 200 more: the second half is left unread, and the
    // message says so with the byte, rather than calling the file cut.
    std::string events;
    for (int i = 0; i < 200; ++i) {
        events +=
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
            "\"tid\": 0, \"ts\": " +
            std::to_string(i) + ", \"dur\": 1},";
    }
    const std::string head = "{\"traceEvents\": [" + events;
    const std::string json = head + "@@@ garbage @@@ " + events + "{}]}";
    const auto k = importKinetoJson(json, "damaged.json");
    ASSERT_TRUE(k.ok()) << k.error().describe();
    ASSERT_FALSE(k->report.problems.empty());
    const std::string said = k->report.problems.back().describe();
    EXPECT_NE(said.find("were not read"), std::string::npos) << said;
    EXPECT_NE(said.find("200 events before it were loaded"), std::string::npos) << said;
    EXPECT_EQ(said.find("probably cut"), std::string::npos) << said;
    EXPECT_GE(k->report.problems.back().byteOffset, int64_t(head.size()));
    EXPECT_LT(k->report.problems.back().byteOffset, int64_t(head.size()) + 16);
    bool named = false;
    for (const DataLoss& l : k->data.dataLoss) {
        named |= l.counter == LossCounter::JsonEventsAfterDamage &&
                 l.reason.find("at byte " + std::to_string(k->report.problems.back().byteOffset)) !=
                     std::string::npos;
    }
    EXPECT_TRUE(named) << "the loss names the byte where the damage was found";
}

}  // namespace

TEST(DataLossRegistry, NamesAreUniqueSnakeCaseAndEveryRowIsDescribed) {
    const auto counters = dataLossCounters();
    ASSERT_FALSE(counters.empty());
    std::set<std::string_view> names;
    for (size_t i = 0; i < counters.size(); ++i) {
        const LossCounterInfo& c = counters[i];
        EXPECT_EQ(static_cast<size_t>(c.counter), i) << c.name;
        EXPECT_TRUE(names.insert(c.name).second) << "duplicate name " << c.name;
        EXPECT_TRUE(isSnakeCase(c.name)) << c.name;
        EXPECT_GT(c.description.size(), 20u) << c.name;
        EXPECT_EQ(&lossCounterInfo(c.counter), &c);
        EXPECT_EQ(lossCounterFromName(c.name), c.counter);
    }
    EXPECT_STREQ(toString(LossSeverity::Info), "info");
    EXPECT_STREQ(toString(LossSeverity::DataLoss), "data_loss");
    EXPECT_STREQ(toString(LossSeverity::Error), "error");
    EXPECT_EQ(lossCounterFromName("no such counter"), LossCounter::Other);
}

TEST(DataLossRegistry, DescribePrintsNameValueKindDescriptionAndReason) {
    const DataLoss counted{LossCounter::FramesSkipped, 2, "2 frames of run.vscope", 0, 0};
    EXPECT_EQ(describe(counted),
              "frames_skipped = 2 [error]: .vscope frames with a CRC mismatch or an undecodable "
              "payload were skipped; their events are missing (2 frames of run.vscope)");
    const DataLoss uncounted{LossCounter::JsonEventsAfterDamage, 0, "", 0, 0};
    EXPECT_EQ(describe(uncounted),
              "json_events_after_damage = uncounted [error]: the JSON is cut or malformed; the "
              "events after the damage are lost");
}

TEST(DataLossRegistry, EveryCounterSurvivesAVscopeRoundTripByName) {
    TraceData d;
    for (const LossCounterInfo& c : dataLossCounters()) {
        d.dataLoss.push_back({c.counter, 7, "detail", 1, 2});
    }
    const auto r = readTraceBytes(writeTraceBytes(d), "all.vscope");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    ASSERT_EQ(r->data.dataLoss.size(), dataLossCounters().size());
    for (size_t i = 0; i < r->data.dataLoss.size(); ++i) {
        EXPECT_EQ(r->data.dataLoss[i].counter, dataLossCounters()[i].counter);
        EXPECT_EQ(r->data.dataLoss[i].reason, "detail");
    }
}

TEST(DataLossRegistry, OlderFilesLabelsAreMappedOrKeptInTheReason) {
    v1::Chunk events;
    auto* known = events.add_data_loss();
    known->set_what("CUPTI activity records");  // as the agent wrote it before the registry
    known->set_count(12);
    known->set_reason("CUPTI dropped records because no buffer was free");
    auto* unknown = events.add_data_loss();
    unknown->set_what("kernel records");  // a per-kind label of the old writer-queue counter
    unknown->set_count(3);
    unknown->set_reason("the trace writer fell behind");
    const auto r = readTraceBytes(preamble() + headerFrame() + frame(events.SerializeAsString()),
                                  "old.vscope");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    ASSERT_EQ(r->data.dataLoss.size(), 2u);
    EXPECT_EQ(r->data.dataLoss[0].counter, LossCounter::CuptiRecordsDropped);
    EXPECT_EQ(r->data.dataLoss[0].count, 12u);
    EXPECT_EQ(r->data.dataLoss[1].counter, LossCounter::Other);
    EXPECT_EQ(r->data.dataLoss[1].reason, "kernel records: the trace writer fell behind");
}

TEST(DataLossRegistry, TheReaderFillsRegisteredCounters) {
    TraceData d;
    d.header.producer = "test";
    const StringId k = d.intern("k");
    for (int i = 0; i < 20; ++i) {
        d.kernels.append(
            {i * 100, i * 100 + 50, DeviceIndex{0}, 0, k, KernelCategory::Compute, -1, 0, 0});
    }
    std::string bytes;
    std::vector<size_t> ends;
    TraceWriter w(std::make_unique<RecordingSink>(bytes, ends), WriterOptions{false, 3, 5});
    ASSERT_TRUE(w.writeHeader(d.header).ok());
    ASSERT_TRUE(w.writeEvents(d).ok());
    ASSERT_GE(ends.size(), 4u);
    bytes[ends[2] + kFrameHeadBytes] ^= 0x10;                   // damage frame 2's payload: skipped
    const std::string cut = bytes.substr(0, bytes.size() - 3);  // and cut inside the last frame
    const auto r = readTraceBytes(cut, "damaged.vscope");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_TRUE(has(r->data.dataLoss, LossCounter::FramesSkipped));
    EXPECT_TRUE(has(r->data.dataLoss, LossCounter::TruncatedBytes));
    expectRegistered(r->data.dataLoss);
}

TEST(DataLossRegistry, TheImportersFillRegisteredCounters) {
    // Kineto: a non-object entry, an event without ts, an integer above int64, a control
    // character in a string, and a cut end.
    std::string json =
        "{\"traceEvents\": [42, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no ts\", "
        "\"pid\": 0, \"tid\": 0, \"dur\": 1}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
        "\"t@b\", \"pid\": 0, \"tid\": 0, \"ts\": 5, \"dur\": 1, \"args\": {\"device\": "
        "10159970886766084423}}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k2\", \"pid\": "
        "0, \"tid\": 0, \"ts\": 6, \"dur\": 1}, {\"ph\": \"X\", \"cat\": \"ker";
    json[json.find('@')] = '\x01';
    const auto k = importKinetoJson(json, "messy.json");
    ASSERT_TRUE(k.ok()) << k.error().describe();
    for (LossCounter c :
         {LossCounter::JsonNonObjectEntries, LossCounter::JsonEventsWithoutTime,
          LossCounter::JsonValuesOutOfRange, LossCounter::JsonControlCharactersReplaced,
          LossCounter::JsonEventsAfterDamage}) {
        EXPECT_TRUE(has(k->data.dataLoss, c)) << lossCounterInfo(c).name;
    }
    expectRegistered(k->data.dataLoss);
    // Invalid UTF-8.
    std::string utf8 =
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b@d\", "
        "\"pid\": 0, \"tid\": 0, \"ts\": 5, \"dur\": 1}]}";
    utf8[utf8.find('@')] = '\xff';
    const auto u = importKinetoJson(utf8, "utf8.json");
    ASSERT_TRUE(u.ok()) << u.error().describe();
    EXPECT_TRUE(has(u->data.dataLoss, LossCounter::JsonInvalidUtf8Replaced));
    expectRegistered(u->data.dataLoss);
    // PyTorch snapshot: {"device_traces": [[{"action": "teleport"}]]} in protocol 2 opcodes
    // (EMPTY_DICT, SHORT_BINUNICODE key, EMPTY_LIST x2, EMPTY_DICT, 2 SHORT_BINUNICODE, SETITEM,
    // APPEND, APPEND, SETITEM, STOP).
    std::string p("\x80\x02}", 3);
    auto str = [&](const std::string& s) {
        p.push_back('\x8c');
        p.push_back(static_cast<char>(s.size()));
        p += s;
    };
    str("device_traces");
    p += "]]}";
    str("action");
    str("teleport");
    p += "saas.";
    const auto s = importPytorchSnapshot(p, "odd.pickle");
    ASSERT_TRUE(s.ok()) << s.error().describe();
    EXPECT_TRUE(has(s->data.dataLoss, LossCounter::SnapshotEntriesSkipped));
    expectRegistered(s->data.dataLoss);
}
