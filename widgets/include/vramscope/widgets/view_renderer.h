#pragma once
// Views built on their own, without the main window: for `vramscope-cli render` and `review`,
// for `vramscope --screenshot --view`, and for exporting one view. Each view gets its own
// ZoomState, the job, an optional time range and GPU, the notes, and the ExportFrame that
// describes it (title, trace, range, legend, formulas from analysis/view_formulas.h, version).

#include <QSize>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"
#include "vramscope/widgets/view_export.h"
#include "vramscope/widgets/zoom_state.h"

class QWidget;

namespace vramscope::widgets {

/// What to build.
struct ViewRequest {
    /// A name of renderableViews(): analysis::exportableViews() plus "flame-role" (the flame view
    /// grouped by role) and "oom" (the flame view at the first OOM).
    QString view;
    /// Job time shown (ns from the job start); nullopt = the whole job. Time views show it; the
    /// flame view shows what grew over it; the others ignore it.
    std::optional<TimeRange> range;
    /// The GPU shown (rankIndex, device); invalid = every GPU (one-GPU views take their default:
    /// the first with data).
    analysis::GpuKey gpu;
    /// Notes of the job; those outside the range or pinned to another GPU are left out.
    std::vector<trace::Note> notes;
    /// The frame's trace line; empty = the job's title.
    QString traceName;
};

/// One view, built and laid out for `pageSize`, with its zoom state and frame. Owns the widget;
/// shares the job read-only. GUI thread only.
class RenderedView {
public:
    RenderedView(std::unique_ptr<ZoomState> zoom, std::unique_ptr<QWidget> widget,
                 ExportFrame frame);
    ~RenderedView();
    RenderedView(const RenderedView&) = delete;
    RenderedView& operator=(const RenderedView&) = delete;

    QWidget& widget() const { return *m_widget; }
    ZoomState& zoom() const { return *m_zoom; }
    const ExportFrame& frame() const { return m_frame; }
    ExportFrame& frame() { return m_frame; }

private:
    std::unique_ptr<ZoomState> m_zoom;
    std::unique_ptr<QWidget> m_widget;
    ExportFrame m_frame;
};

/// The view names buildView takes, in the review report's order.
QStringList renderableViews();

/// "vramscope X.Y.Z", the version line of every export's footer.
QString exportVersionLine();

/// A result: the view, or (view null) a sentence naming what is wrong:
/// "unknown view \"x\"; known views: timeline, ...", "no GPU 3:0 in this job (GPUs: 0:0, 1:0)",
/// "the range 2 s - 3 s lies outside the job (0 ns - 1.2 s)".
struct BuiltView {
    std::unique_ptr<RenderedView> view;
    QString error;
};

/// Builds `request.view` for `job` (not null) and lays it out for a page of `pageSize` logical
/// px (exportViewSize): ready for exportView or ExportPdfDocument::paintViewPage.
BuiltView buildView(std::shared_ptr<const analysis::JobModel> job, const ViewRequest& request,
                    QSize pageSize);

}  // namespace vramscope::widgets
