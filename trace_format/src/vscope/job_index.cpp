#include "vramscope/trace/job_index.h"

#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <tuple>

#include "vramscope/trace/output_file.h"
#include "vramscope/trace/v1/trace.pb.h"
#include "vscope/frame_bytes.h"
#include "vscope/summary_proto.h"

namespace vramscope::trace {
namespace {

using detail::putLe32;
using detail::readLe32;

namespace fs = std::filesystem;

/// Payload bytes after which an entry frame is closed. Small enough that a damaged frame loses
/// few ranks (a 100 k-event rank's entry is ~10 KB: about 100 ranks per frame), large enough
/// that zstd finds the repetition between ranks.
constexpr size_t kEntryFrameBytes = 1u << 20;
/// Problems kept in a report (as the trace reader keeps).
constexpr size_t kMaxIndexProblems = 64;

/// One frame of the .vscope framing (trace.proto): u32 length, u8 encoding, payload, CRC-32C of
/// encoding byte and payload. Compressed with zstd when that makes it smaller.
std::string frameOf(const v1::Chunk& chunk) {
    const std::string raw = chunk.SerializeAsString();
    std::string packed(ZSTD_compressBound(raw.size()), '\0');
    const size_t got = ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 3);
    const bool zstd = !ZSTD_isError(got) && got < raw.size();
    const std::string_view payload = zstd ? std::string_view(packed.data(), got) : raw;
    std::string frame;
    frame.reserve(kFrameHeadBytes + payload.size() + kFrameTailBytes);
    putLe32(frame, static_cast<uint32_t>(payload.size()));
    frame.push_back(static_cast<char>(zstd ? kEncodingZstd : kEncodingRaw));
    frame.append(payload);
    putLe32(frame, crc32c(std::string_view(frame).substr(4)));
    return frame;
}

void entryToProto(const JobIndexEntry& e, v1::JobIndexEntry& out) {
    out.set_path(e.path);
    out.set_file_bytes(e.fileBytes);
    out.set_modified_unix_ns(e.modifiedUnixNs);
    detail::headerToProto(e.summary.header, *out.mutable_header());
    if (e.problem.empty()) {
        detail::summaryToProto(e.summary, *out.mutable_summary());
    } else {
        out.set_problem(e.problem);
    }
}

/// The payload of the frame at `offset` (CRC checked, zstd undone), or why it cannot be had.
/// `frameBytes` is set whenever the frame's length could be read and fits the file.
std::string framePayload(std::string_view file, uint64_t offset, uint64_t& frameBytes,
                         std::string& scratch, std::string_view& payload, bool& truncated) {
    truncated = false;
    frameBytes = 0;
    const uint64_t remaining = file.size() - offset;
    if (remaining < kFrameHeadBytes) {
        truncated = true;
        return "the file ends inside a frame's head";
    }
    const uint32_t length = readLe32(file.data() + offset);
    if (length > kMaxFramePayloadBytes) {
        truncated = true;  // nothing after it can be found
        return "a frame declares " + std::to_string(length) +
               " payload bytes, more than the limit of " + std::to_string(kMaxFramePayloadBytes);
    }
    if (kFrameHeadBytes + uint64_t{length} + kFrameTailBytes > remaining) {
        truncated = true;
        return "the file ends inside a frame";
    }
    frameBytes = kFrameHeadBytes + uint64_t{length} + kFrameTailBytes;
    const std::string_view body = file.substr(offset + kFrameHeadBytes, length);
    if (readLe32(body.data() + length) != crc32c(file.substr(offset + 4, 1 + uint64_t{length}))) {
        return "its CRC-32C does not match its contents";
    }
    const auto encoding = static_cast<uint8_t>(file[offset + 4]);
    if (encoding == kEncodingRaw) {
        payload = body;
        return {};
    }
    if (encoding != kEncodingZstd) {
        return "it uses payload encoding " + std::to_string(encoding) +
               ", which this build does not know";
    }
    const unsigned long long content = ZSTD_getFrameContentSize(body.data(), body.size());
    if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ||
        content > kMaxFramePayloadBytes) {
        return "its zstd payload is damaged or claims too many bytes";
    }
    scratch.resize(static_cast<size_t>(content));
    const size_t got = ZSTD_decompress(scratch.data(), scratch.size(), body.data(), body.size());
    if (ZSTD_isError(got) || got != content) {
        return "its zstd payload does not decompress";
    }
    payload = scratch;
    return {};
}

