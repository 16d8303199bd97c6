#include "agent.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "cupti_session.h"
#include "device_facts.h"
#include "host_memory_sampler.h"
#include "launch_options.h"
#include "trace_output.h"

namespace vramscope::capture {

void printNotice(const std::string& line) {
    const std::string text = "vramscope: " + line + "\n";
    // One write so that lines of several ranks do not interleave.
    const ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
    (void)ignored;
}

namespace {

std::atomic<bool> g_monotonicClock{false};

int64_t monotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int64_t traceNowNs() {
    return g_monotonicClock.load(std::memory_order_relaxed) ? monotonicNs() : cuptiNowNs();
}

namespace {

// --- SIGTERM: the handler only sets a flag and posts a semaphore (both async-signal-safe). ---
struct sigaction g_previousTerm {};
sem_t g_termSemaphore;
volatile sig_atomic_t g_termSeen = 0;
pid_t g_agentPid = 0;

bool previousIsDefault() {
    return (g_previousTerm.sa_flags & SA_SIGINFO) == 0 && g_previousTerm.sa_handler == SIG_DFL;
}

void onSigterm(int sig, siginfo_t* info, void* context) {
    const int savedErrno = errno;
    if (getpid() != g_agentPid) {
        // A forked child without our threads: behave exactly as before the agent came.
        sigaction(SIGTERM, &g_previousTerm, nullptr);
        raise(sig);
        errno = savedErrno;
        return;
    }
    g_termSeen = 1;
    sem_post(&g_termSemaphore);
    if ((g_previousTerm.sa_flags & SA_SIGINFO) != 0) {
        if (g_previousTerm.sa_sigaction != nullptr) {
            g_previousTerm.sa_sigaction(sig, info, context);
        }
    } else if (g_previousTerm.sa_handler != SIG_DFL && g_previousTerm.sa_handler != SIG_IGN) {
        g_previousTerm.sa_handler(sig);
    }
    // SIG_DFL: the watcher thread writes what it has, then restores SIG_DFL and re-sends SIGTERM.
    errno = savedErrno;
}

// --- SIGUSR2: write the live ring to a file (the handler only sets a flag; the writer thread
// writes it after its next round). Installed only where SIGUSR2 had its default action. ---
volatile sig_atomic_t g_ringDumpRequested = 0;

void onSigusr2(int) {
    g_ringDumpRequested = 1;
}

void installRingDumpHandler() {
    struct sigaction current {};
    if (sigaction(SIGUSR2, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) != 0 ||
        current.sa_handler != SIG_DFL) {
        return;  // the application's own SIGUSR2 stays its own
    }
    struct sigaction ours {};
    ours.sa_handler = onSigusr2;
    ours.sa_flags = SA_RESTART;
    sigemptyset(&ours.sa_mask);
    sigaction(SIGUSR2, &ours, nullptr);
    pthread_atfork(nullptr, nullptr, [] { signal(SIGUSR2, SIG_DFL); });
}

void blockAllSignals() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

void termWatcher() {
    blockAllSignals();
    for (;;) {
        while (sem_wait(&g_termSemaphore) != 0 && errno == EINTR) {
        }
        if (g_termSeen == 0) {
            continue;
        }
        g_termSeen = 0;
        Agent::instance().flushNow(2000);
        if (previousIsDefault()) {
            sigaction(SIGTERM, &g_previousTerm, nullptr);
            kill(getpid(), SIGTERM);
            return;
        }
    }
}

void installSigtermHandler() {
    if (sem_init(&g_termSemaphore, 0, 0) != 0) {
        return;
    }
    struct sigaction current {};
    if (sigaction(SIGTERM, nullptr, &current) != 0 ||
        ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN)) {
        return;  // an ignored SIGTERM stays ignored
    }
    struct sigaction ours {};
    ours.sa_sigaction = onSigterm;
    ours.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    if (sigaction(SIGTERM, &ours, &g_previousTerm) != 0) {
        return;
    }
    // A forked child (e.g. a data-loader worker) gets the disposition it would have had.
    pthread_atfork(nullptr, nullptr, [] { sigaction(SIGTERM, &g_previousTerm, nullptr); });
    std::thread(termWatcher).detach();
}

void atExit() {
    try {
        Agent::instance().shutdown();
    } catch (...) {
    }
}

int64_t realtimeNs() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string hostName() {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0) {
        return "host";
    }
    return name;
}

}  // namespace

