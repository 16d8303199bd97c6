// NcclRecorder in memory: when an operation is over, which interval and timing source it gets,
// how GPU time is put on the trace clock, and what a full pool or a stale handle does. A fake
// clock makes every host time known.

#include "nccl_events.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace {

using namespace vramscope;
using capture::NcclEventMask;
using capture::NcclOpDescr;
using capture::NcclRecorder;
using capture::NcclRecorderOptions;
using capture::NcclTaken;

int64_t g_hostNs = 0;
int64_t fakeClock() {
    return g_hostNs;
}

NcclRecorderOptions options(size_t slots = 64, NcclEventMask mask = NcclEventMask::Coll) {
    NcclRecorderOptions o;
    o.poolSlots = slots;
    o.mask = mask;
    return o;
}

NcclOpDescr allReduce(uint64_t count, uint32_t channels, int64_t seq = 0) {
    NcclOpDescr d;
    d.function = "AllReduce";
    d.datatype = "ncclBfloat16";
    d.algorithm = "RING";
    d.protocol = "LL128";
    d.seqNumber = seq;
    d.count = count;
    d.channels = channels;
    return d;
}

std::string name(const std::array<char, capture::NcclFinishedOp::kNameChars>& a) {
    return std::string(a.data());
}

}  // namespace

TEST(NcclDatatypeBytes, FollowsNcclTypeSizeForEveryNameNcclPasses) {
    // ncclTypeSize (src/include/collectives.h), by hand.
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclInt8"), 1u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclUint8"), 1u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclFloat8e4m3"), 1u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclFloat8e5m2"), 1u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclFloat16"), 2u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclBfloat16"), 2u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclInt32"), 4u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclUint32"), 4u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclFloat32"), 4u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclInt64"), 8u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclUint64"), 8u);
    EXPECT_EQ(capture::ncclDatatypeBytes("ncclFloat64"), 8u);
    EXPECT_EQ(capture::ncclDatatypeBytes("Unknown"), 0u);  // NCCL's name for ncclUint8 today
    EXPECT_EQ(capture::ncclDatatypeBytes(""), 0u);
}

TEST(NcclEventMask, ParsesTheLauncherValuesIntoNcclActivationBits) {
    EXPECT_EQ(capture::parseNcclEventMask("off"), NcclEventMask::Off);
    EXPECT_EQ(capture::parseNcclEventMask("coll"), NcclEventMask::Coll);
    EXPECT_EQ(capture::parseNcclEventMask("full"), NcclEventMask::Full);
    EXPECT_FALSE(capture::parseNcclEventMask("COLL").has_value());
    // profiler.h: Coll 1<<1, P2p 1<<2, ProxyOp 1<<3, KernelCh 1<<6.
    EXPECT_EQ(capture::ncclActivationBits(NcclEventMask::Off), 0);
    EXPECT_EQ(capture::ncclActivationBits(NcclEventMask::Coll), 2 | 4 | 64);
    EXPECT_EQ(capture::ncclActivationBits(NcclEventMask::Full), 2 | 4 | 8 | 64);
}