/// Parses the header frame; Error when the bytes are no job index.
Status readIndexHeader(std::string_view file, const std::string& name, FileHeader& header,
                       uint64_t& offset) {
    if (file.size() < kMagic.size() || file.substr(0, kMagic.size()) != kMagic) {
        return Error::make(ErrorCode::Unsupported, name,
                           "not a job index (it does not start with the .vscope magic bytes)")
            .atByte(0);
    }
    if (file.size() < kPreambleBytes) {
        return Error::make(ErrorCode::Truncated, name, "the file ends inside its preamble")
            .atByte(static_cast<int64_t>(file.size()));
    }
    const auto major = static_cast<uint32_t>(static_cast<uint8_t>(file[8])) |
                       static_cast<uint32_t>(static_cast<uint8_t>(file[9])) << 8;
    if (major > kFormatMajor || major == 0) {
        return Error::make(ErrorCode::Unsupported, name,
                           "written in format major " + std::to_string(major) +
                               ", which this build does not read")
            .atByte(8);
    }
    uint64_t frameBytes = 0;
    std::string scratch;
    std::string_view payload;
    bool truncated = false;
    const std::string why =
        framePayload(file, kPreambleBytes, frameBytes, scratch, payload, truncated);
    v1::Chunk chunk;
    if (why.empty() && !chunk.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
        return Error::make(ErrorCode::Corrupt, name, "the header frame is not a valid Chunk")
            .atByte(kPreambleBytes)
            .atRecord(0);
    }
    if (!why.empty()) {
        return Error::make(truncated ? ErrorCode::Truncated : ErrorCode::Corrupt, name,
                           "the header frame cannot be read: " + why)
            .atByte(kPreambleBytes)
            .atRecord(0);
    }
    detail::headerFromProto(chunk.header(), header);
    if (header.producer != kJobIndexProducer) {
        return Error::make(ErrorCode::Unsupported, name,
                           "this is a .vscope trace (producer \"" + header.producer +
                               "\"), not a job index; open it as a trace, or make an index of "
                               "it with vramscope-cli summarize")
            .atByte(kPreambleBytes)
            .atRecord(0);
    }
    offset = kPreambleBytes + frameBytes;
    return Status::success();
}

/// Sorts by (rank, host, pid, path), unknown ranks last.
void sortEntries(std::vector<JobIndexEntry>& ranks) {
    std::stable_sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) {
        const auto& ha = a.summary.header;
        const auto& hb = b.summary.header;
        const int64_t ra = toInt(ha.rank) < 0 ? INT64_MAX : toInt(ha.rank);
        const int64_t rb = toInt(hb.rank) < 0 ? INT64_MAX : toInt(hb.rank);
        return std::tie(ra, ha.host, ha.pid, a.path) < std::tie(rb, hb.host, hb.pid, b.path);
    });
}

/// Reads the entries of the frames after the header into `out`.
void readEntries(std::string_view file, uint64_t offset, JobIndexRead& out) {
    auto& report = out.report;
    auto problem = [&](ErrorCode code, uint64_t at, uint64_t frame, std::string msg) {
        report.complete = false;
        if (report.problems.size() < kMaxIndexProblems) {
            report.problems.push_back(Error::make(code, report.fileName, std::move(msg))
                                          .atByte(static_cast<int64_t>(at))
                                          .atRecord(static_cast<int64_t>(frame)));
        }
    };
    std::string scratch;
    v1::Chunk chunk;
    for (uint64_t frame = 1; offset < file.size(); ++frame) {
        uint64_t frameBytes = 0;
        std::string_view payload;
        bool truncated = false;
        std::string why = framePayload(file, offset, frameBytes, scratch, payload, truncated);
        if (truncated) {
            report.truncated = true;
            report.truncatedAtByte = static_cast<int64_t>(offset);
            report.truncatedFrame = frame;
            problem(ErrorCode::Truncated, offset, frame,
                    report.fileName + " ends inside frame " + std::to_string(frame) + " (byte " +
                        std::to_string(offset) + "): " + why + "; the ranks of " +
                        std::to_string(report.framesLoaded) +
                        " frames were loaded. The summarize run was probably interrupted.");
            return;
        }
        if (why.empty() &&
            !chunk.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
            why = "its payload is not a valid Chunk message";
        }
        if (!why.empty()) {
            ++report.framesSkipped;
            problem(ErrorCode::Corrupt, offset, frame,
                    "frame " + std::to_string(frame) + " skipped (its ranks are missing): " + why);
            offset += frameBytes;
            continue;
        }
        for (const auto& in : chunk.job_index()) {
            JobIndexEntry e;
            e.path = in.path();
            e.fileBytes = in.file_bytes();
            e.modifiedUnixNs = in.modified_unix_ns();
            e.problem = in.problem();
            if (in.has_summary()) {
                uint64_t badValues = 0;
                e.summary = detail::summaryFromProto(in.summary(), badValues);
                report.idsReset += badValues;
            }
            detail::headerFromProto(in.header(), e.summary.header);
            if (e.path.empty()) {
                problem(ErrorCode::Corrupt, offset, frame,
                        "an entry of frame " + std::to_string(frame) +
                            " names no file and was left out");
                continue;
            }
            out.index.ranks.push_back(std::move(e));
        }
        ++report.framesLoaded;
        report.bytesLoaded += frameBytes;
        offset += frameBytes;
    }
}

}  // namespace

