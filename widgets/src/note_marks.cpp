#include "vramscope/widgets/note_marks.h"

#include <algorithm>
#include <tuple>

#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

bool noteDisplayLess(const trace::Note& a, const trace::Note& b) {
    return std::tie(a.startNs, a.endNs, a.id) < std::tie(b.startNs, b.endNs, b.id);
}

std::vector<trace::Note> notesInDisplayOrder(std::vector<trace::Note> notes) {
    std::stable_sort(notes.begin(), notes.end(), noteDisplayLess);
    return notes;
}

std::vector<NumberedNote> numberNotes(std::vector<trace::Note> notes) {
    notes = notesInDisplayOrder(std::move(notes));
    std::vector<NumberedNote> out;
    out.reserve(notes.size());
    for (size_t i = 0; i < notes.size(); ++i) {
        out.push_back({std::move(notes[i]), static_cast<int>(i) + 1});
    }
    return out;
}

QColor noteColor(const trace::Note& note) {
    const QColor c(QString::fromStdString(note.color));
    return note.color.empty() || !c.isValid() ? QColor(QString::fromLatin1(kDefaultNoteColor)) : c;
}

QString noteHeadline(const trace::Note& note) {
    QString title = QString::fromStdString(note.title).trimmed();
    if (title.isEmpty()) {
        title = QString::fromStdString(note.text).section(QLatin1Char('\n'), 0, 0).trimmed();
    }
    return title.isEmpty() ? QStringLiteral("(untitled)") : title;
}

QString noteLabel(const NumberedNote& note) {
    return QStringLiteral("%1 \u00b7 %2").arg(note.number).arg(noteHeadline(note.note));
}

QString noteTimeText(const trace::Note& note, int64_t jobDurationNs) {
    const double span = static_cast<double>(std::max<int64_t>(jobDurationNs, 1));
    const TimeUnit unit = timeUnitFor(span);
    const double resolution = span / 1000.0;
    const QString start = formatTime(static_cast<double>(note.startNs), unit, resolution);
    if (!note.isRange()) {
        return start;
    }
    return QStringLiteral("%1 \u2013 %2")
        .arg(start, formatTime(static_cast<double>(note.endNs), unit, resolution));
}

bool noteShownOn(const trace::Note& note, const analysis::GpuKey& gpu) {
    return !note.pinnedToGpu() ||
           (note.rankIndex == gpu.rankIndex && note.device == toInt(gpu.device));
}

bool noteMeets(const trace::Note& note, int64_t startNs, int64_t endNs) {
    return note.startNs <= endNs && std::max(note.startNs, note.endNs) >= startNs;
}

}  // namespace vramscope::widgets
