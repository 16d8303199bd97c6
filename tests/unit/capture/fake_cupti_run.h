#pragma once
// Running the built capture agent over the fake CUPTI, driver and NVML in a child process
// (fake_cupti_harness), and reading what came out: the trace, the fakes' log, stderr. Shared by
// fake_cupti_test.cpp (the agent's runtime contract) and fake_cupti_modes_test.cpp (the modes
// in which the fake behaves as CUPTI does on a GPU).

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fake_cupti/fake_cupti_plan.h"
#include "loss_counts.h"
#include "vramscope/trace/data_loss.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::test::fake_run {

inline constexpr int kFlushForced = 1;            // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
inline constexpr int kThreadIdSystem = 1;         // CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
inline constexpr int kKindKernel = 3;             // CUPTI_ACTIVITY_KIND_KERNEL
inline constexpr int kKindConcurrentKernel = 10;  // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
inline constexpr int kKindMemoryPool = 50;        // CUPTI_ACTIVITY_KIND_MEMORY_POOL
inline constexpr int kCbidCudaMalloc = 20;        // CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020

bool agentBuilt();

/// One line of $FAKECUPTI_LOG: "event key=value ...".
struct LogEntry {
    std::string event;
    std::map<std::string, std::string> fields;

    bool has(const std::string& key) const { return fields.count(key) != 0; }
    long long num(const std::string& key) const;
};

/// What a run maps before the agent starts (fake_cupti_harness's options) and its environment.
struct RunSetup {
    std::vector<std::string> cudarts;  ///< default: the fake libcudart.so.13
    std::string cupti;                 ///< default: the fake libcupti.so.13; "" for none
    std::string cuptiFound;            ///< a libcupti the agent must load itself
    std::string nvml;                  ///< default: the fake NVML; "" for none
    std::map<std::string, std::string> env;

    /// The CUDA 13 job: fake libcudart.so.13, libcupti.so.13 and NVML.
    static RunSetup cuda13(std::map<std::string, std::string> env = {});
    /// The CUDA 12 job: fake libcudart.so.12 and libcupti.so.12 (both in one folder) and NVML.
    static RunSetup cuda12(std::map<std::string, std::string> env = {});
};

struct HarnessRun {
    std::string dir;
    bool exited = false;
    int exitCode = -1;
    int signal = 0;
    bool timedOut = false;
    std::string stderrText;
    std::vector<LogEntry> log;

    std::vector<LogEntry> events(const std::string& event) const;
    /// The first "harness KEY=..." value, -1 when absent.
    long long harness(const std::string& key) const;
    /// The run's base on CUPTI's clock (fake_cupti_plan.h), from "harness base_ns=".
    int64_t base() const { return harness("base_ns"); }
    std::vector<std::string> stderrLines() const;
    /// Lines the agent wrote ("vramscope: ...") that contain `text`.
    int agentLinesWith(const std::string& text) const;
    std::vector<std::string> traceFiles() const;
};

/// Runs the harness on `scenario` in a fresh directory with a clean capture environment plus
/// `setup.env`; kills it after `timeoutS` seconds.
HarnessRun runHarness(const std::string& scenario, const std::string& arg, const RunSetup& setup,
                      int timeoutS = 60);

std::string describe(const HarnessRun& run);

/// The one trace file of `run`, read; nullopt (with a test failure) when there is none.
std::optional<trace::LoadedTrace> loadTrace(const HarnessRun& run);

/// Kernel rows by correlation id.
std::map<uint64_t, trace::KernelEvent> kernelsByCorrelation(const trace::TraceData& d);

/// The trace holds kernels [from, to) of the plan (by correlation id), with the plan's times.
void expectPlannedKernels(const trace::TraceData& d, int64_t base, int from, int to);

size_t lossRows(const trace::TraceData& d, trace::LossCounter counter);
using testdata::lossCount;

/// The samples of the counter named `name` (on `device`, or any device when nullopt), in order.
std::vector<double> counterValues(const trace::TraceData& d, const std::string& name,
                                  std::optional<trace::DeviceIndex> device = std::nullopt);

/// The trace of a "roundtrip" run holds exactly what the harness delivered: the plan's kernels
/// (times, stream, queue time, names demangled by hand, NCCL's as communication), its 5
/// allocations and frees (reserved device memory), its 3 NVTX ranges (nesting, thread), the fake
/// driver's one device as fake_cuda.cpp states it, and no data loss.
void expectRoundTripTrace(const HarnessRun& run);

/// The header's capture setting `key`, "" when absent.
std::string setting(const trace::TraceData& d, const std::string& key);

/// True when a libcupti.so.12 can be loaded here or lies in a CUDA toolkit folder (then a job
/// without one cannot be staged).
bool cupti12OnThisMachine();

/// Copies `path` into a new temporary folder of its own as `name`; returns the copy's path.
std::string copyAlone(const std::string& path, const std::string& name);

/// Runs harness scenarios; removes their directories after a test that passed (a failed test's
/// stay, with the trace, the fakes' log and the harness's stderr).
class FakeCupti : public ::testing::Test {
protected:
    HarnessRun play(const std::string& scenario, const std::string& arg,
                    const std::map<std::string, std::string>& env = {});
    HarnessRun playWith(const std::string& scenario, const std::string& arg, const RunSetup& setup);
    void TearDown() override;

private:
    std::vector<std::string> m_dirs;
};

}  // namespace vramscope::test::fake_run

#define SKIP_WITHOUT_AGENT()                                                            \
    if (!::vramscope::test::fake_run::agentBuilt()) {                                   \
        GTEST_SKIP() << "the capture agent was not built (no CUDA toolkit with CUPTI)"; \
    }
