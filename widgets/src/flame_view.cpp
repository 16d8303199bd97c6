#include "vramscope/widgets/flame_view.h"

#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QLocale>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

QString countText(int64_t count) {
    return QLocale().toString(static_cast<qlonglong>(count));
}

QString percentOf(int64_t part, int64_t whole) {
    if (whole <= 0) {
        return QStringLiteral("-");
    }
    return QStringLiteral("%1 %").arg(100.0 * double(part) / double(whole), 0, 'f', 1);
}

}  // namespace

QString shortFrameLabel(const std::string& label) {
    return QString::fromStdString(analysis::compactName(label));
}

FlameView::FlameView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void FlameView::setTree(analysis::FlameTree tree) {
    // Keep the zoom on the node with the same path, if the new tree has one.
    std::vector<std::string> zoomPath;
    if (m_zoom != 0 && m_zoom < m_tree.nodes.size()) {
        zoomPath = m_tree.path(m_zoom);
    }
    m_tree = std::move(tree);
    if (m_tree.nodes.empty()) {
        m_tree.nodes.push_back(analysis::FlameNode{"all", 0, 0, {}, 0, 0, 0, 0, 0});
    }
    m_zoom = 0;
    for (const std::string& name : zoomPath) {
        uint32_t next = m_zoom;
        for (uint32_t c : m_tree.nodes[m_zoom].children) {
            if (m_tree.nodes[c].name == name) {
                next = c;
                break;
            }
        }
        if (next == m_zoom) {
            break;
        }
        m_zoom = next;
    }
    uint32_t maxDepth = 0;
    m_maxDelta = 1;
    for (const analysis::FlameNode& n : m_tree.nodes) {
        maxDepth = std::max(maxDepth, n.depth);
        if (n.depth > 0) {
            m_maxDelta = std::max<int64_t>(m_maxDelta, std::llabs(n.bytes));
        }
    }
    setMinimumHeight(int(maxDepth + 1) * kRowHeight + 2);
    m_highlighted.assign(m_tree.nodes.size(), 0);
    m_hover = -1;
    updateSearch();
    layout();
    update();
}

void FlameView::setZoomNode(uint32_t node) {
    if (node >= m_tree.nodes.size() || node == m_zoom) {
        return;
    }
    m_zoom = node;
    layout();
    update();
    emit zoomNodeChanged(node);
}

void FlameView::setSearch(const QString& text) {
    m_search = text.trimmed();
    updateSearch();
    update();
}

void FlameView::setPlaceholder(const QString& text) {
    m_placeholder = text;
    update();
}

void FlameView::setHighlightPath(const std::vector<std::string>& path) {
    m_highlighted.assign(m_tree.nodes.size(), 0);
    uint32_t node = 0;
    for (const std::string& name : path) {
        uint32_t next = 0;
        for (uint32_t c : m_tree.nodes[node].children) {
            if (m_tree.nodes[c].name == name) {
                next = c;
                break;
            }
        }
        if (next == 0) {
            break;
        }
        node = next;
        m_highlighted[node] = 1;
    }
    update();
}

void FlameView::setFrameMarks(std::vector<FrameMark> marks) {
    m_frameMarks = std::move(marks);
    update();
}

int64_t FlameView::nodeOfPath(const std::vector<std::string>& path) const {
    if (path.empty() || m_tree.nodes.empty()) {
        return -1;
    }
    uint32_t node = 0;
    for (const std::string& name : path) {
        int64_t next = -1;
        for (uint32_t c : m_tree.nodes[node].children) {
            if (m_tree.nodes[c].name == name) {
                next = c;
                break;
            }
        }
        if (next < 0) {
            return -1;
        }
        node = uint32_t(next);
    }
    return node;
}

std::vector<std::pair<uint32_t, int>> FlameView::markedNodes() const {
    std::vector<std::pair<uint32_t, int>> out;
    for (const FrameMark& m : m_frameMarks) {
        if (const int64_t node = nodeOfPath(m.path); node > 0) {
            out.emplace_back(uint32_t(node), m.number);
        }
    }
    return out;
}

void FlameView::paintFrameMarks(QPainter& p) const {
    const QFontMetrics fm = p.fontMetrics();
    for (const FrameMark& m : m_frameMarks) {
        const int64_t node = nodeOfPath(m.path);
        const QRectF r = node > 0 ? nodeRect(uint32_t(node)) : QRectF();
        if (r.isEmpty()) {
            continue;
        }
        p.setPen(QPen(m.color, 2.5));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(1, 1, -1, -1));
        // The number in a badge at the frame's right end, over the end of its label.
        const QString number = QString::number(m.number);
        const double w = fm.horizontalAdvance(number) + 8;
        if (r.width() > w + 4) {
            const QRectF badge(r.right() - w - 2, r.top() + 2, w, r.height() - 4);
            p.fillRect(badge, m.color);
            p.setPen(m.color.lightness() < 120 ? Qt::white : Qt::black);
            p.drawText(badge, Qt::AlignCenter, number);
        }
    }
}

