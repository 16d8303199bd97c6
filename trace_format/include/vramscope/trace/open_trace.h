#pragma once
// Opening any supported input: .vscope, PyTorch memory snapshot (pickle, .gz), Kineto / Chrome
// trace JSON (.json, .json.gz), Nsight Systems SQLite export (.sqlite), a directory, a .tar /
// .tar.gz / .tgz archive of traces, or several files forming one multi-rank job.

#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/job.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {

const char* toString(InputFormat format);

/// Guesses the format from the first bytes (after gzip decompression), then the file name:
/// the .vscope magic; a pickle (PROTO opcode 0x80 then protocol 2..5); JSON ('{' or '[' after
/// whitespace and an optional UTF-8 byte order mark); the SQLite magic (NsysSqlite: whether it is
/// an Nsight Systems export is told by its tables when opened); else the extension (.vscope,
/// .pickle, .pkl, .json, .sqlite, each optionally .gz). Anything else: Unknown.
InputFormat detectFormat(std::string_view firstBytes, std::string_view fileName);

/// Opens one file of any supported format (gzip-compressed or not), or an archive holding exactly
/// one trace. The path "-" reads standard input to its end (readInputStream; a .vscope, pickle or
/// JSON stream, gzipped or not, told apart by its content), named kStandardInputName. Errors name
/// the file and, where the format has one, the byte offset; an unsupported format, and an archive
/// of several traces (use openJob), are Errors that say so. An Nsight Systems SQLite export is
/// opened in place, read-only (importNsysSqlite); one that profiled several processes is an Error
/// telling to open it as a job. An Nsight Systems report (.nsys-rep, .qdrep) is refused with the
/// `nsys export` command that makes the SQLite export. Importers report what they skipped in
/// report.problems and data.dataLoss.
Result<LoadedTrace> openTrace(const std::string& path, const ReadOptions& options = {});

/// Same, for content already in memory and already decompressed (see decodeInputBytes()); `name`
/// is used in messages and for the format guess. Content with kInputPaddingBytes of spare capacity
/// is parsed without a copy.
Result<LoadedTrace> openTraceBytes(const std::string& bytes, const std::string& name,
                                   const ReadOptions& options = {});

/// Opens files, directories and archives as one job; "-" is standard input, as in openTrace (at
/// most once: a second "-" is an Error). A directory contributes its supported files (.vscope,
/// .json, .json.gz, .pickle, .pkl, .pickle.gz, .sqlite, .tar, .tar.gz, .tgz), not recursing; an
/// archive (.tar, .tar.gz, .tgz, read with libarchive without unpacking to disk) contributes each
/// member trace (JSON, pickle, .vscope or .sqlite, optionally .gz) as a rank.
/// An Nsight Systems export contributes one rank per profiled process (path "REPORT:pid N" when
/// it holds several, see importNsysSqlite); a .nsys-rep / .qdrep goes into Job::skipped with the
/// `nsys export` command that converts it. The rank of each trace comes
/// from its header / distributedInfo ("header"), else from its file name ("file name": rank-N,
/// rankN, rank_N, workerN), else stays kUnknownRank ("unknown"). Inputs that fail go into
/// Job::skipped; fails only when no input could be opened (the Error lists the first failure).
///
/// One rank given twice (a .tar and its unpacked folder, one file named twice) is loaded once:
/// two traces are the same rank when sameRankContent() holds and the rank is known (a trace of
/// unknown rank only when it is also the same file); the later one is dropped and
/// Job::warnings names both sources. Two traces that claim one known rank with different
/// content are both kept, with a warning that they conflict (collectives then match them as
/// two participants of one rank).
Result<Job> openJob(const std::vector<std::string>& paths, const ReadOptions& options = {});

/// Whether two loaded traces are one rank given twice: same rank number (unknown counts as a
/// number), the same header (producer, host, pid, world size, job id, clock domain, devices), the
/// same number of events of every kind, and the same first and last timestamp of every kind.
/// Cheap (no event is compared one by one); two captures of one rank never share all of these.
bool sameRankContent(const TraceData& a, const TraceData& b);

/// Rank parsed from a file name ("rank-3", "rank3", "rank_3", "worker3", "worker-3", any case,
/// directories ignored; the word must not follow a letter), or kUnknownRank.
RankId rankFromFileName(std::string_view fileName);

/// True for names ending in .tar, .tar.gz or .tgz (any case).
bool isArchiveName(std::string_view fileName);

/// True for the file names a directory contributes to openJob (the supported extensions and
/// archives; notes sidecars and macOS "._" files are left out). What `summarize DIR` lists too.
bool isJobMemberName(std::string_view fileName);

}  // namespace vramscope::trace
