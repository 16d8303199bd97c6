// MainWindow: menus, keyboard shortcuts, theme, recent files, help.
#include <QActionGroup>
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>
#include <QTableWidget>
#include <QVBoxLayout>

#include <map>

#include "data_export_dialog.h"
#include "export_dialog.h"
#include "main_window.h"
#include "summary_controller.h"
#include "summary_open.h"
#include "vramscope/widgets/device_tree_model.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::app {

namespace {
constexpr int kMaxRecent = 10;
constexpr double kZoomStep = 0.7;  // W / S: the visible span shrinks or grows by this factor
constexpr double kPanStep = 0.2;   // A / D: share of the visible span moved

/// The mouse gestures, listed with the keyboard shortcuts in Help.
const char* const kMouseHelp[][2] = {
    {"Wheel", "Zoom around the pointer"},
    {"Drag", "Pan"},
    {"Shift+drag or right-drag", "Select a time range"},
    {"Click a plot", "List the allocations alive at that time (Details)"},
    {"Double-click a plot", "Show the whole job"},
    {"Click an iteration or NVTX range", "Zoom to it"},
};

QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2e);
    const QColor base(0x1e, 0x1e, 0x21);
    const QColor text(0xe6, 0xe6, 0xe6);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80));
    return p;
}
}  // namespace

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Open traces (several files = one job)"), QString(),
            tr("Traces and job indexes (*.vscope *.vscope-index *.json *.json.gz *.pickle "
               "*.pickle.gz *.pkl *.sqlite *.tar.gz "
               "*.tgz);;Nsight Systems SQLite exports (*.sqlite);;All files (*)"));
        if (!files.isEmpty()) {
            openPaths(files);
        }
    });
    open->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &Directory…"), this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Open a directory of rank traces"));
        if (!dir.isEmpty()) {
            openPaths({dir});
        }
    });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("Open the Bundled &Sample"), this, [this] { openPaths({}); });
    file->addSeparator();
    QAction* attach =
        file->addAction(tr("&Attach to Running Job…"), this, &MainWindow::chooseAndAttach);
    attach->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    attach->setToolTip(tr("Watch your jobs running under vramscope-run as they run"));
    m_detachAction = file->addAction(tr("De&tach"), this, &MainWindow::detachLive);
    m_detachAction->setEnabled(false);
    m_saveReceivedAction =
        file->addAction(tr("Save &Received Data As…"), this, &MainWindow::saveReceived);
    m_saveReceivedAction->setEnabled(false);
    m_followAction = new QAction(tr("Follow the Newest Data"), this);
    m_followAction->setShortcut(QKeySequence(Qt::Key_End));
    m_followAction->setEnabled(false);
    connect(m_followAction, &QAction::triggered, this, &MainWindow::followLive);
    file->addAction(m_followAction);
    file->addAction(tr("Memory &Budget…"), this, [this] {
        // Settings: above this estimate of a file's events only the window zoomed into loads.
        bool ok = false;
        const double gib = QInputDialog::getDouble(
            this, tr("Memory budget"),
            tr("Memory for events, GiB (default a quarter of this machine's memory, %1 GiB):")
                .arg(double(defaultMemoryBudgetBytes()) / double(1ULL << 30), 0, 'f', 1),
            double(memoryBudgetBytes()) / double(1ULL << 30), 0.01, 1e6, 2, &ok);
        if (ok) {
            setMemoryBudgetBytes(static_cast<uint64_t>(gib * double(1ULL << 30)));
        }
    });
    file->addSeparator();
    file->addAction(tr("Save &Screenshot…"), this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Save a screenshot"),
                                         QStringLiteral("vramscope.png"), tr("PNG images (*.png)"));
        if (!path.isEmpty() && !grab().save(path, "PNG")) {
            QMessageBox::warning(this, tr("Screenshot"), tr("Could not write %1.").arg(path));
        }
    });
    QAction* exportView =
        file->addAction(tr("&Export View…"), this, [this] { runExportView(*this); });
    exportView->setObjectName(QStringLiteral("ExportViewAction"));
    exportView->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    exportView->setToolTip(
        tr("Save the current view or the whole window as PNG, SVG or PDF, "
           "framed with its title, trace, time range and notes"));
    file->addAction(tr("Export &Data…"), this, [this] {
        if (!m_job) {
            return;
        }
        DataExportDialog dialog(*m_job, m_zoom->selectedGpu(), m_zoom->selectedTimeNs(), this);
        if (dialog.exec() == QDialog::Accepted) {
            startDataExport(this, m_job, dialog.request());
        }
    });
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* copy = edit->addAction(tr("&Copy Image"), this, [this] { copyViewImage(*this); });
    copy->setObjectName(QStringLiteral("CopyImageAction"));
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    copy->setShortcutContext(Qt::WindowShortcut);
    copy->setToolTip(
        tr("Copy the current view, framed as File > Export View frames it, to the "
           "clipboard (Ctrl+Shift+C)"));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    createViewActions(view);
    createHelpMenu();
}

