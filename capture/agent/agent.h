#pragma once
// The running capture agent of one process: staging of converted events, the flush thread, the
// writer thread, exit and SIGTERM handling.
//
// Threads: CUDA/CUPTI callbacks (training threads and CUPTI's worker) only convert records into the
// staging (EventStaging, one mutex, bounded), or push OOM events into a lock-free ring; the flush
// thread calls cuptiActivityFlushAll periodically; the writer thread alone does I/O. The one Agent
// of a process is created by InitializeInjection and intentionally never destroyed (CUPTI may call
// back during process teardown).

#include <cupti.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capture_writer.h"
#include "event_staging.h"
#include "nccl_events.h"
#include "output_naming.h"
#include "trace_output.h"
#include "vramscope/trace/live.h"
#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::capture {

/// Writes "vramscope: LINE" to stderr in one write(2) (no stdio buffering, no allocation after the
/// message is built). The agent's only output.
void printNotice(const std::string& line);

/// The trace clock, ns: CUPTI's (cuptiNowNs) when the agent runs with CUPTI, CLOCK_MONOTONIC
/// when it records NCCL events only (header clock domain "CLOCK_MONOTONIC").
int64_t traceNowNs();

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

    /// Starts capture: reads the environment, opens the output, starts CUPTI and the threads.
    /// On any failure prints one "vramscope:" line on stderr and leaves the process untouched
    /// (returns false). Called once, from InitializeInjection.
    bool start();
    bool running() const { return m_running.load(std::memory_order_acquire); }

    /// The NCCL plugin's recorder, created at the first communicator (ncclProfiler init) with
    /// `mask`. When the agent is not running yet (NCCL_PROFILER_PLUGIN without CUDA injection)
    /// it first starts in collectives-only mode: no CUPTI and no CUDA driver call, the writer
    /// thread alone, clock CLOCK_MONOTONIC; `commRank` is then the file's rank when the
    /// environment names none. nullptr when capture cannot run (said once on stderr). Never
    /// destroyed; thread-safe.
    NcclRecorder* ncclRecorder(NcclEventMask mask, int32_t commRank);

    // --- called from CUPTI callbacks (cupti_session.cpp) ---
    /// A buffer for CUPTI to fill (from a pool; malloc when the pool is empty).
    void requestBuffer(uint8_t** buffer, size_t* size, size_t* maxNumRecords);
    /// Converts a filled buffer into staging and returns it to the pool. No I/O.
    void completeBuffer(uint8_t* buffer, size_t size, size_t validSize, uint32_t droppedRecords);
    /// Records a failed device allocation (lock-free, from the failing thread) and asks for a
    /// forced flush so the event reaches the file before the job dies.
    void recordOom(const trace::OomEvent& oom);

    /// Exit path (atexit): forced flush, final write, bounded wait for the writer.
    void shutdown();
    /// SIGTERM path: forced flush and write, bounded wait, without stopping capture.
    void flushNow(int timeoutMs);
    /// Writes the live ring beside the trace (OUTPUT-ring-<unix s>.vscope; for a socket output
    /// ./vramscope-HOST-PID-ring-<unix s>.vscope) and says where in one line; `why` ends the
    /// line ("on SIGUSR2"). Writer thread only.
    void writeRingDump(const char* why);

    const AgentConfig& config() const { return m_config; }

private:
    Agent() = default;

    static constexpr size_t kBufferBytes = 8u << 20;
    static constexpr size_t kMaxPooledBuffers = 16;
    static constexpr size_t kOomRing = 64;

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
    void flushLoop();
    void writerLoop();
    bool writeHeaderIfReady(int attempt);
    /// Adds what the agent itself records (host memory sample, OOM events) to m_out.
    void takeOwnEvents();

    AgentConfig m_config;
    std::mutex m_startMutex;  ///< start() and ncclRecorder() against each other
    std::atomic<bool> m_running{false};
    bool m_collectivesOnly = false;  ///< set before m_running, constant after
    bool m_ncclStartFailed = false;  ///< guarded by m_startMutex
    std::atomic<NcclRecorder*> m_nccl{nullptr};
    int64_t m_pid = 0;

    // staging between the CUPTI callbacks and the writer thread (thread-safe)
    EventStaging m_staging;

    // buffer pool
    std::mutex m_poolMutex;
    std::vector<uint8_t*> m_pool;

    // OOM ring: producers fetch_add m_oomWrite; the writer consumes in order.
    std::array<OomSlot, kOomRing> m_oomSlots;
    std::atomic<uint64_t> m_oomWrite{0};
    std::atomic<uint64_t> m_oomRead{0};
    std::atomic<uint64_t> m_oomDropped{0};

    // threads
    std::mutex m_flushMutex;
    std::condition_variable m_flushCv;
    std::atomic<bool> m_forceFlush{false};
    std::atomic<bool> m_stopping{false};
    std::mutex m_writerMutex;
    std::condition_variable m_writerCv;
    bool m_dataReady = false;    ///< guarded by m_writerMutex
    uint64_t m_writeRounds = 0;  ///< guarded by m_writerMutex; completed writer rounds
    std::condition_variable m_roundCv;
    std::atomic<bool> m_writerDone{false};
    std::thread m_flushThread;
    std::thread m_writerThread;

    // writer thread only
    std::unique_ptr<CaptureWriter> m_writer;
    /// The live socket, shared with the writer's sink; null when off or when it could not start.
    /// Outlives the writer (which closes its sink at the end) so that viewers get the last frames;
    /// stopped at shutdown, and its socket file goes with the process.
    std::shared_ptr<trace::live::LiveServer> m_live;
    /// An OOM was recorded: the writer thread writes the ring once it holds it.
    std::atomic<bool> m_oomRingDump{false};
    trace::TraceData m_out;
    trace::FileHeader m_header;
    trace::StringId m_hostResidentName = 0;  ///< interned in m_staging at start
    NcclTaken m_ncclTaken;
    bool m_finalRound = false;
};

}  // namespace vramscope::capture
