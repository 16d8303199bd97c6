#pragma once
// What the drawing commands (render, review) share: a QApplication made on demand (offscreen
// when no platform is set, so no display is needed), the notes file, and the
// parsing of --range, --gpu and --size. Built only with Qt (vramscope_cli_qt).

#include <QSize>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_command.h"
#include "job_model_loader.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"
#include "vramscope/widgets/zoom_state.h"

class QApplication;

namespace vramscope::app {

/// The QApplication of a drawing command: the existing one when there is one (tests), else one
/// made now, with QT_QPA_PLATFORM=offscreen when the variable is unset. One per process at a time.
class HeadlessApplication {
public:
    HeadlessApplication();
    ~HeadlessApplication();
    HeadlessApplication(const HeadlessApplication&) = delete;
    HeadlessApplication& operator=(const HeadlessApplication&) = delete;

private:
    std::unique_ptr<QApplication> m_app;
};

/// "1.2s:3.4s" (either side may be empty: the job's start or end; durations as
/// parseDurationNs reads them) into job time; `durationNs` fills an empty side. Nullopt when the
/// text is no such range or its end is not after its start.
std::optional<widgets::TimeRange> parseTimeRange(std::string_view text, int64_t durationNs);

/// "R:G" into the GPU of the job: R is the rank as report prints it (for inputs without a rank
/// number, their position among the inputs, from 0), G the device index. Nullopt when the text
/// is not two integers; an (R, G) the job lacks gives a key buildView refuses with the GPUs it has.
std::optional<analysis::GpuKey> parseGpu(std::string_view text, const analysis::JobModel& job);

/// "WxH" between 200x150 and 20000x20000 logical px; nullopt otherwise.
std::optional<QSize> parseSize(std::string_view text);

/// The notes for `job`, opened from `paths` (the sidecar must name the inputs that are files
/// and the rank files read from directories, by content hash): from `notesPath` when given (an
/// unreadable file or one written for other traces is an error: false after writing the message,
/// exit 3), else from the sidecar beside the inputs (trace::notesSidecarPath) when there is one
/// (one of other traces is left out, with a warning on ctx.err). `notes` is left empty when there
/// are none.
bool readJobNotes(CommandContext& ctx, const std::vector<std::string>& paths,
                  const analysis::JobModel& job, const std::optional<std::string>& notesPath,
                  std::vector<trace::Note>& notes);

}  // namespace vramscope::app
