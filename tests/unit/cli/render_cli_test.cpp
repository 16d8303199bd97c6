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

#include "cli_refusal.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "review_summary.h"
#include "shell_command.h"
#include "test_files.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/bundled_sample.h"
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

TEST(RenderCli, AMalformedRangeOrGpuIsRefusedBeforeAnyInputIsRead) {
    // The input does not exist: exit 2 naming the option shows it was judged before the input
    // was opened (which exits 3 naming the file).
    const std::string missing = "/nonexistent/vramscope-no-such-trace.vscope";
    EXPECT_TRUE(app::test::refusedRun(
        {"render", missing, "--view", "timeline", "--range", "abc", "-o", "/tmp/unused.png"},
        kExitUsage, {"--range wants START:END", "'abc'"}));
    EXPECT_TRUE(app::test::refusedRun(
        {"render", missing, "--view", "timeline", "--gpu", "1", "-o", "/tmp/unused.png"},
        kExitUsage, {"--gpu wants R:G", "'1'"}));
    EXPECT_TRUE(app::test::refusedRun(
        {"render", missing, "--view", "timeline", "--range", "1s:2s", "-o", "/tmp/unused.png"},
        kExitUnreadable, {missing}));
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
    // Lines as the report's writers mark them (report_lines.h), written out by hand.
    ReportText report;
    const auto add = [&report](ReportPart part, SummaryRole role, const std::string& text) {
        report.os() << text << "\n";
        report.take(part, role);
    };
    using P = ReportPart;
    using R = SummaryRole;
    add(P::Head, R::Keep, "vramscope report: 1 input, 1 device");
    add(P::Table, R::Keep, "");
    add(P::Table, R::Keep, "rank  device  name");
    add(P::Table, R::Keep, "   0       0  H200");
    add(P::DataLoss, R::Keep, "data loss: none");
    add(P::Analyses, R::Omit, "analyses (formulas in parentheses):");
    add(P::Device, R::Heading, "rank 0 GPU 0:");
    add(P::Device, R::Omit, "  iterations: 5 (source: ranges)");
    add(P::Device, R::Keep, "  memory per iteration: staircase, growing 1 GiB per iteration");
    add(P::Device, R::Omit, "  model state: 1 GiB");
    add(P::Device, R::Keep, "  time: span 10 ms, idle 2 ms");
    add(P::Device, R::Keep, "    compute 5 ms, communication 3 ms");
    add(P::Device, R::Omit, "    overlap 1 ms");
    add(P::Job, R::Keep, "");
    add(P::Job, R::Keep, "job: 1 rank present");
    add(P::Advice, R::Keep, "");
    add(P::Advice, R::Keep, "advice:");
    for (const char* a : {"  [critical] leak: a", "  [warning] b: b", "  [info] c: c",
                          "  [info] d: d", "  [info] e: e", "  [info] f: f", "  [info] g: g"})
        add(P::Advice, R::Entry, a);
    add(P::Checklist, R::Omit, "training checklist (rules that gave no advice):");
    add(P::Checklist, R::Omit, "  x: clear");
    add(P::Cost, R::Keep, "");
    add(P::Cost, R::Keep, "cost: 1.00 = ...");
    const std::vector<std::string> kept = summaryLines(report.lines());
    const auto at = [&kept](const std::string& line) {
        return size_t(std::find(kept.begin(), kept.end(), line) - kept.begin());
    };
    const auto has = [&](const std::string& line) { return at(line) < kept.size(); };
    EXPECT_TRUE(has("vramscope report: 1 input, 1 device"));
    EXPECT_TRUE(has("   0       0  H200"));
    // The GPU's first kept line carries its heading; the next ones are as printed.
    EXPECT_TRUE(has("rank 0 GPU 0: memory per iteration: staircase, growing 1 GiB per iteration"));
    EXPECT_FALSE(has("rank 0 GPU 0:"));
    EXPECT_TRUE(has("  time: span 10 ms, idle 2 ms"));
    EXPECT_TRUE(has("    compute 5 ms, communication 3 ms"));
    EXPECT_TRUE(has("job: 1 rank present"));
    EXPECT_TRUE(has("  [info] e: e"));  // the fifth advice
    EXPECT_FALSE(has("  [info] f: f"));
    // The count of the advice left out comes after the advice, before the cost's blank line.
    const size_t more = at("  ... 2 more (vramscope-cli report lists them all)");
    ASSERT_LT(more, kept.size());
    EXPECT_EQ(more, at("  [info] e: e") + 1);
    EXPECT_EQ(at("cost: 1.00 = ..."), more + 2);
    EXPECT_FALSE(has("  iterations: 5 (source: ranges)"));
    EXPECT_FALSE(has("  model state: 1 GiB"));
    EXPECT_FALSE(has("    overlap 1 ms"));
    EXPECT_FALSE(has("  x: clear"));
    // 5 head, table and data-loss lines, 3 of the GPU, 4 of the job and the advice heading, 5
    // of 7 entries, the count, 2 of the cost.
    EXPECT_EQ(kept.size(), 20u);
}

TEST(ReviewSummary, EverySummaryLineIsALineTheReportPrints) {
    auto bundled = openBundledSample();
    ASSERT_TRUE(bundled.ok()) << bundled.error().describe();
    auto model = analysis::buildJobModel(std::move(bundled).value(), "sample");
    ASSERT_TRUE(model.ok()) << model.error().describe();
    const JobReport report = buildJobReport(*model);
    std::ostringstream text;
    writeTextReport(report, text);
    std::vector<std::string> printed;
    std::istringstream in(text.str());
    for (std::string line; std::getline(in, line);)
        printed.push_back(line);
    const auto printedTrimmed = [&printed](const std::string& want) {
        return std::any_of(printed.begin(), printed.end(), [&](const std::string& p) {
            const size_t n = p.find_first_not_of(' ');
            return n != std::string::npos && p.substr(n) == want;
        });
    };
    const ReportText lineValues = reportText(report);
    const std::vector<std::string> lines = summaryLines(lineValues.lines());
    ASSERT_GT(lines.size(), 10u);
    size_t joined = 0;
    for (const std::string& line : lines) {
        if (line.rfind("  ... ", 0) == 0)
            continue;  // the counts of what was left out
        if (std::find(printed.begin(), printed.end(), line) != printed.end())
            continue;
        // A GPU's heading put before its first kept line.
        const size_t colon = line.find(": ");
        ASSERT_NE(colon, std::string::npos) << line;
        EXPECT_NE(std::find(printed.begin(), printed.end(), line.substr(0, colon + 1)),
                  printed.end())
            << line;
        EXPECT_TRUE(printedTrimmed(line.substr(colon + 2))) << line;
        ++joined;
    }
    // The bundled sample's four GPUs each open with their heading.
    EXPECT_EQ(joined, 4u);
}

TEST(ReviewSummary, CountsTheGpusPastTheFourthOnOneLine) {
    ReportText report;
    for (int g = 0; g < 6; ++g) {
        report.os() << "rank 0 GPU " << g << ":\n";
        report.take(ReportPart::Device, SummaryRole::Heading);
        report.os() << "  memory per iteration: sawtooth\n";
        report.take(ReportPart::Device, SummaryRole::Keep);
    }
    const std::vector<std::string> kept = summaryLines(report.lines());
    ASSERT_EQ(kept.size(), 5u);
    EXPECT_EQ(kept[3], "rank 0 GPU 3: memory per iteration: sawtooth");
    EXPECT_EQ(kept[4], "  ... 2 more GPUs (vramscope-cli report lists them all)");
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
