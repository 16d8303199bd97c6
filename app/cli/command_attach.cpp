// vramscope-cli attach: lists this user's live jobs, or records from running ones into .vscope
// files (trace/live.h: the stream is a .vscope file byte for byte).

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "cli_command.h"
#include "live_client.h"

namespace vramscope::app {
namespace {

/// The value of capture setting `key` in a hello, "" when absent.
std::string setting(const trace::FileHeader& h, std::string_view key) {
    for (const auto& [k, v] : h.captureSettings) {
        if (k == key) {
            return v;
        }
    }
    return {};
}

/// "2026-12-02 13:20:05" (local time) from Unix ns, "-" when unknown.
std::string localTime(int64_t unixNs) {
    if (unixNs <= 0) {
        return "-";
    }
    const std::time_t t = static_cast<std::time_t>(unixNs / 1'000'000'000);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

int listJobs(CommandContext& ctx) {
    const std::string dir = trace::live::socketDirectory();
    std::vector<std::string> removed;
    auto found = trace::live::listSockets(dir, true, &removed);
    if (!found.ok()) {
        if (found.error().code == trace::ErrorCode::Io) {
            ctx.out << "no live jobs (" << dir << " does not exist)\n";
            return kExitSuccess;
        }
        ctx.err << "vramscope-cli attach: " << found.error().describe() << "\n";
        return kExitUnreadable;
    }
    for (const std::string& r : removed) {
        ctx.err << "vramscope-cli attach: removed a stale socket (its process is gone): " << r
                << "\n";
    }
    struct Row {
        trace::FileHeader hello;
        std::string path;
        int64_t servedBy = 0;  ///< the pid of the serving process (the socket's name)
    };
    std::vector<Row> rows;
    for (const auto& s : found.value()) {
        auto fd = trace::live::connectSocket(s.path);
        if (!fd.ok()) {
            ctx.err << "vramscope-cli attach: " << fd.error().describe() << "\n";
            continue;
        }
        auto hello = trace::live::readHello(fd.value(), s.path, 2000);
        ::close(fd.value());
        if (!hello.ok()) {
            ctx.err << "vramscope-cli attach: " << hello.error().describe() << "\n";
            continue;
        }
        rows.push_back({std::move(hello.value()), s.path, s.pid});
    }
    if (rows.empty()) {
        ctx.out << "no live jobs in " << dir << "\n";
        return kExitSuccess;
    }
    // Grouped by job id, then by rank, as a job's ranks belong together.
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        if (a.hello.jobId != b.hello.jobId) {
            return a.hello.jobId < b.hello.jobId;
        }
        return static_cast<int32_t>(a.hello.rank) < static_cast<int32_t>(b.hello.rank);
    });
    std::string job = "\x01";
    for (const Row& r : rows) {
        if (r.hello.jobId != job) {
            job = r.hello.jobId;
            ctx.out << "job " << (job.empty() ? "(no job id)" : job) << "\n";
        }
        std::string gpus;
        for (const auto& d : r.hello.devices) {
            gpus += (gpus.empty() ? "" : ", ") + std::to_string(static_cast<int32_t>(d.index)) +
                    (d.name.empty() ? "" : " " + d.name);
        }
        const std::string command = setting(r.hello, "command");
        // A replay serves another process's trace: say which pid `attach PID` takes.
        const std::string served = r.servedBy != r.hello.pid
                                       ? " (served by pid " + std::to_string(r.servedBy) + ")"
                                       : std::string();
        ctx.out << "  " << describeProducer(r.hello) << served << ", started "
                << localTime(r.hello.wallClockAnchorNs) << ", GPUs " << (gpus.empty() ? "-" : gpus)
                << "\n    " << (command.empty() ? r.hello.producer : command) << "\n    socket "
                << r.path << "\n";
    }
    return kExitSuccess;
}

/// The output file of the producer serving `socket`: `out` itself for a single target; else
/// "OUT-NAME.vscope" beside OUT.vscope, or "NAME.vscope" in directory OUT (created when missing),
/// NAME being the socket's file name without ".sock" (HOST-PID of the serving process: unique
/// per producer, where the traces' own host and pid may repeat, as in two replays of one file).
std::string recordingPath(std::string out, const std::string& socket, bool several) {
    std::string tag = std::filesystem::path(socket).filename().string();
    if (tag.size() > 5 && tag.ends_with(".sock")) {
        tag.resize(tag.size() - 5);
    }
    while (out.size() > 1 && out.back() == '/') {
        out.pop_back();
    }
    if (!several) {
        return out.empty() ? tag + ".vscope" : out;
    }
    if (out.empty()) {
        return tag + ".vscope";
    }
    if (out.size() > 7 && out.ends_with(".vscope")) {
        return out.substr(0, out.size() - 7) + "-" + tag + ".vscope";
    }
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    return out + "/" + tag + ".vscope";
}

}  // namespace

namespace {

/// The command line of `attach`: --list, or targets and how long to record them.
struct AttachOptions {
    bool list = false;
    std::vector<std::string> targets;  ///< pids, socket paths or "all"
    std::optional<int64_t> durationNs;
    std::string output;  ///< -o OUT; empty: HOST-PID.vscope here
};

std::optional<AttachOptions> parseAttachOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    AttachOptions options;
    if (args->has("--list")) {
        if (!args->positional.empty()) {
            return usageFailure(ctx, "--list takes no target", help);
        }
        options.list = true;
        exitCode = kExitSuccess;
        return options;
    }
    if (args->positional.empty()) {
        return usageFailure(
            ctx, "no target given (a pid, a socket path, or all; --list shows them)", help);
    }
    options.targets = args->positional;
    std::optional<int64_t>& durationNs = options.durationNs;
    if (auto v = args->value("--duration")) {
        durationNs = parseDurationNs(*v);
        if (!durationNs || *durationNs == 0) {
            return usageFailure(
                ctx,
                "--duration needs a duration above 0 (a number with a unit: ns, us, "
                "ms or s, e.g. 30s or 200ms), got '" +
                    *v + "'",
                help);
        }
    }
    options.output = args->value("-o").value_or("");
    exitCode = kExitSuccess;
    return options;
}

}  // namespace

