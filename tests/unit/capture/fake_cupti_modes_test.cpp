// The built capture agent over the fake CUPTI where the fake behaves as CUPTI does on a GPU and a
// kinder fake would hide a fault (fake_cupti_control.h): records in flight when a flush is forced,
// a thread whose buffer is never complete, records completed at context destruction after the
// agent's last round, activity kinds that cannot be enabled, a CUDA 12 job whose libcupti.so.12
// the agent must find itself, expandable segments (driver VMM calls), NVML's view of GPU memory,
// and buffers the agent promised to zero. Expected values come from the plan the harness played
// (fake_cupti_plan.h) and from what the fakes state in their comments.

#include <cupti_version.h>
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

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

/// The forced flushes of `run` that began before the harness said it exits.
size_t forcedFlushesBeforeExit(const HarnessRun& run) {
    long long exitingAt = -1;
    for (const LogEntry& e : run.events("harness")) {
        if (e.has("t_ns") && e.has("tid") && !e.has("signal")) {
            exitingAt = e.num("t_ns");
        }
    }
    size_t n = 0;
    for (const LogEntry& f : run.events("flush_enter")) {
        if ((f.num("flags") & kFlushForced) != 0 &&
            (exitingAt < 0 || f.num("enter_ns") < exitingAt)) {
            ++n;
        }
    }
    return n;
}

/// Memory rows of `d` at `address` with `action`.
size_t memoryRows(const trace::TraceData& d, uint64_t address, trace::MemoryAction action,
                  uint64_t bytes, trace::MemoryLevel level) {
    size_t n = 0;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        n += d.memory.address[i] == address && d.memory.action[i] == action &&
                     d.memory.sizeBytes[i] == bytes && d.memory.level[i] == level
                 ? 1
                 : 0;
    }
    return n;
}

/// The value of the last sample of kind `kind` on `device`, -1 when there is none.
double lastCounter(const trace::TraceData& d, trace::CounterKind kind, trace::DeviceIndex device,
                   size_t* samples) {
    double last = -1;
    *samples = 0;
    for (size_t i = 0; i < d.counters.size(); ++i) {
        if (d.counters.kind[i] == kind && d.counters.device[i] == device) {
            last = d.counters.value[i];
            ++*samples;
        }
    }
    return last;
}

}  // namespace

// A failed allocation mid-run (PyTorch then frees its cache and retries, or raises) must not force
// a flush: CUPTI hands back records still in flight as incomplete, kernels without times.
TEST_F(FakeCupti, AnAllocationFailureMidRunForcesNoFlushSoKernelsInFlightKeepTheirTimes) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("forced_mid_run", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(forcedFlushesBeforeExit(run), 0u) << "a forced flush while the job ran";
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    EXPECT_EQ(d.kernels.size(), static_cast<size_t>(plan::kInFlightKernels));
    expectPlannedKernels(d, run.base(), 0, plan::kInFlightKernels);
    EXPECT_EQ(lossCount(d, trace::LossCounter::CuptiRecordsWithoutTime), 0u);
    ASSERT_EQ(d.ooms.size(), 1u) << "the failure was not retried: one OOM";
    EXPECT_EQ(d.ooms[0].requestedBytes, plan::kOomRequestBytes);
}

// The buffer a busy thread fills always holds a kernel in flight, so CUPTI hands it back only
// when it is full: the buffer's size is the lag. Killed 500 ms after the last batch, the file
// must hold every kernel delivered 200 ms or more before it.
TEST_F(FakeCupti, AThreadWhoseBufferIsNeverCompleteReachesTheFileWithinTwoTenthsOfASecond) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("fill_buffers", "", {{"VRAMSCOPE_FLUSH_MS", "100"}});
    ASSERT_EQ(run.signal, SIGKILL) << describe(run);
    EXPECT_FALSE(run.events("buffer_completed").empty());
    auto loaded = loadTrace(run);  // cut (no closing frame) but readable
    ASSERT_TRUE(loaded);
    expectPlannedKernels(loaded->data, run.base(), 0, plan::kFillKept);
}