Agent& Agent::instance() {
    // Never destroyed: CUPTI may call back while the process tears down.
    static Agent* agent = new Agent();
    return *agent;
}

bool Agent::readConfig(std::string& error, int32_t fallbackRank) {
    const GetEnv env = processEnvironment();
    m_config.identity = identityFromEnvironment(env, hostName(), m_pid);
    if (m_config.identity.rank < 0 && fallbackRank >= 0) {
        m_config.identity.rank = fallbackRank;  // the communicator's rank names the file
    }
    if (auto ms = env(kEnvFlushMs)) {
        if (auto parsed = parseNonNegativeInt(*ms)) {
            m_config.flushMs = std::clamp(*parsed, kMinFlushMs, kMaxFlushMs);
        }
    }
    m_config.oomCallbacks = env(kEnvOomCallbacks).value_or("1") != "0";
    const std::string output = env(kEnvOutput).value_or("vramscope-traces");
    if (output.empty()) {
        error = std::string(kEnvOutput) + " is empty";
        return false;
    }
    m_config.output = parseOutputSpec(output);
    if (auto root = env(kEnvRootPid)) {
        m_config.isRootProcess = parseNonNegativeInt(*root).value_or(-1) == m_pid;
    }
    m_config.outputPath =
        traceOutputPath(m_config.output, m_config.identity, m_config.isRootProcess);
    m_config.live = env(kEnvLive).value_or("1") != "0";
    m_config.file = env(kEnvFile).value_or("1") != "0";
    if (auto mib = env(kEnvRingMib)) {
        if (auto parsed = parseNonNegativeInt(*mib)) {
            m_config.ringBytes = uint64_t(std::clamp(*parsed, 1, 4096)) << 20;
        }
    }
    return true;
}

bool Agent::start() {
    std::lock_guard<std::mutex> lock(m_startMutex);
    if (m_running.load()) {
        return true;  // already recording (a second call, or NCCL's plugin came first)
    }
    m_pid = getpid();
    std::string error;
    if (!readConfig(error)) {
        printNotice("capture is off: " + error);
        return false;
    }
    ConverterOptions converterOptions;
    converterOptions.keepLibraryNvtx = processEnvironment()(kEnvNvtxLibraries).value_or("") == "1";
    m_staging.setConverterOptions(converterOptions);
    if (!driverAvailable()) {
        printNotice("capture is off: no CUDA driver (libcuda.so.1 cannot be loaded)");
        return false;
    }
    OpenedOutput output = openOutputs();
    if (!output.sink) {
        printNotice("capture is off: " + output.error);
        return false;
    }
    m_config.outputPath = output.path;
    // The counter's name goes through the staging table, the one the written ids come from, before
    // the first round copies that table.
    m_hostResidentName = m_staging.intern(kHostResidentCounterName);
    const CuptiStart cupti = startCupti(*this, m_config.oomCallbacks);
    if (!cupti.ok) {
        printNotice("capture is off: " + cupti.error);
        output.sink.reset();
        if (m_live) {
            m_live->stop();
            m_live.reset();
        }
        if (m_config.file && m_config.output.kind != OutputKind::UnixSocket) {
            ::unlink(m_config.outputPath.c_str());  // nothing was written to it
        }
        return false;
    }
    if (!cupti.warning.empty()) {
        printNotice(cupti.warning);
    }
    m_header.clockDomain = "cupti-ns";
    m_header.anchorTraceNs = cuptiNowNs();
    m_header.wallClockAnchorNs = realtimeNs();
    m_header.captureSettings = {
        {"flush_ms", std::to_string(m_config.flushMs)},
        {"oom_events", cupti.oomCallbacks ? "on" : "off"},
        {"cupti_api_version", std::to_string(cupti.version)},
        {"cupti_api_version_built", std::to_string(builtCuptiVersion())},
        {"activity_kinds", "MEMORY2,MEMORY_POOL,CONCURRENT_KERNEL,MEMCPY,MEMSET,MARKER"},
        {"nvtx_domains", converterOptions.keepLibraryNvtx ? "all" : "application"},
    };
    launch(std::move(output), true);
    return true;
}

