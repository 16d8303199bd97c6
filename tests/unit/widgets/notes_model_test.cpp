// NotesModel: adding, editing and deleting notes as undo steps, checked against notes built by
// hand; the display order, the ids, and the undo history a loaded set of notes starts with.
#include <QSignalSpy>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <set>

#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/notes_model.h"

using namespace vramscope;
using widgets::NotesModel;

namespace {

trace::Note point(const std::string& title, int64_t t) {
    trace::Note n;
    n.title = title;
    n.startNs = n.endNs = t;
    return n;
}

trace::Note withId(trace::Note n, const std::string& id) {
    n.id = id;
    return n;
}

}  // namespace

TEST(NotesModel, AddEditDeleteRoundTripThroughUndoAndRedo) {
    NotesModel model;
    QSignalSpy changed(&model, &NotesModel::notesChanged);
    const std::string a = model.addNote(point("peak", 500));
    const std::string b = model.addNote(point("start", 100));
    EXPECT_EQ(a, "n1");
    EXPECT_EQ(b, "n2");
    // Listed by start time: "start" (100 ns) is note 1, "peak" (500 ns) note 2.
    const std::vector<trace::Note> added{withId(point("start", 100), "n2"),
                                         withId(point("peak", 500), "n1")};
    EXPECT_EQ(model.notes(), added);
    EXPECT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.data(model.index(0, NotesModel::NumberColumn), Qt::DisplayRole).toInt(), 1);
    EXPECT_EQ(model.data(model.index(0, NotesModel::TitleColumn), Qt::DisplayRole).toString(),
              QStringLiteral("start"));

    trace::Note edited = withId(point("peak of GPU 0", 500), "n1");
    edited.endNs = 900;  // now a range
    edited.rankIndex = 0;
    edited.device = 0;
    ASSERT_TRUE(model.editNote(edited));
    EXPECT_EQ(model.notes(), (std::vector<trace::Note>{withId(point("start", 100), "n2"), edited}));
    EXPECT_FALSE(model.editNote(edited)) << "an edit that changes nothing is no undo step";

    ASSERT_TRUE(model.removeNotes({"n2"}));
    EXPECT_EQ(model.notes(), std::vector<trace::Note>{edited});
    EXPECT_FALSE(model.removeNotes({"n9"}));

    QUndoStack* undo = model.undoStack();
    EXPECT_EQ(undo->count(), 4);
    undo->undo();  // the delete
    EXPECT_EQ(model.notes(), (std::vector<trace::Note>{withId(point("start", 100), "n2"), edited}));
    undo->undo();  // the edit
    EXPECT_EQ(model.notes(), added);
    undo->undo();
    undo->undo();
    EXPECT_TRUE(model.notes().empty());
    undo->redo();
    undo->redo();
    undo->redo();
    EXPECT_EQ(model.notes(), (std::vector<trace::Note>{withId(point("start", 100), "n2"), edited}));
    undo->redo();
    EXPECT_EQ(model.notes(), std::vector<trace::Note>{edited});
    // 4 commands, 4 undos, 4 redos: one signal each.
    EXPECT_EQ(changed.count(), 12);
}

TEST(NotesModel, ManyNotesAddedAsOneStepUndoTogether) {
    NotesModel model;
    model.addNote(point("mine", 50));
    const std::vector<std::string> ids = model.addNotes(
        {point("a", 10), point("b", 20), point("c", 30)}, QStringLiteral("findings"));
    EXPECT_EQ(ids, (std::vector<std::string>{"n2", "n3", "n4"}));
    EXPECT_EQ(model.rowCount(), 4);
    EXPECT_EQ(model.undoStack()->undoText(), QStringLiteral("findings"));
    model.undoStack()->undo();
    EXPECT_EQ(model.notes(), std::vector<trace::Note>{withId(point("mine", 50), "n1")});
}

TEST(NotesModel, LoadedNotesKeepTheirIdsAndNewOnesNeverClash) {
    NotesModel model;
    model.addNote(point("before", 1));
    // As a sidecar may hold them: an id taken twice and one missing.
    model.setNotes(
        {withId(point("x", 30), "n7"), withId(point("y", 20), "n7"), withId(point("z", 10), "")});
    EXPECT_EQ(model.undoStack()->count(), 0) << "a loaded set starts a new history";
    std::set<std::string> ids;
    for (const trace::Note& n : model.notes()) {
        ids.insert(n.id);
    }
    EXPECT_EQ(ids.size(), 3u);
    EXPECT_TRUE(ids.count("n7"));
    const std::string next = model.addNote(point("new", 40));
    EXPECT_FALSE(ids.count(next));
    // The highest held number is 7, and the two renamed notes took 8 and 9.
    EXPECT_EQ(next, "n10");
    // Undo after delete and re-add never hands out a held id again.
    model.removeNotes({next});
    model.undoStack()->undo();
    EXPECT_EQ(model.addNote(point("again", 41)), "n11");
}

TEST(NoteMarks, NumbersFollowStartThenEndThenId) {
    trace::Note range = point("range", 100);
    range.endNs = 300;
    const std::vector<widgets::NumberedNote> numbered =
        widgets::numberNotes({withId(point("late", 400), "n1"), withId(range, "n2"),
                              withId(point("early", 100), "n3"), withId(point("tie", 100), "n0")});
    ASSERT_EQ(numbered.size(), 4u);
    // 100 ns points first (ids n0 < n3), then the range from 100 ns, then 400 ns.
    EXPECT_EQ(numbered[0].note.id, "n0");
    EXPECT_EQ(numbered[1].note.id, "n3");
    EXPECT_EQ(numbered[2].note.id, "n2");
    EXPECT_EQ(numbered[3].note.id, "n1");
    EXPECT_EQ(numbered[3].number, 4);
    EXPECT_EQ(widgets::noteLabel(numbered[2]), QStringLiteral("3 \u00b7 range"));
}

TEST(NoteMarks, DefaultColourAndTimeText) {
    trace::Note n = point("", 1'500'000);
    EXPECT_EQ(widgets::noteColor(n), QColor(0xe6, 0x9f, 0x00));
    n.color = "#123456";
    EXPECT_EQ(widgets::noteColor(n), QColor(0x12, 0x34, 0x56));
    n.color = "not a colour";
    EXPECT_EQ(widgets::noteColor(n), QColor(0xe6, 0x9f, 0x00));
    EXPECT_EQ(widgets::noteHeadline(n), QStringLiteral("(untitled)"));
    n.text = "first line\nsecond";
    EXPECT_EQ(widgets::noteHeadline(n), QStringLiteral("first line"));
    // A 305 ms job: milliseconds, to 1/1000 of the job (0.305 ms -> one decimal).
    EXPECT_EQ(widgets::noteTimeText(n, 305'000'000), QStringLiteral("1.5 ms"));
    n.endNs = 2'260'000;
    EXPECT_EQ(widgets::noteTimeText(n, 305'000'000), QStringLiteral("1.5 ms \u2013 2.3 ms"));
}