TEST(NcclRecorder, WaitsForEveryChannelAndTimesTheOperationByTheGpuTimer) {
    g_hostNs = 1'000;
    NcclRecorder rec(options(), &fakeClock);
    void* comm = rec.initCommunicator(0xabc, "world", 2, 8, 3, 1);
    ASSERT_NE(comm, nullptr);
    void* op = rec.startOperation(comm, allReduce(1000, 2, 7));
    ASSERT_NE(op, nullptr);
    g_hostNs = 1'500;
    rec.stop(op);  // enqueued, not over
    void* ch0 = rec.startKernelChannel(comm, op, 0, 50'000);
    void* ch1 = rec.startKernelChannel(comm, op, 1, 50'200);
    g_hostNs = 2'000;
    rec.kernelChannelStopped(ch0, 51'000);  // the operation's observation: 2000 - 51000
    rec.stop(ch0);
    NcclTaken taken;
    rec.takeInto(taken, false);
    EXPECT_TRUE(taken.ops.empty()) << "one channel is still running";
    ASSERT_EQ(taken.communicators.size(), 1u);
    EXPECT_EQ(taken.communicators[0].hash, 0xabcu);
    EXPECT_EQ(taken.communicators[0].nodes, 2);
    EXPECT_EQ(taken.communicators[0].name, "world");
    EXPECT_EQ(taken.communicators[0].initNs, 1'000);
    g_hostNs = 2'300;
    rec.kernelChannelStopped(ch1, 51'400);  // not observed (one per operation)
    rec.stop(ch1);
    rec.takeInto(taken, false);
    ASSERT_EQ(taken.ops.size(), 1u);
    const capture::NcclFinishedOp& f = taken.ops[0];
    EXPECT_EQ(f.timing, trace::CollectiveTiming::KernelChannels);
    EXPECT_EQ(f.startNs, 50'000 - 49'000);  // first channel start + the offset
    EXPECT_EQ(f.endNs, 51'400 - 49'000);    // last channel stop
    EXPECT_EQ(f.enqueueNs, 1'000);
    EXPECT_EQ(f.bytes, 2'000u);  // 1000 bf16
    EXPECT_EQ(f.seqNumber, 7);
    EXPECT_EQ(f.communicatorHash, 0xabcu);
    EXPECT_EQ(f.rank, 3);
    EXPECT_EQ(f.nranks, 8);
    EXPECT_EQ(f.device, 1);
    EXPECT_EQ(f.peer, -1) << "AllReduce has no root";
    EXPECT_EQ(name(f.function), "AllReduce");
    EXPECT_EQ(name(f.algorithm), "RING");
    EXPECT_EQ(rec.gpuToTraceOffsetNs(), -49'000);
    EXPECT_EQ(rec.slotsInUse(), 0u);

    // The offset is the minimum over operations: a later, tighter observation replaces it, a
    // looser one does not.
    for (const auto& [hostNs, gpuStopNs] : {std::pair<int64_t, uint64_t>{3'000, 53'000},
                                            std::pair<int64_t, uint64_t>{4'000, 52'000}}) {
        void* next = rec.startOperation(comm, allReduce(1, 1));
        rec.stop(next);
        void* ch = rec.startKernelChannel(comm, next, 0, gpuStopNs - 100);
        g_hostNs = hostNs;
        rec.kernelChannelStopped(ch, gpuStopNs);
        rec.stop(ch);
    }
    EXPECT_EQ(rec.gpuToTraceOffsetNs(), 3'000 - 53'000);
    EXPECT_TRUE(taken.communicators.empty()) << "taken before";
}

TEST(NcclRecorder, FallsBackToProxyThenHostTimes) {
    g_hostNs = 100;
    NcclRecorder rec(options(64, NcclEventMask::Full), &fakeClock);
    void* comm = rec.initCommunicator(1, nullptr, 1, 2, 0, -1);
    // One channel whose kernel-channel events carry no GPU timer value (pTimer 0), and proxy
    // operations while it runs: proxy times.
    void* op = rec.startOperation(comm, allReduce(10, 1));
    g_hostNs = 150;
    rec.stop(op);
    void* ch = rec.startKernelChannel(comm, op, 0, 0);
    g_hostNs = 200;
    void* p0 = rec.startProxyOp(comm, op, getpid());
    g_hostNs = 260;
    void* p1 = rec.startProxyOp(comm, op, getpid());
    g_hostNs = 400;
    rec.stop(p1);
    g_hostNs = 380;
    rec.stop(p0);
    rec.kernelChannelStopped(ch, 0);
    g_hostNs = 450;
    rec.stop(ch);
    // A proxy op of another process (its parent is not ours) gets no handle.
    EXPECT_EQ(rec.startProxyOp(comm, op, getpid() + 1), nullptr);
    // A collective with neither: host times, enqueue to stop.
    g_hostNs = 1'000;
    void* host = rec.startOperation(comm, allReduce(10, 0, 1));
    g_hostNs = 1'040;
    rec.stop(host);
    NcclTaken taken;
    rec.takeInto(taken, false);
    ASSERT_EQ(taken.ops.size(), 2u);
    EXPECT_EQ(taken.ops[0].timing, trace::CollectiveTiming::Proxy);
    EXPECT_EQ(taken.ops[0].startNs, 200);
    EXPECT_EQ(taken.ops[0].endNs, 400);
    EXPECT_EQ(taken.ops[1].timing, trace::CollectiveTiming::Host);
    EXPECT_EQ(taken.ops[1].startNs, 1'000);
    EXPECT_EQ(taken.ops[1].endNs, 1'040);
}

TEST(NcclRecorder, AFullPoolDropsAndCountsAndStaleHandlesAreIgnored) {
    g_hostNs = 0;
    NcclRecorder rec(options(4), &fakeClock);
    void* comm = rec.initCommunicator(1, "c", 1, 2, 0, -1);
    std::vector<void*> ops;
    for (int i = 0; i < 6; ++i) {
        ops.push_back(rec.startOperation(comm, allReduce(4, 0, i)));
    }
    EXPECT_NE(ops[3], nullptr);
    EXPECT_EQ(ops[4], nullptr);
    EXPECT_EQ(ops[5], nullptr);
    for (void* op : ops) {
        rec.stop(op);
        rec.stop(op);  // twice: the slot is free (or reused) by then, never counted twice
    }
    int local = 0;
    rec.stop(&local);
    rec.kernelChannelStopped(&local, 5);
    EXPECT_EQ(rec.startKernelChannel(comm, &local, 0, 1), nullptr);
    NcclTaken taken;
    rec.takeInto(taken, false);
    EXPECT_EQ(taken.ops.size(), 4u);
    ASSERT_EQ(taken.dropped.size(), 1u);
    EXPECT_EQ(taken.dropped[0].second, 2u);
    EXPECT_NE(taken.dropped[0].first.find("collectives"), std::string::npos);
    EXPECT_EQ(rec.slotsInUse(), 0u);
}

TEST(NcclRecorder, AFullPoolGivesUpTheOldestOperationWaitingOnlyForChannels) {
    g_hostNs = 0;
    NcclRecorder rec(options(2), &fakeClock);
    void* comm = rec.initCommunicator(1, "c", 1, 2, 0, -1);
    g_hostNs = 10;
    void* a = rec.startOperation(comm, allReduce(4, 2, 0));  // its channels never report
    rec.stop(a);
    g_hostNs = 20;
    void* b = rec.startOperation(comm, allReduce(4, 2, 1));
    rec.stop(b);
    g_hostNs = 30;
    void* c = rec.startOperation(comm, allReduce(4, 0, 2));
    ASSERT_NE(c, nullptr) << "the oldest waiting operation made room";
    NcclTaken taken;
    rec.takeInto(taken, false);
    ASSERT_EQ(taken.ops.size(), 1u);
    EXPECT_EQ(taken.ops[0].seqNumber, 0);
    EXPECT_EQ(taken.ops[0].timing, trace::CollectiveTiming::Host);
    EXPECT_TRUE(taken.dropped.empty());
}

TEST(NcclRecorder, FinalizeWritesWaitingOperationsAndIgnoresWhatComesAfter) {
    g_hostNs = 10;
    NcclRecorder rec(options(), &fakeClock);
    void* comm = rec.initCommunicator(9, "c", 1, 2, 1, -1);
    void* op = rec.startOperation(comm, allReduce(4, 4));
    g_hostNs = 20;
    rec.stop(op);  // its 4 channels never report
    rec.finalizeCommunicator(comm);
    rec.finalizeCommunicator(comm);
    EXPECT_EQ(rec.startOperation(comm, allReduce(4, 0)), nullptr);
    NcclTaken taken;
    rec.takeInto(taken, false);
    ASSERT_EQ(taken.ops.size(), 1u);
    EXPECT_EQ(taken.ops[0].timing, trace::CollectiveTiming::Host);
    EXPECT_EQ(taken.ops[0].endNs, 20);
    EXPECT_EQ(rec.slotsInUse(), 0u);
}

TEST(NcclRecorder, AppendsCollectivesWithInternedNamesAndDropCounts) {
    g_hostNs = 0;
    NcclRecorder rec(options(1), &fakeClock);
    void* comm = rec.initCommunicator(5, "c", 1, 4, 2, -1);
    NcclOpDescr bcast = allReduce(8, 0);
    bcast.function = "Broadcast";
    bcast.rootOrPeer = 3;
    void* op = rec.startOperation(comm, bcast);
    EXPECT_EQ(rec.startOperation(comm, bcast), nullptr);  // pool of one
    g_hostNs = 30;
    rec.stop(op);
    NcclTaken taken;
    rec.takeInto(taken, false);
    trace::TraceData out;
    capture::appendNcclTaken(taken, out, [&](std::string_view s) { return out.intern(s); });
    ASSERT_EQ(out.collectives.size(), 1u);
    const trace::CollectiveEvent e = out.collectives.at(0);
    EXPECT_EQ(out.string(e.function), "Broadcast");
    EXPECT_EQ(out.string(e.datatype), "ncclBfloat16");
    EXPECT_EQ(e.peer, 3) << "the root of a Broadcast";
    EXPECT_EQ(e.bytes, 16u);
    EXPECT_EQ(e.enqueueLeadNs, 0);
    EXPECT_EQ(e.rank, trace::RankId{2});
    ASSERT_EQ(out.communicators.size(), 1u);
    ASSERT_EQ(out.dataLoss.size(), 1u);
    EXPECT_EQ(out.dataLoss[0].counter, trace::LossCounter::NcclEventsDropped);
    EXPECT_EQ(out.dataLoss[0].count, 1u);
}