bool Agent::startCollectivesOnlyLocked(int32_t commRank) {
    m_pid = getpid();
    std::string error;
    if (!readConfig(error, commRank)) {
        printNotice("NCCL recording is off: " + error);
        return false;
    }
    OpenedOutput output = openOutputs();
    if (!output.sink) {
        printNotice("NCCL recording is off: " + output.error);
        return false;
    }
    m_config.outputPath = output.path;
    m_hostResidentName = m_staging.intern(kHostResidentCounterName);
    // No CUPTI here (CUDA injection did not start the agent): the trace clock is CLOCK_MONOTONIC,
    // the clock of every host timestamp the plugin takes, anchored to wall time once.
    m_collectivesOnly = true;
    g_monotonicClock.store(true, std::memory_order_relaxed);
    m_header.clockDomain = "CLOCK_MONOTONIC";
    m_header.anchorTraceNs = traceNowNs();
    m_header.wallClockAnchorNs = realtimeNs();
    m_header.captureSettings = {
        {"flush_ms", std::to_string(m_config.flushMs)},
        {"mode", "nccl-only"},
        {"activity_kinds", "none (no CUDA injection: NCCL profiler events only)"},
    };
    launch(std::move(output), false);
    return true;
}

OpenedOutput Agent::openOutputs() {
    OpenedOutput out;
    if (m_config.file) {
        out = openTraceOutput(m_config.output, m_config.outputPath, m_pid);
        if (!out.sink) {
            return out;
        }
    }
    if (!m_config.live) {
        if (!m_config.file) {
            out.error = "VRAMSCOPE_FILE=0 and VRAMSCOPE_LIVE=0 leave nothing to record to";
        }
        return out;
    }
    // One owner-only socket per process (trace/live.h); a viewer never slows the writer.
    trace::live::ServerOptions live;
    live.backlogBytes = m_config.ringBytes;
    live.queueBytesPerViewer = uint64_t{16} << 20;
    live.maxViewers = 8;
    auto server = trace::live::LiveServer::start(live);
    if (!server.ok()) {
        if (!m_config.file) {
            out.sink.reset();
            out.error = "the live socket cannot be served (" + server.error().describe() +
                        ") and VRAMSCOPE_FILE=0 leaves no file";
            return out;
        }
        printNotice("live viewing is off: " + server.error().describe());
        return out;
    }
    m_live = std::move(server.value());
    out.sink = trace::live::makeLiveTee(std::move(out.sink), m_live);
    if (!m_config.file) {
        out.path = m_live->path();
    }
    return out;
}

void Agent::launch(OpenedOutput output, bool withCupti) {
    trace::FileHeader& h = m_header;
    h.formatMajor = trace::kFormatMajor;
    h.formatMinor = trace::kFormatMinor;
    h.producer = std::string("vramscope-capture ") + VRAMSCOPE_VERSION;
    h.host = m_config.identity.host;
    h.pid = m_pid;
    h.rank = trace::RankId{m_config.identity.rank};
    h.localRank = trace::RankId{m_config.identity.localRank};
    h.worldSize = m_config.identity.worldSize;
    h.jobId = m_config.identity.job;
    for (const char* name :
         {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "CUDA_VISIBLE_DEVICES", kEnvNccl}) {
        if (const char* v = std::getenv(name)) {
            h.captureSettings.emplace_back(name, v);
        }
    }

    std::unique_ptr<trace::ByteSink> sink = std::move(output.sink);
    trace::WriterOptions options;
    options.compress = true;
    m_writer = std::make_unique<CaptureWriter>(std::move(sink), m_staging, printNotice, options);
    if (m_live) {
        m_writer->setTablesHook([live = m_live](bool tablesOnly) { live->setSticky(tablesOnly); });
    }
    m_running.store(true, std::memory_order_release);
    g_agentPid = static_cast<pid_t>(m_pid);
    m_writerThread = std::thread([this] { writerLoop(); });
    if (withCupti) {
        m_flushThread = std::thread([this] { flushLoop(); });
    }
    std::atexit(atExit);
    installSigtermHandler();
    if (m_live) {
        installRingDumpHandler();
    }
    if (std::getenv("VRAMSCOPE_VERBOSE") != nullptr) {
        printNotice("recording to " + m_config.outputPath +
                    (m_live != nullptr ? ", live at " + m_live->path() : std::string()));
    }
}

