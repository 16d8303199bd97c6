// corruption_sweep: loads one input cut at 64 points and with seeded byte flips, each in a forked
// child with a time and address-space limit, and fails on any crash, hang, unclear refusal, cut
// file loaded without a loss report, or memory above the limit (see kUsage).
//
// The driver process stays small (it holds the file as stored, never its decompressed content)
// because a forked child's peak RSS starts from its parent's: the clean run and the damaged runs
// start from the same base, so their ratio compares the loads themselves.

#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sweep_load.h"
#include "sweep_variants.h"
#include "vramscope/trace/input_bytes.h"
#include "vramscope/trace/open_trace.h"

namespace fs = std::filesystem;
using namespace vramscope_sweep;

namespace {

constexpr const char* kUsage =
    "usage: corruption_sweep [--cuts N] [--flips N] [--seed S] [--keep-failures DIR]\n"
    "                        [--as-vscope] FILE\n"
    "       corruption_sweep --realdata DIR RELATIVE_PATH [options]\n"
    "       corruption_sweep --check-coverage DIR RELATIVE_PATH...\n\n"
    "--as-vscope first writes the input as .vscope (zstd frames) and sweeps that file.\n"
    "Loads FILE clean, then cut at N points (default 64) and with N seeded byte-flip variants\n"
    "(default 16; for gzip inputs half flip the stored bytes, half the decompressed content\n"
    "compressed again), each in a child process as `vramscope-cli report` would (open, analyse,\n"
    "write the report). A run passes when it loads with a data-loss report, is refused with an\n"
    "error naming the file, or (flips only) loads clean because the flipped bytes did not matter.\n"
    "It fails on a signal, an escaped exception, more than max(20 x the clean time, 10 s) (a "
    "hang),\n"
    "an error that does not name the file, a cut file loaded with no loss reported, or a peak RSS\n"
    "above max(2 x the clean peak, clean peak + 32 MiB) (the floor keeps a tiny file's\n"
    "allocator noise from failing; not judged under AddressSanitizer, whose quarantine and\n"
    "shadow memory reach every child). Children run with an address-space limit of\n"
    "4 GiB + 8 x the clean peak (none under AddressSanitizer). Exit: 0 pass, 1 failures,\n"
    "2 usage, 77 the real input is missing (1 when VRAMSCOPE_REQUIRE_REALDATA is set).\n"
    "--check-coverage fails when DIR holds an input vramscope reads that is not listed.\n";

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

enum class Outcome { Loss, Clean, Refused, Crash, Hang, Unclear, Exception, Memory };

const char* toString(Outcome o) {
    switch (o) {
        case Outcome::Loss:
            return "loaded with loss";
        case Outcome::Clean:
            return "loaded clean";
        case Outcome::Refused:
            return "refused";
        case Outcome::Crash:
            return "CRASH";
        case Outcome::Hang:
            return "HANG";
        case Outcome::Unclear:
            return "UNCLEAR REFUSAL";
        case Outcome::Exception:
            return "EXCEPTION";
        case Outcome::Memory:
            return "MEMORY";
    }
    return "?";
}

struct RunResult {
    Outcome outcome = Outcome::Crash;
    long peakKiB = 0;
    double seconds = 0;
    std::string detail;
};

struct Limits {
    double timeoutSeconds = 60;
    uint64_t addressSpaceBytes = 0;  ///< 0 = none
};

bool realdataRequired() {
    const char* v = std::getenv("VRAMSCOPE_REQUIRE_REALDATA");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
}

bool writeFile(const fs::path& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs loadAndAnalyse(path) in a child; kills it after the limit.
RunResult runChild(const fs::path& path, const Limits& limits) {
    RunResult result;
    int pipeFds[2];
    if (::pipe(pipeFds) != 0) {
        result.detail = "pipe failed";
        return result;
    }
    std::cout.flush();
    ::malloc_trim(0);  // freed variant bytes must not count in the child's peak
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(pipeFds[0]);
        if (limits.addressSpaceBytes > 0) {
            const rlimit as{limits.addressSpaceBytes, limits.addressSpaceBytes};
            ::setrlimit(RLIMIT_AS, &as);
        }
        ::_exit(loadAndAnalyse(path.string(), pipeFds[1]));
    }
    ::close(pipeFds[1]);
    int status = 0;
    rusage usage{};
    bool killed = false;
    for (;;) {
        const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
        if (done == pid) {
            break;
        }
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!killed && elapsed > limits.timeoutSeconds) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.peakKiB = usage.ru_maxrss;
    char buf[512] = {};
    const ssize_t n = ::read(pipeFds[0], buf, sizeof(buf) - 1);
    ::close(pipeFds[0]);
    result.detail = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    if (!result.detail.empty() && result.detail.back() == '\n') {
        result.detail.pop_back();
    }
    if (killed) {
        result.outcome = Outcome::Hang;
    } else if (WIFSIGNALED(status)) {
        result.outcome = Outcome::Crash;
        result.detail = std::string("signal ") + strsignal(WTERMSIG(status)) + "; " + result.detail;
    } else {
        switch (WEXITSTATUS(status)) {
            case kExitRefused:
                result.outcome = Outcome::Refused;
                break;
            case kExitLoadedLoss:
                result.outcome = Outcome::Loss;
                break;
            case kExitLoadedClean:
                result.outcome = Outcome::Clean;
                break;
            case kExitUnclearRefusal:
                result.outcome = Outcome::Unclear;
                break;
            case kExitException:
                result.outcome = Outcome::Exception;
                break;
            default:
                result.outcome = Outcome::Crash;
                result.detail =
                    "exit status " + std::to_string(WEXITSTATUS(status)) + "; " + result.detail;
        }
    }
    return result;
}

bool isGzipName(const std::string& name) {
    return name.ends_with(".gz") || name.ends_with(".tgz");
}

/// Writes `flips` content-flip variants of a gzip input into `dir` (content-N.gz), from a child
/// so that the decompressed content never lives in the driver. Returns false on failure.
bool makeContentVariants(const fs::path& input, const fs::path& dir, uint64_t seed, size_t flips) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        auto content = vramscope::trace::readInputBytes(input.string());
        if (!content.ok()) {
            ::_exit(3);
        }
        for (size_t i = 0; i < flips; ++i) {
            std::string label;
            const std::string flipped = flipBytes(*content, seed + 1, i, label);
            const std::string gz = gzipCompress(flipped);
            if (gz.empty() || !writeFile(dir / ("content-" + std::to_string(i) + ".gz"), gz) ||
                !writeFile(dir / ("content-" + std::to_string(i) + ".label"), label)) {
                ::_exit(4);
            }
        }
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct Tally {
    std::map<Outcome, size_t> counts;
    size_t runs = 0;
    double worstRatio = 0;
    double seconds = 0;
};

struct SweepOptions {
    size_t cuts = 64;
    size_t flips = 16;
    uint64_t seed = 1;
    std::string keepFailures;
};

bool isFailure(const Variant& v, Outcome o) {
    switch (o) {
        case Outcome::Loss:
        case Outcome::Refused:
            return false;
        case Outcome::Clean:
            return v.kind == VariantKind::Cut;  // a cut file always lost something
        default:
            return true;
    }
}

/// The variants of one input, made one at a time just before their run (the driver must stay
/// small): cuts, then flips of the stored bytes, then (gzip) flips of the content.
class VariantSource {
public:
    VariantSource(const std::string& bytes, const std::string& name, const fs::path& dir,
                  const SweepOptions& opt)
        : m_bytes(bytes),
          m_dir(dir),
          m_seed(stableHash(name) ^ opt.seed),
          m_cuts(cutPoints(bytes.size(), opt.cuts)),
          m_rawFlips(isGzipName(name) ? (opt.flips + 1) / 2 : opt.flips),
          m_contentFlips(opt.flips - m_rawFlips) {}

