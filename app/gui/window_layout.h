#pragma once
// The main window's default dock layout: where each dock goes, how big it starts, and the version
// of the saved window state that goes with it.

class QMainWindow;

namespace vramscope::app {

/// Version stamped into QMainWindow::saveState. A state saved by an older layout (other docks,
/// other places) is refused by restoreState and the default layout is used instead. Raise it
/// whenever docks are added, renamed or moved by default.
inline constexpr int kWindowStateVersion = 2;

/// Puts every known dock of `window` (found by object name; absent ones are skipped) in its
/// default place and shows it: "DevicesDock" left; "DetailsDock" right with "NotesDock" tabbed
/// behind it; the analysis docks (flame, idle gaps, leak, advice, segments) tabbed together at
/// the bottom. Does not size them (fitDefaultDockSizes) nor choose the raised analysis tab.
void placeDocksByDefault(QMainWindow& window);

/// Sizes the docks for the window's current size so that the centre keeps most of the window:
/// left and right docks about 13 % and 14 % of the width, the bottom docks about 20 % of the
/// height, each within fixed px bounds. Call once the window has its size.
void fitDefaultDockSizes(QMainWindow& window);

/// The most the left "Ranks and GPUs" dock may widen to fit long GPU names, px.
int maxDevicesDockWidth(const QMainWindow& window);

}  // namespace vramscope::app
