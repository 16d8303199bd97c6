#pragma once
// Live viewing: a running producer (the capture agent, or `vramscope-cli replay`) serves its
// .vscope stream on an owner-only Unix domain socket, and viewers (the app, `vramscope-cli attach`
// and `watch`) read it with the same reader as files (docs/DESIGN.md "Live viewing").
//
// What a viewer receives on a socket is a .vscope file, byte for byte: the preamble, the header
// frame (the hello: format version, producer, host, pid, rank, world size, job id, devices, capture
// settings), the producer's backlog of recent frames, then each new frame as it is written. Frames
// a viewer was too slow for are dropped whole for that viewer only, and a DataLoss frame
// (live_frames_dropped) tells it how many, so a recording of a socket reads like a file that says
// what it misses.
//
// Security (no network service, no abstract sockets): sockets live in a directory of their owner
// only, $XDG_RUNTIME_DIR/vramscope or /tmp/vramscope-<uid>; the directory is created 0700 and
// checked with lstat (a directory, not a link, owned by this user, no group or other access)
// before any use; the socket is 0600; both sides check the peer's uid with SO_PEERCRED and refuse
// another user.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace::live {

/// The directory of this user's live sockets: $XDG_RUNTIME_DIR/vramscope when XDG_RUNTIME_DIR is
/// set and absolute, else /tmp/vramscope-<euid>. VRAMSCOPE_LIVE_DIR overrides both (tests, and a
/// forwarded socket's local directory).
std::string socketDirectory();

/// Checks `dir` with lstat: it must be a directory (not a symbolic link), owned by the effective
/// uid, with no group or other permission bits. Errors name the directory and what is wrong:
/// ErrorCode::Io when it does not exist, Invalid when it fails a check.
Status checkSocketDirectory(const std::string& dir);

/// Creates `dir` with mode 0700 when it is missing (its parent must exist), then
/// checkSocketDirectory(): an existing directory of the wrong owner or mode is refused, never
/// repaired.
Status prepareSocketDirectory(const std::string& dir);

/// "<dir>/<host>-<pid>.sock". `host` is cut to 64 characters and anything but [A-Za-z0-9._-]
/// becomes '_', so the path stays under the 108-byte sun_path limit for usual directories.
std::string socketPath(const std::string& dir, std::string_view host, int64_t pid);

/// The short host name of this machine (gethostname up to the first '.').
std::string hostName();

/// One socket found in the socket directory.
struct LiveSocket {
    std::string path;
    std::string host;  ///< from the file name
    int64_t pid = 0;   ///< from the file name
    /// The process is alive (kill(pid, 0) succeeds or fails with EPERM) when `host` is this
    /// machine; sockets of other hosts (forwarded with ssh -L) count as alive.
    bool alive = false;
};

/// The sockets in `dir` named "<host>-<pid>.sock", sorted by host then pid. When `removeStale`,
/// a socket of this host whose process is dead is unlinked and left out (its path added to
/// `removed` when given). A directory that fails checkSocketDirectory() gives its error.
Result<std::vector<LiveSocket>> listSockets(const std::string& dir, bool removeStale,
                                            std::vector<std::string>* removed = nullptr);

/// Connects to the socket at `path`: checks its directory (checkSocketDirectory), that the path
/// is a socket owned by this user, and after connecting that the server runs as this user
/// (SO_PEERCRED). Returns a blocking, close-on-exec descriptor the caller owns.
Result<int> connectSocket(const std::string& path);

/// Reads the preamble and the header frame from a connected live descriptor (at most
/// `timeoutMs` milliseconds) and decodes the header. Errors name `name`. What was read is
/// appended to `received` when given, so the caller can go on reading the stream.
Result<FileHeader> readHello(int fd, const std::string& name, int timeoutMs,
                             std::string* received = nullptr);

/// The length of the longest prefix of `stream` made of the preamble and whole frames (by the
/// frame lengths, CRCs not checked): where a recording of a live stream may be cut cleanly.
/// Returns 0 while the preamble is incomplete.
size_t wholeFramesPrefix(std::string_view stream);

/// One DataLoss frame (live_frames_dropped, `count` frames, `reason`) in the .vscope framing,
/// to be inserted in a stream after its header frame.
std::string dataLossFrame(uint64_t count, const std::string& reason);

/// Settings of a LiveServer.
struct ServerOptions {
    /// The socket to create; empty: socketPath(socketDirectory(), hostName(), getpid()) after
    /// prepareSocketDirectory().
    std::string socketPath;
    /// Recent frames kept for viewers that attach later (the ring), bytes; the oldest leave
    /// first. The preamble and the header frame are always kept. 0 = keep everything (replay).
    uint64_t backlogBytes = uint64_t{64} << 20;
    /// Frames queued for one viewer and not yet sent, bytes, at most; what does not fit is
    /// dropped for that viewer and counted.
    uint64_t queueBytesPerViewer = uint64_t{16} << 20;
    /// Viewers at once; further connections are closed at once and counted as refused.
    int maxViewers = 16;
};

/// Counters of a LiveServer (all since start).
struct ServerStats {
    uint64_t framesWritten = 0;  ///< frames given to write(), header included
    uint64_t bytesWritten = 0;   ///< bytes given to write(), preamble included
    uint64_t viewersAccepted = 0;
    uint64_t viewersRefused = 0;  ///< wrong uid (SO_PEERCRED) or too many viewers
    uint64_t viewersNow = 0;
    uint64_t framesDropped = 0;   ///< frames dropped for a viewer, summed over viewers
    uint64_t backlogEvicted = 0;  ///< frames that left the ring
    uint64_t stickyBytes = 0;     ///< table frames kept apart from the ring (setSticky)
    uint64_t bytesSent = 0;       ///< bytes sent to viewers, summed over viewers
};

