#pragma once
// An icicle chart of a flame tree: the root spans the width, children below it, widths
// proportional to bytes.

#include <QColor>
#include <QWidget>

#include <memory>
#include <vector>

#include "vramscope/analysis/memory/flame_tree.h"

namespace vramscope::widgets {

/// A frame label as shown in narrow places: analysis::compactName ("function
/// (/long/path/file.py:12)" reads "function (file.py:12)", "void at::native::k<at::A>(...)"
/// "k<A>").
QString shortFrameLabel(const std::string& label);

/// Draws one analysis::FlameTree (root at the top, each row one level deeper, width = bytes of
/// the node relative to the node zoomed into). For a diff tree ("what grew"), widths are the
/// bytes at the second time and colours show the change: red grew, blue shrank (the convention of
/// flamegraph.pl's differential graphs). Hover shows bytes, share and count; a click zooms into a
/// node (clicking an ancestor bar above zooms back out; double-click or Escape resets); a search
/// string highlights matching frames and dims the rest. Nodes under one pixel are not drawn.
/// GUI thread only; holds its own copy of the tree.
class FlameView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kRowHeight = 20;

    /// A note pinned to a frame: the frame's path (names from the root's child down), the note's
    /// number and colour.
    struct FrameMark {
        std::vector<std::string> path;
        int number = 0;
        QColor color;
    };

    explicit FlameView(QWidget* parent = nullptr);

    /// Shows `tree`. Keeps the zoomed node when a node with the same path exists in the new tree.
    void setTree(analysis::FlameTree tree);
    const analysis::FlameTree& tree() const { return m_tree; }

    /// Node drawn as full width (0 = root).
    uint32_t zoomNode() const { return m_zoom; }
    void setZoomNode(uint32_t node);

    /// Case-insensitive substring over node names; empty clears the highlight.
    void setSearch(const QString& text);
    /// Bytes of the nodes matching the search (a match inside a matching node counts once).
    int64_t searchMatchBytes() const { return m_searchBytes; }
    /// Text shown instead of the chart when there is nothing to draw; empty = draw the tree.
    void setPlaceholder(const QString& text);
    const QString& placeholder() const { return m_placeholder; }
    /// Marks the nodes along `path` (names from the root's child down), e.g. a survivor's stack.
    void setHighlightPath(const std::vector<std::string>& path);
    /// Outlines the frames of `marks` in their colour with the note's number; a path that is not
    /// in the tree marks nothing.
    void setFrameMarks(std::vector<FrameMark> marks);
    /// (node, number) of each frame mark found in the tree, in the order of the marks.
    std::vector<std::pair<uint32_t, int>> markedNodes() const;

    /// The node drawn under `pos` (widget px), or -1.
    int64_t nodeAt(QPoint pos) const;
    /// Rectangle of `node` as last laid out (empty when it is not drawn).
    QRectF nodeRect(uint32_t node) const;
    /// Tooltip text of `node`: name, bytes, share of the root and of the zoomed node, count.
    QString describe(uint32_t node) const;

    QSize sizeHint() const override { return {600, 300}; }
    QSize minimumSizeHint() const override { return {200, 3 * kRowHeight}; }

signals:
    /// The zoomed node changed (after a click or setZoomNode).
    void zoomNodeChanged(uint32_t node);
    /// "Add note on this frame" was chosen in the context menu of `node`.
    void frameNoteRequested(uint32_t node);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    struct Box {
        uint32_t node;
        QRectF rect;
        bool ancestor;  // a bar above the zoomed node
    };
    void layout();
    void paintFrameMarks(QPainter& p) const;
    int64_t nodeOfPath(const std::vector<std::string>& path) const;
    void updateSearch();
    QColor colorOf(uint32_t node) const;
    int64_t widthBytes(uint32_t node) const;

    analysis::FlameTree m_tree;
    uint32_t m_zoom = 0;
    QString m_search;
    QString m_placeholder;
    std::vector<char> m_matches;      // per node: matches the search
    std::vector<char> m_highlighted;  // per node: on the highlighted path
    int64_t m_searchBytes = 0;
    int64_t m_maxDelta = 1;
    std::vector<Box> m_boxes;
    std::vector<int> m_boxOf;  // node -> index into m_boxes, -1 = not drawn
    int64_t m_hover = -1;
    std::vector<FrameMark> m_frameMarks;
};

}  // namespace vramscope::widgets