void MainWindow::createViewActions(QMenu* view) {
    view->addAction(m_summaries->backToIndexAction());
    addAction(m_summaries->backToIndexAction());
    view->addSeparator();
    auto addNav = [this, view](const QString& text, const QKeySequence& key, auto fn) {
        QAction* a = view->addAction(text, this, fn);
        a->setShortcut(key);
        a->setShortcutContext(Qt::WindowShortcut);
        addAction(a);
        return a;
    };
    auto anchor = [this] {
        return m_zoom->hasCursor()
                   ? m_zoom->cursorNs()
                   : m_zoom->visibleRange().startNs + m_zoom->visibleRange().durationNs() / 2;
    };
    addNav(tr("Zoom &In"), QKeySequence(Qt::Key_W),
           [this, anchor] { m_zoom->zoomAround(anchor(), kZoomStep); });
    addNav(tr("Zoom &Out"), QKeySequence(Qt::Key_S),
           [this, anchor] { m_zoom->zoomAround(anchor(), 1.0 / kZoomStep); });
    addNav(tr("Pan &Left"), QKeySequence(Qt::Key_A), [this] { m_zoom->pan(-kPanStep); });
    addNav(tr("Pan &Right"), QKeySequence(Qt::Key_D), [this] { m_zoom->pan(kPanStep); });
    addNav(tr("Show the &Whole Job"), QKeySequence(Qt::Key_Home), [this] { m_zoom->resetZoom(); });
    addNav(tr("&Zoom to Selection"), QKeySequence(Qt::Key_Z), [this] {
        if (m_zoom->hasSelection()) {
            m_zoom->setVisibleRange(m_zoom->selection());
        }
    });
    addNav(tr("&Clear Selection"), QKeySequence(Qt::Key_Escape),
           [this] { m_zoom->clearSelection(); });
    view->addSeparator();

    QMenu* layout = view->addMenu(tr("GPU &Layout"));
    m_layoutGroup = new QActionGroup(this);
    const std::pair<QString, widgets::TimelineView::LayoutMode> modes[] = {
        {tr("&Automatic (compact above %1 GPUs)").arg(widgets::TimelineView::kCompactThreshold),
         widgets::TimelineView::LayoutMode::Automatic},
        {tr("&One Plot per GPU"), widgets::TimelineView::LayoutMode::Stacked},
        {tr("&Compact: Heat Strip of All GPUs"), widgets::TimelineView::LayoutMode::Compact},
    };
    for (const auto& [text, mode] : modes) {
        QAction* a =
            layout->addAction(text, this, [this, mode = mode] { m_timeline->setLayoutMode(mode); });
        a->setCheckable(true);
        a->setChecked(mode == m_timeline->layoutMode());
        m_layoutGroup->addAction(a);
    }
    QAction* capacity = view->addAction(tr("Scale Memory Axis to &Capacity"));
    capacity->setCheckable(true);
    capacity->setShortcut(QKeySequence(Qt::Key_C));
    addAction(capacity);
    connect(capacity, &QAction::toggled, m_timeline, &widgets::TimelineView::setScaleToCapacity);
    m_stackByRole = view->addAction(tr("Stack Allocated Memory by &Role"));
    m_stackByRole->setCheckable(true);
    m_stackByRole->setShortcut(QKeySequence(Qt::Key_R));
    m_stackByRole->setToolTip(
        tr("Draw the allocated memory as stacked areas, one per role: parameters, gradients, "
           "optimizer state, activations, ... (R)"));
    addAction(m_stackByRole);
    connect(m_stackByRole, &QAction::toggled, m_timeline, &widgets::TimelineView::setStackByRole);

    QMenu* theme = view->addMenu(tr("&Theme"));
    m_themeGroup = new QActionGroup(this);
    const std::pair<QString, QString> themes[] = {
        {tr("Follow the &System"), QStringLiteral("system")},
        {tr("&Light"), QStringLiteral("light")},
        {tr("&Dark"), QStringLiteral("dark")}};
    for (const auto& [text, name] : themes) {
        QAction* a = theme->addAction(text, this, [this, name = name] {
            QSettings().setValue(QStringLiteral("view/theme"), name);
            applyTheme(name);
        });
        a->setCheckable(true);
        a->setData(name);
        m_themeGroup->addAction(a);
    }
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        view->addAction(dock->toggleViewAction());
    }
    view->addSeparator();
    QAction* reset = view->addAction(tr("Reset &Layout"), this, &MainWindow::resetLayout);
    reset->setToolTip(tr("Put every panel back in its default place and size"));
    reset->setObjectName(QStringLiteral("ResetLayoutAction"));
}