int runAttach(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<AttachOptions> options = parseAttachOptions(ctx, code);
    if (!options) {
        return code;
    }
    if (options->list) {
        return listJobs(ctx);
    }
    const std::optional<int64_t>& durationNs = options->durationNs;
    auto rx = attachTargets(ctx, options->targets);
    if (!rx) {
        return kExitUnreadable;
    }
    // The duration counts from when the recording starts, not from the hellos' waits.
    const int64_t deadline = durationNs ? steadyNowNs() + *durationNs : INT64_MAX;
    const std::string& out = options->output;
    const size_t n = rx->sourceCount();
    // Each recording is written as it arrives, whole frames only, so a recording cut by a crash
    // of this process still reads.
    std::vector<int> files;
    std::vector<std::string> paths;
    std::vector<uint64_t> written(n, 0);
    for (size_t i = 0; i < n; ++i) {
        paths.push_back(recordingPath(out, rx->source(i).path, n > 1));
        const int fd = ::open(paths.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            ctx.err << "vramscope-cli attach: cannot create " << paths.back() << ": "
                    << std::strerror(errno) << "\n";
            for (int f : files) {
                ::close(f);
            }
            return kExitUnreadable;
        }
        files.push_back(fd);
        ctx.err << "attach: recording " << describeProducer(rx->source(i).hello) << " from "
                << rx->source(i).path << " into " << paths.back() << "\n";
    }
    bool writeFailed = false;
    auto writeWhole = [&]() {
        for (size_t i = 0; i < n && !writeFailed; ++i) {
            const std::string bytes = rx->copyWhole(i, written[i]);
            size_t done = 0;
            while (done < bytes.size()) {
                const ssize_t w = ::write(files[i], bytes.data() + done, bytes.size() - done);
                if (w < 0 && errno == EINTR) {
                    continue;
                }
                if (w <= 0) {
                    ctx.err << "vramscope-cli attach: cannot write " << paths[i] << ": "
                            << std::strerror(errno) << "\n";
                    writeFailed = true;
                    break;
                }
                done += static_cast<size_t>(w);
            }
            written[i] += done;
        }
    };
    const int64_t started = steadyNowNs();
    while (!writeFailed && !interrupted() && !rx->allEnded() && steadyNowNs() < deadline) {
        const int64_t left = (deadline - steadyNowNs()) / 1'000'000;
        rx->waitForData(static_cast<int>(std::clamp<int64_t>(left, 0, 200)));
        writeWhole();
    }
    rx->stop();
    writeWhole();
    for (size_t i = 0; i < n; ++i) {
        ::close(files[i]);
        const uint64_t cut = rx->receivedBytes(i) - written[i];
        ctx.err << "attach: " << paths[i] << ": " << formatBytes(int64_t(written[i])) << " in "
                << formatDuration(double(steadyNowNs() - started)) << "; "
                << (rx->ended(i)    ? "the job ended (or stopped serving)"
                    : interrupted() ? "interrupted"
                                    : "duration reached")
                << (cut > 0 ? "; " + std::to_string(cut) + " bytes of an unfinished frame left out"
                            : "")
                << "\n";
    }
    return writeFailed ? kExitUnreadable : kExitSuccess;
}

}  // namespace vramscope::app
