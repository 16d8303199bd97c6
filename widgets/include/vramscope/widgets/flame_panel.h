#pragma once
// The allocation flame view dock: which GPU, which moment (cursor, peak, OOM, what grew over the
// selection), how to group, a search box, and the icicle itself.

#include <QWidget>

#include <memory>

#include "vramscope/analysis/memory/flame_tree.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"
#include "vramscope/widgets/zoom_state.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QTimer;

namespace vramscope::widgets {

class FlameView;

/// Shows the live set of one GPU as a FlameView, following the shared ZoomState: in Cursor mode
/// the time under the mouse on any time view (else the clicked time, else the peak), and the GPU
/// under it; WhatGrew shows the difference between the start and the end of the selected range
/// (the visible range when nothing is selected). Cursor moves are coalesced to one rebuild per
/// kRebuildIntervalMs; a rebuild replays at most one checkpoint interval of the GPU's
/// AllocationIndex. GUI thread only.
class FlamePanel : public QWidget {
    Q_OBJECT
public:
    enum class Moment { Cursor, Peak, Oom, WhatGrew };
    static constexpr int kRebuildIntervalMs = 30;

    explicit FlamePanel(ZoomState* zoom, QWidget* parent = nullptr);
    /// Modest, so that a dock of it leaves the timeline most of the window.
    QSize sizeHint() const override { return {520, 240}; }

    void setJob(std::shared_ptr<const analysis::JobModel> job);

    /// GPU shown (one with allocation events); an unknown key is ignored.
    void setGpu(analysis::GpuKey gpu);
    analysis::GpuKey gpu() const { return m_gpu; }
    void setMoment(Moment moment);
    Moment moment() const { return m_moment; }
    void setGrouping(analysis::FlameGrouping grouping);
    analysis::FlameGrouping grouping() const { return m_grouping; }
    void setSearch(const QString& text);

    /// Notes to draw where this view shows their time or object (a point note as a line, a
    /// range as a band, a title label that never covers the data labels); replaces the last set.
    void setNotes(std::vector<trace::Note> notes);
    const std::vector<trace::Note>& notes() const { return m_notes; }

    /// Jumps to the first OOM of the job: selects its GPU and time in the ZoomState, centres the
    /// visible range on it and shows the live set there. False when the job has no OOM.
    bool showOom();
    /// Shows `gpu` grouped by stack and highlights the path of `stack` (a leak survivor).
    void highlightStack(analysis::GpuKey gpu, trace::StackId stack);

    /// Rebuilds the tree now (the timer does it after cursor moves).
    void rebuildNow();
    /// Time the tree shows (the second time for WhatGrew), job time ns.
    int64_t shownTimeNs() const { return m_shownNs; }
    /// The sentence above the chart (what is shown, totals, how to navigate).
    QString caption() const;
    FlameView* view() const { return m_view; }

signals:
    /// A tree was put on screen for job time `timeNs` (after a rebuild, coalesced or not).
    void treeShown(qint64 timeNs);
    /// "Add note on this frame": a note (no id) at the shown time on the shown GPU with
    /// flameFrame set to the frame's path, names root-first joined by ";".
    void noteRequested(const vramscope::trace::Note& note);

protected:
    /// Keeps the wrapped caption tall enough for its text at the panel's width.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void fillGpus();
    void scheduleRebuild();
    void followZoomGpu();
    const analysis::GpuMemoryAnalysis* current() const;
    void updateFrameMarks();
    QString notesCaption() const;

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    analysis::GpuKey m_gpu;
    analysis::GpuKey m_lastFollowed;
    Moment m_moment = Moment::Cursor;
    analysis::FlameGrouping m_grouping = analysis::FlameGrouping::Stack;
    int64_t m_shownNs = 0;
    int64_t m_beforeNs = 0;
    QString m_note;  // why a moment could not be shown (e.g. no OOM on this GPU)

    QComboBox* m_gpuBox;
    QComboBox* m_momentBox;
    QComboBox* m_groupBox;
    QLineEdit* m_searchEdit;
    QLabel* m_caption;
    FlameView* m_view;
    QTimer* m_timer;
    std::vector<trace::Note> m_notes;
};

}  // namespace vramscope::widgets
