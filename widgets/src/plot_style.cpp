#include "vramscope/widgets/plot_style.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "vramscope/analysis/memory/memory_summary.h"

#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

PlotColors PlotColors::fromPalette(const QPalette& palette) {
    PlotColors c;
    c.background = palette.color(QPalette::Base);
    c.text = palette.color(QPalette::WindowText);
    c.dark = c.background.lightnessF() < 0.5;
    c.axis = c.text;
    c.grid = c.text;
    c.grid.setAlpha(c.dark ? 45 : 35);
    c.reserved = c.dark ? QColor(0xd0, 0xd0, 0xd0) : QColor(0x40, 0x40, 0x40);
    c.capacity = c.dark ? QColor(0xff, 0x6b, 0x6b) : QColor(0xc6, 0x28, 0x28);
    c.warning = c.dark ? QColor(0xff, 0xb7, 0x4d) : QColor(0xe6, 0x7e, 0x00);
    c.oom = c.capacity;
    c.peak = c.text;
    c.selection = palette.color(QPalette::Highlight);
    c.selection.setAlpha(60);
    c.crosshair = c.text;
    c.crosshair.setAlpha(150);
    return c;
}

QColor gpuColor(int index, bool dark) {
    // Ten hues in the spirit of the Tableau 10 set; distinct for colour-blind readers in pairs.
    static constexpr std::array<QRgb, 10> kHues = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728,
                                                   0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f,
                                                   0xbcbd22, 0x17becf};
    QColor c = QColor::fromRgb(kHues[static_cast<size_t>(std::abs(index)) % kHues.size()]);
    return dark ? c.lighter(135) : c;
}

QColor roleColor(analysis::MemoryRole role, const QColor& background) {
    // Indexed by MemoryRole: parameters, gradients, optimizer state, activations, temporaries,
    // inputs, persistent, unknown.
    static constexpr std::array<QRgb, analysis::kMemoryRoleCount> kHues = {
        0x4e79a7, 0xf28e2b, 0xb07aa1, 0x59a14f, 0xedc948, 0x9c755f, 0x76b7b2, 0xbab0ac};
    const QColor hue = QColor::fromRgb(kHues[static_cast<size_t>(role) % kHues.size()]);
    constexpr double a = 0.8;  // share of the hue; the rest is background
    return QColor::fromRgbF(static_cast<float>(a * hue.redF() + (1 - a) * background.redF()),
                            static_cast<float>(a * hue.greenF() + (1 - a) * background.greenF()),
                            static_cast<float>(a * hue.blueF() + (1 - a) * background.blueF()));
}

QString shortRoleLabel(analysis::MemoryRole role) {
    return QString::fromUtf8(analysis::roleLabel(role)).section(QStringLiteral(" ("), 0, 0);
}

QColor usageColor(double fraction) {
    // viridis at 0, 0.1, ..., 1.0 (matplotlib's _cm_listed.py table, entries 0, 25.5, ..., 255).
    static constexpr std::array<QRgb, 11> kViridis = {0x440154, 0x482475, 0x414487, 0x355f8d,
                                                      0x2a788e, 0x21918c, 0x22a884, 0x44bf70,
                                                      0x7ad151, 0xbddf26, 0xfde725};
    const double f = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.0;
    const double at = f * static_cast<double>(kViridis.size() - 1);
    const size_t i = std::min(static_cast<size_t>(at), kViridis.size() - 2);
    const double t = at - static_cast<double>(i);
    const QColor a = QColor::fromRgb(kViridis[i]);
    const QColor b = QColor::fromRgb(kViridis[i + 1]);
    auto mix = [t](int x, int y) { return static_cast<int>(std::lround(x + t * (y - x))); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

QColor relativeUsageColor(double fraction, bool dark) {
    // One blue, from faint to full: no green-to-red scale, which would read as a share of capacity.
    const double f = std::clamp(fraction, 0.0, 1.0);
    return QColor::fromHsvF(0.58, 0.15 + 0.65 * f, dark ? 0.85 : 0.8);
}

namespace {
/// The tick step, a 1, 2, 2.5 or 5 times a power of ten near `raw`.
double axisTickStep(double raw) {
    if (!(raw > 0.0) || !std::isfinite(raw)) {
        return 1.0;
    }
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double mantissa = raw / magnitude;
    double nice = 10.0;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (mantissa <= m * 1.0001) {
            nice = m;
            break;
        }
    }
    return nice * magnitude;
}

int decimalsFor(double stepInUnit) {
    int decimals = 0;
    double s = stepInUnit;
    while (decimals < 9 && std::fabs(s - std::round(s)) > 1e-6 * std::max(1.0, std::fabs(s))) {
        s *= 10.0;
        ++decimals;
    }
    return decimals;
}
}  // namespace

void TimeTicker::generate(const QCPRange& range, const QLocale& locale, QChar formatChar,
                          int precision, QVector<double>& ticks, QVector<double>* subTicks,
                          QVector<QString>* tickLabels) {
    const TimeUnit unit = timeUnitFor(range.size());
    m_unitNs = unit.ns;
    m_suffix = unit.suffix;
    QCPAxisTicker::generate(range, locale, formatChar, precision, ticks, subTicks, tickLabels);
}

double TimeTicker::getTickStep(const QCPRange& range) {
    m_step = std::max(1.0, axisTickStep(range.size() / std::max(1, tickCount())));
    return m_step;
}

QString TimeTicker::getTickLabel(double tick, const QLocale&, QChar, int) {
    const int decimals = decimalsFor(m_step / m_unitNs);
    return QStringLiteral("%1 %2").arg(tick / m_unitNs, 0, 'f', decimals).arg(m_suffix);
}

double BytesTicker::getTickStep(const QCPRange& range) {
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && range.upper >= std::pow(1024.0, u + 1)) {
        ++u;
    }
    m_unit = std::pow(1024.0, u);
    m_suffix = kUnits[u];
    const double rawInUnit = range.size() / m_unit / std::max(1, tickCount());
    m_step = axisTickStep(rawInUnit) * m_unit;
    if (u == 0) {
        m_step = std::max(1.0, std::round(m_step));
    }
    return m_step;
}

QString BytesTicker::getTickLabel(double tick, const QLocale&, QChar, int) {
    const int decimals = decimalsFor(m_step / m_unit);
    return QStringLiteral("%1 %2").arg(tick / m_unit, 0, 'f', decimals).arg(m_suffix);
}

}  // namespace vramscope::widgets
