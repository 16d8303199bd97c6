#include "top_kernels_report.h"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "cli_command.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::app {

using Json = nlohmann::ordered_json;
using namespace analysis;

namespace {

/// Bytes a kernel name may take in the text table (full names are in the JSON).
constexpr size_t kKernelNameWidth = 60;

Json timeJson(const KernelTime& k, const char* nameKey) {
    Json j;
    if (nameKey != nullptr) {
        j[nameKey] = k.name;
    }
    j["category"] = trace::toString(k.category);
    j["count"] = k.count;
    j["total_ns"] = k.totalNs;
    j["max_ns"] = k.maxNs;
    j["busy_share"] = k.busyShare;
    return j;
}

}  // namespace

Json topKernelsJson(const DeviceKernelTimes& t) {
    Json j;
    j["busy_ns"] = t.busyNs;
    j["launches"] = t.kernels;
    j["names"] = t.kernelNames;
    j["kernels"] = Json::array();
    for (const KernelTime& k : t.byName) {
        j["kernels"].push_back(timeJson(k, "name"));
    }
    j["other"] = {{"names", t.otherNames},
                  {"count", t.otherCount},
                  {"total_ns", t.otherTotalNs},
                  {"busy_share", t.otherBusyShare}};
    j["categories"] = Json::array();
    for (const KernelTime& c : t.byCategory) {
        j["categories"].push_back(timeJson(c, nullptr));
    }
    return j;
}

void writeTopKernelsText(const DeviceKernelTimes& t, std::ostream& os, size_t rows) {
    os << "  top kernels: " << t.kernelNames << (t.kernelNames == 1 ? " kernel" : " kernels")
       << " in " << t.kernels << (t.kernels == 1 ? " launch" : " launches") << ", busy "
       << formatDuration(double(t.busyNs)) << " (union of all kernels)\n";
    os << "    by category:";
    for (size_t i = 0; i < t.byCategory.size(); ++i) {
        const KernelTime& c = t.byCategory[i];
        os << (i == 0 ? " " : ", ") << c.name << " " << formatDuration(double(c.totalNs)) << " ("
           << analysis::formatPercent(c.busyShare) << ")";
    }
    os << "\n";
    const size_t shown = std::min(rows, t.byName.size());
    std::vector<std::string> names;
    for (size_t i = 0; i < shown; ++i) {
        names.push_back(t.byName[i].name);
    }
    names = shortenNames(names, kKernelNameWidth);
    size_t width = 6;
    for (const std::string& n : names) {
        width = std::max(width, n.size());
    }
    os << "    " << padRight("kernel", width) << padLeft("category", 15) << padLeft("launches", 10)
       << padLeft("total", 10) << padLeft("share", 9) << padLeft("max", 10) << "\n";
    for (size_t i = 0; i < shown; ++i) {
        const KernelTime& k = t.byName[i];
        os << "    " << padRight(names[i], width) << padLeft(trace::toString(k.category), 15)
           << padLeft(std::to_string(k.count), 10) << padLeft(formatDuration(double(k.totalNs)), 10)
           << padLeft(analysis::formatPercent(k.busyShare), 9)
           << padLeft(formatDuration(double(k.maxNs)), 10) << "\n";
    }
    // The rows past the table: those topKernels kept but the text leaves out, and its own rest.
    size_t otherNames = t.otherNames, otherCount = t.otherCount;
    int64_t otherNs = t.otherTotalNs;
    for (size_t i = shown; i < t.byName.size(); ++i) {
        otherNames += 1;
        otherCount += t.byName[i].count;
        otherNs += t.byName[i].totalNs;
    }
    if (otherNames > 0) {
        os << "    other " << otherNames << (otherNames == 1 ? " kernel: " : " kernels: ")
           << formatDuration(double(otherNs)) << " ("
           << analysis::formatPercent(t.busyNs > 0 ? double(otherNs) / double(t.busyNs) : 0.0)
           << ") in " << otherCount << (otherCount == 1 ? " launch" : " launches")
           << " (--json lists " << t.byName.size() << ")\n";
    }
    os << "    share = the kernel's summed durations / busy; shares sum above 100 % when kernels "
          "run concurrently on several streams\n";
}

}  // namespace vramscope::app
