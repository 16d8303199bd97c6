#include "job_loader.h"

#include <QFileInfo>
#include <QThread>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "vramscope/analysis/memory_timeline.h"
#include "vramscope/bundled_sample.h"

namespace vramscope::app {

namespace {

using widgets::GpuSeries;
using widgets::LoadedJob;

/// Earliest and latest timestamp of one rank's events, in its own clock; false when it has none.
bool eventSpan(const trace::TraceData& d, int64_t& first, int64_t& last) {
    first = std::numeric_limits<int64_t>::max();
    last = std::numeric_limits<int64_t>::min();
    auto see = [&](int64_t a, int64_t b) {
        first = std::min(first, a);
        last = std::max(last, b);
    };
    if (d.memory.size() > 0) {
        // Memory events need not be in time order (importers append as they parse).
        const auto [lo, hi] =
            std::minmax_element(d.memory.timestampNs.begin(), d.memory.timestampNs.end());
        see(*lo, *hi);
    }
    if (d.counters.size() > 0) {
        const auto [lo, hi] =
            std::minmax_element(d.counters.timestampNs.begin(), d.counters.timestampNs.end());
        see(*lo, *hi);
    }
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        see(d.kernels.startNs[i], d.kernels.endNs[i]);
    }
    for (size_t i = 0; i < d.ranges.size(); ++i) {
        see(d.ranges.startNs[i], d.ranges.endNs[i]);
    }
    for (const trace::OomEvent& o : d.ooms) {
        see(o.timestampNs, o.timestampNs);
    }
    return first <= last;
}

void shift(analysis::StepSeries& s, int64_t by) {
    for (int64_t& t : s.timeNs) {
        t += by;
    }
}

std::string fileName(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

void collectProblems(const trace::Job& job, LoadedJob& out) {
    for (const trace::Error& e : job.skipped) {
        out.problems.push_back("Not opened: " + e.describe());
    }
    for (const trace::RankTrace& r : job.ranks) {
        const trace::ReadReport& report = r.trace.report;
        if (!report.complete) {
            const std::string summary = report.summary();
            out.problems.push_back(summary.empty() ? fileName(r.path) + " was only partly loaded."
                                                   : summary);
        }
        for (const trace::DataLoss& loss : r.trace.data.dataLoss) {
            out.problems.push_back(fileName(r.path) + ": " + trace::describe(loss) + ".");
        }
    }
}

}  // namespace

std::shared_ptr<const LoadedJob> analyseJob(trace::Job job, std::string title,
                                            const std::atomic<bool>* cancel) {
    auto out = std::make_shared<LoadedJob>();
    out->title = std::move(title);
    collectProblems(job, *out);

    int64_t origin = std::numeric_limits<int64_t>::max();
    int64_t end = std::numeric_limits<int64_t>::min();
    for (const trace::RankTrace& r : job.ranks) {
        int64_t first = 0;
        int64_t last = 0;
        if (eventSpan(r.trace.data, first, last)) {
            origin = std::min(origin, first + r.clockOffsetNs);
            end = std::max(end, last + r.clockOffsetNs);
        }
    }
    if (origin > end) {
        origin = 0;
        end = 1;
    }
    out->originNs = origin;
    out->durationNs = std::max<int64_t>(1, end - origin);

    int colorIndex = 0;
    for (size_t r = 0; r < job.ranks.size(); ++r) {
        if (cancel && cancel->load()) {
            return nullptr;
        }
        const trace::RankTrace& rank = job.ranks[r];
        const trace::TraceData& data = rank.trace.data;
        widgets::RankInfo info;
        info.rank = data.header.rank >= 0 ? data.header.rank : trace::kUnknownRank;
        info.path = rank.path;
        info.host = data.header.host;
        info.toJobNs = rank.clockOffsetNs - origin;
        info.ranges.reserve(data.ranges.size());
        for (size_t i = 0; i < data.ranges.size(); ++i) {
            const trace::RangeEvent e = data.ranges.at(i);
            info.ranges.push_back({e.startNs + info.toJobNs, e.endNs + info.toJobNs,
                                   std::string(data.string(e.name)), e.depth, e.kind});
        }
        for (analysis::MemoryTimeline& t : analysis::buildMemoryTimelines(data)) {
            GpuSeries g;
            g.key = {static_cast<int>(r), t.device};
            g.rank = info.rank;
            if (const trace::DeviceInfo* dev = data.device(t.device)) {
                g.deviceName = dev->name;
            }
            g.capacityBytes = t.capacityBytes;
            shift(t.allocated, info.toJobNs);
            shift(t.reserved, info.toJobNs);
            g.allocated = analysis::LodSeries(std::move(t.allocated));
            g.reserved = analysis::LodSeries(std::move(t.reserved));
            g.allocatedSource = t.allocatedSource;
            g.reservedSource = t.reservedSource;
            g.peakAllocatedBytes = t.peakAllocatedBytes;
            // An empty series has no peak; keep its time at the job start, not at the rank origin.
            g.peakAllocatedTimeNs =
                g.allocated.series().empty() ? 0 : t.peakAllocatedTimeNs + info.toJobNs;
            g.peakReservedBytes = t.peakReservedBytes;
            g.peakReservedTimeNs =
                g.reserved.series().empty() ? 0 : t.peakReservedTimeNs + info.toJobNs;
            g.memoryEvents = t.memoryEvents;
            for (const trace::OomEvent& o : data.ooms) {
                if (o.device == t.device) {
                    g.ooms.push_back({o.timestampNs + info.toJobNs, o.requestedBytes});
                }
            }
            g.colorIndex = colorIndex++;
            out->gpus.push_back(std::move(g));
        }
        out->ranks.push_back(std::move(info));
    }
    out->job = std::move(job);
    return out;
}

trace::Result<std::shared_ptr<const LoadedJob>> loadJob(const std::vector<std::string>& paths,
                                                        const trace::ReadOptions& options) {
    trace::Result<trace::Job> job = trace::openJob(paths, options);
    if (!job.ok()) {
        return job.error();
    }
    return analyseJob(std::move(job).value(), jobTitle(paths));
}

trace::Result<std::shared_ptr<const LoadedJob>> loadBundledSample() {
    trace::Result<trace::Job> job = openBundledSample();
    if (!job.ok()) {
        return job.error();
    }
    return analyseJob(std::move(job).value(), "bundled sample");
}

std::string jobTitle(const std::vector<std::string>& paths) {
    if (paths.empty()) {
        return "bundled sample";
    }
    if (paths.size() == 1) {
        const std::filesystem::path p(paths.front());
        const std::string name = p.filename().string();
        return name.empty() ? p.parent_path().filename().string() : name;
    }
    return std::to_string(paths.size()) + " files";
}

JobLoader::JobLoader(QObject* parent) : QObject(parent) {}

JobLoader::~JobLoader() {
    cancel();
    wait();
}

bool JobLoader::isRunning() const {
    return m_thread && m_thread->isRunning();
}

void JobLoader::cancel() {
    if (m_cancel) {
        m_cancel->store(true);
    }
}

void JobLoader::wait() {
    if (m_thread) {
        m_thread->wait();
    }
}

void JobLoader::start(const QStringList& paths) {
    if (isRunning()) {
        cancel();
        wait();
    }
    auto cancelFlag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = cancelFlag;
    std::vector<std::string> files;
    for (const QString& p : paths) {
        files.push_back(p.toStdString());
    }
    QThread* thread = QThread::create([this, files, paths, cancelFlag] {
        auto lastPermille = std::make_shared<int>(-1);
        trace::ReadOptions options;
        options.progress = [this, cancelFlag, lastPermille](uint64_t done, uint64_t total) {
            const int permille = total > 0 ? static_cast<int>(1000.0 * static_cast<double>(done) /
                                                              static_cast<double>(total))
                                           : 0;
            if (permille != *lastPermille) {
                *lastPermille = permille;
                const QString text = tr("Reading %1 of %2 MiB")
                                         .arg(static_cast<double>(done) / 1048576.0, 0, 'f', 1)
                                         .arg(static_cast<double>(total) / 1048576.0, 0, 'f', 1);
                QMetaObject::invokeMethod(
                    this, [this, permille, text] { emit progress(permille, text); },
                    Qt::QueuedConnection);
            }
            return !cancelFlag->load();
        };
        trace::Result<std::shared_ptr<const LoadedJob>> result =
            files.empty() ? loadBundledSample()
                          : [&]() -> trace::Result<std::shared_ptr<const LoadedJob>> {
            trace::Result<trace::Job> job = trace::openJob(files, options);
            if (!job.ok()) {
                return job.error();
            }
            QMetaObject::invokeMethod(
                this, [this] { emit progress(1000, tr("Computing memory timelines")); },
                Qt::QueuedConnection);
            return analyseJob(std::move(job).value(), jobTitle(files), cancelFlag.get());
        }();
        QMetaObject::invokeMethod(
            this,
            [this, result = std::move(result), paths, cancelFlag]() {
                if (cancelFlag->load()) {
                    emit cancelled(paths);
                } else if (!result.ok()) {
                    emit failed(QString::fromStdString(result.error().describe()), paths);
                } else if (!result.value()) {
                    emit cancelled(paths);
                } else {
                    emit finished(result.value(), paths);
                }
            },
            Qt::QueuedConnection);
    });
    if (m_thread) {
        m_thread->deleteLater();
    }
    m_thread = thread;
    thread->start();
}

}  // namespace vramscope::app