    /// Writes the content-flip variants (gzip inputs only); false on failure.
    bool prepare(const fs::path& input) const {
        return m_contentFlips == 0 || makeContentVariants(input, m_dir, m_seed, m_contentFlips);
    }
    size_t size() const { return m_cuts.size() + m_rawFlips + m_contentFlips; }

    Variant make(size_t i) const {
        Variant v;
        if (i < m_cuts.size()) {
            v = {VariantKind::Cut, "cut@" + std::to_string(m_cuts[i]),
                 m_bytes.substr(0, m_cuts[i])};
        } else if (i < m_cuts.size() + m_rawFlips) {
            v.kind = VariantKind::FlipRaw;
            v.bytes = flipBytes(m_bytes, m_seed, i - m_cuts.size(), v.label);
        } else {
            const std::string stem =
                (m_dir / ("content-" + std::to_string(i - m_cuts.size() - m_rawFlips))).string();
            v = {VariantKind::FlipContent, readFile(stem + ".label") + " of content",
                 readFile(stem + ".gz")};
        }
        return v;
    }

private:
    const std::string& m_bytes;
    fs::path m_dir;
    uint64_t m_seed;
    std::vector<uint64_t> m_cuts;
    size_t m_rawFlips;
    size_t m_contentFlips;
};

/// The limits of the damaged runs, from the clean run (see kUsage).
struct RunLimits {
    Limits child;
    long memoryKiB = 0;
};

RunLimits limitsFrom(const RunResult& clean) {
    RunLimits l;
    // Generous against the clean run: CI machines are shared, and a damaged input may take the
    // slower repair path (a cut JSON is parsed twice).
    l.child.timeoutSeconds = std::max(20 * clean.seconds, 10.0);
    l.memoryKiB = std::max(2 * clean.peakKiB, clean.peakKiB + 32 * 1024);
    if (!kSanitized) {
        l.child.addressSpaceBytes = (4ull << 30) + 8ull * 1024 * uint64_t(clean.peakKiB);
    }
    return l;
}

void printTable(const std::string& name, size_t bytes, const RunResult& clean,
                const RunLimits& limits, const std::map<VariantKind, Tally>& tallies) {
    std::printf("%s: %zu bytes; clean load %.2f s, peak RSS %ld MiB (%s); limits %.1f s, %ld MiB\n",
                name.c_str(), bytes, clean.seconds, clean.peakKiB / 1024, toString(clean.outcome),
                limits.child.timeoutSeconds, limits.memoryKiB / 1024);
    std::printf("  %-13s %5s %6s %6s %8s %8s %10s %7s\n", "variant", "runs", "loss", "clean",
                "refused", "FAILED", "worst RSS", "time s");
    for (const auto& [kind, tally] : tallies) {
        const Tally& t = tally;  // clang 14 cannot capture a structured binding in a lambda
        auto count = [&t](Outcome o) {
            auto it = t.counts.find(o);
            return it == t.counts.end() ? size_t(0) : it->second;
        };
        const size_t ok = count(Outcome::Loss) + count(Outcome::Refused) +
                          (kind == VariantKind::Cut ? 0 : count(Outcome::Clean));
        std::printf("  %-13s %5zu %6zu %6zu %8zu %8zu %9.2fx %7.1f\n", toString(kind), t.runs,
                    count(Outcome::Loss), count(Outcome::Clean), count(Outcome::Refused),
                    t.runs - ok, t.worstRatio, t.seconds);
    }
}

/// Runs one variant (already written to `target`) and tallies it; true when it failed.
bool runVariant(const Variant& v, const fs::path& target, const RunLimits& limits,
                const RunResult& clean, const SweepOptions& opt, Tally& t) {
    RunResult r = runChild(target, limits.child);
    // Memory is judged in unsanitized builds only: under AddressSanitizer the parent's quarantine
    // of freed variants and the shadow memory reach every forked child, so its peak RSS grows from
    // run to run whatever the reader does (seen: 60 to 85 MiB over one file's runs).
    if (!kSanitized && r.peakKiB > limits.memoryKiB && r.outcome != Outcome::Crash &&
        r.outcome != Outcome::Hang) {
        r.detail = std::to_string(r.peakKiB / 1024) + " MiB; " + r.detail;
        r.outcome = Outcome::Memory;
    }
    ++t.runs;
    ++t.counts[r.outcome];
    t.seconds += r.seconds;
    t.worstRatio = std::max(t.worstRatio, double(r.peakKiB) / double(clean.peakKiB));
    if (!isFailure(v, r.outcome)) {
        return false;
    }
    std::cout << "FAIL " << target.filename().string() << " " << v.label << ": "
              << (r.outcome == Outcome::Clean ? "cut file loaded with no loss reported"
                                              : toString(r.outcome))
              << " (" << r.detail << ")\n";
    if (!opt.keepFailures.empty()) {
        fs::create_directories(opt.keepFailures);
        fs::copy_file(target,
                      fs::path(opt.keepFailures) / (v.label + "-" + target.filename().string()),
                      fs::copy_options::overwrite_existing);
    }
    return true;
}

int sweepFile(const fs::path& input, const SweepOptions& opt) {
    const std::string bytes = readFile(input);
    const std::string name = input.filename().string();
    char pattern[] = "/tmp/vramscope-sweep-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
        std::cerr << "corruption_sweep: cannot make a temporary directory\n";
        return 1;
    }
    const fs::path dir(pattern);
    const fs::path target = dir / name;
    const auto wallStart = std::chrono::steady_clock::now();