namespace {
/// The view itself rather than the scroll area around it (the lanes tab, the analysis docks): a
/// picture shows the whole view, laid out at the picture's size, not the part scrolled to.
QWidget* unwrapped(QWidget* w) {
    auto* scroll = qobject_cast<QScrollArea*>(w);
    return scroll && scroll->widget() ? scroll->widget() : w;
}
}  // namespace

std::vector<ExportTarget> MainWindow::exportTargets() {
    // Docks that show a view of analysis::exportableViews(), by object name.
    static const std::map<QString, QString> dockViews = {
        {QStringLiteral("FlameDock"), QStringLiteral("flame")},
        {QStringLiteral("GapsDock"), QStringLiteral("gaps")},
        {QStringLiteral("LeakDock"), QStringLiteral("leak")},
        {QStringLiteral("AdviceDock"), QStringLiteral("advice")},
        {QStringLiteral("SegmentsDock"), QStringLiteral("segments")},
    };
    std::vector<ExportTarget> out;
    QWidget* tab = m_tabs->currentWidget();
    const bool timeline = tab == m_timeline;
    out.push_back(
        {timeline ? tr("Memory timeline") : m_tabs->tabText(m_tabs->currentIndex()), unwrapped(tab),
         timeline
             ? (m_stackByRole->isChecked() ? QStringLiteral("roles") : QStringLiteral("timeline"))
             : QStringLiteral("lanes")});
    // The docks in front of their tab group first (what the user sees), then those behind.
    std::vector<ExportTarget> behind;
    for (QDockWidget* dock : findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly)) {
        if (dock->isHidden() || !dock->widget()) {
            continue;
        }
        const auto view = dockViews.find(dock->objectName());
        ExportTarget t{dock->windowTitle(), unwrapped(dock->widget()),
                       view == dockViews.end() ? QString() : view->second};
        (dock->visibleRegion().isEmpty() ? behind : out).push_back(t);
    }
    out.insert(out.end(), behind.begin(), behind.end());
    out.push_back({tr("Whole window"), this, QString()});
    return out;
}

void MainWindow::createHelpMenu() {
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
    keys->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&About vramscope"), this, &MainWindow::showAbout);
}

