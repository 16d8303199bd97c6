#include "window_layout.h"

#include <QDockWidget>
#include <QMainWindow>

#include <algorithm>
#include <array>

namespace vramscope::app {

namespace {

/// Bottom docks, tabbed in this order; the first one is the anchor of the tab group.
constexpr std::array<const char*, 7> kAnalysisDocks = {
    "FlameDock",  "GapsDock",     "CollectivesDock", "LeakDock",
    "AdviceDock", "SegmentsDock", "TopKernelsDock"};

QDockWidget* dock(const QMainWindow& window, const char* name) {
    return window.findChild<QDockWidget*>(QLatin1String(name), Qt::FindDirectChildrenOnly);
}

/// Share of `total` within [least, most] px.
int share(int total, double fraction, int least, int most) {
    return std::clamp(static_cast<int>(total * fraction), least, most);
}

}  // namespace

void placeDocksByDefault(QMainWindow& window) {
    // Every dock floats back into the window first: restoreState or the user may have torn one
    // off, and addDockWidget docks a floating one only once it is no longer floating.
    for (QDockWidget* d : window.findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly)) {
        d->setFloating(false);
    }
    if (QDockWidget* devices = dock(window, "DevicesDock")) {
        window.addDockWidget(Qt::LeftDockWidgetArea, devices);
        devices->show();
    }
    if (QDockWidget* details = dock(window, "DetailsDock")) {
        window.addDockWidget(Qt::RightDockWidgetArea, details);
        details->show();
        if (QDockWidget* notes = dock(window, "NotesDock")) {
            window.addDockWidget(Qt::RightDockWidgetArea, notes);
            window.tabifyDockWidget(details, notes);
            notes->show();
        }
        details->raise();
    }
    QDockWidget* first = nullptr;
    for (const char* name : kAnalysisDocks) {
        QDockWidget* d = dock(window, name);
        if (!d) {
            continue;
        }
        window.addDockWidget(Qt::BottomDockWidgetArea, d);
        if (first) {
            window.tabifyDockWidget(first, d);
        } else {
            first = d;
        }
        d->show();
    }
    if (first) {
        first->raise();
    }
}

void fitDefaultDockSizes(QMainWindow& window) {
    const int w = window.width();
    const int h = window.height();
    // At 1366x768 (the smallest common laptop screen) these leave the centre about 52 % of the
    // window; larger windows give the centre more (tests/gui/window_layout_test.cpp).
    QList<QDockWidget*> sides;
    QList<int> widths;
    if (QDockWidget* devices = dock(window, "DevicesDock")) {
        sides.append(devices);
        widths.append(share(w, 0.13, 160, 340));
    }
    if (QDockWidget* details = dock(window, "DetailsDock")) {
        sides.append(details);
        widths.append(share(w, 0.14, 190, 420));
    }
    window.resizeDocks(sides, widths, Qt::Horizontal);
    if (QDockWidget* flame = dock(window, kAnalysisDocks[0])) {
        window.resizeDocks({flame}, {share(h, 0.2, 140, 320)}, Qt::Vertical);
    }
}

int maxDevicesDockWidth(const QMainWindow& window) {
    return share(window.width(), 0.14, 160, 420);
}

}  // namespace vramscope::app