// Records CUPTI hands over when the context is destroyed, after the agent's exit handler ran
// (cudart's teardown in atexit), are written in a last frame and counted.
TEST_F(FakeCupti, RecordsCompletedAtContextDestructionAreWrittenAndCounted) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("late", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    const auto destroyed = run.events("context_destroyed");
    ASSERT_EQ(destroyed.size(), 1u);
    EXPECT_EQ(destroyed[0].num("late_records"), plan::kAllocations);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    for (int k = 0; k < plan::kAllocations; ++k) {
        SCOPED_TRACE("allocation " + std::to_string(k));
        EXPECT_EQ(memoryRows(d, plan::allocationAddress(k), trace::MemoryAction::Alloc,
                             plan::allocationBytes(k), trace::MemoryLevel::Reserved),
                  1u);
        EXPECT_EQ(memoryRows(d, plan::allocationAddress(k), trace::MemoryAction::Free,
                             plan::allocationBytes(k), trace::MemoryLevel::Reserved),
                  1u)
            << "the free completed at context destruction is missing";
    }
    EXPECT_EQ(lossCount(d, trace::LossCounter::CuptiRecordsAfterClose),
              static_cast<uint64_t>(plan::kAllocations));
    EXPECT_EQ(trace::lossCounterInfo(trace::LossCounter::CuptiRecordsAfterClose).severity,
              trace::LossSeverity::Info)
        << "written late, not lost";
}

// Records still in flight at the very end come back from the exit's forced flush incomplete:
// kernels without times, another record unreadable. Both are counted, none is lost silently.
TEST_F(FakeCupti, RecordsStillInFlightAtExitAreCountedNotLostSilently) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("in_flight_at_exit", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    EXPECT_EQ(d.kernels.size(), 0u);
    EXPECT_EQ(lossCount(d, trace::LossCounter::CuptiRecordsWithoutTime),
              static_cast<uint64_t>(plan::kInFlightKernels));
    EXPECT_EQ(lossRows(d, trace::LossCounter::CuptiRecordsUndecoded), 1u)
        << "the incomplete memory record is not counted";
}

// An activity kind CUPTI refuses (CUPTI_ERROR_NOT_COMPATIBLE for MEMORY_POOL here) is left out
// with one line, its return code in the header, and everything else is recorded.
TEST_F(FakeCupti, AnActivityKindCuptiRefusesIsLeftOutWithOneLineAndTheRestIsRecorded) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("enable_fails", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.agentLinesWith("MEMORY_POOL"), 1) << run.stderrText;
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.kernels.size(), static_cast<size_t>(plan::kKernels));
    EXPECT_EQ(setting(loaded->data, "cupti_enable_MEMORY_POOL"), "CUPTI_ERROR_NOT_COMPATIBLE");
    EXPECT_EQ(setting(loaded->data, "cupti_enable_CONCURRENT_KERNEL"), "CUPTI_SUCCESS");
}

