// The agent's own threads (agent.h): the flush thread (every cuptiActivityFlushAll, buffer
// zeroing, failed allocations, NVML, the buffer-flow watch) and the writer thread (all I/O), and
// the exit, SIGTERM and unload paths that steer them.

#include <time.h>
#include <unistd.h>

#include <chrono>

#include "agent.h"
#include "agent_signals.h"
#include "cupti_session.h"
#include "device_facts.h"
#include "host_memory_sampler.h"

namespace vramscope::capture {

namespace {

int64_t realtimeSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec);
}

/// A job that keeps allocating while no buffer moves for this long has lost its buffers to
/// another CUPTI user (with 256 KiB buffers and flushes every period, a second is many rounds).
constexpr int64_t kBufferSilenceNs = 1'000'000'000;
constexpr uint64_t kAllocationsWhileSilent = 8;

}  // namespace

// ------------------------------------------------------------------ flush thread

void Agent::flushLoop() {
    blockAllSignals();
    const auto period = std::chrono::milliseconds(m_config.flushMs);
    m_watchSinceNs = steadyNowNs();
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_flushMutex);
            m_flushCv.wait_for(lock, period, [this] { return m_flushRequested || m_flushStop; });
            if (m_flushStop) {
                break;
            }
            m_flushRequested = false;
            ++m_flushStarted;
        }
        flushRound();
        {
            std::lock_guard<std::mutex> lock(m_flushMutex);
            ++m_flushDone;
        }
        m_flushDoneCv.notify_all();
        notifyWriter();
    }
    // NOTE(cupti): at exit a normal flush first (every complete buffer), then one forced flush
    // for what is still in flight, never cuptiFinalize (docs/DESIGN.md "Capture: CUDA injection and
    // CUPTI"). Forcing mid-run would hand back records still on the GPU as incomplete.
    flushCupti(false);
    flushCupti(true);
    m_failures.takeAll();
    {
        std::lock_guard<std::mutex> lock(m_flushMutex);
        m_flushFinished = true;
    }
    m_flushDoneCv.notify_all();
    notifyWriter();
}

void Agent::flushRound() {
    flushCupti(false);
    m_buffers.refill();
    sampleNvml();
    m_failures.takeExpired(steadyNowNs(), int64_t{m_config.flushMs} * 1'000'000);
    watchBufferFlow();
}

void Agent::sampleNvml() {
    if (!m_nvmlTried) {
        m_nvmlTried = true;
        std::string why;
        if (!m_nvml.start(why)) {
            printNotice(why + "; GPU memory outside the allocator is not sampled");
        }
    }
    if (!m_nvml.running()) {
        return;
    }
    if (!m_nvml.mapped()) {
        if (!m_devicesKnown.load(std::memory_order_acquire)) {
            return;  // the header's device query has not answered yet
        }
        std::lock_guard<std::mutex> lock(m_devicesMutex);
        m_nvml.setCudaDevices(m_devices);
    }
    const int64_t now = traceNowNs();
    std::vector<trace::CounterSample> samples;
    for (const NvmlDeviceSample& s : m_nvml.sample(static_cast<uint32_t>(m_pid))) {
        if (s.processBytes) {
            samples.push_back({now, m_nvmlProcessName, s.device,
                               trace::CounterKind::ProcessGpuUsedBytes,
                               static_cast<double>(*s.processBytes)});
        }
        samples.push_back({now, m_nvmlDeviceName, s.device, trace::CounterKind::DeviceGpuUsedBytes,
                           static_cast<double>(s.usedBytes)});
        const auto index = static_cast<size_t>(s.device);
        if (index < kMaxDevices) {
            m_freeBytes[index].store(s.freeBytes, std::memory_order_relaxed);
        }
    }
    m_staging.addCounters(samples);
}

void Agent::watchBufferFlow() {
    const uint64_t buffers = m_bufferEvents.load(std::memory_order_relaxed);
    const uint64_t allocations = m_allocationCalls.load(std::memory_order_relaxed);
    const int64_t now = steadyNowNs();
    if (buffers != m_watchBuffers) {
        m_watchBuffers = buffers;
        m_watchAllocations = allocations;
        m_watchSinceNs = now;
        return;
    }
    // Only once buffers have come at all: a job that allocates before its first record (or
    // whose allocations make none) has lost nothing.
    if (!m_watchSaid && buffers > 0 &&
        allocations - m_watchAllocations >= kAllocationsWhileSilent &&
        now - m_watchSinceNs >= kBufferSilenceNs) {
        m_watchSaid = true;
        printNotice(
            "CUPTI activity records stopped arriving while the job keeps allocating: another "
            "CUPTI user (torch.profiler, Nsight) probably took the activity buffers; the trace "
            "misses kernels and memory records from " +
            std::to_string((now - m_watchSinceNs) / 1'000'000) + " ms ago on");
    }
}

