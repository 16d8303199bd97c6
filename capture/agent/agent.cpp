#include "agent.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "agent_signals.h"
#include "cupti_api.h"
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

int64_t steadyNowNs() {
    return monotonicNs();
}

namespace {

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

namespace {

std::atomic<Agent*> g_agent{nullptr};

// Runs in _dl_fini, after every exit handler (cudart's teardown among them): the last frame.
__attribute__((destructor)) void agentLibraryUnloading() {
    try {
        if (Agent* agent = Agent::existing()) {
            agent->unloading();
        }
    } catch (...) {
    }
}

}  // namespace

Agent::Agent()
    : m_failures([this](const FailedAllocation& failure, uint32_t) { recordOom(failure); }) {}

Agent& Agent::instance() {
    // Never destroyed: CUPTI may call back while the process tears down.
    static Agent* agent = [] {
        auto* a = new Agent();
        g_agent.store(a, std::memory_order_release);
        return a;
    }();
    return *agent;
}

Agent* Agent::existing() {
    return g_agent.load(std::memory_order_acquire);
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
    // The job's own CUPTI, before any file exists: without one the job is left alone.
    const CuptiBinding& binding = cuptiBinding();
    if (!binding.ok) {
        printNotice("capture is off: " + binding.error);
        return false;
    }
    if (!binding.release.note.empty()) {
        printNotice(binding.release.verdict == CuptiVerdict::Unverified
                        ? "recording anyway (" + std::string(kEnvCuptiUnverified) +
                              "=1): " + binding.release.note
                        : binding.release.note);
    }
    OpenedOutput output = openOutputs();
    if (!output.sink) {
        printNotice("capture is off: " + output.error);
        return false;
    }
    m_config.outputPath = output.path;
    // Counter names go through the staging table, the one the written ids come from, before the
    // first round copies that table.
    m_hostResidentName = m_staging.intern(kHostResidentCounterName);
    m_retriedName = m_staging.intern("cuda allocation failures (retried)");
    m_nvmlProcessName = m_staging.intern("GPU memory used by this process (NVML)");
    m_nvmlDeviceName = m_staging.intern("GPU memory used on the device (NVML)");
    m_buffers.refill();  // zeroed buffers ready before CUPTI asks for the first
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
    for (const std::string& notice : cupti.notices) {
        printNotice(notice);
    }
    m_header.clockDomain = "cupti-ns";
    m_header.anchorTraceNs = cuptiNowNs();
    m_header.wallClockAnchorNs = realtimeNs();
    m_header.captureSettings = {
        {"flush_ms", std::to_string(m_config.flushMs)},
        {"oom_events", cupti.oomCallbacks ? "on" : "off"},
        {"cupti_library", binding.path},
        {"cupti_library_found", toString(binding.source)},
        {"cupti_api_version", std::to_string(binding.version)},
        {"cupti_release", binding.release.name},
        {"cupti_api_version_built", std::to_string(CUPTI_API_VERSION)},
        {"job_cuda_major", binding.jobMajor ? std::to_string(*binding.jobMajor) : "unknown"},
        {"activity_buffer_bytes", std::to_string(ActivityBufferPool::kBufferBytes)},
        {"activity_kinds", cupti.enabledKinds},
        {"nvtx_domains", converterOptions.keepLibraryNvtx ? "all" : "application"},
    };
    for (const auto& setting : cupti.settings) {
        m_header.captureSettings.push_back(setting);
    }
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
    m_writerThread = std::thread([this] { writerLoop(); });
    if (withCupti) {
        m_flushThread = std::thread([this] { flushLoop(); });
    }
    std::atexit(atExit);
    installSigtermHandler(static_cast<pid_t>(m_pid));
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

void Agent::recordOom(const FailedAllocation& failure) {
    uint64_t w = m_oomWrite.load(std::memory_order_relaxed);
    do {
        if (w - m_oomRead.load(std::memory_order_acquire) >= kOomRing) {
            m_oomDropped.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    } while (!m_oomWrite.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel));
    OomSlot& slot = m_oomSlots[w % kOomRing];
    slot.event = trace::OomEvent{};
    slot.event.timestampNs = failure.timestampNs;
    slot.event.device = trace::DeviceIndex{failure.device};
    slot.event.stream = failure.stream;
    slot.event.requestedBytes = failure.requestedBytes;
    slot.ready.store(true, std::memory_order_release);
    m_oomRingDump.store(true, std::memory_order_release);  // the ring once the OOM is in it
}

}  // namespace vramscope::capture