NcclRecorder* Agent::ncclRecorder(NcclEventMask mask, int32_t commRank) {
    if (NcclRecorder* r = m_nccl.load(std::memory_order_acquire)) {
        return r;
    }
    std::lock_guard<std::mutex> lock(m_startMutex);
    if (NcclRecorder* r = m_nccl.load(std::memory_order_acquire)) {
        return r;
    }
    if (!m_running.load()) {
        if (m_ncclStartFailed || !startCollectivesOnlyLocked(commRank)) {
            m_ncclStartFailed = true;
            return nullptr;
        }
    }
    NcclRecorderOptions options;
    options.mask = mask;
    if (const char* slots = std::getenv(kEnvNcclEvents)) {
        if (auto n = parseNonNegativeInt(slots)) {
            options.poolSlots = static_cast<size_t>(std::clamp(*n, 64, 1 << 20));
        }
    }
    // Never destroyed: NCCL may call the plugin until the process ends.
    auto* recorder = new NcclRecorder(options, &traceNowNs);
    m_nccl.store(recorder, std::memory_order_release);
    return recorder;
}

void Agent::requestBuffer(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    *maxNumRecords = 0;
    {
        std::lock_guard<std::mutex> lock(m_poolMutex);
        if (!m_pool.empty()) {
            *buffer = m_pool.back();
            m_pool.pop_back();
            *size = kBufferBytes;
            return;
        }
    }
    // NOTE(cupti): activity buffers must be 8-byte aligned.
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer != nullptr ? kBufferBytes : 0;
}

void Agent::completeBuffer(uint8_t* buffer, size_t size, size_t validSize,
                           uint32_t droppedRecords) {
    if (buffer == nullptr) {
        return;
    }
    CUpti_Activity* record = nullptr;
    m_staging.addRecords(droppedRecords, [&]() -> const CUpti_Activity* {
        if (validSize > 0 &&
            cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
            return record;
        }
        return nullptr;
    });
    if (size == kBufferBytes) {
        std::lock_guard<std::mutex> lock(m_poolMutex);
        if (m_pool.size() < kMaxPooledBuffers) {
            m_pool.push_back(buffer);
            buffer = nullptr;
        }
    }
    std::free(buffer);
    if (validSize > 0) {
        std::lock_guard<std::mutex> lock(m_writerMutex);
        m_dataReady = true;
        m_writerCv.notify_one();
    }
}

void Agent::recordOom(const trace::OomEvent& oom) {
    uint64_t w = m_oomWrite.load(std::memory_order_relaxed);
    do {
        if (w - m_oomRead.load(std::memory_order_acquire) >= kOomRing) {
            m_oomDropped.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    } while (!m_oomWrite.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel));
    OomSlot& slot = m_oomSlots[w % kOomRing];
    slot.event = oom;
    slot.ready.store(true, std::memory_order_release);
    m_forceFlush.store(true, std::memory_order_release);
    m_oomRingDump.store(true, std::memory_order_release);  // the ring once the OOM is in it
    m_flushCv.notify_one();  // no lock taken: at worst the flush happens one period later
}

void Agent::flushLoop() {
    blockAllSignals();
    const auto period = std::chrono::milliseconds(m_config.flushMs);
    while (!m_stopping.load()) {
        {
            std::unique_lock<std::mutex> lock(m_flushMutex);
            m_flushCv.wait_for(lock, period,
                               [this] { return m_forceFlush.load() || m_stopping.load(); });
        }
        if (m_stopping.load()) {
            break;
        }
        const bool forced = m_forceFlush.exchange(false);
        flushCupti(forced);
        std::lock_guard<std::mutex> lock(m_writerMutex);
        m_dataReady = true;
        m_writerCv.notify_one();
    }
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
    if (q.notReady && attempt < 25 && !m_stopping.load()) {
        return false;
    }
    m_header.devices = q.devices;
    if (!q.error.empty()) {
        m_header.captureSettings.emplace_back("device_query_error", q.error);
    }
    return m_writer->writeHeader(m_header);
}