// ------------------------------------------------------------------ writer thread

void Agent::notifyWriter() {
    {
        std::lock_guard<std::mutex> lock(m_writerMutex);
        m_dataReady = true;
    }
    m_writerCv.notify_all();
}

bool Agent::writeHeaderIfReady(int attempt) {
    if (m_header.rank == trace::kUnknownRank) {
        if (NcclRecorder* r = m_nccl.load(std::memory_order_acquire)) {
            m_header.rank = trace::RankId{r->firstCommunicatorRank()};  // env gave none
        }
    }
    if (m_collectivesOnly) {
        return m_writer->writeHeader(m_header);  // no driver is asked anything
    }
    const DeviceQuery q = queryDevices();
    // The driver may still be inside cuInit for a few rounds; after ~5 s write what is known.
    if (q.notReady && attempt < 25 && !m_shuttingDown.load()) {
        return false;
    }
    m_header.devices = q.devices;
    if (!q.error.empty()) {
        m_header.captureSettings.emplace_back("device_query_error", q.error);
    }
    {
        std::lock_guard<std::mutex> lock(m_devicesMutex);
        m_devices = q.devices;
    }
    m_devicesKnown.store(true, std::memory_order_release);
    return m_writer->writeHeader(m_header);
}

void Agent::takeOwnEvents() {
    // The host's resident memory, once per writer round (one flush period): here on the writer
    // thread, never in a CUDA callback, since reading /proc is I/O.
    const int64_t now = traceNowNs();
    if (now > 0) {
        if (const auto resident = readResidentBytes()) {
            m_out.counters.append(hostResidentSample(m_hostResidentName, now, *resident));
        }
    }
    // NCCL operations finished since the last round; their strings are interned into the staging
    // table (the one the written ids come from) and copied into this round's table at once.
    if (NcclRecorder* r = m_nccl.load(std::memory_order_acquire)) {
        r->takeInto(m_ncclTaken, m_finalRound);
        appendNcclTaken(m_ncclTaken, m_out,
                        [this](std::string_view s) { return m_staging.internInto(s, m_out); });
    }
    uint64_t r = m_oomRead.load(std::memory_order_relaxed);
    while (m_oomSlots[r % kOomRing].ready.load(std::memory_order_acquire)) {
        OomSlot& slot = m_oomSlots[r % kOomRing];
        trace::OomEvent e = slot.event;
        // Free memory as NVML measured it last, on the flush thread (never in the callback).
        const auto index = static_cast<size_t>(e.device);
        if (e.freeBytes == 0 && index < kMaxDevices) {
            e.freeBytes = m_freeBytes[index].load(std::memory_order_relaxed);
        }
        m_out.ooms.push_back(e);
        slot.ready.store(false, std::memory_order_relaxed);
        m_oomRead.store(++r, std::memory_order_release);
    }
    if (const uint64_t lost = m_oomDropped.exchange(0); lost > 0) {
        m_out.dataLoss.push_back({trace::LossCounter::OomEventsDropped, lost, {}, 0, 0});
    }
    if (const uint64_t retried = m_failures.retried(); retried != m_retriedWritten && now > 0) {
        m_retriedWritten = retried;
        m_out.counters.append({now, m_retriedName, trace::kHostDevice, trace::CounterKind::Generic,
                               static_cast<double>(retried)});
    }
}

void Agent::writerLoop() {
    blockAllSignals();
    int attempts = 0;
    auto round = [&](bool final) {
        if (!m_writer->headerWritten() && !m_writer->failed()) {
            writeHeaderIfReady(++attempts);
        }
        if (m_writer->headerWritten() || m_writer->failed()) {
            m_finalRound = final;
            m_writer->writeRound(m_out, final, [this](trace::TraceData&) { takeOwnEvents(); });
        }
        {
            std::lock_guard<std::mutex> lock(m_writerMutex);
            ++m_writeRounds;
        }
        m_roundCv.notify_all();
    };
    for (;;) {
        bool stopping = false;
        {
            std::unique_lock<std::mutex> lock(m_writerMutex);
            m_writerCv.wait_for(lock, std::chrono::milliseconds(m_config.flushMs),
                                [this] { return m_dataReady || m_writerStop; });
            m_dataReady = false;
            stopping = m_writerStop;
        }
        round(stopping);
        if (takeRingDumpRequest()) {
            writeRingDump("on SIGUSR2");
        }
        if (m_oomRingDump.exchange(false, std::memory_order_acq_rel)) {
            writeRingDump("after an out-of-memory failure");
        }
        if (stopping) {
            break;
        }
    }
    if (!m_collectivesOnly) {
        // Records CUPTI hands over after the final round (a context destroyed by cudart's exit
        // handler) wait for the library's destructor, which runs after every exit handler.
        std::unique_lock<std::mutex> lock(m_writerMutex);
        m_finalRoundDone = true;
        m_roundCv.notify_all();
        m_writerCv.wait_for(lock, std::chrono::seconds(5), [this] { return m_lateRequested; });
        lock.unlock();
        round(false);
    }
    m_writer->close();  // closes the file or socket
    if (m_live != nullptr) {
        m_live->drain(500);  // viewers take the last frames, briefly
        m_live->stop();      // the socket file goes with the process
    }
    {
        std::lock_guard<std::mutex> lock(m_writerMutex);
        m_finalRoundDone = true;
        m_writerDone.store(true);
    }
    m_roundCv.notify_all();
}

