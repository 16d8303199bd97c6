#include "sweep_load.h"

#include <unistd.h>

#include <exception>
#include <filesystem>
#include <sstream>

#include "device_report.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope_sweep {

namespace {

void report(int fd, std::string line) {
    for (char& c : line) {
        if (c == '\n' || c == '\t') {
            c = ' ';
        }
    }
    if (line.size() > 300) {
        line.resize(300);
    }
    line += '\n';
    const ssize_t ignored = ::write(fd, line.data(), line.size());
    (void)ignored;
}

int load(const std::string& path, int fd) {
    using namespace vramscope;
    auto job = trace::openJob({path});
    if (!job.ok()) {
        const trace::Error& e = job.error();
        report(fd, e.describe());
        // A clear refusal names the input (an archive member as "ARCHIVE:MEMBER").
        const std::string base = std::filesystem::path(path).filename().string();
        return e.file.find(base) != std::string::npos ? kExitRefused : kExitUnclearRefusal;
    }
    // What `vramscope-cli report` does with a job: the job model (every analysis), then both
    // output forms.
    auto model = analysis::buildJobModel(std::move(job).value(), path);
    if (!model.ok()) {
        report(fd, model.error().describe());
        return kExitUnclearRefusal;
    }
    const trace::Job* loaded = &(*model)->job;
    const app::JobReport rep = app::buildJobReport(*model);
    std::ostringstream text;
    app::writeTextReport(rep, text);
    const std::string json = rep.toJson().dump();
    if (!loaded->skipped.empty()) {
        report(fd, "skipped: " + loaded->skipped.front().describe());
        return kExitLoadedLoss;
    }
    for (const auto& rank : loaded->ranks) {
        if (!rank.trace.data.dataLoss.empty()) {
            report(fd, trace::describe(rank.trace.data.dataLoss.front()));
            return kExitLoadedLoss;
        }
    }
    const auto& r = loaded->ranks.front().trace.report;
    report(fd, "no loss reported (" + std::to_string(loaded->ranks.size()) + " ranks, " +
                   std::to_string(r.problems.size()) + " problems, " +
                   std::to_string(json.size() + text.str().size()) + " report bytes)");
    return kExitLoadedClean;
}

}  // namespace

int loadAndAnalyse(const std::string& path, int reportFd) {
    try {
        return load(path, reportFd);
    } catch (const std::exception& e) {
        report(reportFd, std::string("exception: ") + e.what());
    } catch (...) {
        report(reportFd, "exception of unknown type");
    }
    return kExitException;
}

}  // namespace vramscope_sweep
