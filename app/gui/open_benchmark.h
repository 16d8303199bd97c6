#pragma once
// The viewer's own measurement of opening a file, for bench/run_gui_open_bench.sh: how long each
// picture of an open took and how much memory the process held then. Off unless the environment
// sets VRAMSCOPE_BENCH_OPEN; the window and the summary controller call markOpenStage and know
// nothing else of it.

#include <QByteArray>
#include <QString>

#include <cstdint>

namespace vramscope::app {

class MainWindow;

/// The moments of an open that the benchmark reports. Started starts the clock (openPaths);
/// Overview (drawn from summaries), Index (a job index's overview) and Detail (every event
/// loaded, or the rank of an index) are pictures on screen.
enum class OpenStage { Started, Overview, Index, Detail };

/// The name a stage has in the benchmark's lines: "start", "overview", "index", "detail".
const char* openStageName(OpenStage stage);

/// The line printed for `stage`: "bench-open STAGE ms=T rss_kb=R hwm_kb=H", T the milliseconds
/// since the open started, R and H the VmRSS and VmHWM fields (kB) of `procStatus`, the text of
/// /proc/self/status (proc(5)); a field that is missing reads -1. bench/run_gui_open_bench.sh
/// parses exactly this.
QString openStageLine(OpenStage stage, int64_t elapsedMs, const QByteArray& procStatus);

/// The window's one benchmark hook; does nothing unless VRAMSCOPE_BENCH_OPEN is set. Started
/// starts the clock. Any other stage first replots `window`'s timeline (so that the picture is
/// drawn before the clock is read), then prints openStageLine on stderr; when `last` (no later
/// picture comes for this open) and the variable is "exit", the application then quits.
/// GUI thread only; one clock per process.
void markOpenStage(MainWindow& window, OpenStage stage, bool last = true);

}  // namespace vramscope::app
