#pragma once
// File > Export View...: what to picture (the current view, an analysis dock, or the whole
// window), in which format and size, under which title, and into which file; and the picture's
// frame (title, trace, time range, version) built from the window's state.

#include <QDialog>
#include <QSize>
#include <QString>

#include <functional>
#include <vector>

#include "main_window.h"
#include "vramscope/widgets/view_export.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace vramscope::app {

/// The page size (logical px) at which `widget` keeps the size it has on screen inside the frame:
/// its size plus what the frame's header, notes and footer take (widgets::exportViewSize).
QSize pageSizeKeeping(const QWidget& widget, const widgets::ExportFrame& frame);

/// The frame of a picture of `window`'s job titled `title`: the job's name, the visible time
/// range ("0 ms – 305 ms (305 ms shown of 305 ms)"), the vramscope version, the job's notes in
/// display order (numbered as the views number their markers), and the formulas of `view`
/// (analysis::viewFormulas; those of the memory timeline and the lanes for the whole window).
widgets::ExportFrame exportFrameFor(const MainWindow& window, const QString& title,
                                    const QWidget* target, const QString& view = {});

/// Sets up one export: scope (targets, the first preselected), title (the scope's name until the
/// user types one), format (PNG, SVG, PDF), page size, PNG resolution (1x, 2x or a width in px)
/// and the file. It writes nothing itself: the caller runs widgets::exportView with options().
/// GUI thread only; the targets' widgets must outlive it.
class ExportDialog : public QDialog {
    Q_OBJECT
public:
    /// `pageSizeFor` gives the page size that keeps a target at its size on screen (e.g.
    /// pageSizeKeeping with the frame it will get); the page size fields start there. A target
    /// that is a whole window is always pictured at its size, so its page size is not asked.
    ExportDialog(std::vector<ExportTarget> targets,
                 std::function<QSize(const ExportTarget&)> pageSizeFor,
                 const QString& suggestedPath = QString(), QWidget* parent = nullptr);

    int targetIndex() const;
    const ExportTarget& target() const;
    QString title() const;
    QString path() const;
    /// Format from the format box; size, scale or width from the size and resolution fields.
    widgets::ExportOptions options() const;

    /// For tests and callers: picks a scope, a format, a PNG width (0: back to the scale), the
    /// page size and the file. The file's suffix follows the format.
    void setTargetIndex(int index);
    void setFormat(widgets::ExportFormat format);
    void setPngWidth(int widthPx);
    void setPageSize(QSize size);
    void setPath(const QString& path);

private:
    void onTargetChanged();
    void onFormatChanged();
    void browse();

    std::vector<ExportTarget> m_targets;
    std::function<QSize(const ExportTarget&)> m_pageSizeFor;
    QComboBox* m_scope = nullptr;
    QLineEdit* m_title = nullptr;
    bool m_titleEdited = false;
    QComboBox* m_format = nullptr;
    QSpinBox* m_width = nullptr;
    QSpinBox* m_height = nullptr;
    QComboBox* m_resolution = nullptr;
    QSpinBox* m_pngWidth = nullptr;
    QLineEdit* m_path = nullptr;
};

/// File > Export View... on `window`: runs the dialog over window.exportTargets(), then writes
/// the picture; an error goes to a message box that names the file, success to the status bar.
void runExportView(MainWindow& window);

/// Edit > Copy Image: the current view (exportTargets().front()), framed, at the screen's pixel
/// ratio, onto the clipboard; a message box when it cannot be drawn.
void copyViewImage(MainWindow& window);

}  // namespace vramscope::app
