// readTraceSummary and readTraceFrames: a .vscope file's summary frames, and the event frames a
// view needs, read with pread() (the file is never read whole into memory).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"
#include "vscope/frame_bytes.h"
#include "vscope/summary_proto.h"

namespace vramscope::trace {
namespace {

using detail::kProgressStepBytes;
using detail::plural;
using detail::readLe32;

/// Problems kept in a report (as readTraceFile); more are counted in one closing entry.
constexpr size_t kMaxSummaryProblems = 1000;

/// A regular file read with pread() at the size it had when opened (a live trace may grow).
class FileAt {
public:
    ~FileAt() {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    Status open(const std::string& path) {
        m_path = path;
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0) {
            return Error::make(ErrorCode::Io, path,
                               std::string("cannot open: ") + std::strerror(errno));
        }
        struct stat st {};
        if (::fstat(m_fd, &st) != 0) {
            return Error::make(ErrorCode::Io, path,
                               std::string("cannot read: ") + std::strerror(errno));
        }
        if (!S_ISREG(st.st_mode)) {
            return Error::make(ErrorCode::Io, path,
                               "cannot read summaries: not a regular file (a pipe or a folder); "
                               "open it as a whole trace instead");
        }
        m_size = static_cast<uint64_t>(st.st_size);
        return Status::success();
    }
    uint64_t size() const { return m_size; }
    /// Appends bytes [offset, offset + n) to `out` (n is within size()).
    Status appendAt(uint64_t offset, size_t n, std::string& out) const {
        const size_t base = out.size();
        out.resize(base + n);
        size_t got = 0;
        while (got < n) {
            const ssize_t r =
                ::pread(m_fd, out.data() + base + got, n - got, static_cast<off_t>(offset + got));
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r <= 0) {
                const std::string why = r < 0 ? std::strerror(errno) : "the file got shorter";
                out.resize(base);
                return Error::make(ErrorCode::Io, m_path, "cannot read: " + why)
                    .atByte(static_cast<int64_t>(offset + got));
            }
            got += static_cast<size_t>(r);
        }
        return Status::success();
    }

private:
    int m_fd = -1;
    uint64_t m_size = 0;
    std::string m_path;
};

/// The preamble and the header frame, read through readTraceBytes so that their errors are
/// exactly readTraceFile's. `prefix` gets their bytes.
Result<LoadedTrace> readHeaderPrefix(const FileAt& file, const std::string& path,
                                     std::string& prefix) {
    const uint64_t size = file.size();
    uint64_t want = std::min<uint64_t>(size, kPreambleBytes + kFrameHeadBytes);
    if (Status s = file.appendAt(0, static_cast<size_t>(want), prefix); !s.ok()) {
        return s.error();
    }
    if (prefix.size() == kPreambleBytes + kFrameHeadBytes) {
        const uint32_t length = readLe32(prefix.data() + kPreambleBytes);
        // A header frame above the limit is refused by readTraceBytes from its head alone.
        if (length <= kMaxFramePayloadBytes) {
            const uint64_t end =
                kPreambleBytes + kFrameHeadBytes + uint64_t{length} + kFrameTailBytes;
            want = std::min(size, end);
            if (Status s =
                    file.appendAt(prefix.size(), static_cast<size_t>(want - prefix.size()), prefix);
                !s.ok()) {
                return s.error();
            }
        }
    }
    return readTraceBytes(prefix, path);
}

/// One walk over the frame heads of a file, decoding only summary frames.
class SummaryScan {
public:
    SummaryScan(const FileAt& file, const std::string& path, const ReadOptions& options)
        : m_file(file), m_path(path), m_options(options) {}

    Result<SummaryRead> run();

private:
    void problem(ErrorCode code, uint64_t offset, uint64_t frame, std::string message) {
        m_out.report.complete = false;
        if (m_out.report.problems.size() < kMaxSummaryProblems) {
            m_out.report.problems.push_back(Error::make(code, m_path, std::move(message))
                                                .atByte(static_cast<int64_t>(offset))
                                                .atRecord(static_cast<int64_t>(frame)));
        } else {
            ++m_dropped;
        }
    }
    /// Reads, checks and merges the summary frame at `offset`; false when it was skipped.
    bool takeSummary(uint64_t offset, uint32_t length, uint64_t index);

