// The built capture agent, whole, over a fake CUPTI and a fake CUDA driver (no GPU):
// fake_cupti_harness loads tests/unit/capture/fake_cupti/'s libcupti.so.13 and libcuda.so.1, then
// the agent, calls InitializeInjection and plays one scenario in a child process. This test reads
// the .vscope file the agent wrote with the trace reader and what the fakes logged, and checks
// them against the plan the harness played (fake_cupti_plan.h), with expected values written out
// here: kernel names demangled by hand, times and sizes from the plan's formulas, the fake
// device's facts as the fake driver states them.

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

#include "fake_cupti_run.h"

namespace {

using namespace vramscope;
using namespace vramscope::test::fake_run;
namespace plan = vramscope::test::fake_plan;

}  // namespace

// --- 1. round trip ---
TEST_F(FakeCupti, KernelsAllocationsAndNvtxRangesArriveAsDelivered) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("roundtrip", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    expectRoundTripTrace(run);
}

// --- 2. buffer sizes ---
TEST_F(FakeCupti, EveryActivityBufferIsBetween256KiBAnd1MiB) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("roundtrip", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    const auto requests = run.events("buffer_requested");
    ASSERT_FALSE(requests.empty()) << "the fake never asked the agent for a buffer";
    for (const LogEntry& r : requests) {
        EXPECT_GE(r.num("size"), 256 * 1024);
        EXPECT_LE(r.num("size"), 1024 * 1024);
    }
}

// --- 3. flushes ---
TEST_F(FakeCupti, ExitFlushesOnceThenForcedAfterThePeriodicOnesWithoutOverlap) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("exit_flushes", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto flushes = run.events("flush");
    EXPECT_EQ(run.events("flush_enter").size(), flushes.size())
        << "a flush was still running when the process ended";
    std::sort(flushes.begin(), flushes.end(), [](const LogEntry& a, const LogEntry& b) {
        return a.num("enter_ns") < b.num("enter_ns");
    });
    ASSERT_GE(flushes.size(), 4u) << "too few flushes for 600 ms at a 50 ms period";
    const size_t n = flushes.size();
    EXPECT_EQ(flushes[n - 1].num("flags"), kFlushForced) << "the last flush is not forced";
    EXPECT_EQ(flushes[n - 2].num("flags"), 0) << "no FlushAll(0) right before the forced one";
    const long long mainThread = run.harness("tid");
    const long long flushThread = flushes[0].num("tid");
    EXPECT_NE(flushThread, mainThread) << "periodic flushes from the job's main thread";
    for (size_t i = 0; i + 2 < n; ++i) {
        EXPECT_EQ(flushes[i].num("flags"), 0) << "flush " << i;
        EXPECT_EQ(flushes[i].num("tid"), flushThread) << "flush " << i << " from another thread";
    }
    for (size_t i = 1; i < n; ++i) {
        EXPECT_GE(flushes[i].num("enter_ns"), flushes[i - 1].num("exit_ns"))
            << "flush " << i << " began before flush " << i - 1 << " ended";
    }
    EXPECT_TRUE(run.events("finalize").empty()) << "cuptiFinalize was called";
    // The last 500 kernels were in a buffer no periodic flush took: the exit's flushes return it.
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.kernels.size(), static_cast<size_t>(plan::kKernels));
    expectPlannedKernels(loaded->data, run.base(), 0, plan::kKernels);
}

TEST_F(FakeCupti, SigtermFlushesFromTheFlushThreadThenEndsTheProcessBySigterm) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("sigterm", "", {{"VRAMSCOPE_FLUSH_MS", "100"}});
    ASSERT_EQ(run.signal, SIGTERM) << describe(run);
    const long long signalAt = run.harness("t_ns");
    ASSERT_GT(signalAt, 0);
    long long flushThread = -1;
    std::vector<LogEntry> after;
    for (const LogEntry& f : run.events("flush_enter")) {
        if (f.num("enter_ns") < signalAt) {
            flushThread = f.num("tid");  // the periodic flushes' thread
        } else {
            after.push_back(f);
        }
    }
    ASSERT_NE(flushThread, -1) << "no periodic flush in the 400 ms before the signal";
    ASSERT_FALSE(after.empty()) << "no flush after SIGTERM";
    for (const LogEntry& f : after) {
        EXPECT_EQ(f.num("flags"), 0) << "a forced flush on SIGTERM";
        EXPECT_EQ(f.num("tid"), flushThread) << "a flush on SIGTERM outside the flush thread";
    }
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.kernels.size(), 100u);
    expectPlannedKernels(loaded->data, run.base(), 0, 100);
}