Status writeJobIndex(const std::string& path, const JobIndex& index) {
    return writeOutputFile(path, [&](std::ostream& os) -> Status {
        std::string preamble(kMagic);
        for (const uint32_t v : {kFormatMajor, kFormatMinor}) {
            preamble.push_back(static_cast<char>(v & 0xFFu));
            preamble.push_back(static_cast<char>((v >> 8) & 0xFFu));
        }
        os << preamble;
        v1::Chunk head;
        FileHeader header;
        header.producer = std::string(kJobIndexProducer);
        detail::headerToProto(header, *head.mutable_header());
        os << frameOf(head);
        v1::Chunk chunk;
        size_t chunkBytes = 0;
        for (const auto& e : index.ranks) {
            v1::JobIndexEntry entry;
            entryToProto(e, entry);
            if (entry.ByteSizeLong() > kMaxFramePayloadBytes / 2) {
                // Cannot happen for summaries of real files (blocks are 256 steps); keep the
                // rank listed rather than write a frame no reader accepts.
                entry.clear_summary();
                entry.set_problem("its summary is too large for a job index frame");
            }
            chunkBytes += entry.ByteSizeLong();
            *chunk.add_job_index() = std::move(entry);
            if (chunkBytes >= kEntryFrameBytes) {
                os << frameOf(chunk);
                chunk.Clear();
                chunkBytes = 0;
            }
        }
        if (chunk.job_index_size() > 0) {
            os << frameOf(chunk);
        }
        return Status::success();
    });
}

bool looksLikeJobIndex(std::string_view bytes) {
    FileHeader header;
    uint64_t offset = 0;
    return readIndexHeader(bytes, "", header, offset).ok();
}

Result<JobIndexRead> readJobIndex(const std::string& path, const ReadOptions& options) {
    try {
        std::ifstream in(path, std::ios::binary);
        std::error_code ec;
        const auto size = fs::file_size(path, ec);
        if (!in || ec || fs::is_directory(path)) {
            return Error::make(ErrorCode::Io, path, "cannot open the job index");
        }
        if (size > options.maxInputBytes) {
            return Error::make(ErrorCode::Limit, path,
                               "the job index is " + std::to_string(size) +
                                   " bytes, more than the input limit of " +
                                   std::to_string(options.maxInputBytes));
        }
        std::string file(static_cast<size_t>(size), '\0');
        in.read(file.data(), static_cast<std::streamsize>(size));
        file.resize(static_cast<size_t>(in.gcount()));
        JobIndexRead out;
        out.report.fileName = path;
        out.report.fileBytes = file.size();
        FileHeader header;
        uint64_t offset = 0;
        if (Status s = readIndexHeader(file, path, header, offset); !s.ok()) {
            if (file.empty()) {
                return Error::make(ErrorCode::Truncated, path, "the file is empty").atByte(0);
            }
            return s.error();
        }
        out.report.framesLoaded = 1;
        out.report.bytesLoaded = offset;
        readEntries(file, offset, out);
        sortEntries(out.index.ranks);
        if (!reportProgress(options.progress, file.size(), file.size(), "Reading " + path)) {
            return Error::cancelled(path);
        }
        return out;
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, path, "out of memory while reading the job index");
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Corrupt, path,
                           std::string("cannot read the job index: ") + e.what());
    }
}

JobIndex mergeJobIndexes(std::vector<std::pair<std::string, JobIndex>> indexesByFolder,
                         const std::string& outputDir) {
    std::error_code ec;
    const fs::path outDir =
        fs::absolute(outputDir.empty() ? "." : outputDir, ec).lexically_normal();
    std::map<std::string, JobIndexEntry> byFile;  // absolute normal path -> newest entry
    for (auto& [folder, index] : indexesByFolder) {
        const fs::path base = fs::absolute(folder.empty() ? "." : folder, ec).lexically_normal();
        for (auto& e : index.ranks) {
            const fs::path given(e.path);
            const fs::path file = (given.is_absolute() ? given : base / given).lexically_normal();
            const fs::path rel = file.lexically_relative(outDir);
            e.path = rel.empty() ? file.string() : rel.string();
            auto [it, fresh] = byFile.try_emplace(file.string(), std::move(e));
            // Later inputs win ties: a rerun's index is usually given after the first run's.
            if (!fresh && e.modifiedUnixNs >= it->second.modifiedUnixNs) {
                it->second = std::move(e);
            }
        }
    }
    JobIndex out;
    out.ranks.reserve(byFile.size());
    for (auto& [file, e] : byFile) {
        out.ranks.push_back(std::move(e));
    }
    sortEntries(out.ranks);
    return out;
}

}  // namespace vramscope::trace
