// The built agent as NCCL's profiler plugin, without a GPU: nccl_plugin_harness loads it the way
// NCCL does (dlopen + dlsym of ncclProfiler_v6 / _v5 / _v4) in one process per simulated rank and
// plays nccl_harness_plan.h; this test reads the traces with the .vscope reader and checks them
// against values it derives from the plan itself (bytes = count x type size by the table below,
// durations from the plan's GPU timer values, busBw from the nccl-tests formula).

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agent_environment.h"
#include "loss_counts.h"
#include "nccl_harness_plan.h"
#include "vramscope/analysis/collectives/collective_bandwidth.h"
#include "vramscope/analysis/collectives/collectives.h"
#include "vramscope/trace/live.h"
#include "vramscope/trace/trace_file.h"

namespace {

using namespace vramscope;
using namespace vramscope::test;

bool agentBuilt() {
    struct stat st {};
    return std::string(VRAMSCOPE_AGENT_PATH).size() > 0 && stat(VRAMSCOPE_AGENT_PATH, &st) == 0;
}

std::string makeTempDir() {
    std::string pattern = ::testing::TempDir() + "vramscope-nccl-XXXXXX";
    char* dir = mkdtemp(pattern.data());
    return dir != nullptr ? std::string(dir) : std::string();
}

/// Starts the harness with a clean launcher environment plus `env`; returns its pid.
pid_t startHarness(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env) {
    const pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    for (const char* name : test::kAgentEnvironment) {
        unsetenv(name);
    }
    setenv("VRAMSCOPE_LIVE", "0", 1);  // no socket unless the test asks for one
    for (const auto& [k, v] : env) {
        setenv(k.c_str(), v.c_str(), 1);
    }
    std::vector<char*> argv;
    std::string harness = VRAMSCOPE_NCCL_HARNESS_PATH;
    argv.push_back(harness.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    execv(harness.c_str(), argv.data());
    _exit(127);
}

int waitExit(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Bytes per element, by hand from NCCL's ncclTypeSize (src/include/collectives.h).
uint64_t typeSize(const std::string& t) {
    static const std::map<std::string, uint64_t> sizes = {{"ncclInt8", 1},     {"ncclFloat16", 2},
                                                          {"ncclBfloat16", 2}, {"ncclFloat32", 4},
                                                          {"ncclInt64", 8},    {"ncclFloat64", 8}};
    return sizes.at(t);
}

/// First channel start to last channel stop of plan entry k on `rank`, ns.
int64_t planDurationNs(int k, int rank, int channels) {
    uint64_t first = UINT64_MAX;
    uint64_t last = 0;
    for (int c = 0; c < channels; ++c) {
        first = std::min(first, planStartNs(k, rank, c));
        last = std::max(last, planStopNs(k, rank, c, channels));
    }
    return static_cast<int64_t>(last - first);
}

/// busBw in GB/s from the nccl-tests formula (doc/PERFORMANCE.md), with NCCL's inspector's
/// traffic for AllGather / ReduceScatter (message x n), written out here independently.
double expectedBusBwGBps(const std::string& f, uint64_t bytes, int n, int64_t durationNs) {
    double traffic = static_cast<double>(bytes);
    double factor = 1.0;
    if (f == "AllReduce") {
        factor = 2.0 * (n - 1) / n;
    } else if (f == "AllGather" || f == "ReduceScatter") {
        traffic *= n;
        factor = static_cast<double>(n - 1) / n;
    }
    return traffic / static_cast<double>(durationNs) * factor;  // bytes/ns = GB/s
}

/// Whether the file says it carries format 1.2's collective columns (channels, enqueue lead,
/// peer, timing) and communicators; the writer of format 1.1 drops them.
bool carriesFormat12(const trace::TraceData& d) {
    const bool carries = d.header.formatMajor > 1 || d.header.formatMinor >= 2;
    static bool said = false;
    if (!carries && !said) {
        said = true;
        std::printf(
            "note: format %u.%u file: channels, peer, timing and communicators are not "
            "written, not checked\n",
            d.header.formatMajor, d.header.formatMinor);
    }
    return carries;
}

/// Row i, reading the format 1.2 columns (channels, enqueue lead, peer, timing) only where the
/// file carried them (files of format 1.1 leave them empty).
trace::CollectiveEvent opAt(const trace::CollectiveEvents& c, size_t i) {
    trace::CollectiveEvent e;
    e.startNs = c.startNs[i];
    e.endNs = c.endNs[i];
    e.device = c.device[i];
    e.communicatorHash = c.communicatorHash[i];
    e.rank = c.rank[i];
    e.nranks = c.nranks[i];
    e.function = c.function[i];
    e.seqNumber = c.seqNumber[i];
    e.bytes = c.bytes[i];
    e.datatype = c.datatype[i];
    e.algorithm = c.algorithm[i];
    e.protocol = c.protocol[i];
    e.channels = i < c.channels.size() ? c.channels[i] : 0;
    e.enqueueLeadNs = i < c.enqueueLeadNs.size() ? c.enqueueLeadNs[i] : -1;
    e.peer = i < c.peer.size() ? c.peer[i] : -1;
    e.timing = i < c.timing.size() ? c.timing[i] : trace::CollectiveTiming::Unknown;
    return e;
}

const trace::CollectiveEvent* findOp(const trace::TraceData& d, const std::string& function,
                                     int64_t seq, std::vector<trace::CollectiveEvent>& keep) {
    for (size_t i = 0; i < d.collectives.size(); ++i) {
        const trace::CollectiveEvent e = opAt(d.collectives, i);
        if (d.string(e.function) == function && e.seqNumber == seq) {
            keep.push_back(e);
            return &keep.back();
        }
    }
    return nullptr;
}

using testdata::lossCount;

}  // namespace

TEST(NcclPlugin, FourRanksAreRecordedMatchedAndMeasuredAsPlayed) {
    if (!agentBuilt()) {
        GTEST_SKIP() << "the capture agent was not built (no CUDA toolkit with CUPTI)";
    }
    const std::string dir = makeTempDir();
    std::vector<pid_t> pids;
    for (int r = 0; r < kPlanRanks; ++r) {
        pids.push_back(startHarness({VRAMSCOPE_AGENT_PATH, "v6", "play", std::to_string(r)},
                                    {{"RANK", std::to_string(r)},
                                     {"WORLD_SIZE", std::to_string(kPlanRanks)},
                                     {"VRAMSCOPE_OUTPUT", dir},
                                     {"VRAMSCOPE_JOB", "nccl"}}));
    }
    for (pid_t pid : pids) {
        ASSERT_EQ(waitExit(pid), 0) << "harness failed (see its stderr)";
    }
    std::vector<trace::TraceData> traces;
    for (int r = 0; r < kPlanRanks; ++r) {
        const std::string path = dir + "/nccl-rank" + std::to_string(r) + ".vscope";
        auto loaded = trace::readTraceFile(path);
        ASSERT_TRUE(loaded.ok()) << path << ": " << loaded.error().describe();
        EXPECT_TRUE(loaded->report.complete) << path;
        traces.push_back(std::move(loaded->data));
    }
    for (int r = 0; r < kPlanRanks; ++r) {
        const trace::TraceData& d = traces[static_cast<size_t>(r)];
        SCOPED_TRACE("rank " + std::to_string(r));
        EXPECT_EQ(d.header.rank, trace::RankId{r});
        // Loaded for NCCL alone: no CUPTI, no driver (the collectives-only mode's clock).
        EXPECT_EQ(d.header.clockDomain, "CLOCK_MONOTONIC");
        EXPECT_NE(std::find(d.header.captureSettings.begin(), d.header.captureSettings.end(),
                            std::pair<std::string, std::string>("mode", "nccl-only")),
                  d.header.captureSettings.end());
        EXPECT_NE(d.header.wallClockAnchorNs, 0);
        ASSERT_EQ(d.collectives.size(), static_cast<size_t>(kPlanSize + 2));
        std::map<std::string, int64_t> seq;
        std::vector<trace::CollectiveEvent> keep;
        keep.reserve(64);
        for (int k = 0; k < kPlanSize; ++k) {
            const PlannedCollective& p = kPlan[k];
            const int64_t s = seq[p.function]++;
            const trace::CollectiveEvent* e = findOp(d, p.function, s, keep);
            ASSERT_NE(e, nullptr) << p.function << " #" << s;
            const uint64_t bytes = p.count * typeSize(p.datatype);
            const int64_t duration = planDurationNs(k, r, p.channels);
            EXPECT_EQ(e->bytes, bytes) << p.function;
            EXPECT_EQ(e->endNs - e->startNs, duration) << p.function;
            EXPECT_EQ(e->communicatorHash, kPlanCommHash);
            EXPECT_EQ(e->rank, trace::RankId{r});
            EXPECT_EQ(e->nranks, kPlanRanks);
            EXPECT_EQ(d.string(e->datatype), p.datatype);
            EXPECT_EQ(d.string(e->algorithm), p.algorithm);
            EXPECT_EQ(d.string(e->protocol), p.protocol);
            if (carriesFormat12(d)) {
                EXPECT_EQ(e->timing, trace::CollectiveTiming::KernelChannels);
                EXPECT_EQ(e->channels, p.channels);
                EXPECT_EQ(e->peer, std::string(p.function) == "Broadcast" ? p.root : -1);
                EXPECT_GE(e->enqueueLeadNs, 0);
            }
            // busBw through the analysis library's factor and traffic, against the formula.
            const auto factor = analysis::busBandwidthFactor(d.string(e->function), e->nranks);
            const auto traffic =
                analysis::algorithmTrafficBytes(d.string(e->function), e->bytes, e->nranks);
            ASSERT_TRUE(factor && traffic);
            const double busBw = *traffic / static_cast<double>(e->endNs - e->startNs) * *factor;
            EXPECT_NEAR(busBw, expectedBusBwGBps(p.function, bytes, kPlanRanks, duration),
                        1e-9 * busBw);
        }
        // P2P: kept apart (no sequence number from NCCL), with their peers.
        std::vector<trace::CollectiveEvent> keepP2p;
        keepP2p.reserve(4);
        const trace::CollectiveEvent* send = findOp(d, "Send", -1, keepP2p);
        const trace::CollectiveEvent* recv = findOp(d, "Recv", -1, keepP2p);
        ASSERT_TRUE(send != nullptr && recv != nullptr);
        if (carriesFormat12(d)) {
            EXPECT_EQ(send->peer, (r + 1) % kPlanRanks);
            EXPECT_EQ(recv->peer, (r + kPlanRanks - 1) % kPlanRanks);
            ASSERT_EQ(d.communicators.size(), 1u);
            EXPECT_EQ(d.communicators[0].hash, kPlanCommHash);
            EXPECT_EQ(d.communicators[0].rank, trace::RankId{r});
            EXPECT_EQ(d.communicators[0].nranks, kPlanRanks);
            EXPECT_EQ(d.communicators[0].name, kPlanCommName);
        }
        EXPECT_EQ(send->bytes, kPlanP2pCount * 4);
        EXPECT_EQ(send->endNs - send->startNs, planDurationNs(kPlanSize, r, 1));
        EXPECT_EQ(recv->endNs - recv->startNs, planDurationNs(kPlanSize + 1, r, 1));
        EXPECT_TRUE(analysis::isPointToPoint(d.string(send->function)));
    }
    std::vector<analysis::RankInput> inputs;
    for (int r = 0; r < kPlanRanks; ++r) {
        inputs.push_back({&traces[static_cast<size_t>(r)], trace::RankId{r}, 0});
    }
    const analysis::CollectiveMatch match = analysis::matchCollectives(inputs);
    EXPECT_EQ(match.method, "communicator+sequence");
    EXPECT_EQ(match.source, "collective events");
    ASSERT_EQ(match.collectives.size(), static_cast<size_t>(kPlanSize));
    for (const analysis::MatchedCollective& m : match.collectives) {
        EXPECT_EQ(m.participants.size(), static_cast<size_t>(kPlanRanks)) << m.function;
        EXPECT_EQ(m.communicatorHash, kPlanCommHash);
    }
    EXPECT_EQ(match.unmatched, 0u);
    EXPECT_EQ(match.pointToPoint, static_cast<size_t>(2 * kPlanRanks));
}

TEST(NcclPlugin, V4AndV5TablesRecordAndTheCommunicatorRankNamesTheFile) {
    if (!agentBuilt()) {
        GTEST_SKIP() << "the capture agent was not built (no CUDA toolkit with CUPTI)";
    }
    for (const char* version : {"v4", "v5"}) {
        SCOPED_TRACE(version);
        const std::string dir = makeTempDir();
        // No rank in the environment: the communicator's rank 2 becomes the file's.
        const pid_t pid = startHarness({VRAMSCOPE_AGENT_PATH, version, "play", "2"},
                                       {{"VRAMSCOPE_OUTPUT", dir}, {"VRAMSCOPE_JOB", "nccl"}});
        ASSERT_EQ(waitExit(pid), 0);
        auto loaded = trace::readTraceFile(dir + "/nccl-rank2.vscope");
        ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
        const trace::TraceData& d = loaded->data;
        EXPECT_EQ(d.header.rank, trace::RankId{2});
        ASSERT_EQ(d.collectives.size(), static_cast<size_t>(kPlanSize + 2));
        std::vector<trace::CollectiveEvent> keep;
        const trace::CollectiveEvent* first = findOp(d, kPlan[0].function, 0, keep);
        ASSERT_NE(first, nullptr);
        // v4 passes the hash after the name, v5 the id before the mask: both must land here.
        EXPECT_EQ(first->communicatorHash, kPlanCommHash);
        EXPECT_EQ(first->bytes, kPlan[0].count * typeSize(kPlan[0].datatype));
        EXPECT_EQ(first->endNs - first->startNs, planDurationNs(0, 2, kPlan[0].channels));
    }
}

TEST(NcclPlugin, ARunningJobServesItsStreamOnALiveSocket) {
    if (!agentBuilt()) {
        GTEST_SKIP() << "the capture agent was not built (no CUDA toolkit with CUPTI)";
    }
    const std::string dir = makeTempDir();
    const std::string sockets = dir + "/live";
    ASSERT_EQ(mkdir(sockets.c_str(), 0700), 0);
    const pid_t pid = startHarness({VRAMSCOPE_AGENT_PATH, "v6", "play", "1"},
                                   {{"VRAMSCOPE_OUTPUT", dir},
                                    {"VRAMSCOPE_JOB", "nccl"},
                                    {"RANK", "1"},
                                    {"WORLD_SIZE", "4"},
                                    {"VRAMSCOPE_FLUSH_MS", "20"},
                                    {"VRAMSCOPE_LIVE", "1"},
                                    {"VRAMSCOPE_LIVE_DIR", sockets},
                                    {"VRAMSCOPE_HARNESS_LINGER_MS", "1500"}});
    const std::string sock = trace::live::socketPath(sockets, trace::live::hostName(), pid);
    struct stat st {};
    for (int i = 0; i < 500 && stat(sock.c_str(), &st) != 0; ++i) {
        usleep(10000);
    }
    auto fd = trace::live::connectSocket(sock);
    ASSERT_TRUE(fd.ok()) << fd.error().describe();
    std::string stream;
    auto hello = trace::live::readHello(fd.value(), sock, 5000, &stream);
    ASSERT_TRUE(hello.ok()) << hello.error().describe();
    EXPECT_EQ(hello->pid, pid);
    EXPECT_EQ(hello->rank, trace::RankId{1});
    EXPECT_EQ(hello->worldSize, 4);
    // SIGUSR2 asks the running job for its ring, written beside its trace.
    ASSERT_EQ(kill(pid, SIGUSR2), 0);
    char buf[65536];
    for (ssize_t n; (n = recv(fd.value(), buf, sizeof buf, 0)) > 0;) {
        stream.append(buf, static_cast<size_t>(n));  // until the job exits and closes it
    }
    close(fd.value());
    ASSERT_EQ(waitExit(pid), 0) << "SIGUSR2 must not end the job";
    EXPECT_NE(stat(sock.c_str(), &st), 0) << "the socket outlived its process";
    // What the viewer got is what the job wrote to its file: the same collectives, in order.
    auto live = trace::readTraceBytes(stream, sock);
    ASSERT_TRUE(live.ok()) << live.error().describe();
    auto file = trace::readTraceFile(dir + "/nccl-rank1.vscope");
    ASSERT_TRUE(file.ok()) << file.error().describe();
    ASSERT_EQ(file->data.collectives.size(), static_cast<size_t>(kPlanSize + 2));
    EXPECT_EQ(live->data.collectives.startNs, file->data.collectives.startNs);
    EXPECT_EQ(live->data.collectives.bytes, file->data.collectives.bytes);
    EXPECT_EQ(live->data.communicators.size(), file->data.communicators.size());
    std::string ringPath;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.path().filename().string().rfind("nccl-rank1-ring-", 0) == 0) {
            ringPath = e.path().string();
        }
    }
    ASSERT_FALSE(ringPath.empty()) << "no ring file in " << dir;
    auto ring = trace::readTraceFile(ringPath);
    ASSERT_TRUE(ring.ok()) << ring.error().describe();
    EXPECT_EQ(ring->data.header.pid, pid);
    // The ring (64 MiB) holds all of this short job's collectives that were written by then.
    ASSERT_GT(ring->data.collectives.size(), 0u);
    for (size_t i = 0; i < ring->data.collectives.size(); ++i) {
        EXPECT_EQ(ring->data.collectives.startNs[i], file->data.collectives.startNs[i]);
    }
}

