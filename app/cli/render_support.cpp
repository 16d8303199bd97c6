#include "render_support.h"

#include <QApplication>

#include <algorithm>
#include <filesystem>
#include <ostream>

#include "vramscope/analysis/advice/auto_notes.h"
#include "vramscope/analysis/model/job_title.h"

namespace vramscope::app {

namespace {

// QApplication keeps references to argc and argv for its whole life.
int g_argc = 1;
char g_name[] = "vramscope-cli";
char* g_argv[] = {g_name, nullptr};

/// The identities of the files the job was read from: the inputs that are files (archives
/// included) and the rank files read from directories.
std::vector<trace::TraceIdentity> jobIdentities(const std::vector<std::string>& paths,
                                                const analysis::JobModel& job) {
    std::vector<std::string> files;
    const auto add = [&files](const std::string& f) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(f, ec) &&
            std::find(files.begin(), files.end(), f) == files.end())
            files.push_back(f);
    };
    for (const std::string& p : paths)
        add(p);
    for (const trace::RankTrace& r : job.job.ranks)
        add(r.path);
    std::vector<trace::TraceIdentity> ids;
    for (const std::string& f : files) {
        if (auto id = trace::identifyTrace(f); id.ok())
            ids.push_back(std::move(id).value());
    }
    return ids;
}

}  // namespace

/// Drops the offscreen platform's notices that say nothing to a user of the command line (a
/// window shown off screen cannot be resized by a window manager; no session runtime directory)
/// and passes every other message on.
static QtMessageHandler g_previousHandler = nullptr;
static void quietHandler(QtMsgType type, const QMessageLogContext& context,
                         const QString& message) {
    if (message.contains(QLatin1String("propagateSizeHints")) ||
        message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR")))
        return;
    if (g_previousHandler != nullptr)
        g_previousHandler(type, context, message);
}

HeadlessApplication::HeadlessApplication() {
    if (qobject_cast<QApplication*>(QCoreApplication::instance()) != nullptr)
        return;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    g_previousHandler = qInstallMessageHandler(quietHandler);
    m_app = std::make_unique<QApplication>(g_argc, g_argv);
    QCoreApplication::setApplicationName(QStringLiteral("vramscope-cli"));
}

HeadlessApplication::~HeadlessApplication() {
    if (m_app) {
        m_app.reset();
        qInstallMessageHandler(g_previousHandler);
    }
}

std::optional<widgets::TimeRange> parseTimeRange(std::string_view text, int64_t durationNs) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    const std::string_view a = text.substr(0, colon);
    const std::string_view b = text.substr(colon + 1);
    if (a.empty() && b.empty())
        return std::nullopt;
    const std::optional<int64_t> start = a.empty() ? std::optional<int64_t>(0) : parseDurationNs(a);
    const std::optional<int64_t> end =
        b.empty() ? std::optional<int64_t>(durationNs) : parseDurationNs(b);
    if (!start || !end || *end <= *start)
        return std::nullopt;
    return widgets::TimeRange{*start, *end};
}

std::optional<analysis::GpuKey> parseGpu(std::string_view text, const analysis::JobModel& job) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    const std::optional<int64_t> rank = parseInteger(text.substr(0, colon));
    const std::optional<int64_t> device = parseInteger(text.substr(colon + 1));
    if (!rank || !device || *rank < 0 || *device < 0 || *rank > INT32_MAX || *device > INT32_MAX)
        return std::nullopt;
    analysis::GpuKey key{-1, trace::DeviceIndex{int32_t(*device)}};
    for (size_t i = 0; i < job.ranks.size(); ++i) {
        if (trace::toInt(job.ranks[i].rank) == *rank)
            key.rankIndex = int(i);
    }
    // An input without a rank number goes by its position.
    if (key.rankIndex < 0 && size_t(*rank) < job.ranks.size() &&
        trace::toInt(job.ranks[size_t(*rank)].rank) < 0)
        key.rankIndex = int(*rank);
    // A rank the job lacks: keep the number, so that buildView names it.
    if (key.rankIndex < 0)
        key.rankIndex = int(*rank);
    return key;
}

std::optional<QSize> parseSize(std::string_view text) {
    const size_t x = text.find('x');
    if (x == std::string_view::npos)
        return std::nullopt;
    const std::optional<int64_t> w = parseInteger(text.substr(0, x));
    const std::optional<int64_t> h = parseInteger(text.substr(x + 1));
    if (!w || !h || *w < 200 || *h < 150 || *w > 20000 || *h > 20000)
        return std::nullopt;
    return QSize(int(*w), int(*h));
}

bool readJobNotes(CommandContext& ctx, const std::vector<std::string>& paths,
                  const analysis::JobModel& job, const std::optional<std::string>& notesPath,
                  std::vector<trace::Note>& notes) {
    const std::string prefix = "vramscope-cli " + ctx.command + ": ";
    std::string path = notesPath.value_or(trace::notesSidecarPath(paths));
    std::error_code ec;
    if (!notesPath && (path.empty() || !std::filesystem::is_regular_file(path, ec))) {
        // No sidecar: the notes a converted .vscope carries, as the app shows them.
        notes = analysis::notesInTraces(job);
        return true;
    }
    size_t skipped = 0;
    auto doc = trace::readNotesFile(path, &skipped);
    if (!doc.ok()) {
        ctx.err << prefix << doc.error().describe() << "\n";
        if (notesPath)
            return false;
        ctx.err << prefix << "the notes beside the inputs are left out\n";
        return true;
    }
    if (skipped > 0) {
        ctx.err << prefix << path << ": " << skipped << (skipped == 1 ? " note was" : " notes were")
                << " skipped (bad fields)\n";
    }
    const std::vector<trace::TraceIdentity> ids = jobIdentities(paths, job);
    const std::string name = std::filesystem::path(path).filename().string();
    if (const trace::Status belongs = trace::checkNotesBelongTo(*doc, ids, name); !belongs) {
        ctx.err << prefix << belongs.error().describe() << "\n";
        if (notesPath)
            return false;
        return true;
    }
    notes = std::move(doc->notes);
    if (!notesPath)
        ctx.err << prefix << "notes from " << path << "\n";
    return true;
}

}  // namespace vramscope::app