void Agent::writeRingDump(const char* why) {
    if (!m_live) {
        return;
    }
    std::string stem = m_config.outputPath;
    if (m_config.output.kind == OutputKind::UnixSocket || !m_config.file) {
        stem = "vramscope-" + m_header.host + "-" + std::to_string(m_pid);
    } else if (stem.size() > 7 && stem.ends_with(".vscope")) {
        stem.resize(stem.size() - 7);
    }
    const std::string path = stem + "-ring-" + std::to_string(realtimeSeconds()) + ".vscope";
    auto written = m_live->writeRing(path);
    printNotice(written.ok()
                    ? "wrote the live ring (the most recent " + std::to_string(written.value()) +
                          " bytes of the trace) " + why + " to " + path
                    : "could not write the live ring " + std::string(why) + ": " +
                          written.error().describe());
}

// ------------------------------------------------------------------ exit, SIGTERM, unload

void Agent::flushNow(int timeoutMs) {
    if (!m_running.load() || m_shuttingDown.load()) {
        return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    if (!m_collectivesOnly) {
        // A normal flush on the flush thread: one round that starts after this request.
        std::unique_lock<std::mutex> lock(m_flushMutex);
        const uint64_t target = m_flushStarted + 1;
        m_flushRequested = true;
        m_flushCv.notify_all();
        m_flushDoneCv.wait_until(lock, deadline,
                                 [&] { return m_flushDone >= target || m_flushFinished; });
    }
    std::unique_lock<std::mutex> lock(m_writerMutex);
    const uint64_t target = m_writeRounds + 2;  // one full round starting after this request
    m_dataReady = true;
    m_writerCv.notify_all();
    m_roundCv.wait_until(lock, deadline,
                         [&] { return m_writeRounds >= target || m_writerDone.load(); });
}

void Agent::shutdown() {
    if (!m_running.load() || getpid() != m_pid || m_shuttingDown.exchange(true)) {
        return;
    }
    if (m_flushThread.joinable()) {
        std::unique_lock<std::mutex> lock(m_flushMutex);
        m_flushStop = true;
        m_flushCv.notify_all();
        const bool done = m_flushDoneCv.wait_for(lock, std::chrono::seconds(10),
                                                 [this] { return m_flushFinished; });
        lock.unlock();
        if (done) {
            m_flushThread.join();
        } else {
            m_flushThread.detach();  // a CUPTI flush that never returns must not hold the exit
        }
    }
    std::unique_lock<std::mutex> lock(m_writerMutex);
    m_writerStop = true;
    m_writerCv.notify_all();
    m_roundCv.wait_for(lock, std::chrono::seconds(10),
                       [this] { return m_finalRoundDone || m_writerDone.load(); });
    if (m_collectivesOnly) {
        m_roundCv.wait_for(lock, std::chrono::seconds(2), [this] { return m_writerDone.load(); });
        lock.unlock();
        if (m_writerDone.load() && m_writerThread.joinable()) {
            m_writerThread.join();
        } else if (m_writerThread.joinable()) {
            m_writerThread.detach();  // a stuck socket must not hold the job's exit
        }
    }
}

void Agent::unloading() {
    if (!m_running.load() || getpid() != m_pid || !m_shuttingDown.load()) {
        return;
    }
    std::unique_lock<std::mutex> lock(m_writerMutex);
    m_lateRequested = true;
    m_writerCv.notify_all();
    m_roundCv.wait_for(lock, std::chrono::seconds(3), [this] { return m_writerDone.load(); });
    lock.unlock();
    if (m_writerDone.load() && m_writerThread.joinable()) {
        m_writerThread.join();
    } else if (m_writerThread.joinable()) {
        m_writerThread.detach();
    }
    m_running.store(false);
}

}  // namespace vramscope::capture