TEST(NcclPlugin, WithoutAFileTheJobServesItsSocketOnly) {
    if (!agentBuilt()) {
        GTEST_SKIP() << "the capture agent was not built (no CUDA toolkit with CUPTI)";
    }
    const std::string dir = makeTempDir();
    const std::string sockets = dir + "/live";
    ASSERT_EQ(mkdir(sockets.c_str(), 0700), 0);
    const pid_t pid = startHarness({VRAMSCOPE_AGENT_PATH, "v6", "play", "2"},
                                   {{"VRAMSCOPE_OUTPUT", dir},
                                    {"VRAMSCOPE_JOB", "nccl"},
                                    {"RANK", "2"},
                                    {"VRAMSCOPE_FLUSH_MS", "20"},
                                    {"VRAMSCOPE_FILE", "0"},
                                    {"VRAMSCOPE_LIVE", "1"},
                                    {"VRAMSCOPE_LIVE_DIR", sockets},
                                    {"VRAMSCOPE_HARNESS_LINGER_MS", "800"}});
    const std::string sock = trace::live::socketPath(sockets, trace::live::hostName(), pid);
    struct stat st {};
    for (int i = 0; i < 500 && stat(sock.c_str(), &st) != 0; ++i) {
        usleep(10000);
    }
    auto rx = trace::live::Receiver::connect({sock}, 5000);
    ASSERT_TRUE(rx.ok()) << rx.error().describe();
    while (!rx.value()->allEnded()) {
        rx.value()->waitForData(200);
    }
    ASSERT_EQ(waitExit(pid), 0);
    auto live = trace::readTraceBytes(rx.value()->copyWhole(0), sock);
    ASSERT_TRUE(live.ok()) << live.error().describe();
    EXPECT_EQ(live->data.collectives.size(), static_cast<size_t>(kPlanSize + 2));
    size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        files += e.path().extension() == ".vscope" ? 1 : 0;
    }
    EXPECT_EQ(files, 0u) << "VRAMSCOPE_FILE=0 wrote a trace file";
}

