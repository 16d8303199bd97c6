#pragma once
// Notes a user (or vramscope's analyses) pinned to a job: the in-memory form, the sidecar file
// beside the trace (`<trace>.vscope-notes.json`, schema in docs/notes-format.md) and the content
// hash that binds a sidecar to the exact bytes of the traces it was written for.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"

namespace vramscope::trace {

/// Version of the sidecar schema this build writes. A reader accepts every version up to this
/// one and refuses a newer one with a message (docs/notes-format.md lists what each added).
inline constexpr int kNotesFormatVersion = 1;

/// One note. Times are job time: nanoseconds from the job's time 0 as the time axis shows it
/// (analysis::JobModel: 0 .. durationNs). A point note has endNs == startNs. Plain value.
struct Note {
    /// Stable id within its document (e.g. "n7"), kept across edits; undo and the Notes list
    /// find a note by it. Unique in a NotesDocument.
    std::string id;
    std::string title;   ///< one line, shown on the views; may be empty (then text's first line)
    std::string text;    ///< free text, several lines
    std::string color;   ///< "#rrggbb"; empty = the views' default note colour
    std::string author;  ///< e.g. the login name; may be empty
    int64_t createdUnixMs = 0;  ///< when it was made, milliseconds since 1970 UTC (0 = unknown)
    int64_t startNs = 0;
    int64_t endNs = 0;
    /// The GPU it is pinned to: the rank's index in the job (trace::Job::ranks, analysis GpuKey
    /// rankIndex) and the device index in that rank. -1 / -1 = every GPU.
    int32_t rankIndex = -1;
    int32_t device = -1;
    /// An allocation it is pinned to: the block's address and the job time of its allocation
    /// event (address 0 = none). Both together name one allocation even when addresses repeat.
    uint64_t allocationAddress = 0;
    int64_t allocationTimeNs = 0;
    /// A flame frame it is pinned to: the frame path from the root, frame names joined by ";"
    /// (the folded-stack convention of flamegraph.pl). Empty = none.
    std::string flameFrame;
    /// Placed by vramscope's analyses ("auto-notes") rather than typed by a user; `kind` says
    /// what found it ("peak", "oom", "staircase", "straggler", "idle-gap"; empty for user notes).
    bool generated = false;
    std::string kind;

    bool isRange() const { return endNs > startNs; }
    bool pinnedToGpu() const { return rankIndex >= 0 && device >= 0; }
    bool operator==(const Note&) const = default;
};

/// One trace file a notes document was written for: its name (file name only, for messages),
/// size and SHA-256 of its bytes as stored on disk (compressed files hash compressed; the same
/// value `sha256sum FILE` prints, lower-case hex).
struct TraceIdentity {
    std::string name;
    uint64_t sizeBytes = 0;
    std::string sha256;
    bool operator==(const TraceIdentity&) const = default;
};

/// A sidecar's contents: the traces (in the job's order) and the notes.
struct NotesDocument {
    int version = kNotesFormatVersion;
    std::vector<TraceIdentity> traces;
    std::vector<Note> notes;
};

/// Size and SHA-256 of the file at `path` (read in 1 MiB blocks; about 1-2 GB/s with OpenSSL's
/// SHA-256). Errors: Io when it cannot be read. The bundled sample and standard input have no
/// identity: callers keep notes of those in memory only.
Result<TraceIdentity> identifyTrace(const std::string& path);

/// The identities of the files behind a job's traces (trace::RankTrace::path, in job order):
/// "ARCHIVE:MEMBER" and "REPORT:pid N" stand for the archive or report file, each file once.
/// Paths with no file on disk (standard input "-", the bundled sample) are left out, so a job
/// of those alone gives an empty list (its notes cannot be bound to it). Errors: Io.
Result<std::vector<TraceIdentity>> identifyTraces(const std::vector<std::string>& rankPaths);

/// Where the notes of a job opened from `inputs` (as given on the command line or in the Open
/// dialog) live: "<input>.vscope-notes.json" for one file; for several files or a directory,
/// beside the first input in sorted order ("<dir>.vscope-notes.json" for a directory is not
/// used: a directory job's sidecar is "<dir>/vscope-notes.json"). Empty for no input.
std::string notesSidecarPath(const std::vector<std::string>& inputs);

/// Reads a sidecar (JSON, docs/notes-format.md). Errors name the file and the byte position:
/// Corrupt for malformed JSON or a field of the wrong type, Unsupported for a newer version,
/// Limit for a file over 64 MiB, Io when it cannot be read. Notes with a bad field are skipped
/// and counted in `skipped` (when given) rather than failing the whole file.
Result<NotesDocument> readNotesFile(const std::string& path, size_t* skipped = nullptr);
/// The same from bytes in memory; `name` is used in messages.
Result<NotesDocument> parseNotes(std::string_view json, const std::string& name,
                                 size_t* skipped = nullptr);

/// Writes `doc` to `path` atomically (a temporary file beside it, then rename), so a crash never
/// leaves half a sidecar. Errors: Io.
Status writeNotesFile(const std::string& path, const NotesDocument& doc);
/// The JSON text writeNotesFile writes (2-space indented, keys in schema order).
std::string formatNotes(const NotesDocument& doc);

/// Ok when `doc` was written for exactly the traces `job` (same SHA-256 values as a multiset;
/// names and order may differ: files get renamed and moved). Otherwise an Invalid error naming
/// the sidecar, the trace that differs and both hashes' first 12 hex digits, e.g. "run.vscope-
/// notes.json was written for a different trace (sha256 3f2a9c... , this file is 81be07...);
/// its notes are not shown".
Status checkNotesBelongTo(const NotesDocument& doc, const std::vector<TraceIdentity>& job,
                          const std::string& sidecarName);

}  // namespace vramscope::trace
