// Plays NCCL against the built agent the way NCCL loads a profiler plugin: dlopen(path,
// RTLD_NOW | RTLD_LOCAL), dlsym of ncclProfiler_v6 / _v5 / _v4, then init / startEvent /
// stopEvent / recordEventState / finalize. Needs only libdl (no CUDA, no NCCL, no trace library:
// the agent brings its own copy of the .vscope schema).
//
//   nccl_plugin_harness AGENT v6|v5|v4 play COMM_RANK   one rank of kPlan (nccl_harness_plan.h)
//   nccl_plugin_harness AGENT v5 robust                 hostile calls; exits non-zero when one
//                                                       of them is answered wrongly
// The trace is written by the agent at exit (VRAMSCOPE_OUTPUT names where).

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capture/agent/nccl_profiler_abi.h"
#include "nccl_harness_plan.h"

namespace abi = vramscope::capture::nccl_abi;
using namespace vramscope::test;

namespace {

[[noreturn]] void fail(int code, const char* what) {
    std::fprintf(stderr, "harness: %s\n", what);
    std::fflush(stderr);
    std::_Exit(code);
}

void setColl(abi::EventDescrV4& d, const abi::CollDescrCore& c) {
    d.coll = c;
}
void setColl(abi::EventDescrV5& d, const abi::CollDescrCore& c) {
    d.coll.core = c;
}
void setColl(abi::EventDescrV6& d, const abi::CollDescrCore& c) {
    d.coll.core = c;
}
void setP2p(abi::EventDescrV4& d, const abi::P2pDescrCore& p) {
    d.p2p = p;
}
void setP2p(abi::EventDescrV5& d, const abi::P2pDescrCore& p) {
    d.p2p.core = p;
}
void setP2p(abi::EventDescrV6& d, const abi::P2pDescrCore& p) {
    d.p2p.core = p;
}

void* initComm(abi::ProfilerV4* t, int* mask, int rank) {
    void* ctx = nullptr;
    t->init(&ctx, mask, kPlanCommName, kPlanCommHash, 1, kPlanRanks, rank, nullptr);
    return ctx;
}
template <class Table>
void* initComm(Table* t, int* mask, int rank) {
    void* ctx = nullptr;
    t->init(&ctx, kPlanCommHash, mask, kPlanCommName, 1, kPlanRanks, rank, nullptr);
    return ctx;
}

/// One operation's kernel channels: start all, then record each stop and stop it (the proxy
/// thread's order in NCCL's ncclProfilerStart/StopKernelChEvent).
template <class Table, class Descr>
void playChannels(Table* t, void* ctx, void* parent, int k, int rank, int channels) {
    std::vector<void*> handles(static_cast<size_t>(channels), nullptr);
    for (int c = 0; c < channels; ++c) {
        Descr d{};
        d.type = abi::kEventKernelCh;
        d.parentObj = parent;
        d.kernelCh.channelId = static_cast<uint8_t>(c);
        d.kernelCh.pTimer = planStartNs(k, rank, c);
        t->startEvent(ctx, &handles[static_cast<size_t>(c)], &d);
        if (handles[static_cast<size_t>(c)] == nullptr) {
            fail(5, "no handle for a kernel channel");
        }
    }
    for (int c = 0; c < channels; ++c) {
        abi::EventStateArgs args{};
        args.kernelCh.pTimer = planStopNs(k, rank, c, channels);
        t->recordEventState(handles[static_cast<size_t>(c)], abi::kStateKernelChStop, &args);
        t->stopEvent(handles[static_cast<size_t>(c)]);
    }
}

template <class Table, class Descr>
int play(Table* t, int rank) {
    int mask = 0;
    void* ctx = initComm(t, &mask, rank);
    if (ctx == nullptr) {
        fail(3, "init gave no context");
    }
    if ((mask & abi::kEventColl) == 0 || (mask & abi::kEventKernelCh) == 0 ||
        (mask & abi::kEventP2p) == 0) {
        fail(3, "init did not ask for collectives, P2P and kernel channels");
    }
    // NCCL starts a group event whatever the mask says; the plugin must answer with no handle.
    {
        Descr g{};
        g.type = abi::kEventGroup;
        void* gh = reinterpret_cast<void*>(1);
        t->startEvent(ctx, &gh, &g);
        if (gh != nullptr) {
            fail(4, "a group event got a handle");
        }
    }
    std::vector<std::string> functions;
    std::vector<uint64_t> seq;
    for (int k = 0; k < kPlanSize; ++k) {
        const PlannedCollective& p = kPlan[k];
        size_t f = 0;
        while (f < functions.size() && functions[f] != p.function) {
            ++f;
        }
        if (f == functions.size()) {
            functions.push_back(p.function);
            seq.push_back(0);
        }
        Descr d{};
        d.type = abi::kEventColl;
        d.rank = rank;
        abi::CollDescrCore c{};
        c.seqNumber = seq[f]++;
        c.func = p.function;
        c.count = p.count;
        c.root = p.root;
        c.datatype = p.datatype;
        c.nChannels = p.channels;
        c.nWarps = 16;
        c.algo = p.algorithm;
        c.proto = p.protocol;
        setColl(d, c);
        void* h = nullptr;
        t->startEvent(ctx, &h, &d);
        if (h == nullptr) {
            fail(4, "no handle for a collective");
        }
        t->stopEvent(h);  // NCCL stops the collective event once it is enqueued
        playChannels<Table, Descr>(t, ctx, h, k, rank, p.channels);
    }
    // Send to the next rank, receive from the previous one; one channel each.
    for (int i = 0; i < 2; ++i) {
        Descr d{};
        d.type = abi::kEventP2p;
        d.rank = rank;
        abi::P2pDescrCore p{};
        p.func = i == 0 ? "Send" : "Recv";
        p.datatype = "ncclFloat32";
        p.count = kPlanP2pCount;
        p.peer = i == 0 ? (rank + 1) % kPlanRanks : (rank + kPlanRanks - 1) % kPlanRanks;
        p.nChannels = 1;
        setP2p(d, p);
        void* h = nullptr;
        t->startEvent(ctx, &h, &d);
        if (h == nullptr) {
            fail(4, "no handle for a P2P operation");
        }
        t->stopEvent(h);
        playChannels<Table, Descr>(t, ctx, h, kPlanSize + i, rank, 1);
    }
    t->finalize(ctx);
    return 0;
}

/// Hostile and out-of-order calls (v5 table). VRAMSCOPE_NCCL_EVENTS=64 is expected.
int robust(abi::ProfilerV5* t) {
    int mask = 0;
    if (t->init(nullptr, 1, &mask, kPlanCommName, 1, 1, 0, nullptr) != abi::kSuccess) {
        fail(10, "init with a null context pointer did not return success");
    }
    void* ctx = nullptr;
    t->init(&ctx, 7, &mask, nullptr, 1, 1, 0, nullptr);  // no name
    if (ctx == nullptr) {
        fail(11, "no context");
    }
    void* h = reinterpret_cast<void*>(1);
    t->startEvent(ctx, &h, nullptr);
    if (h != nullptr) {
        fail(12, "a null descriptor got a handle");
    }
    abi::EventDescrV5 unknown{};
    unknown.type = 1ull << 40;
    h = reinterpret_cast<void*>(1);
    t->startEvent(ctx, &h, &unknown);
    if (h != nullptr) {
        fail(13, "an unknown event type got a handle");
    }
    abi::EventDescrV5 coll{};
    coll.type = abi::kEventColl;
    coll.coll.core.func = "AllReduce";
    coll.coll.core.datatype = "ncclFloat32";
    coll.coll.core.count = 256;
    coll.coll.core.nChannels = 0;  // no kernel channels: the collective ends at its stop
    h = reinterpret_cast<void*>(1);
    t->startEvent(nullptr, &h, &coll);
    if (h != nullptr) {
        fail(14, "a null context got a handle");
    }
    t->startEvent(ctx, nullptr, &coll);  // no handle pointer: must not crash
    // Stops and states of handles that were never started.
    int local = 0;
    abi::EventStateArgs args{};
    args.kernelCh.pTimer = 123;
    t->stopEvent(nullptr);
    t->stopEvent(&local);
    t->recordEventState(nullptr, abi::kStateKernelChStop, nullptr);
    t->recordEventState(&local, abi::kStateKernelChStop, &args);
    t->recordEventState(&local, 9999, &args);
    abi::EventDescrV5 orphan{};
    orphan.type = abi::kEventKernelCh;
    orphan.parentObj = &local;  // not a handle of the plugin
    h = reinterpret_cast<void*>(1);
    t->startEvent(ctx, &h, &orphan);
    if (h != nullptr) {
        fail(15, "a kernel channel of a foreign parent got a handle");
    }
    // The pool: 100 collectives open at once over a pool of 64 handles.
    std::vector<void*> open;
    int refused = 0;
    for (int i = 0; i < 100; ++i) {
        coll.coll.core.seqNumber = static_cast<uint64_t>(i);
        void* oh = nullptr;
        t->startEvent(ctx, &oh, &coll);
        if (oh == nullptr) {
            ++refused;
        } else {
            open.push_back(oh);
        }
    }
    if (open.size() != 64 || refused != 36) {
        fail(16, "the pool did not hold exactly 64 handles");
    }
    for (void* oh : open) {
        t->stopEvent(oh);
    }
    for (void* oh : open) {
        t->stopEvent(oh);  // a second stop of a freed handle is ignored
    }
    t->finalize(ctx);
    t->finalize(ctx);  // twice
    h = reinterpret_cast<void*>(1);
    t->startEvent(ctx, &h, &coll);
    if (h != nullptr) {
        fail(17, "an event after finalize got a handle");
    }
    t->finalize(nullptr);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        fail(2, "usage: nccl_plugin_harness AGENT v6|v5|v4 play RANK | AGENT v5 robust");
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        fail(100, dlerror());
    }
    const std::string version = argv[2];
    const std::string mode = argv[3];
    const int rank = argc > 4 ? std::atoi(argv[4]) : 0;
    const std::string symbol = "ncclProfiler_" + version;
    void* table = dlsym(lib, symbol.c_str());
    if (table == nullptr) {
        fail(101, "symbol missing");
    }
    if (mode == "robust") {
        return robust(static_cast<abi::ProfilerV5*>(table));
    }
    int code = 0;
    if (version == "v6") {
        code = play<abi::ProfilerV6, abi::EventDescrV6>(static_cast<abi::ProfilerV6*>(table), rank);
    } else if (version == "v5") {
        code = play<abi::ProfilerV5, abi::EventDescrV5>(static_cast<abi::ProfilerV5*>(table), rank);
    } else {
        code = play<abi::ProfilerV4, abi::EventDescrV4>(static_cast<abi::ProfilerV4*>(table), rank);
    }
    // A job that goes on running after its collectives, so that a live viewer can attach.
    if (const char* linger = std::getenv("VRAMSCOPE_HARNESS_LINGER_MS")) {
        // Sleeps to the end even when a signal (SIGUSR2) cuts a sleep short.
        timespec left{std::atoi(linger) / 1000, (std::atoi(linger) % 1000) * 1000000L};
        while (nanosleep(&left, &left) != 0 && errno == EINTR) {
        }
    }
    return code;
}
