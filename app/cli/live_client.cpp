#include "live_client.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <ostream>

namespace vramscope::app {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void onInterrupt(int) {
    g_interrupted = 1;
}

bool looksLikePath(const std::string& t) {
    return t.find('/') != std::string::npos || (t.size() > 5 && t.ends_with(".sock"));
}

}  // namespace

int64_t steadyNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void installInterruptFlag() {
    struct sigaction sa {};
    sa.sa_handler = onInterrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() {
    return g_interrupted != 0;
}

std::optional<std::vector<std::string>> resolveTargets(CommandContext& ctx,
                                                       const std::vector<std::string>& targets) {
    const std::string dir = trace::live::socketDirectory();
    std::vector<std::string> sockets;
    std::optional<std::vector<trace::live::LiveSocket>> listed;
    auto list = [&]() -> bool {
        if (listed) {
            return true;
        }
        auto found = trace::live::listSockets(dir, true);
        if (!found.ok()) {
            ctx.err << "vramscope-cli " << ctx.command << ": " << found.error().describe() << "\n";
            return false;
        }
        listed = std::move(found.value());
        return true;
    };
    for (const std::string& t : targets) {
        if (looksLikePath(t)) {
            sockets.push_back(t);
            continue;
        }
        if (t == "all") {
            if (!list()) {
                return std::nullopt;
            }
            if (listed->empty()) {
                ctx.err << "vramscope-cli " << ctx.command << ": no live job of this user in "
                        << dir << "\n";
                return std::nullopt;
            }
            for (const auto& s : *listed) {
                sockets.push_back(s.path);
            }
            continue;
        }
        const auto pid = parseInteger(t);
        if (!pid || *pid <= 0) {
            ctx.err << "vramscope-cli " << ctx.command << ": '" << t
                    << "' is neither a pid, a socket path nor 'all'\n";
            return std::nullopt;
        }
        if (!list()) {
            return std::nullopt;
        }
        const std::string self = trace::live::hostName();
        bool found = false;
        for (const auto& s : *listed) {
            if (s.pid == *pid && s.host == self) {
                sockets.push_back(s.path);
                found = true;
            }
        }
        if (!found) {
            ctx.err << "vramscope-cli " << ctx.command << ": no live job with pid " << *pid
                    << " in " << dir
                    << " (is it running under vramscope-run, or as another user?)\n";
            return std::nullopt;
        }
    }
    // Each producer once, however often it was named ("all" and its pid, a pid twice).
    std::vector<std::string> unique;
    for (const std::string& s : sockets) {
        if (std::find(unique.begin(), unique.end(), s) == unique.end()) {
            unique.push_back(s);
        }
    }
    return unique;
}

std::unique_ptr<trace::live::Receiver> connectAll(CommandContext& ctx,
                                                  const std::vector<std::string>& sockets) {
    std::vector<trace::Error> failures;
    auto receiver = trace::live::Receiver::connect(sockets, 2000, &failures);
    for (const trace::Error& e : failures) {
        ctx.err << "vramscope-cli " << ctx.command << ": " << e.describe() << "\n";
    }
    return receiver.ok() ? std::move(receiver.value()) : nullptr;
}

std::unique_ptr<trace::live::Receiver> attachTargets(CommandContext& ctx,
                                                     const std::vector<std::string>& targets) {
    auto sockets = resolveTargets(ctx, targets);
    if (!sockets) {
        return nullptr;
    }
    auto rx = connectAll(ctx, *sockets);
    if (rx) {
        installInterruptFlag();
    }
    return rx;
}

std::string describeProducer(const trace::FileHeader& h) {
    std::string s = "pid " + std::to_string(h.pid) + " on " + (h.host.empty() ? "?" : h.host);
    if (h.rank != trace::kUnknownRank) {
        s += ", rank " + std::to_string(static_cast<int32_t>(h.rank));
        if (h.worldSize > 0) {
            s += " of " + std::to_string(h.worldSize);
        }
    }
    if (!h.jobId.empty()) {
        s += ", job " + h.jobId;
    }
    return s;
}

}  // namespace vramscope::app
