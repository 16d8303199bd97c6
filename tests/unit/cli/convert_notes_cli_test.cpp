// `vramscope-cli convert` carries a notes sidecar into the written .vscope files, and refuses one
// written for other traces.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cli_command.h"
#include "cli_run.h"
#include "test_files.h"
#include "vramscope/analysis/advice/auto_notes.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::app {
namespace {

using test::run;
namespace fs = std::filesystem;

using testdata::ScratchDir;

/// Two notes by hand: one on rank 1's GPU 1, one on every GPU.
trace::NotesDocument notesFor(const std::vector<std::string>& files) {
    trace::NotesDocument doc;
    for (const std::string& f : files) {
        doc.traces.push_back(trace::identifyTrace(f).value());
    }
    trace::Note a;
    a.id = "n1";
    a.title = "slow step";
    a.text = "looked at in review";
    a.startNs = 4'000'000;
    a.endNs = 9'000'000;
    a.rankIndex = 1;
    a.device = 1;
    a.author = "bob";
    trace::Note b;
    b.id = "n2";
    b.title = "everywhere";
    b.startNs = b.endNs = 123;
    doc.notes = {a, b};
    return doc;
}

std::vector<trace::Note> notesReadBack(const std::vector<std::string>& files) {
    auto job = trace::openJob(files);
    EXPECT_TRUE(job.ok());
    auto model = analysis::buildJobModel(std::move(job).value(), "back");
    EXPECT_TRUE(model.ok());
    auto notes = analysis::notesInTraces(*model.value());
    std::sort(notes.begin(), notes.end(), [](auto& x, auto& y) { return x.id < y.id; });
    return notes;
}

TEST(ConvertNotes, TheInputsSidecarIsCarriedAndReadBackOnTheSameJobTime) {
    const ScratchDir dir("vscope-convert-notes");
    ASSERT_EQ(run({"synth", "--ranks", "2", "--iterations", "2", "-o", dir / "in.vscope"}).code,
              kExitSuccess);
    const std::vector<std::string> in = {dir / "in-rank0.vscope", dir / "in-rank1.vscope"};
    const trace::NotesDocument doc = notesFor(in);
    ASSERT_TRUE(trace::writeNotesFile(trace::notesSidecarPath(in), doc).ok());
    const auto r = run({"convert", in[0], in[1], "-o", dir / "out.vscope"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    EXPECT_NE(r.err.find("carrying 2 note(s)"), std::string::npos) << r.err;
    const auto back = notesReadBack({dir / "out-rank0.vscope", dir / "out-rank1.vscope"});
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0], doc.notes[0]);
    EXPECT_EQ(back[1], doc.notes[1]);
}

TEST(ConvertNotes, ASidecarOfOtherTracesIsRefusedNamingIt) {
    const ScratchDir dir("vscope-convert-notes");
    ASSERT_EQ(run({"synth", "--ranks", "1", "--iterations", "2", "-o", dir / "a.vscope"}).code,
              kExitSuccess);
    ASSERT_EQ(run({"synth", "--ranks", "1", "--iterations", "3", "-o", dir / "b.vscope"}).code,
              kExitSuccess);
    const std::string a = dir / "a-rank0.vscope";
    const std::string b = dir / "b-rank0.vscope";
    const std::string sidecar = dir / "b.notes.json";
    ASSERT_TRUE(trace::writeNotesFile(sidecar, notesFor({b})).ok());
    // Asked for: refused, nothing written.
    const auto refused = run({"convert", a, "--notes", sidecar, "-o", dir / "out.vscope"});
    EXPECT_EQ(refused.code, kExitUnreadable);
    EXPECT_NE(refused.err.find(sidecar), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("different trace"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(dir / "out-rank0.vscope"));
    // Found beside the input: a warning, and the conversion goes on without it.
    fs::copy_file(sidecar, trace::notesSidecarPath({a}));
    const auto warned = run({"convert", a, "-o", dir / "out.vscope"});
    EXPECT_EQ(warned.code, kExitSuccess) << warned.err;
    EXPECT_NE(warned.err.find("converting without its notes"), std::string::npos);
    EXPECT_TRUE(notesReadBack({dir / "out-rank0.vscope"}).empty());
}

}  // namespace
}  // namespace vramscope::app