TEST(NcclPlugin, HostileCallsAreAnsweredAndAnExhaustedPoolIsCountedNotWaitedFor) {
    if (!agentBuilt()) {
        GTEST_SKIP() << "the capture agent was not built (no CUDA toolkit with CUPTI)";
    }
    const std::string dir = makeTempDir();
    const pid_t pid =
        startHarness({VRAMSCOPE_AGENT_PATH, "v5", "robust"}, {{"RANK", "0"},
                                                              {"VRAMSCOPE_OUTPUT", dir},
                                                              {"VRAMSCOPE_JOB", "nccl"},
                                                              {"VRAMSCOPE_NCCL_EVENTS", "64"}});
    ASSERT_EQ(waitExit(pid), 0) << "a hostile call was answered wrongly (exit code names it)";
    auto loaded = trace::readTraceFile(dir + "/nccl-rank0.vscope");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    const trace::TraceData& d = loaded->data;
    // 64 of 100 collectives had a handle; each ended at its stop (no channels), timed on the host.
    ASSERT_EQ(d.collectives.size(), 64u);
    for (size_t i = 0; i < d.collectives.size(); ++i) {
        if (carriesFormat12(d)) {
            EXPECT_EQ(opAt(d.collectives, i).timing, trace::CollectiveTiming::Host);
        }
        EXPECT_EQ(opAt(d.collectives, i).bytes, 256u * 4u);
    }
    EXPECT_EQ(lossCount(d, trace::LossCounter::NcclEventsDropped), 36u);
}

TEST(NcclPlugin, OffAsksNcclForNothingAndWritesNoFile) {
    if (!agentBuilt()) {
        GTEST_SKIP() << "the capture agent was not built (no CUDA toolkit with CUPTI)";
    }
    const std::string dir = makeTempDir();
    const pid_t pid = startHarness({VRAMSCOPE_AGENT_PATH, "v6", "play", "0"},
                                   {{"VRAMSCOPE_OUTPUT", dir}, {"VRAMSCOPE_NCCL", "off"}});
    EXPECT_EQ(waitExit(pid), 3) << "init must return an empty mask and no context";
    struct stat st {};
    EXPECT_NE(stat((dir + "/job-rank0.vscope").c_str(), &st), 0);
}