void FlameView::contextMenuEvent(QContextMenuEvent* event) {
    const int64_t node = nodeAt(event->pos());
    if (node <= 0) {
        return;  // the root is "all": a note for all of it is a note on the time
    }
    QMenu menu(this);
    QAction* add = menu.addAction(tr("Add note on this frame"));
    if (menu.exec(event->globalPos()) == add) {
        emit frameNoteRequested(uint32_t(node));
    }
    event->accept();
}

void FlameView::updateSearch() {
    m_matches.assign(m_tree.nodes.size(), 0);
    m_searchBytes = 0;
    if (m_search.isEmpty()) {
        return;
    }
    // Nodes are created parent before child, so one forward pass sees ancestors first.
    std::vector<char> covered(m_tree.nodes.size(), 0);
    for (uint32_t i = 1; i < m_tree.nodes.size(); ++i) {
        const analysis::FlameNode& n = m_tree.nodes[i];
        m_matches[i] = QString::fromStdString(n.name).contains(m_search, Qt::CaseInsensitive);
        const bool parentCovered = covered[n.parent] != 0;
        if (m_matches[i] && !parentCovered) {
            m_searchBytes += widthBytes(i);
        }
        covered[i] = parentCovered || m_matches[i];
    }
}

int64_t FlameView::widthBytes(uint32_t node) const {
    const analysis::FlameNode& n = m_tree.nodes[node];
    return m_tree.isDiff ? n.afterBytes : n.bytes;
}

void FlameView::layout() {
    m_boxes.clear();
    m_boxOf.assign(m_tree.nodes.size(), -1);
    if (m_tree.nodes.empty() || m_zoom >= m_tree.nodes.size()) {
        return;  // nothing loaded yet (the window is shown before the first job arrives)
    }
    const double w = std::max(1, width());
    auto add = [&](uint32_t node, double x, double width, bool ancestor) {
        const double y = double(m_tree.nodes[node].depth) * kRowHeight;
        m_boxOf[node] = int(m_boxes.size());
        m_boxes.push_back(Box{node, QRectF(x, y, width, kRowHeight - 1), ancestor});
    };
    std::vector<uint32_t> chain;
    for (uint32_t a = m_zoom; a != 0; a = m_tree.nodes[a].parent) {
        chain.push_back(m_tree.nodes[a].parent);
    }
    for (uint32_t a : chain) {
        add(a, 0, w, true);
    }
    add(m_zoom, 0, w, false);
    const double total = double(widthBytes(m_zoom));
    if (total <= 0) {
        return;
    }
    struct Pending {
        uint32_t node;
        double x;
    };
    std::vector<Pending> stack{{m_zoom, 0.0}};
    while (!stack.empty()) {
        const Pending p = stack.back();
        stack.pop_back();
        double x = p.x;
        for (uint32_t c : m_tree.nodes[p.node].children) {
            const double cw = double(std::max<int64_t>(widthBytes(c), 0)) / total * w;
            if (cw >= 1.0) {
                add(c, x, cw, false);
                stack.push_back({c, x});
            }
            x += cw;
        }
    }
}

QColor FlameView::colorOf(uint32_t node) const {
    const analysis::FlameNode& n = m_tree.nodes[node];
    if (m_tree.isDiff) {
        const double f = std::clamp(double(std::llabs(n.bytes)) / double(m_maxDelta), 0.0, 1.0);
        const int fade = int(std::lround(210 * (1.0 - f)));
        if (n.bytes > 0) {
            return QColor(235, 40 + fade / 2, 40 + fade);
        }
        if (n.bytes < 0) {
            return QColor(40 + fade, 90 + fade / 2, 235);
        }
        return QColor(225, 225, 225);
    }
    if (node == 0) {
        return QColor(200, 200, 200);
    }
    if (m_tree.grouping == analysis::FlameGrouping::Role && n.depth == 1) {
        // The role row takes the role's colour in the stacked VRAM plot, so the two read alike.
        for (size_t r = 0; r < analysis::kMemoryRoleCount; ++r) {
            const auto role = analysis::MemoryRole(r);
            if (n.name == analysis::roleLabel(role)) {
                return roleColor(role, palette().base().color());
            }
        }
    }
    if (n.name.size() > 1 && n.name.front() == '(') {  // "(no stack)", "(no range)"
        return QColor(190, 190, 190);
    }
    const size_t h = std::hash<std::string>{}(n.name);
    const int hue = int(h % 45);  // red .. orange .. yellow
    const int sat = 140 + int((h >> 8) % 80);
    return QColor::fromHsv(hue, sat, 235);
}

