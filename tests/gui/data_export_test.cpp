// File > Export Data...: the export behind the dialog on a synthetic job (CSV and speedscope
// files read back and checked against synthetic_job.h's formulas), and the dialog itself
// offscreen: what it asks for and a rendering to PNG.
#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data_export.h"
#include "data_export_dialog.h"
#include "vramscope/analysis/synthetic_job.h"

using namespace vramscope;

namespace {

/// Whether a temporary of the output ("<path>.partial-XXXXXX") was left beside it.
bool partialLeftBeside(const std::string& path) {
    const std::filesystem::path p(path);
    for (const auto& e : std::filesystem::directory_iterator(p.parent_path())) {
        if (e.path().filename().string().rfind(p.filename().string() + ".partial", 0) == 0) {
            return true;
        }
    }
    return false;
}

/// Two ranks, three iterations, the default sizes: per rank the allocated peak is
/// W + O + A x a (synthetic_job.h) and there are 2 + 3 x 2A allocated-level events, no two at
/// one time, with the reserved segments at times of allocs.
analysis::SyntheticJobSpec spec() {
    analysis::SyntheticJobSpec s;
    s.ranks = 2;
    s.iterations = 3;
    return s;
}

std::shared_ptr<const analysis::JobModel> model() {
    trace::Job job;
    int r = 0;
    for (trace::TraceData& d : analysis::generateSyntheticJob(spec())) {
        trace::RankTrace rt;
        rt.path = "rank" + std::to_string(r++) + ".vscope";
        rt.trace.data = std::move(d);
        job.ranks.push_back(std::move(rt));
    }
    auto built = analysis::buildJobModel(std::move(job), "synth");
    EXPECT_TRUE(built.ok());
    return built.ok() ? built.value() : nullptr;
}

int64_t peakBytes() {
    const analysis::SyntheticJobSpec s = spec();
    return int64_t(s.weightBytes + s.optimizerBytes +
                   uint64_t(s.activationsPerIteration) * s.activationBytes);
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(DataExport, CsvMemoryTableHoldsEveryStepAndThePeakOfEachRank) {
    auto m = model();
    ASSERT_TRUE(m);
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("memory.csv")).toStdString();
    app::DataExportRequest request;
    request.format = analysis::ExportFormat::Csv;
    request.csv.table = analysis::CsvTable::Memory;
    auto done = app::exportData(*m, request, path);
    ASSERT_TRUE(done.ok()) << done.error().describe();
    EXPECT_NE(done.value().find("memory.csv"), std::string::npos);
    EXPECT_FALSE(partialLeftBeside(path));
    std::istringstream lines(slurp(path));
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "rank,device,time_ns,trace_time_ns,allocated_bytes,reserved_bytes\r");
    std::map<std::string, int64_t> rows, peak;
    while (std::getline(lines, line)) {
        std::vector<std::string> f;
        std::stringstream fields(line);
        for (std::string x; std::getline(fields, x, ',');) {
            f.push_back(x);
        }
        ASSERT_EQ(f.size(), 6u) << line;
        ++rows[f[0]];
        peak[f[0]] = std::max<int64_t>(peak[f[0]], std::stoll(f[4]));
    }
    const int64_t events = 2 + spec().iterations * 2 * spec().activationsPerIteration;
    for (const char* rank : {"0", "1"}) {
        EXPECT_EQ(rows[rank], events) << rank;
        EXPECT_EQ(peak[rank], peakBytes()) << rank;
    }
    EXPECT_NE(done.value().find(std::to_string(2 * events) + " rows"), std::string::npos);
}

TEST(DataExport, SpeedscopeOfThePeakWeighsThePeakBytes) {
    auto m = model();
    ASSERT_TRUE(m);
    ASSERT_FALSE(m->memory.empty());
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("peak.speedscope.json")).toStdString();
    app::DataExportRequest request;
    request.format = analysis::ExportFormat::Speedscope;
    request.gpu = m->memory[1].key;  // rank 1
    request.jobTimeNs = m->memory[1].peakTimeNs + m->ranks[1].toJobNs;
    auto done = app::exportData(*m, request, path);
    ASSERT_TRUE(done.ok()) << done.error().describe();
    const nlohmann::json j = nlohmann::json::parse(slurp(path));
    int64_t sum = 0;
    for (const auto& w : j["profiles"][0]["weights"]) {
        sum += w.get<int64_t>();
    }
    EXPECT_EQ(sum, peakBytes());
    EXPECT_EQ(j["profiles"][0]["unit"], "bytes");
    for (const auto& sample : j["profiles"][0]["samples"]) {
        for (const auto& f : sample) {
            EXPECT_LT(f.get<size_t>(), j["shared"]["frames"].size());
        }
    }
}

TEST(DataExport, ATableTheJobCannotGiveIsAnErrorAndLeavesNoFile) {
    trace::Job job;
    trace::RankTrace rt;
    rt.path = "one.vscope";
    rt.trace.data = analysis::generateSyntheticRank(spec(), 0);
    rt.trace.data.collectives = {};
    job.ranks.push_back(std::move(rt));
    auto built = analysis::buildJobModel(std::move(job), "one rank");
    ASSERT_TRUE(built.ok());
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("c.csv")).toStdString();
    app::DataExportRequest request;
    request.csv.table = analysis::CsvTable::Collectives;
    auto done = app::exportData(*built.value(), request, path);
    ASSERT_FALSE(done.ok());
    EXPECT_NE(done.error().message.find("no collective"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_FALSE(partialLeftBeside(path));
}

TEST(DataExportDialog, AsksForWhatTheExportNeedsAndRendersOffscreen) {
    auto m = model();
    ASSERT_TRUE(m);
    const analysis::GpuKey gpu = m->memory[1].key;
    app::DataExportDialog dialog(*m, gpu, 12'345'678);
    // Every format with a writer can be chosen; the others are listed, greyed out.
    const std::vector<analysis::ExportFormat> offered = app::dataExportFormats();
    for (const analysis::ExportFormatInfo& f : analysis::exportFormats()) {
        const bool has = std::find(offered.begin(), offered.end(), f.format) != offered.end();
        EXPECT_EQ(dialog.setFormat(f.format), has) << f.name;
    }
    ASSERT_TRUE(dialog.setFormat(analysis::ExportFormat::Csv));
    dialog.setCsv(analysis::CsvTable::Memory, 500);
    app::DataExportRequest r = dialog.request();
    EXPECT_EQ(r.format, analysis::ExportFormat::Csv);
    EXPECT_EQ(r.csv.table, analysis::CsvTable::Memory);
    EXPECT_EQ(r.csv.points, 500u);
    EXPECT_EQ(app::suggestedExportName(*m, r), QStringLiteral("synth-memory.csv"));
    dialog.adjustSize();
    const QString out = QDir::current().filePath(QStringLiteral("data_export_dialog_csv.png"));
    ASSERT_TRUE(dialog.grab().toImage().save(out));
    EXPECT_FALSE(QImage(out).isNull());

    ASSERT_TRUE(dialog.setFormat(analysis::ExportFormat::Speedscope));
    r = dialog.request();
    EXPECT_EQ(r.format, analysis::ExportFormat::Speedscope);
    EXPECT_EQ(r.gpu, gpu);               // the GPU selected in the viewer
    EXPECT_EQ(r.jobTimeNs, 12'345'678);  // and its Details time
    const QString out2 =
        QDir::current().filePath(QStringLiteral("data_export_dialog_speedscope.png"));
    ASSERT_TRUE(dialog.grab().toImage().save(out2));
}

}  // namespace
