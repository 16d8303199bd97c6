// Live viewing costs, no GPU needed:
//  - producer cost per event: a TraceWriter writing 10,000-event batches (zstd, as the agent
//    does) into a sink that drops the bytes (the baseline, in the same run) against the same
//    writes into a LiveServer with 0, 1 and 3 viewers reading as fast as they can (Receiver);
//  - transport latency: from LiveServer::write() of a frame to a Receiver holding it (median and
//    99th percentile over 500 frames, one every 2 ms);
//  - what a viewer keeps: received bytes per event (the Receiver keeps the whole stream).
// Prints one line per figure; median of 5 rounds.
//
//   live_bench

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "vramscope/trace/live.h"
#include "vramscope/trace/trace_file.h"

using namespace vramscope::trace;

namespace {

constexpr int kBatches = 100;
constexpr int kPerBatch = 10'000;
constexpr int kRounds = 5;

struct NullSink final : ByteSink {
    Status write(std::string_view) override { return Status::success(); }
};

struct Forward final : ByteSink {
    live::LiveServer& to;
    explicit Forward(live::LiveServer& s) : to(s) {}
    Status write(std::string_view b) override { return to.write(b); }
};

double nowNs() {
    return double(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

/// Allocation / free pairs with a handful of stacks, as a training step makes them.
TraceData batch(TraceData& tables, int b) {
    TraceData d = tables;
    for (int i = 0; i < kPerBatch; ++i) {
        const int64_t n = int64_t(b) * kPerBatch + i;
        MemoryEvent e;
        e.timestampNs = 1'000'000 + n * 700;
        e.address = 0x7f0000000000 + uint64_t(n % 4096) * 0x200000;
        e.sizeBytes = 2 << 20;
        e.action = n % 2 == 0 ? MemoryAction::Alloc : MemoryAction::Free;
        e.stack = StackId{uint32_t(1 + n % 5)};
        d.memory.append(e);
    }
    return d;
}

TraceData tablesWithStacks() {
    TraceData t;
    t.header.producer = "live_bench";
    for (int s = 0; s < 5; ++s) {
        t.internStack({t.internFrame({t.intern("op" + std::to_string(s)), t.intern("m.py"), 1})});
    }
    return t;
}

/// ns per event of writing kBatches batches through `sink`.
double produce(std::unique_ptr<ByteSink> sink) {
    TraceWriter w(std::move(sink));
    TraceData tables = tablesWithStacks();
    (void)w.writeHeader(tables.header);
    std::vector<TraceData> batches;
    for (int b = 0; b < kBatches; ++b) {
        batches.push_back(batch(tables, b));
    }
    const double t0 = nowNs();
    for (const TraceData& b : batches) {
        (void)w.writeEvents(b);
    }
    (void)w.finish();
    return (nowNs() - t0) / double(kBatches * kPerBatch);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::string privateDir() {
    std::string d = std::filesystem::temp_directory_path().string() + "/vramscope_live_bench_" +
                    std::to_string(::getpid());
    std::filesystem::remove_all(d);
    ::mkdir(d.c_str(), 0700);
    return d;
}

}  // namespace

int main() {
    const std::string dir = privateDir();
    std::vector<double> base;
    for (int r = 0; r < kRounds; ++r) {
        base.push_back(produce(std::make_unique<NullSink>()));
    }
    const double baseline = median(base);
    std::printf("producer, no live server (baseline): %.1f ns/event\n", baseline);
    uint64_t receivedBytes = 0;
    for (int viewers : {0, 1, 3}) {
        std::vector<double> cost;
        uint64_t dropped = 0;
        for (int r = 0; r < kRounds; ++r) {
            live::ServerOptions o;
            o.socketPath = dir + "/bench-" + std::to_string(viewers) + ".sock";
            auto server = live::LiveServer::start(o);
            if (!server.ok()) {
                std::fprintf(stderr, "%s\n", server.error().describe().c_str());
                return 1;
            }
            std::vector<std::unique_ptr<live::Receiver>> rx;
            // Receivers need the hello: the header goes out first, then they connect.
            TraceWriter w(std::make_unique<Forward>(*server.value()));
            TraceData tables = tablesWithStacks();
            (void)w.writeHeader(tables.header);
            for (int v = 0; v < viewers; ++v) {
                auto c = live::Receiver::connect({o.socketPath}, 5000);
                if (c.ok()) {
                    rx.push_back(std::move(c.value()));
                }
            }
            server.value()->waitForViewers(uint64_t(viewers), 5000);
            std::vector<TraceData> batches;
            for (int b = 0; b < kBatches; ++b) {
                batches.push_back(batch(tables, b));
            }
            const double t0 = nowNs();
            for (const TraceData& b : batches) {
                (void)w.writeEvents(b);
            }
            (void)w.finish();
            cost.push_back((nowNs() - t0) / double(kBatches * kPerBatch));
            server.value()->drain(10'000);
            dropped += server.value()->stats().framesDropped;
            if (!rx.empty()) {
                receivedBytes = rx[0]->receivedBytes(0);
            }
        }
        const double c = median(cost);
        std::printf(
            "producer, live server with %d viewer(s): %.1f ns/event = %.2fx baseline, "
            "%llu frames dropped for viewers over %d rounds\n",
            viewers, c, c / baseline, static_cast<unsigned long long>(dropped), kRounds);
    }
    std::printf("a viewer keeps %.2f bytes per event received (%llu bytes for %d events)\n",
                double(receivedBytes) / double(kBatches * kPerBatch),
                static_cast<unsigned long long>(receivedBytes), kBatches * kPerBatch);

    // Transport latency: one small frame every 2 ms, timed until the Receiver has it.
    live::ServerOptions o;
    o.socketPath = dir + "/latency.sock";
    auto server = live::LiveServer::start(o);
    if (!server.ok()) {
        return 1;
    }
    TraceWriter w(std::make_unique<Forward>(*server.value()),
                  WriterOptions{false, 3, 65536, false});
    TraceData tables = tablesWithStacks();
    (void)w.writeHeader(tables.header);
    auto rx = live::Receiver::connect({o.socketPath}, 5000);
    if (!rx.ok()) {
        return 1;
    }
    std::vector<double> latency;
    for (int i = 0; i < 500; ++i) {
        TraceData one = tables;
        MemoryEvent e;
        e.timestampNs = i;
        e.sizeBytes = 1;
        one.memory.append(e);
        const uint64_t before = rx.value()->wholeBytes(0);
        const double t0 = nowNs();
        (void)w.writeEvents(one);
        while (rx.value()->wholeBytes(0) == before) {
            rx.value()->waitForData(1);
        }
        latency.push_back((nowNs() - t0) / 1e3);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::sort(latency.begin(), latency.end());
    std::printf("transport latency write -> viewer: median %.0f us, p99 %.0f us (500 frames)\n",
                latency[latency.size() / 2], latency[latency.size() * 99 / 100]);
    std::filesystem::remove_all(dir);
    return 0;
}