void FlameView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!m_placeholder.isEmpty()) {
        p.setPen(palette().placeholderText().color());
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    const bool searching = !m_search.isEmpty();
    const QFontMetrics fm = p.fontMetrics();
    for (const Box& b : m_boxes) {
        QColor fill = colorOf(b.node);
        if (searching) {
            fill = m_matches[b.node] ? QColor(190, 90, 220) : fill.lighter(135);
        }
        if (m_highlighted.size() > b.node && m_highlighted[b.node]) {
            fill = QColor(150, 60, 200);
        }
        if (b.ancestor) {
            fill = fill.lighter(120);
        }
        p.fillRect(b.rect, fill);
        if (int64_t(b.node) == m_hover) {
            p.setPen(QPen(palette().text().color(), 1.5));
            p.drawRect(b.rect.adjusted(0.5, 0.5, -0.5, -0.5));
        } else if (b.rect.width() > 3) {
            p.setPen(QPen(palette().base().color(), 1));
            p.drawLine(b.rect.topRight(), b.rect.bottomRight());
        }
        if (b.rect.width() > 28) {
            const analysis::FlameNode& n = m_tree.nodes[b.node];
            QString size;
            if (b.node == m_zoom || b.ancestor) {
                size = QStringLiteral("  (") + formatBytes(double(widthBytes(b.node))) +
                       QStringLiteral(")");
            }
            // The name's middle gives way first; the size goes when even that does not fit.
            const int room = int(b.rect.width()) - 7;
            QString label = elideName(fm, n.name, room - fm.horizontalAdvance(size));
            label = label.isEmpty() ? fm.elidedText(size.trimmed(), Qt::ElideRight, room)
                                    : label + size;
            const bool darkFill = fill.lightness() < 110;
            p.setPen(darkFill ? Qt::white : Qt::black);
            p.drawText(b.rect.adjusted(4, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
        }
    }
    paintFrameMarks(p);
    if (m_tree.nodes.size() <= 1 || widthBytes(0) == 0) {
        p.setPen(palette().placeholderText().color());
        p.drawText(rect().adjusted(0, kRowHeight, 0, 0), Qt::AlignCenter,
                   m_tree.isDiff ? tr("Nothing changed between the two times.")
                                 : tr("Nothing is allocated at this time."));
    }
}

void FlameView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    layout();
}

int64_t FlameView::nodeAt(QPoint pos) const {
    for (const Box& b : m_boxes) {
        if (b.rect.contains(QPointF(pos))) {
            return b.node;
        }
    }
    return -1;
}

QRectF FlameView::nodeRect(uint32_t node) const {
    if (node >= m_boxOf.size() || m_boxOf[node] < 0) {
        return {};
    }
    return m_boxes[size_t(m_boxOf[node])].rect;
}

QString FlameView::describe(uint32_t node) const {
    if (node >= m_tree.nodes.size()) {
        return {};
    }
    const analysis::FlameNode& n = m_tree.nodes[node];
    QString text =
        QStringLiteral("<b>%1</b><br>").arg(QString::fromStdString(n.name).toHtmlEscaped());
    if (m_tree.isDiff) {
        text +=
            tr("%1 \u2192 %2: %3%4<br>%5%6 allocations")
                .arg(formatBytes(double(n.beforeBytes)), formatBytes(double(n.afterBytes)),
                     n.bytes > 0 ? QStringLiteral("+") : QString(), formatBytes(double(n.bytes)),
                     n.count > 0 ? QStringLiteral("+") : QString(), countText(n.count));
        return text;
    }
    text += tr("%1 \u2014 %2 of all")
                .arg(formatBytes(double(n.bytes)), percentOf(n.bytes, widthBytes(0)));
    if (m_zoom != 0) {
        text += tr(", %1 of the zoomed node").arg(percentOf(n.bytes, widthBytes(m_zoom)));
    }
    text += tr("<br>%1 allocations").arg(countText(n.count));
    if (n.selfBytes > 0 && !n.children.empty()) {
        text += tr("<br>%1 allocated here directly").arg(formatBytes(double(n.selfBytes)));
    }
    return text;
}

void FlameView::mouseMoveEvent(QMouseEvent* event) {
    const int64_t node = nodeAt(event->position().toPoint());
    if (node != m_hover) {
        m_hover = node;
        update();
    }
    if (node >= 0) {
        QToolTip::showText(event->globalPosition().toPoint(), describe(uint32_t(node)), this);
    } else {
        QToolTip::hideText();
    }
}

void FlameView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        return;
    }
    const int64_t node = nodeAt(event->position().toPoint());
    if (node >= 0) {
        setZoomNode(uint32_t(node));
    }
}

void FlameView::mouseDoubleClickEvent(QMouseEvent*) {
    setZoomNode(0);
}

void FlameView::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Escape || event->key() == Qt::Key_Home) {
        setZoomNode(0);
        return;
    }
    QWidget::keyPressEvent(event);
}

void FlameView::leaveEvent(QEvent*) {
    m_hover = -1;
    update();
}

}  // namespace vramscope::widgets