    const FileAt& m_file;
    const std::string& m_path;
    const ReadOptions& m_options;
    SummaryRead m_out;
    std::string m_frame;
    v1::Chunk m_chunk;
    uint64_t m_dropped = 0;
};

bool SummaryScan::takeSummary(uint64_t offset, uint32_t length, uint64_t index) {
    m_frame.clear();
    const size_t frameBytes = kFrameHeadBytes + size_t{length} + kFrameTailBytes;
    std::string why;
    if (Status s = m_file.appendAt(offset, frameBytes, m_frame); !s.ok()) {
        why = s.error().message;
    } else {
        const std::string_view bytes(m_frame);
        const uint32_t stored = readLe32(m_frame.data() + kFrameHeadBytes + length);
        if (stored != crc32c(bytes.substr(4, 1 + size_t{length}))) {
            why = "its CRC-32C does not match its contents";
        } else if (!m_chunk.ParseFromArray(m_frame.data() + kFrameHeadBytes,
                                           static_cast<int>(length))) {
            why = "its payload is not a valid Chunk message";
        }
    }
    if (!why.empty()) {
        ++m_out.report.framesSkipped;
        problem(ErrorCode::Corrupt, offset, index,
                "summary frame " + std::to_string(index) + " skipped: " + why +
                    "; the figures of the summary frame before it stand");
        return false;
    }
    uint64_t bad = 0;
    mergeSummary(m_out.summary, detail::summaryFromProto(m_chunk.summary(), bad));
    if (bad > 0) {
        m_out.report.idsReset += bad;
        problem(ErrorCode::Corrupt, offset, index,
                "summary frame " + std::to_string(index) + ": " +
                    plural(bad, "value was", "values were") +
                    " out of range or inconsistent and were dropped or clamped");
    }
    m_out.found = true;
    return true;
}

Result<SummaryRead> SummaryScan::run() {
    std::string prefix;
    Result<LoadedTrace> head = readHeaderPrefix(m_file, m_path, prefix);
    if (!head.ok()) {
        return head.error();
    }
    auto& report = m_out.report;
    report = head->report;
    report.fileBytes = m_file.size();
    m_out.summary.header = std::move(head->data.header);
    const uint64_t size = m_file.size();
    uint64_t offset = prefix.size();
    uint64_t nextProgress = kProgressStepBytes;
    std::string frameHead;
    for (uint64_t index = 1; offset < size; ++index) {
        if (m_options.progress && offset >= nextProgress) {
            if (!reportProgress(m_options.progress, offset, size, "Reading " + m_path)) {
                return Error::cancelled(m_path);
            }
            nextProgress = offset + kProgressStepBytes;
        }
        const uint64_t remaining = size - offset;
        frameHead.clear();
        if (remaining >= kFrameHeadBytes) {
            const auto n = static_cast<size_t>(std::min<uint64_t>(remaining, kFrameHeadBytes + 1));
            if (Status s = m_file.appendAt(offset, n, frameHead); !s.ok()) {
                return s.error();
            }
        }
        const uint32_t length = frameHead.empty() ? 0 : readLe32(frameHead.data());
        if (!frameHead.empty() && length > kMaxFramePayloadBytes) {
            problem(ErrorCode::Limit, offset, index,
                    "frame " + std::to_string(index) + " declares " + std::to_string(length) +
                        " payload bytes, more than the limit of " +
                        std::to_string(kMaxFramePayloadBytes) + "; the rest of the file (" +
                        std::to_string(remaining) + " bytes) cannot be read");
            break;
        }
        const uint64_t frameBytes = kFrameHeadBytes + uint64_t{length} + kFrameTailBytes;
        if (frameHead.empty() || frameBytes > remaining) {
            // The same report as readTraceFile gives for a cut file.
            report.truncated = true;
            report.truncatedAtByte = static_cast<int64_t>(offset);
            report.truncatedFrame = index;
            problem(ErrorCode::Truncated, offset, index,
                    m_path + " ends inside frame " + std::to_string(index) + " (byte " +
                        std::to_string(offset) + "); " +
                        plural(report.framesLoaded, "frame", "frames") +
                        " loaded. The job probably crashed.");
            break;
        }
        const auto encoding = static_cast<uint8_t>(frameHead[4]);
        const std::string_view first = std::string_view(frameHead).substr(kFrameHeadBytes);
        if (!detail::isSummaryFrame(encoding, first) || takeSummary(offset, length, index)) {
            // Event frames are counted from their heads; their CRC is readTraceFile's to check.
            ++report.framesLoaded;
            report.bytesLoaded += frameBytes;
        }
        offset += frameBytes;
    }
    if (m_dropped > 0) {
        report.problems.push_back(Error::make(
            ErrorCode::Corrupt, m_path, "and " + std::to_string(m_dropped) + " more problems"));
    }
    if (!reportProgress(m_options.progress, size, size, "Reading " + m_path)) {
        return Error::cancelled(m_path);
    }
    return std::move(m_out);
}

/// Where one frame copied into readTraceFrames' buffer came from.
struct Placed {
    uint64_t bufferOffset;
    uint64_t fileOffset;
    uint64_t frameNumber;
};

/// Rewrites the offsets and frame numbers of problems found in the buffer to the file's.
void placeProblems(std::vector<Error>& problems, const std::vector<Placed>& placed) {
    for (Error& e : problems) {
        if (e.recordIndex >= 0 && static_cast<size_t>(e.recordIndex) < placed.size()) {
            const Placed& p = placed[static_cast<size_t>(e.recordIndex)];
            if (e.byteOffset >= 0 && static_cast<uint64_t>(e.byteOffset) >= p.bufferOffset) {
                e.byteOffset = static_cast<int64_t>(p.fileOffset + (e.byteOffset - p.bufferOffset));
            }
            e.recordIndex = static_cast<int64_t>(p.frameNumber);
        }
    }
}

Result<LoadedTrace> readFrames(const FileAt& file, const std::string& path,
                               const TraceSummary& summary, const FrameFilter& want,
                               const ReadOptions& options) {
    std::string buffer;
    Result<LoadedTrace> head = readHeaderPrefix(file, path, buffer);
    if (!head.ok()) {
        return head.error();
    }
    std::vector<Placed> placed{{kPreambleBytes, kPreambleBytes, 0}};
    std::vector<Error> misplaced;
    uint64_t end = buffer.size();  // frames must follow the header frame, in file order
    for (const FrameIndexEntry& f : summary.frames) {
        if ((f.contents & kFrameTables) == 0 && !(want && want(f))) {
            continue;
        }
        const auto fail = [&](const std::string& why) {
            misplaced.push_back(Error::make(ErrorCode::Corrupt, path,
                                            "frame " + std::to_string(f.frameNumber) +
                                                " is not where the summary's index says: " + why +
                                                "; it was skipped")
                                    .atByte(static_cast<int64_t>(f.offset))
                                    .atRecord(static_cast<int64_t>(f.frameNumber)));
        };
        if (f.offset < end || f.frameBytes > file.size() || f.offset > file.size() - f.frameBytes) {
            fail(f.offset < end ? "it overlaps the frame before it"
                                : "it lies past the file's end");
            continue;
        }
        const size_t at = buffer.size();
        if (Status s = file.appendAt(f.offset, f.frameBytes, buffer); !s.ok()) {
            return s.error();
        }
        const uint32_t length = readLe32(buffer.data() + at);
        if (uint64_t{length} + kFrameHeadBytes + kFrameTailBytes != f.frameBytes) {
            buffer.resize(at);
            fail("its head declares " + std::to_string(length) + " payload bytes");
            continue;
        }
        placed.push_back({at, f.offset, f.frameNumber});
        end = f.offset + f.frameBytes;
    }
    Result<LoadedTrace> r = readTraceBytes(buffer, path, options);
    if (!r.ok()) {
        return r;
    }
    ReadReport& report = r->report;
    placeProblems(report.problems, placed);
    report.fileBytes = file.size();
    if (!misplaced.empty()) {
        report.complete = false;
        report.framesSkipped += misplaced.size();
        report.problems.insert(report.problems.end(), misplaced.begin(), misplaced.end());
    }
    return r;
}

}  // namespace