/// Serves one producer's stream on a Unix socket. The producer writes through the ByteSink
/// interface (a TraceWriter over it): the first write() must be the preamble, every later one
/// exactly one whole frame (TraceWriter writes that way). write() never blocks on a viewer: it
/// copies the frame once, appends a reference to it to each viewer's queue (or counts a drop)
/// and wakes the server's thread, which accepts viewers and sends with non-blocking sockets.
/// Closing (destructor) stops the thread, closes every viewer and unlinks the socket.
class LiveServer final : public ByteSink {
public:
    /// Creates the socket (0600, in a directory checked with checkSocketDirectory) and starts
    /// the thread. A socket file already at the path is replaced only when it is stale (no
    /// process accepts on it); a live one gives ErrorCode::Invalid naming the path.
    static Result<std::unique_ptr<LiveServer>> start(ServerOptions options);
    ~LiveServer() override;
    LiveServer(const LiveServer&) = delete;
    LiveServer& operator=(const LiveServer&) = delete;

    Status write(std::string_view bytes) override;

    /// While on, the frames written are table frames (string, frame and stack entries, no
    /// events) that every later viewer needs: they are kept apart from the ring, never evicted,
    /// and sent to a late viewer right after the header, before the ring. A producer that writes
    /// each round's new table entries in a frame of their own (TraceWriter::writeEvents on its
    /// tables with the event tables empty) this way keeps every viewer's ids resolvable however
    /// much of the ring was evicted. Their bytes count in ServerStats::stickyBytes.
    void setSticky(bool sticky);
    /// Stops serving: stops the thread, closes every viewer (what was queued for them and not
    /// sent is lost; drain() first to avoid that) and removes the socket file. Later writes are
    /// ignored. Idempotent; the destructor calls it. Call from the process that started the server.
    void stop();
    /// Writes the ring as a .vscope file (mode 0644, replacing `path`): the preamble, the header
    /// frame, the table frames (setSticky), a live_frames_dropped DataLoss frame when frames had
    /// left the ring, then the ring's frames, i.e. about the last ServerOptions::backlogBytes of
    /// the stream. Returns the bytes written; errors (ErrorCode::Invalid before the header, Io)
    /// name the path. Any thread.
    Result<uint64_t> writeRing(const std::string& path) const;
    /// Waits until every viewer's queue is empty or `timeoutMs` passed; true when empty.
    bool drain(int timeoutMs);
    /// Waits until at least `viewers` are attached or `timeoutMs` passed; true when they are.
    bool waitForViewers(uint64_t viewers, int timeoutMs);
    const std::string& path() const;
    ServerStats stats() const;

    struct Impl;

private:
    explicit LiveServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/// Receives the streams of several producers on a thread of its own, for viewers (the CLI's
/// attach and watch, the app). Keeps every byte received per source: its memory grows with the
/// stream, as a recording file would.
/// Thread-safe: the getters may be called from any thread while the receiver runs.
class Receiver {
public:
    /// One producer: its socket and the hello it sent.
    struct Source {
        std::string path;
        FileHeader hello;
    };

    /// Connects to each socket (connectSocket) and reads its hello (readHello, `helloTimeoutMs`
    /// each), then starts receiving. A socket that fails is left out and its error appended to
    /// `failures`; ErrorCode::Io naming the first failure when none connects.
    static Result<std::unique_ptr<Receiver>> connect(const std::vector<std::string>& paths,
                                                     int helloTimeoutMs,
                                                     std::vector<Error>* failures = nullptr);
    ~Receiver();
    Receiver(const Receiver&) = delete;
    Receiver& operator=(const Receiver&) = delete;

    size_t sourceCount() const { return m_sources.size(); }
    const Source& source(size_t i) const { return m_sources[i]; }
    /// Bytes of source `i` that form the preamble and whole frames so far (wholeFramesPrefix).
    uint64_t wholeBytes(size_t i) const;
    /// Bytes received from source `i`, whole frames or not.
    uint64_t receivedBytes(size_t i) const;
    /// A copy of the whole-frame bytes of source `i` from offset `from` (0: the whole stream,
    /// a valid .vscope) to wholeBytes(i); empty when `from` is not below it.
    std::string copyWhole(size_t i, uint64_t from = 0) const;
    /// Whether source `i` closed its stream (its job ended or stopped serving).
    bool ended(size_t i) const;
    bool allEnded() const;
    /// Waits up to `timeoutMs` for new bytes from any source or for every source to end.
    void waitForData(int timeoutMs) const;
    /// Stops receiving and closes every connection (detach); what arrived stays readable.
    void stop();

    struct Impl;

private:
    Receiver(std::vector<Source> sources, std::unique_ptr<Impl> impl);
    std::vector<Source> m_sources;
    std::unique_ptr<Impl> m_impl;
};

/// A sink that writes to `primary` (its errors are this sink's) and hands every write to `live`
/// as well (which neither fails nor blocks). `primary` may be null: the stream then goes to the
/// live server only. Owns `primary`; shares `live`, so that the producer may keep serving (drain,
/// then stop) after the writer and its sink are gone.
std::unique_ptr<ByteSink> makeLiveTee(std::unique_ptr<ByteSink> primary,
                                      std::shared_ptr<LiveServer> live);

}  // namespace vramscope::trace::live
