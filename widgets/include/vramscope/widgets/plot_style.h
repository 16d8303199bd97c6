#pragma once
// Colours and axis tickers shared by the plots: colours come from the application palette so that
// light and dark desktops both read well; tickers print times relative to the job start and bytes
// in binary units.

#include <QColor>
#include <QPalette>

#include <qcustomplot.h>

#include "vramscope/analysis/memory/memory_roles.h"

namespace vramscope::widgets {

/// Colours of the memory plots, derived from a palette (dark when the window colour is dark).
struct PlotColors {
    bool dark = false;
    QColor background;
    QColor text;
    QColor axis;
    QColor grid;
    QColor reserved;
    QColor capacity;
    QColor warning;  ///< the 80 %-of-capacity line
    QColor oom;
    QColor peak;
    QColor selection;
    QColor crosshair;

    static PlotColors fromPalette(const QPalette& palette);
};

/// Colour of the GPU at `index` in the job (10 distinct hues, lighter on dark backgrounds).
QColor gpuColor(int index, bool dark);

/// Fill colour of a role of memory in the stacked plot: one hue per role (Tableau 10 hues, none of
/// them the OOM red or the 80 % line's colour), opaque, blended towards `background` so that the
/// reserved and allocated lines drawn over the layers stay readable.
QColor roleColor(analysis::MemoryRole role, const QColor& background);

/// roleLabel() up to any " (": "persistent" for "persistent (parameters or optimizer state)", for
/// the plot's legend and the live set's Role column, where room is short (the Details dock's role
/// lines and the flame view give the whole label).
QString shortRoleLabel(analysis::MemoryRole role);

/// Colour for a share of capacity in use, 0..1 (clamped): the viridis colour map (van der Walt and
/// Smith, matplotlib 2.0; anchors every 10 % from its published table, interpolated linearly in
/// sRGB), dark violet at 0 to yellow at 1. Its lightness rises monotonically, so a larger share
/// always reads lighter, on light and dark backgrounds alike, and for colour-blind readers.
QColor usageColor(double fraction);

/// Colour for a fraction of something other than capacity (e.g. of the job's highest peak when a
/// GPU's capacity is unknown): shades of one blue, never the warning colours.
QColor relativeUsageColor(double fraction, bool dark);

/// Time axis ticker: axis coordinates are ns from the job start; labels use ns, us, ms or s as
/// the visible span calls for ("12.5 ms").
class TimeTicker : public QCPAxisTicker {
public:
    void generate(const QCPRange& range, const QLocale& locale, QChar formatChar, int precision,
                  QVector<double>& ticks, QVector<double>* subTicks,
                  QVector<QString>* tickLabels) override;

protected:
    double getTickStep(const QCPRange& range) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                         int precision) override;

private:
    double m_unitNs = 1.0;
    const char* m_suffix = "ns";
    double m_step = 1.0;
};

/// Memory axis ticker: coordinates are bytes; ticks fall on round numbers of the binary unit
/// (KiB, MiB, GiB) that fits the range, labelled "20 GiB".
class BytesTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                         int precision) override;

private:
    double m_unit = 1.0;
    const char* m_suffix = "B";
    double m_step = 1.0;
};

}  // namespace vramscope::widgets