    writeFile(target, bytes);
    const RunResult clean = runChild(target, Limits{600, 0});
    const VariantSource variants(bytes, name, dir, opt);
    if (clean.outcome != Outcome::Loss && clean.outcome != Outcome::Clean) {
        std::cout << name << ": the undamaged file does not load: " << toString(clean.outcome)
                  << ": " << clean.detail << "\n";
        fs::remove_all(dir);
        return 1;
    }
    if (!variants.prepare(input)) {
        std::cout << name << ": cannot make the content-flip variants\n";
        fs::remove_all(dir);
        return 1;
    }
    const RunLimits limits = limitsFrom(clean);
    std::map<VariantKind, Tally> tallies;
    size_t failures = 0;
    for (size_t i = 0; i < variants.size(); ++i) {
        Variant v = variants.make(i);
        writeFile(target, v.bytes);
        std::string().swap(v.bytes);  // freed before the fork: the child's peak starts lower
        failures += runVariant(v, target, limits, clean, opt, tallies[v.kind]) ? 1 : 0;
    }
    fs::remove_all(dir);
    printTable(name, bytes.size(), clean, limits, tallies);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    std::printf("  total %zu runs, %zu failed, %.1f s\n", variants.size(), failures, wall);
    return failures == 0 ? 0 : 1;
}

