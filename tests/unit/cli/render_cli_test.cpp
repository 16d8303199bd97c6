// `vramscope-cli render` and `review`, run as the binary (they make their own QApplication):
// vector SVG / PDF keep the notes, the axis labels and the trace name as text; PNG has the size
// asked for; bad requests exit 2 or 3 naming what is wrong; a review has one page per view with
// data. Plus the summary page's selection of the report's lines (review_summary.h), in-process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>

#include "cli_run.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "review_summary.h"
#include "shell_command.h"
#include "test_files.h"
#include "vramscope/trace/notes.h"

namespace vramscope::app {
namespace {

namespace fs = std::filesystem;

using testdata::ScratchDir;

using testdata::ShellRun;

std::string shq(const std::string& s) {
    return "'" + s + "'";
}

/// Runs the shell command `command`, 2>&1 (ShellRun::out holds standard output and error).
ShellRun shellWithStderr(const std::string& command) {
    return testdata::runShell(command + " 2>&1");
}

ShellRun cli(const std::string& args) {
    return shellWithStderr("env -u QT_QPA_PLATFORM " + shq(VRAMSCOPE_CLI_PATH) + " " + args);
}

using testdata::readFile;

bool havePdftotext() {
    return shellWithStderr("command -v pdftotext >/dev/null").code == 0;
}

/// Width and height from a PNG's IHDR chunk (bytes 16..23, big-endian), read here rather than
/// through Qt.
std::pair<uint32_t, uint32_t> pngSize(const std::string& path) {
    const std::string b = readFile(path);
    if (b.size() < 24 || b.compare(1, 3, "PNG") != 0)
        return {0, 0};
    const auto be = [&b](size_t i) {
        return uint32_t(uint8_t(b[i])) << 24 | uint32_t(uint8_t(b[i + 1])) << 16 |
               uint32_t(uint8_t(b[i + 2])) << 8 | uint32_t(uint8_t(b[i + 3]));
    };
    return {be(16), be(20)};
}

/// The PDF's pages: "/Type /Page" objects (not "/Pages").
size_t pdfPages(const std::string& path) {
    const std::string pdf = readFile(path);
    static const std::regex page("/Type\\s*/Page[^s]");
    return size_t(
        std::distance(std::sregex_iterator(pdf.begin(), pdf.end(), page), std::sregex_iterator()));
}

/// A one-rank synthetic job (memory, kernels, a leak) and a sidecar with two notes for it. The
/// generator is deterministic: jobs of other `iterations` are other bytes.
struct Job {
    const ScratchDir dir{"vscope-render"};
    std::string trace;
    std::string notes;
    explicit Job(int iterations = 6) {
        const test::CliRun made =
            test::run({"synth", "--ranks", "1", "--iterations", std::to_string(iterations),
                       "--leak-bytes-per-iteration", "64MiB", "-o", dir / "job.vscope"});
        EXPECT_EQ(made.code, 0) << made.err;
        trace = dir / "job-rank0.vscope";
        trace::NotesDocument doc;
        doc.traces.push_back(trace::identifyTrace(trace).value());
        trace::Note a;
        a.id = "n1";
        a.title = "Staircase begins";
        a.startNs = a.endNs = 1'000'000;
        trace::Note b;
        b.id = "n2";
        b.title = "Look here first";
        b.startNs = 2'000'000;
        b.endNs = 5'000'000;
        doc.notes = {a, b};
        notes = dir / "job.notes.json";
        EXPECT_TRUE(trace::writeNotesFile(notes, doc));
    }
};

}  // namespace

TEST(RenderCli, SvgKeepsNotesAxisLabelsAndTheTraceNameAsText) {
    Job job;
    const std::string out = job.dir / "t.svg";
    const ShellRun r = cli("render " + shq(job.trace) + " --view timeline --notes " +
                           shq(job.notes) + " -o " + shq(out));
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string svg = readFile(out);
    std::string texts;
    static const std::regex text("<text[^>]*>\\s*([^<]*)</text>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
         ++it)
        texts += (*it)[1].str() + "\n";
    EXPECT_NE(texts.find("Staircase begins"), std::string::npos);
    EXPECT_NE(texts.find("Look here first"), std::string::npos);
    EXPECT_NE(texts.find("job-rank0.vscope"), std::string::npos);
    EXPECT_TRUE(std::regex_search(texts, std::regex("\\d (MiB|GiB)\\n")));
    EXPECT_TRUE(std::regex_search(texts, std::regex("\\d (ms|s)\\n")));
    // Drawn as shapes, not pasted as a bitmap.
    static const std::regex shape("<(path|polyline)");
    EXPECT_GT(
        std::distance(std::sregex_iterator(svg.begin(), svg.end(), shape), std::sregex_iterator()),
        20);
    EXPECT_EQ(svg.find("<image"), std::string::npos);
}

TEST(RenderCli, PdfKeepsNotesAxisLabelsAndTheTraceNameAsText) {
    if (!havePdftotext())
        GTEST_SKIP() << "pdftotext (poppler-utils) not installed";
    Job job;
    const std::string out = job.dir / "t.pdf";
    ASSERT_EQ(cli("render " + shq(job.trace) + " --view timeline --notes " + shq(job.notes) +
                  " -o " + shq(out))
                  .code,
              0);
    const std::string text = shellWithStderr("pdftotext -layout " + shq(out) + " -").out;
    EXPECT_NE(text.find("Staircase begins"), std::string::npos) << text;
    EXPECT_NE(text.find("job-rank0.vscope"), std::string::npos);
    EXPECT_TRUE(std::regex_search(text, std::regex("\\d (MiB|GiB)")));
    EXPECT_TRUE(std::regex_search(text, std::regex("\\d ms")));
    EXPECT_EQ(pdfPages(out), 1u);
}

TEST(RenderCli, PngHasTheSizeTimesTheScaleOrTheExactWidth) {
    Job job;
    const std::string out = job.dir / "t.png";
    const std::string base =
        "render " + shq(job.trace) + " --view lanes --size 800x500 -o " + shq(out);
    ASSERT_EQ(cli(base).code, 0);
    EXPECT_EQ(pngSize(out), (std::pair<uint32_t, uint32_t>{800, 500}));
    ASSERT_EQ(cli(base + " --scale 2").code, 0);
    EXPECT_EQ(pngSize(out), (std::pair<uint32_t, uint32_t>{1600, 1000}));
    ASSERT_EQ(cli(base + " --width 1200").code, 0);  // 1.5 x 800, so 1.5 x 500 high
    EXPECT_EQ(pngSize(out), (std::pair<uint32_t, uint32_t>{1200, 750}));
}

TEST(RenderCli, BadRequestsExitTwoOrThreeNamingWhatIsWrong) {
    Job job;
    const std::string out = job.dir / "t.png";
    const std::string in = shq(job.trace);
    ShellRun r = cli("render " + in + " --view heatmap -o " + shq(out));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("heatmap"), std::string::npos) << r.out;
    r = cli("render " + in + " --view timeline --range 5s -o " + shq(out));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("'5s'"), std::string::npos) << r.out;
    r = cli("render " + in + " --view timeline --range 900s:901s -o " + shq(out));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("outside the job"), std::string::npos) << r.out;
    r = cli("render " + in + " --view timeline --gpu 4:0 -o " + shq(out));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("4:0"), std::string::npos) << r.out;
    // The lanes show every GPU: a picture of them titled with one GPU is refused.
    r = cli("render " + in + " --view lanes --gpu 0:0 -o " + shq(out));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("shows every GPU"), std::string::npos) << r.out;
    const std::string unwritable = job.dir / "no/such/dir/t.svg";
    r = cli("render " + in + " --view timeline -o " + shq(unwritable));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.out.find(unwritable), std::string::npos) << r.out;
    r = cli("render " + in + " --view timeline -o " + shq(job.dir / "t.jpg"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("t.jpg: the name must end in .png, .svg or .pdf"), std::string::npos)
        << r.out;
    EXPECT_FALSE(fs::exists(out));
}