void Agent::takeOwnEvents() {
    // The host's resident memory, once per writer round (one flush period): here on the writer
    // thread, never in a CUDA callback, since reading /proc is I/O.
    if (const int64_t now = traceNowNs(); now > 0) {
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
        m_out.ooms.push_back(slot.event);
        slot.ready.store(false, std::memory_order_relaxed);
        m_oomRead.store(++r, std::memory_order_release);
    }
    if (const uint64_t lost = m_oomDropped.exchange(0); lost > 0) {
        m_out.dataLoss.push_back({trace::LossCounter::OomEventsDropped, lost, {}, 0, 0});
    }
}

void Agent::writerLoop() {
    blockAllSignals();
    int attempts = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_writerMutex);
            m_writerCv.wait_for(lock, std::chrono::milliseconds(m_config.flushMs),
                                [this] { return m_dataReady || m_stopping.load(); });
            m_dataReady = false;
        }
        const bool stopping = m_stopping.load();
        if (!m_writer->headerWritten() && !m_writer->failed()) {
            writeHeaderIfReady(++attempts);
        }
        if (m_writer->headerWritten() || m_writer->failed()) {
            m_finalRound = stopping;
            m_writer->writeRound(m_out, stopping, [this](trace::TraceData&) { takeOwnEvents(); });
        }
        {
            std::lock_guard<std::mutex> lock(m_writerMutex);
            ++m_writeRounds;
        }
        m_roundCv.notify_all();
        if (g_ringDumpRequested != 0) {
            g_ringDumpRequested = 0;
            writeRingDump("on SIGUSR2");
        }
        if (m_oomRingDump.exchange(false, std::memory_order_acq_rel)) {
            writeRingDump("after an out-of-memory failure");
        }
        if (stopping) {
            break;
        }
    }
    m_writer->close();  // closes the file or socket
    {
        std::lock_guard<std::mutex> lock(m_writerMutex);
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
    } else if (stem.size() > 7 && stem.compare(stem.size() - 7, 7, ".vscope") == 0) {
        stem.resize(stem.size() - 7);
    }
    const std::string path =
        stem + "-ring-" + std::to_string(realtimeNs() / 1'000'000'000) + ".vscope";
    auto written = m_live->writeRing(path);
    printNotice(written.ok()
                    ? "wrote the live ring (the most recent " + std::to_string(written.value()) +
                          " bytes of the trace) " + why + " to " + path
                    : "could not write the live ring " + std::string(why) + ": " +
                          written.error().describe());
}

void Agent::flushNow(int timeoutMs) {
    if (!m_running.load() || m_stopping.load()) {
        return;
    }
    if (!m_collectivesOnly) {
        flushCupti(true);
    }
    std::unique_lock<std::mutex> lock(m_writerMutex);
    const uint64_t target = m_writeRounds + 2;  // one full round starting after this request
    m_dataReady = true;
    m_writerCv.notify_one();
    m_roundCv.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                       [&] { return m_writeRounds >= target || m_writerDone.load(); });
}

void Agent::shutdown() {
    if (!m_running.load() || getpid() != m_pid || m_stopping.load()) {
        return;
    }
    // NOTE(cupti): a forced flush at exit, and never cuptiFinalize (DESIGN.md capture facts).
    if (!m_collectivesOnly) {
        flushCupti(true);
    }
    m_stopping.store(true);
    m_flushCv.notify_all();
    if (m_flushThread.joinable()) {
        m_flushThread.join();
    }
    {
        std::unique_lock<std::mutex> lock(m_writerMutex);
        m_writerCv.notify_one();
        m_roundCv.wait_for(lock, std::chrono::seconds(10), [this] { return m_writerDone.load(); });
    }
    if (m_writerDone.load() && m_writerThread.joinable()) {
        m_writerThread.join();
        if (m_live != nullptr) {
            m_live->drain(500);  // viewers take the last frames, briefly
        }
    } else if (m_writerThread.joinable()) {
        m_writerThread.detach();  // a stuck socket must not hold the job's exit
    }
    if (m_live != nullptr) {
        m_live->stop();  // the socket file goes with the process
    }
    m_running.store(false);
}

}  // namespace vramscope::capture