/// Inputs under `dir` that vramscope reads (LICENSES and README left out).
std::vector<std::string> readableInputs(const fs::path& dir) {
    std::vector<std::string> found;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        const std::string rel = fs::relative(e.path(), dir).string();
        if (!e.is_regular_file() || rel.starts_with("LICENSES/")) {
            continue;
        }
        for (const char* ext : {".json", ".json.gz", ".tar.gz", ".tgz", ".tar", ".pickle",
                                ".pickle.gz", ".pkl", ".sqlite", ".vscope"}) {
            if (rel.ends_with(ext)) {
                found.push_back(rel);
                break;
            }
        }
    }
    std::sort(found.begin(), found.end());
    return found;
}

/// `input` opened and written as .vscope (trace::writeTraceFile, zstd frames) into a new
/// temporary directory, from a child so that the trace never lives in the driver; "" on failure.
fs::path convertToVscope(const fs::path& input) {
    char pattern[] = "/tmp/vramscope-sweep-vscope-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
        return {};
    }
    const fs::path out = fs::path(pattern) / (input.filename().string() + ".vscope");
    const pid_t pid = ::fork();
    if (pid == 0) {
        auto loaded = vramscope::trace::openTrace(input.string());
        ::_exit(loaded.ok() && vramscope::trace::writeTraceFile(out.string(), loaded->data).ok()
                    ? 0
                    : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : fs::path();
}

int missingInput(const fs::path& path) {
    std::cout << "real input missing: " << path.string() << "\n";
    return realdataRequired() ? 1 : 77;
}

}  // namespace

int main(int argc, char** argv) {
    SweepOptions opt;
    std::vector<std::string> positional;
    std::string realdata;
    bool coverage = false;
    bool asVscope = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--cuts" && hasValue) {
            opt.cuts = std::stoul(argv[++i]);
        } else if (a == "--flips" && hasValue) {
            opt.flips = std::stoul(argv[++i]);
        } else if (a == "--seed" && hasValue) {
            opt.seed = std::stoull(argv[++i]);
        } else if (a == "--keep-failures" && hasValue) {
            opt.keepFailures = argv[++i];
        } else if (a == "--realdata" && hasValue) {
            realdata = argv[++i];
        } else if (a == "--as-vscope") {
            asVscope = true;
        } else if (a == "--check-coverage") {
            coverage = true;
        } else if (a == "--help" || a.starts_with("--")) {
            std::cout << kUsage;
            return a == "--help" ? 0 : 2;
        } else {
            positional.push_back(a);
        }
    }
    if (coverage) {
        if (positional.empty() || !fs::is_directory(positional.front())) {
            return positional.empty() ? 2 : missingInput(positional.empty() ? "" : positional[0]);
        }
        const std::vector<std::string> listed(positional.begin() + 1, positional.end());
        int missing = 0;
        for (const std::string& rel : readableInputs(positional.front())) {
            if (std::find(listed.begin(), listed.end(), rel) == listed.end()) {
                std::cout << "not swept: " << rel << "\n";
                ++missing;
            }
        }
        std::cout << (missing == 0 ? "every readable input is swept\n" : "");
        return missing == 0 ? 0 : 1;
    }
    if (positional.size() != 1) {
        std::cerr << kUsage;
        return 2;
    }
    fs::path input = positional.front();
    if (!realdata.empty()) {
        input = fs::path(realdata) / input;
        if (!fs::exists(input)) {
            return missingInput(input);
        }
    }
    if (asVscope) {
        const fs::path converted = convertToVscope(input);
        if (converted.empty()) {
            std::cout << input.string() << ": cannot be written as .vscope\n";
            return 1;
        }
        const int rc = sweepFile(converted, opt);
        fs::remove_all(converted.parent_path());
        return rc;
    }
    return sweepFile(input, opt);
}
