#pragma once
// The segment view: each reserved segment of a GPU as a horizontal bar, its allocated blocks as
// coloured rectangles and its free gaps hatched, after PyTorch memory_viz's segment view.

#include <QWidget>

#include <memory>
#include <vector>

#include "vramscope/analysis/memory/segments.h"

namespace vramscope::widgets {

/// What the view draws, all computed by analysis (segmentLayoutAt, groupBlocksByStack).
struct SegmentPicture {
    analysis::SegmentLayout layout;
    analysis::SegmentBlockGroups groups;  ///< colours and legend; groupOf parallel to the blocks
    uint64_t requestBytes = 0;            ///< the failed request at an OOM; 0 = none
};

/// Draws one SegmentPicture: a legend (a colour per stack label, the eight with most bytes, the
/// rest "other"; free; request), a byte scale, the request and the largest free block as bars on
/// that scale (at an OOM), then one row per segment, largest first, bar length proportional to
/// its size (the scale runs to the largest segment or the request, whichever is larger). Hover
/// shows a block's size, address and stack label, or a gap's size. Holds its own copy of the
/// picture; GUI thread only.
class SegmentView : public QWidget {
    Q_OBJECT
public:
    /// What a drawn rectangle stands for.
    enum class ItemKind { Segment, Block, Gap, Request, LargestFree };
    struct Item {
        ItemKind kind = ItemKind::Segment;
        QRectF rect;
        size_t segment = 0;  ///< position in layout.segments (Segment, Block, Gap)
        size_t index = 0;    ///< position in the segment's blocks or gaps
    };
    static constexpr int kRowHeight = 16;
    static constexpr int kRowGap = 4;
    /// Stack labels with a colour of their own; the others share "other".
    static constexpr size_t kColouredGroups = 8;

    explicit SegmentView(QWidget* parent = nullptr);

    void setPicture(std::shared_ptr<const SegmentPicture> picture);
    const std::shared_ptr<const SegmentPicture>& picture() const { return m_picture; }
    /// Text shown instead of the bars; empty = draw the picture.
    void setPlaceholder(const QString& text);
    const QString& placeholder() const { return m_placeholder; }

    /// Rectangles as last laid out (widget px), in drawing order.
    const std::vector<Item>& items() const { return m_items; }
    /// Items of one kind.
    size_t count(ItemKind kind) const;
    /// The item under `pos`, innermost (a block or gap before its segment); nullptr when none.
    const Item* itemAt(QPointF pos) const;
    /// The tooltip of `item`: "block 500 MiB at 0x7fbb34000000 in segment 0x7fbb34000000 (0.977
    /// GiB): forward (train.py:35)", "free 500 MiB at ... in segment ...", "request 0.977 GiB
    /// (1048576000 B)", "largest free block 500 MiB (in segment 0x...)".
    QString describe(const Item& item) const;
    /// The colour index of a stack group: its position below kColouredGroups, else
    /// kColouredGroups ("other").
    static size_t colourSlot(uint32_t group);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return {240, 3 * kRowHeight}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool event(QEvent* event) override;

private:
    void relayout();
    int layoutLegend(int top);
    QColor groupColour(uint32_t group) const;

    std::shared_ptr<const SegmentPicture> m_picture;
    QString m_placeholder;
    std::vector<Item> m_items;
    struct LegendEntry {
        QRect swatch;
        QPoint text;
        QString label;
        int slot = 0;  ///< colour slot, -1 = free, -2 = request
    };
    std::vector<LegendEntry> m_legend;
    std::vector<std::pair<QPoint, QString>> m_rowLabels;  // baseline, text
    struct Tick {
        double x;
        QString label;
    };
    std::vector<Tick> m_ticks;
    int m_scaleTop = 0;
    int m_labelWidth = 0;
    int m_contentHeight = 0;
};

}  // namespace vramscope::widgets