// A CUDA 12 job that has not loaded its libcupti.so.12 yet: the agent finds the one beside the
// job's libcudart.so.12 and records through it.
TEST_F(FakeCupti, ACuda12JobGetsTheLibcupti12BesideItsRuntimeWhenNoneIsLoadedYet) {
    SKIP_WITHOUT_AGENT();
    RunSetup setup = RunSetup::cuda12({{"VRAMSCOPE_FLUSH_MS", "50"}});
    setup.cupti.clear();
    setup.cuptiFound = "libcupti.so.12";
    const HarnessRun run = playWith("roundtrip", "", setup);
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    ASSERT_EQ(run.harness("cupti_loaded"), 1) << describe(run);
    expectRoundTripTrace(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(setting(loaded->data, "cupti_library"), VRAMSCOPE_FAKE_CUPTI12_PATH);
}

// PyTorch's expandable segments grow reserved memory by cuMemCreate + cuMemMap and shrink it by
// cuMemUnmap + cuMemRelease; CUPTI's memory records do not show it, the API callbacks do.
TEST_F(FakeCupti, ExpandableSegmentPagesMakeAReservedCurve) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("vmm", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    for (int page = 0; page < plan::kVmmPages; ++page) {
        SCOPED_TRACE("page " + std::to_string(page));
        const uint64_t at = plan::kVmmBase + static_cast<uint64_t>(page) * plan::kVmmPageBytes;
        EXPECT_EQ(memoryRows(d, at, trace::MemoryAction::Alloc, plan::kVmmPageBytes,
                             trace::MemoryLevel::Reserved),
                  1u);
        EXPECT_EQ(memoryRows(d, at, trace::MemoryAction::Free, plan::kVmmPageBytes,
                             trace::MemoryLevel::Reserved),
                  page == plan::kVmmUnmapped ? 1u : 0u);
    }
    for (size_t i = 0; i < d.memory.size(); ++i) {
        EXPECT_EQ(d.memory.device[i], trace::DeviceIndex{0});
        EXPECT_GT(d.memory.timestampNs[i], run.base()) << "not on CUPTI's clock";
    }
}

// NVML's view each flush period: this process's bytes and each GPU's used bytes, on the CUDA
// device of the same UUID (the fake lists the GPUs in the other order). Device 1 is a GPU the
// process never allocated on: its 534 MiB are a stray context, visible only here.
TEST_F(FakeCupti, NvmlGivesThisProcessAndEachGpuTheirUsedBytesByUuid) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run =
        play("nvml", "", {{"VRAMSCOPE_FLUSH_MS", "50"}, {"FAKECUDA_DEVICES", "2"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    ASSERT_EQ(d.header.devices.size(), 2u);
    size_t n = 0;
    EXPECT_EQ(lastCounter(d, trace::CounterKind::ProcessGpuUsedBytes, trace::DeviceIndex{0}, &n),
              5 * kGiB);
    EXPECT_GE(n, 2u) << "sampled once only in 400 ms at a 50 ms period";
    EXPECT_EQ(lastCounter(d, trace::CounterKind::DeviceGpuUsedBytes, trace::DeviceIndex{0}, &n),
              7 * kGiB);
    EXPECT_EQ(lastCounter(d, trace::CounterKind::ProcessGpuUsedBytes, trace::DeviceIndex{1}, &n),
              534 * kMiB);
    EXPECT_EQ(lastCounter(d, trace::CounterKind::DeviceGpuUsedBytes, trace::DeviceIndex{1}, &n),
              2 * kGiB);
    const long long mainThread = run.harness("tid");
    for (const LogEntry& call : run.events("nvml_call")) {
        EXPECT_NE(call.num("tid"), mainThread) << "NVML called on the job's thread";
    }
}

TEST_F(FakeCupti, AnNvmlThatCannotStartIsOneLineAndRecordingGoesOn) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run =
        play("roundtrip", "", {{"VRAMSCOPE_FLUSH_MS", "50"}, {"FAKENVML_INIT_RESULT", "9"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.agentLinesWith("NVML"), 1) << run.stderrText;
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.kernels.size(), static_cast<size_t>(plan::kKernels));
    size_t n = 0;
    lastCounter(loaded->data, trace::CounterKind::ProcessGpuUsedBytes, trace::DeviceIndex{0}, &n);
    EXPECT_EQ(n, 0u);
}

// The agent hands CUPTI buffers it zeroed itself, off the job's threads, and says so with
// ZEROED_OUT_ACTIVITY_BUFFER: CUPTI then never clears 256 KiB on a training thread.
TEST_F(FakeCupti, BuffersComeZeroedSoCuptiNeverClearsThemOnTheJobsThreads) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("roundtrip", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    bool promised = false;
    for (const LogEntry& a : run.events("activity_attribute")) {
        promised = promised || (a.num("attr") == 5 && a.num("value") == 1);  // ZEROED_OUT = 5
    }
    EXPECT_TRUE(promised) << "CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER was not set";
    EXPECT_TRUE(run.events("buffer_zeroed_by_cupti").empty()) << "CUPTI zeroed a buffer";
    EXPECT_TRUE(run.events("buffer_dirty").empty()) << "a buffer promised zeroed was not";
    EXPECT_FALSE(run.events("buffer_requested").empty());
}

// Every CUPTI setting's return code is in the header, and so are the bound library and release.
TEST_F(FakeCupti, TheHeaderNamesTheBoundCuptiAndEachSettingsReturnCode) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("settings", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    EXPECT_EQ(setting(d, "cupti_library"), VRAMSCOPE_FAKE_CUPTI_PATH);
    EXPECT_EQ(setting(d, "cupti_api_version"), std::to_string(CUPTI_API_VERSION));
    for (const char* key :
         {"cupti_thread_id_type", "cupti_latency_timestamps", "cupti_zeroed_buffers",
          "cupti_enable_MEMORY2", "cupti_enable_CONCURRENT_KERNEL", "cupti_subscribe"}) {
        EXPECT_EQ(setting(d, key), "CUPTI_SUCCESS") << key;
    }
}