// --- 4. undecodable records ---
TEST_F(FakeCupti, AnUndecodableRecordKeepsTheRecordsBeforeItAndIsCountedOnce) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("undecodable", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    // CUPTI's walk stops at the bad record: the 5 behind it cannot be reached.
    EXPECT_EQ(d.kernels.size(), 10u);
    expectPlannedKernels(d, run.base(), 0, 10);
    EXPECT_EQ(lossRows(d, trace::LossCounter::CuptiRecordsUndecoded), 1u);
    for (const trace::DataLoss& l : d.dataLoss) {
        if (l.counter == trace::LossCounter::CuptiRecordsUndecoded) {
            EXPECT_GE(l.count, 1u);
        }
    }
}

// --- 5. out of memory ---
namespace {

/// The callback thread of the cudaMalloc calls, checking that the agent had them enabled.
long long allocationCallbackThread(const HarnessRun& run) {
    long long tid = -1;
    for (const LogEntry& c : run.events("api_call")) {
        if (c.num("cbid") == kCbidCudaMalloc) {
            EXPECT_EQ(c.num("delivered"), 1) << "the agent did not enable cudaMalloc callbacks";
            tid = c.num("tid");
        }
    }
    EXPECT_NE(tid, -1);
    return tid;
}

/// cuMemGetInfo (a driver call that may block) is never made from inside an API callback, nor on
/// the callback's thread while the job runs (before the harness says it exits: after that the
/// agent's exit handler may run there).
void expectNoMemGetInfoOn(const HarnessRun& run, long long callbackThread) {
    long long exitingAt = -1;
    for (const LogEntry& e : run.events("harness")) {
        if (e.has("t_ns")) {
            exitingAt = e.num("t_ns");
        }
    }
    for (const LogEntry& c : run.events("cuMemGetInfo")) {
        EXPECT_NE(c.num("in_callback"), 1) << "cuMemGetInfo inside an API callback";
        if (c.num("tid") == callbackThread) {
            EXPECT_GT(c.num("t_ns"), exitingAt)
                << "cuMemGetInfo on the API callback's thread while the job runs";
        }
    }
}

size_t countersNamed(const trace::TraceData& d, const std::string& name, double* last) {
    size_t n = 0;
    for (size_t i = 0; i < d.counters.size(); ++i) {
        if (d.string(d.counters.name[i]) == name) {
            ++n;
            *last = d.counters.value[i];
        }
    }
    return n;
}

}  // namespace

TEST_F(FakeCupti, AFailedCudaMallocRetriedWithSuccessIsCountedNotAnOom) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("oom_retried", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    expectNoMemGetInfoOn(run, allocationCallbackThread(run));
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_TRUE(loaded->data.ooms.empty());
    double last = -1;
    EXPECT_GE(countersNamed(loaded->data, "cuda allocation failures (retried)", &last), 1u);
    EXPECT_EQ(last, 1.0) << "one failure was retried";
}

TEST_F(FakeCupti, TwoFailedCudaMallocsInARowAreOneOom) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("oom_twice", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    expectNoMemGetInfoOn(run, allocationCallbackThread(run));
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->data.ooms.size(), 1u);
    EXPECT_EQ(loaded->data.ooms[0].requestedBytes, plan::kOomRequestBytes);
}

TEST_F(FakeCupti, AFailedCudaMallocNotRetriedBeforeExitIsOneOom) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("oom_last", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    expectNoMemGetInfoOn(run, allocationCallbackThread(run));
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->data.ooms.size(), 1u);
    EXPECT_EQ(loaded->data.ooms[0].requestedBytes, plan::kOomRequestBytes);
}

// --- 6. another CUPTI user takes the buffers ---
TEST_F(FakeCupti, ReplacedBufferCallbacksAreSaidOnceAndTheJobExitsNormally) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("other_user", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.agentLinesWith("records stopped arriving"), 1) << run.stderrText;
    // Said while the job ran: after the replacement, before the job's exit.
    const auto lines = run.stderrLines();
    auto at = [&](const std::string& text) {
        for (size_t i = 0; i < lines.size(); ++i) {
            if (lines[i].find(text) != std::string::npos) {
                return static_cast<long>(i);
            }
        }
        return -1L;
    };
    const long replaced = at("harness: buffer callbacks replaced");
    const long said = at("records stopped arriving");
    const long exiting = at("harness: exiting");
    ASSERT_GE(replaced, 0);
    EXPECT_GT(said, replaced) << run.stderrText;
    EXPECT_LT(said, exiting) << "said only at exit, not within the job's last 4 s";
}