void MainWindow::applyTheme(const QString& theme) {
    static const QPalette systemPalette = QApplication::palette();
    static const QString systemStyle = QApplication::style()->name();
    m_applyingTheme = true;
    if (theme == QLatin1String("dark")) {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(darkPalette());
    } else if (theme == QLatin1String("light")) {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(QApplication::style()->standardPalette());
    } else {
        QApplication::setStyle(QStyleFactory::create(systemStyle));
        QApplication::setPalette(systemPalette);
    }
    m_applyingTheme = false;
    for (QAction* a : m_themeGroup->actions()) {
        a->setChecked(a->data().toString() == theme);
    }
    m_timeline->applyColors(widgets::PlotColors::fromPalette(palette()));
    if (m_job) {
        const std::vector<analysis::GpuKey> shown = m_timeline->shownGpus();
        m_deviceModel->setJob(m_job, widgets::PlotColors::fromPalette(palette()).dark);
        m_deviceModel->setCheckedGpus(shown);
    }
}

void MainWindow::addRecent(const QStringList& paths) {
    QStringList absolute;
    for (const QString& p : paths) {
        absolute.append(QFileInfo(p).absoluteFilePath());
    }
    const QString entry = absolute.join(QLatin1Char('\n'));
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recent/jobs")).toStringList();
    recent.removeAll(entry);
    recent.prepend(entry);
    while (recent.size() > kMaxRecent) {
        recent.removeLast();
    }
    settings.setValue(QStringLiteral("recent/jobs"), recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recent/jobs")).toStringList();
    for (const QString& entry : recent) {
        const QStringList paths = entry.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        if (paths.isEmpty()) {
            continue;
        }
        const QString text = paths.size() == 1
                                 ? paths.front()
                                 : tr("%1 and %n more", nullptr, static_cast<int>(paths.size() - 1))
                                       .arg(paths.front());
        m_recentMenu->addAction(text, this, [this, paths] { openPaths(paths); });
    }
    if (recent.isEmpty()) {
        m_recentMenu->addAction(tr("(none yet)"))->setEnabled(false);
    } else {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear the List"), this, [this] {
            QSettings().remove(QStringLiteral("recent/jobs"));
            updateRecentMenu();
        });
    }
}

void MainWindow::showShortcuts() {
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Keyboard and Mouse"));
    auto* layout = new QVBoxLayout(&dialog);
    auto* table = new QTableWidget(&dialog);
    table->setColumnCount(2);
    table->setHorizontalHeaderLabels({tr("Keys"), tr("Does")});
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto addRow = [table](const QString& keys, const QString& what) {
        const int row = table->rowCount();
        table->insertRow(row);
        table->setItem(row, 0, new QTableWidgetItem(keys));
        table->setItem(row, 1, new QTableWidgetItem(what));
    };
    const QList<QAction*> actions = findChildren<QAction*>();
    for (QAction* a : actions) {
        if (!a->shortcut().isEmpty()) {
            addRow(a->shortcut().toString(QKeySequence::NativeText),
                   a->text().remove(QLatin1Char('&')).remove(QStringLiteral("…")));
        }
    }
    for (const auto& [keys, what] : kMouseHelp) {
        addRow(tr(keys), tr(what));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(table);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(520, 480);
    dialog.exec();
}

void MainWindow::showAbout() {
    QMessageBox::about(
        this, tr("About vramscope"),
        tr("<h3>vramscope %1</h3><p>Where GPU memory goes in a training job, and where the GPUs "
           "sit idle.</p><p>Opens .vscope traces, PyTorch memory snapshots and PyTorch profiler "
           "(Kineto) traces; a directory or several files open as one multi-rank job.</p>"
           "<p>Memory is shown in binary units (1 GiB = 2<sup>30</sup> bytes); times are "
           "relative to the first event of the job.</p>")
            .arg(QApplication::applicationVersion()));
}

}  // namespace vramscope::app
