#pragma once
// The running capture agent of one process: staging of converted events, the flush thread, the
// writer thread, exit and SIGTERM handling.
//
// Threads: CUDA/CUPTI callbacks (training threads and CUPTI's worker) only convert records into the
// staging (EventStaging, one mutex, bounded), take and give activity buffers, and keep failed
// allocations per thread (lock-free); the flush thread alone calls cuptiActivityFlushAll, zeroes
// buffers, decides what failed allocations were, and samples NVML; the writer thread alone does
// I/O. The one Agent of a process is created by InitializeInjection and intentionally never
// destroyed (CUPTI may call back during process teardown).
//
// Exit (atexit): the periodic flushes stop, the flush thread flushes with flag 0, then forces
// once, and the writer writes its final round; records CUPTI hands over later (a context destroyed
// in cudart's own exit handler) go into one last frame written from the library's destructor,
// which runs after every exit handler, and are counted (cupti_records_after_close).

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "activity_buffers.h"
#include "allocation_failures.h"
#include "capture_writer.h"
#include "event_staging.h"
#include "nccl_events.h"
#include "nvml_sampler.h"
#include "output_naming.h"
#include "trace_output.h"
#include "vmm_tracker.h"
#include "vramscope/trace/live.h"
#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::capture {

/// Writes "vramscope: LINE" to stderr in one write(2) (no stdio buffering, no allocation after the
/// message is built). The agent's only output.
void printNotice(const std::string& line);

/// The trace clock, ns: CUPTI's (cuptiGetTimestamp) when the agent runs with CUPTI,
/// CLOCK_MONOTONIC when it records NCCL events only (header clock domain "CLOCK_MONOTONIC").
int64_t traceNowNs();

/// CLOCK_MONOTONIC, ns: what ages and deadlines are measured in.
int64_t steadyNowNs();

/// Settings read from the environment at start.
struct AgentConfig {
    int flushMs = 200;         ///< VRAMSCOPE_FLUSH_MS, clamped to [10, 10000]
    bool oomCallbacks = true;  ///< VRAMSCOPE_OOM_CALLBACKS != "0"
    OutputSpec output;         ///< VRAMSCOPE_OUTPUT (default: ./vramscope-traces)
    std::string outputPath;    ///< the resolved file or socket
    ProcessIdentity identity;
    bool isRootProcess = false;
    bool live = true;                         ///< VRAMSCOPE_LIVE != "0": serve a live socket
    bool file = true;                         ///< VRAMSCOPE_FILE != "0": write a trace file
    uint64_t ringBytes = uint64_t{64} << 20;  ///< VRAMSCOPE_RING_MIB x 1 MiB (1..4096 MiB)
};

class Agent {
public:
    /// The agent of this process, created on first call. Never destroyed.
    static Agent& instance();
    /// The agent when one was created, else nullptr (the library's destructor asks).
    static Agent* existing();

    /// Starts capture: reads the environment, binds the job's CUPTI, opens the output, starts
    /// CUPTI and the threads. On any failure prints one "vramscope:" line on stderr and leaves
    /// the process untouched (returns false); without a usable CUPTI no file is opened. Called
    /// once, from InitializeInjection.
    bool start();
    bool running() const { return m_running.load(std::memory_order_acquire); }

    /// The NCCL plugin's recorder, created at the first communicator (ncclProfiler init) with
    /// `mask`. When the agent is not running yet (NCCL_PROFILER_PLUGIN without CUDA injection)
    /// it first starts in collectives-only mode: no CUPTI and no CUDA driver call, the writer
    /// thread alone, clock CLOCK_MONOTONIC; `commRank` is then the file's rank when the
    /// environment names none. nullptr when capture cannot run (said once on stderr). Never
    /// destroyed; thread-safe.
    NcclRecorder* ncclRecorder(NcclEventMask mask, int32_t commRank);

    // --- used from CUPTI callbacks (cupti_session.cpp); thread-safe, never block on I/O ---
    ActivityBufferPool& buffers() { return m_buffers; }
    EventStaging& staging() { return m_staging; }
    AllocationFailures& allocationFailures() { return m_failures; }
    VmmTracker& vmm() { return m_vmm; }
    /// A buffer was requested or completed (the flush thread watches that they keep coming).
    void noteBufferActivity() { m_bufferEvents.fetch_add(1, std::memory_order_relaxed); }
    /// An allocation call succeeded (what keeps coming while another tool holds the buffers).
    void noteAllocationCall() { m_allocationCalls.fetch_add(1, std::memory_order_relaxed); }

    /// Exit path (atexit): the flush thread's last flushes (flag 0, then forced once), the
    /// final write; bounded waits. The writer then waits for unloading() (the library's
    /// destructor) to write what came later, and closes the file.
    void shutdown();
    /// The library's destructor: the last frame (records handed over after the final round)
    /// and the file's close; bounded wait.
    void unloading();
    /// SIGTERM path: a flush with flag 0 on the flush thread and a write, within `timeoutMs`,
    /// without stopping capture.
    void flushNow(int timeoutMs);
    /// Writes the live ring beside the trace (OUTPUT-ring-<unix s>.vscope; for a socket output
    /// ./vramscope-HOST-PID-ring-<unix s>.vscope) and says where in one line; `why` ends the
    /// line ("on SIGUSR2"). Writer thread only.
    void writeRingDump(const char* why);