Result<SummaryRead> readTraceSummary(const std::string& path, const ReadOptions& options) {
    try {
        FileAt file;
        if (Status s = file.open(path); !s.ok()) {
            return s.error();
        }
        SummaryScan scan(file, path, options);
        return scan.run();
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, path, "out of memory while reading the summaries");
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Corrupt, path,
                           std::string("cannot read the summaries: ") + e.what());
    }
}

Result<LoadedTrace> readTraceFrames(const std::string& path, const TraceSummary& summary,
                                    const FrameFilter& want, const ReadOptions& options) {
    try {
        FileAt file;
        if (Status s = file.open(path); !s.ok()) {
            return s.error();
        }
        return readFrames(file, path, summary, want, options);
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, path, "out of memory while reading frames");
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Corrupt, path,
                           std::string("cannot read frames: ") + e.what());
    }
}

FrameFilter memoryFramesUpTo(TimestampNs t) {
    return
        [t](const FrameIndexEntry& f) { return (f.contents & kFrameMemory) != 0 && f.minNs <= t; };
}

FrameFilter framesOverlapping(TimestampNs t0, TimestampNs t1) {
    return [t0, t1](const FrameIndexEntry& f) {
        const bool events = (f.contents & ~uint32_t{kFrameTables}) != 0;
        return events && f.minNs <= t1 && f.maxNs >= t0;
    };
}

}  // namespace vramscope::trace
