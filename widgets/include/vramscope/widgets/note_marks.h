#pragma once
// How notes read on every view and in the Notes dock: one display order (which gives the numbers
// on the markers and in the list, so an exported picture's list matches its markers), the default
// colour, the label and time texts, and which notes a GPU's view shows.

#include <QColor>
#include <QString>

#include <cstdint>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"

namespace vramscope::widgets {

/// The display order: by startNs, then endNs, then id. Note number k (1-based) is the k-th note
/// in this order, on every view and in the Notes dock.
bool noteDisplayLess(const trace::Note& a, const trace::Note& b);
/// `notes` sorted into the display order.
std::vector<trace::Note> notesInDisplayOrder(std::vector<trace::Note> notes);

/// A note as a view draws it: the note and its number (1-based, in the display order of all the
/// notes handed to the view).
struct NumberedNote {
    trace::Note note;
    int number = 0;
};
/// Numbers `notes` in the display order.
std::vector<NumberedNote> numberNotes(std::vector<trace::Note> notes);

/// The note's colour ("#rrggbb"), or the default amber (#e69f00, the Okabe-Ito orange, distinct
/// from the GPU, role, OOM and capacity colours) when it has none or it does not parse.
QColor noteColor(const trace::Note& note);
inline constexpr const char* kDefaultNoteColor = "#e69f00";

/// The one line a view shows: the title, else the text's first line, else "(untitled)".
QString noteHeadline(const trace::Note& note);
/// "3 · peak of GPU 0" (number and headline), for labels on the views.
QString noteLabel(const NumberedNote& note);
/// The note's time as the dock lists it: "1.23 s" for a point, "1.20 s – 1.50 s" for a range,
/// in the unit that suits the job's duration `jobDurationNs` (timeUnitFor), precise to 1/1000
/// of that duration.
QString noteTimeText(const trace::Note& note, int64_t jobDurationNs);

/// Whether a view of `gpu` shows `note`: a note for every GPU shows on all of them, a pinned
/// note only on its GPU.
bool noteShownOn(const trace::Note& note, const analysis::GpuKey& gpu);
/// Whether [note start, note end] meets the visible range [startNs, endNs].
bool noteMeets(const trace::Note& note, int64_t startNs, int64_t endNs);

}  // namespace vramscope::widgets