    const AgentConfig& config() const { return m_config; }

private:
    Agent();

    static constexpr size_t kOomRing = 64;
    static constexpr size_t kMaxDevices = 64;

    struct OomSlot {
        std::atomic<bool> ready{false};
        trace::OomEvent event;
    };

    bool readConfig(std::string& error, int32_t fallbackRank = -1);
    bool startCollectivesOnlyLocked(int32_t commRank);
    /// The header's common part, the writer and its threads (the flush thread only with CUPTI).
    void launch(OpenedOutput output, bool withCupti);
    /// The trace file (unless VRAMSCOPE_FILE=0) and the live server (unless VRAMSCOPE_LIVE=0),
    /// as the one sink the writer writes to: the file, the file teed into the server, or the
    /// server alone (whose socket is then the path). A null sink with `error` when there is
    /// nothing to write to; a server that cannot start beside a file is only said.
    OpenedOutput openOutputs();
    /// An allocation failure that is an OOM (AllocationFailures' sink): into the OOM ring.
    void recordOom(const FailedAllocation& failure);

    // flush thread (agent_threads.cpp)
    void flushLoop();
    void flushRound();
    void sampleNvml();
    void watchBufferFlow();
    // writer thread
    void writerLoop();
    void notifyWriter();
    bool writeHeaderIfReady(int attempt);
    /// Adds what the agent itself records (host memory, OOM events, retried failures, NCCL
    /// operations) to m_out.
    void takeOwnEvents();

    AgentConfig m_config;
    std::mutex m_startMutex;  ///< start() and ncclRecorder() against each other
    std::atomic<bool> m_running{false};
    bool m_collectivesOnly = false;  ///< set before m_running, constant after
    bool m_ncclStartFailed = false;  ///< guarded by m_startMutex
    std::atomic<NcclRecorder*> m_nccl{nullptr};
    int64_t m_pid = 0;

    EventStaging m_staging;
    ActivityBufferPool m_buffers;
    AllocationFailures m_failures;
    VmmTracker m_vmm;

    // OOM ring: producers fetch_add m_oomWrite; the writer consumes in order.
    std::array<OomSlot, kOomRing> m_oomSlots;
    std::atomic<uint64_t> m_oomWrite{0};
    std::atomic<uint64_t> m_oomRead{0};
    std::atomic<uint64_t> m_oomDropped{0};

    // flush thread state
    std::mutex m_flushMutex;
    std::condition_variable m_flushCv;      ///< wakes the flush thread
    std::condition_variable m_flushDoneCv;  ///< flush rounds finished
    bool m_flushRequested = false;          ///< guarded by m_flushMutex
    bool m_flushStop = false;               ///< guarded by m_flushMutex
    bool m_flushFinished = false;           ///< the exit flushes are done; guarded
    uint64_t m_flushStarted = 0;            ///< rounds begun; guarded
    uint64_t m_flushDone = 0;               ///< rounds finished; guarded
    std::atomic<uint64_t> m_bufferEvents{0};
    std::atomic<uint64_t> m_allocationCalls{0};
    uint64_t m_watchBuffers = 0;  ///< flush thread only: buffer events at the last change
    uint64_t m_watchAllocations = 0;
    int64_t m_watchSinceNs = 0;
    bool m_watchSaid = false;
    NvmlSampler m_nvml;  ///< flush thread only
    bool m_nvmlTried = false;
    std::array<std::atomic<uint64_t>, kMaxDevices> m_freeBytes{};  ///< NVML's, 0 = unknown
    std::mutex m_devicesMutex;
    std::vector<trace::DeviceInfo> m_devices;  ///< from the header's query; guarded
    std::atomic<bool> m_devicesKnown{false};

    // writer thread state
    std::mutex m_writerMutex;
    std::condition_variable m_writerCv;
    std::condition_variable m_roundCv;
    bool m_dataReady = false;       ///< guarded by m_writerMutex
    bool m_writerStop = false;      ///< guarded: write the final round
    bool m_finalRoundDone = false;  ///< guarded
    bool m_lateRequested = false;   ///< guarded: the destructor asks for the last frame
    uint64_t m_writeRounds = 0;     ///< guarded; completed writer rounds
    std::atomic<bool> m_writerDone{false};
    std::atomic<bool> m_shuttingDown{false};
    std::thread m_flushThread;
    std::thread m_writerThread;

    // writer thread only
    std::unique_ptr<CaptureWriter> m_writer;
    /// The live socket, shared with the writer's sink; null when off or when it could not start.
    /// Outlives the writer (which closes its sink at the end) so that viewers get the last frames;
    /// stopped by the writer thread after the close, and its socket file goes with the process.
    std::shared_ptr<trace::live::LiveServer> m_live;
    /// An OOM was recorded: the writer thread writes the ring once it holds it.
    std::atomic<bool> m_oomRingDump{false};
    trace::TraceData m_out;
    trace::FileHeader m_header;
    trace::StringId m_hostResidentName = 0;  ///< interned in m_staging at start
    trace::StringId m_retriedName = 0;
    trace::StringId m_nvmlProcessName = 0;
    trace::StringId m_nvmlDeviceName = 0;
    uint64_t m_retriedWritten = 0;
    NcclTaken m_ncclTaken;
    bool m_finalRound = false;
};

}  // namespace vramscope::capture