// --- 7. a CUDA 12 job ---
TEST_F(FakeCupti, ACuda12JobGetsItsOwnLibcupti12BoundAndRecorded) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run =
        playWith("roundtrip", "", RunSetup::cuda12({{"VRAMSCOPE_FLUSH_MS", "50"}}));
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    expectRoundTripTrace(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    // The bound library and its version (24 = CUDA 12.6, what the fake 12 build reports).
    EXPECT_EQ(setting(loaded->data, "cupti_library"), VRAMSCOPE_FAKE_CUPTI12_PATH);
    EXPECT_EQ(setting(loaded->data, "cupti_api_version"), "24");
}

TEST_F(FakeCupti, ACuda12JobWithoutAnyCupti12MakesTheAgentStepAsideWithOneLine) {
    SKIP_WITHOUT_AGENT();
    if (cupti12OnThisMachine()) {
        GTEST_SKIP() << "this machine has a libcupti.so.12 the agent would find";
    }
    // The job's CUDA 12 runtime in a folder of its own (no libcupti.so.12 beside it or in the
    // wheel layout), and a CUPTI of the other major mapped: the wrong one to record with.
    RunSetup setup = RunSetup::cuda13();
    setup.cudarts = {copyAlone(VRAMSCOPE_FAKE_CUDART12_PATH, "libcudart.so.12")};
    const HarnessRun run = playWith("step_aside", "", setup);
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.agentLinesWith("CUDA 12"), 1) << run.stderrText;
    EXPECT_EQ(run.stderrLines().size(), 2u) << "one line of the agent's, one of the harness's:\n"
                                            << run.stderrText;
    EXPECT_TRUE(run.traceFiles().empty()) << "a trace file was written";
    EXPECT_TRUE(run.events("activity_enable").empty()) << "CUPTI activity was enabled anyway";
    EXPECT_TRUE(run.events("register_callbacks").empty()) << "the CUDA 13 CUPTI was used";
}

// --- 8. NVTX hand-over by CUPTI version ---
TEST_F(FakeCupti, Cupti13_0_0KeepsNvtxAwayFromLibcuptiAndSaysSo) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("nvtx", "130000");
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.harness("nvtx_result"), 0);
    EXPECT_TRUE(run.events("nvtx2_init").empty()) << "forwarded to libcupti 13.0.0";
    EXPECT_EQ(run.agentLinesWith("NVTX"), 1) << run.stderrText;
}

TEST_F(FakeCupti, Cupti13_0_1GetsNvtxInitialisationForwarded) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("nvtx", "130001");
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.events("nvtx2_init").size(), 1u);
    EXPECT_EQ(run.harness("nvtx_result"), 1) << "libcupti's answer was not passed on";
}

// --- 9. CUPTI settings ---
TEST_F(FakeCupti, SystemThreadIdsLatencyTimestampsAndConcurrentKernelsNeverKernel) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("settings", "");
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    const auto types = run.events("thread_id_type");
    ASSERT_FALSE(types.empty()) << "cuptiSetThreadIdType was not called";
    EXPECT_EQ(types.back().num("type"), kThreadIdSystem);
    const auto latency = run.events("latency_timestamps");
    ASSERT_FALSE(latency.empty()) << "cuptiActivityEnableLatencyTimestamps was not called";
    EXPECT_EQ(latency.back().num("enable"), 1);
    bool concurrent = false;
    for (const LogEntry& e : run.events("activity_enable")) {
        EXPECT_NE(e.num("kind"), kKindKernel) << "CUPTI_ACTIVITY_KIND_KERNEL serialises kernels";
        concurrent = concurrent || e.num("kind") == kKindConcurrentKernel;
    }
    EXPECT_TRUE(concurrent) << "CONCURRENT_KERNEL was not enabled";
}

// --- 10. SIGKILL ---
TEST_F(FakeCupti, SigkillHalfASecondAfterDeliveryKeepsTheDeliveredRecords) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("kill", "", {{"VRAMSCOPE_FLUSH_MS", "100"}});
    ASSERT_EQ(run.signal, SIGKILL) << describe(run);
    auto loaded = loadTrace(run);  // cut (no closing frame) but readable
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.kernels.size(), 100u);
    expectPlannedKernels(loaded->data, run.base(), 0, 100);
}