TEST(RenderCli, NotesOfAnotherTraceAreRefusedNamingThem) {
    Job job;
    Job other(7);
    const ShellRun r = cli("render " + shq(job.trace) + " --view timeline --notes " +
                           shq(other.notes) + " -o " + shq(job.dir / "t.svg"));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.out.find("job.notes.json"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("different trace"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(job.dir / "t.svg"));
}

TEST(ReviewCli, H200LeakSnapshotHasASummaryAndSixViews) {
    const std::string path = realdata::kGptLeakSnapshot;
    VRAMSCOPE_REQUIRE_INPUT(path);
    const ScratchDir dir{"vscope-render"};
    const std::string out = dir / "review.pdf";
    const ShellRun r = cli("review " + shq(path) + " -o " + shq(out));
    ASSERT_EQ(r.code, 0) << r.out;
    // A PyTorch memory snapshot records allocations, segments and stacks but no kernels
    // (realdata README): every view but the communication lanes and the idle gaps has data.
    EXPECT_EQ(pdfPages(out), 1u + 6u);
    if (havePdftotext()) {
        const std::string text = shellWithStderr("pdftotext " + shq(out) + " -").out;
        EXPECT_NE(text.find("lanes: no kernels were recorded"), std::string::npos) << text;
        EXPECT_NE(text.find("staircase"), std::string::npos);
    }
}

TEST(ReviewCli, DlrmWithoutMemoryEventsHasLanesGapsAndAdvice) {
    const std::string path = realdata::kDlrmJob;
    VRAMSCOPE_REQUIRE_INPUT(path);
    const ScratchDir dir{"vscope-render"};
    const std::string out = dir / "review.pdf";
    const ShellRun r = cli("review " + shq(path) + " -o " + shq(out));
    ASSERT_EQ(r.code, 0) << r.out;
    // Kineto traces of 8 ranks with kernels and no memory events: lanes, gaps, advice.
    EXPECT_EQ(pdfPages(out), 1u + 3u);
}

TEST(ReviewCli, OutputMustBeAPdf) {
    Job job;
    const ShellRun r = cli("review " + shq(job.trace) + " -o " + shq(job.dir / "r.png"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("PDF"), std::string::npos) << r.out;
}

TEST(ReviewSummary, KeepsTheReportsLinesForTheFirstQuestions) {
    const std::string report =
        "vramscope report: 1 input, 1 device\n\n"
        "rank  device  name\n   0       0  H200\n\n"
        "peak at: note\n\ndata loss: none\n\n"
        "analyses (formulas in parentheses):\n"
        "rank 0 GPU 0:\n"
        "  iterations: 5 (source: ranges)\n    ranges: why\n"
        "  memory per iteration: staircase, growing 1 GiB per iteration\n    reason\n"
        "  model state: 1 GiB\n"
        "  time: span 10 ms, idle 2 ms\n    compute 5 ms, communication 3 ms\n    overlap 1 ms\n"
        "\njob: 1 rank present\n\nadvice:\n"
        "  [critical] leak: a\n  [warning] b: b\n  [info] c: c\n  [info] d: d\n  [info] e: e\n"
        "  [info] f: f\n  [info] g: g\n"
        "\ntraining checklist (rules that gave no advice):\n  x: clear\n"
        "\ncost: 1.00 = ...\n";
    const std::vector<std::string> kept = summaryOfReportText(report);
    const auto has = [&kept](const std::string& line) {
        return std::find(kept.begin(), kept.end(), line) != kept.end();
    };
    EXPECT_TRUE(has("vramscope report: 1 input, 1 device"));
    EXPECT_TRUE(has("   0       0  H200"));
    EXPECT_TRUE(has("rank 0 GPU 0: memory per iteration: staircase, growing 1 GiB per iteration"));
    EXPECT_TRUE(has("  time: span 10 ms, idle 2 ms"));
    EXPECT_TRUE(has("    compute 5 ms, communication 3 ms"));
    EXPECT_TRUE(has("job: 1 rank present"));
    EXPECT_TRUE(has("  [info] e: e"));  // the fifth advice
    EXPECT_FALSE(has("  [info] f: f"));
    EXPECT_TRUE(has("  ... 2 more (vramscope-cli report lists them all)"));
    EXPECT_TRUE(has("cost: 1.00 = ..."));
    EXPECT_FALSE(has("  iterations: 5 (source: ranges)"));
    EXPECT_FALSE(has("    overlap 1 ms"));
    EXPECT_FALSE(has("  x: clear"));
}

TEST(ReviewSummary, WrapsAtSpacesIndentingTheRest) {
    const std::vector<std::string> lines =
        wrapLine("  alpha beta gamma delta epsilon zeta eta theta iota kappa", 30);
    ASSERT_GE(lines.size(), 2u);
    for (const std::string& l : lines)
        EXPECT_LE(l.size(), 30u) << l;
    EXPECT_EQ(lines[0].rfind("  alpha", 0), 0u);
    EXPECT_EQ(lines[1].rfind("      ", 0), 0u);  // 2 + 4 spaces
}

TEST(RenderCli, MarkersAndTheNotesListNumberTheNotesAlikeWhateverTheFileOrder) {
    Job job;
    // The sidecar lists the later note first; both numberings must follow time.
    trace::NotesDocument doc = trace::readNotesFile(job.notes).value();
    std::swap(doc.notes[0], doc.notes[1]);
    doc.notes[0].startNs = 3'000'000;  // "Look here first" now starts after the point note
    ASSERT_TRUE(trace::writeNotesFile(job.notes, doc).ok());
    const std::string out = job.dir / "order.svg";
    ASSERT_EQ(cli("render " + shq(job.trace) + " --view timeline --notes " + shq(job.notes) +
                  " -o " + shq(out))
                  .code,
              0);
    const std::string svg = readFile(out);
    std::smatch marker;
    std::smatch listed;
    ASSERT_TRUE(std::regex_search(svg, marker, std::regex(">\\s*1 \u00b7 ([^<]+)<")));
    ASSERT_TRUE(std::regex_search(svg, listed, std::regex(">\\s*1\\. ([^<(]+)")));
    EXPECT_EQ(marker[1].str().substr(0, 9), "Staircase");
    EXPECT_EQ(listed[1].str().substr(0, 9), "Staircase");
}

TEST(RenderCli, NotesCarriedIntoAConvertedFileAreDrawn) {
    Job job;
    fs::copy_file(job.notes, trace::notesSidecarPath({job.trace}));
    const test::CliRun converted = test::run({"convert", job.trace, "-o", job.dir / "conv.vscope"});
    ASSERT_EQ(converted.code, 0) << converted.err;
    const std::string out = job.dir / "conv.svg";
    const ShellRun r =
        cli("render " + shq(job.dir / "conv-rank0.vscope") + " --view timeline -o " + shq(out));
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string svg = readFile(out);
    EXPECT_NE(svg.find("Staircase begins"), std::string::npos);
    EXPECT_NE(svg.find("Look here first"), std::string::npos);
}

TEST(RenderCli, PanelsAreDrawnWithoutTheirControlsAndWithoutBitmaps) {
    Job job;
    for (const char* view : {"flame", "segments", "leak"}) {
        const std::string out = job.dir / (std::string(view) + ".svg");
        const ShellRun r = cli("render " + shq(job.trace) + " --view " + view + " -o " + shq(out));
        ASSERT_EQ(r.code, 0) << r.out;
        const std::string svg = readFile(out);
        // Combo boxes and search fields are drawn from pixmaps by the style: none may be left.
        EXPECT_EQ(svg.find("<image"), std::string::npos) << view;
        EXPECT_EQ(svg.find("Search frames"), std::string::npos) << view;
    }
}

}  // namespace vramscope::app
