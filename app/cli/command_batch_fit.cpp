// vramscope-cli batch-fit: the largest batch that fits, from runs at several batch sizes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "analysis_report.h"
#include "command_batch_fit.h"
#include "vramscope/analysis/memory/batch_fit.h"
#include "vramscope/analysis/memory/memory_summary.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::app {

namespace {

/// "0.9", "2": a batch size as the warnings print it.
std::string formatFixed(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

/// True when two regular files hold the same bytes (two copies of one run).
bool sameContent(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(a, ec) || !std::filesystem::is_regular_file(b, ec) ||
        std::filesystem::file_size(a, ec) != std::filesystem::file_size(b, ec) || ec) {
        return false;
    }
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    char ba[1 << 16], bb[1 << 16];
    while (fa && fb) {
        fa.read(ba, sizeof ba);
        fb.read(bb, sizeof bb);
        if (fa.gcount() != fb.gcount() || !std::equal(ba, ba + fa.gcount(), bb)) {
            return false;
        }
    }
    return fa.eof() && fb.eof();
}

/// One warning per pair of inputs that are one run: the same file, or byte-identical files,
/// given for two batch sizes. One run has one batch size; fitting it twice makes a flat line.
std::vector<std::string> sameRunWarnings(const std::vector<analysis::BatchPoint>& points) {
    std::vector<std::string> warnings;
    for (size_t i = 0; i < points.size(); ++i) {
        for (size_t j = i + 1; j < points.size(); ++j) {
            const struct {
                const analysis::BatchPoint& a;
                const analysis::BatchPoint& b;
            } pair{points[i], points[j]};
            std::error_code ec;
            const bool same = std::filesystem::equivalent(pair.a.label, pair.b.label, ec);
            if (!same && !sameContent(pair.a.label, pair.b.label)) {
                continue;
            }
            warnings.push_back(
                "the same run twice: " + pair.a.label + " (batch " + formatFixed(pair.a.batch) +
                ") and " + pair.b.label + " (batch " + formatFixed(pair.b.batch) + ") " +
                (same ? "are one file" : "hold the same bytes") +
                "; one run has one batch size, so the fit counts a run that was never made");
        }
    }
    return warnings;
}

}  // namespace

std::optional<BatchFitOptions> parseBatchFitOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    if (args->positional.size() < 2) {
        return usageFailure(ctx, "batch-fit needs at least two FILE:BATCH inputs", help);
    }
    BatchFitOptions options;
    if (auto c = args->value("--capacity")) {
        options.capacity = parseCapacity(*c);
        if (!options.capacity) {
            return usageFailure(ctx, capacityError(*c), help);
        }
    }
    for (const std::string& spec : args->positional) {
        const size_t colon = spec.rfind(':');
        if (colon == std::string::npos || colon == 0) {
            return usageFailure(ctx, "expected FILE:BATCH, got '" + spec + "'", help);
        }
        char* end = nullptr;
        const std::string batchText = spec.substr(colon + 1);
        const double batch = std::strtod(batchText.c_str(), &end);
        if (batchText.empty() || end != batchText.c_str() + batchText.size() || !(batch > 0)) {
            return usageFailure(ctx, "BATCH must be a positive number in '" + spec + "'", help);
        }
        options.runs.push_back({spec.substr(0, colon), batch});
    }
    options.json = args->has("--json");
    exitCode = kExitSuccess;
    return options;
}

std::optional<analysis::BatchFit> fitBatchRuns(CommandContext& ctx, const BatchFitOptions& options,
                                               int& exitCode) {
    exitCode = kExitUnreadable;
    std::vector<analysis::BatchPoint> points;
    uint64_t headerCapacity = 0;
    std::vector<std::string> refused;  // runs whose memory climbs every iteration
    for (const BatchRun& run : options.runs) {
        const std::string& file = run.file;
        auto job = openInputs(ctx, {file});
        if (!job) {
            return std::nullopt;
        }
        auto analysed = analysis::analyzeJob(analysis::rankInputs(*job));
        if (!analysed.ok()) {
            ctx.err << "vramscope-cli batch-fit: " << file << ": " << analysed.error().message
                    << "\n";
            return std::nullopt;
        }
        int64_t peak = 0;
        for (const analysis::DeviceAnalysis& d : analysed->devices) {
            peak = std::max(peak, d.memory.peakBytes());
            if (d.memory.capacityBytes > 0) {
                headerCapacity = headerCapacity == 0
                                     ? d.memory.capacityBytes
                                     : std::min(headerCapacity, d.memory.capacityBytes);
            }
            if (d.leak.verdict == analysis::LeakVerdict::Staircase) {
                refused.push_back(file + " (" + analysis::deviceLabel(d.rank, d.device) + ": +" +
                                  formatBytes(double(d.leak.growthBytesPerIteration)) +
                                  " per iteration)");
            }
        }
        points.push_back({run.batch, double(peak), file});
    }
    if (!refused.empty()) {
        ctx.err << "vramscope-cli batch-fit: memory climbs every iteration (a staircase) in:";
        for (const std::string& r : refused) {
            ctx.err << "\n  " << r;
        }
        ctx.err << "\nsuch a run's peak depends on how long it ran, not on its batch: fix the "
                   "leak (vramscope-cli report shows the survivors) or leave the run out\n";
        exitCode = kExitCheckFailed;
        return std::nullopt;
    }
    exitCode = kExitUsage;
    if (!options.capacity && headerCapacity == 0) {
        ctx.err << "vramscope-cli batch-fit: the device capacity is unknown: none of the traces "
                   "names its GPU's total memory; give it with --capacity BYTES|GPU (e.g. "
                   "--capacity 80GiB or --capacity H200)\n";
        return std::nullopt;
    }
    auto fit = analysis::fitBatch(points, options.capacity.value_or(headerCapacity));
    if (!fit.ok()) {
        ctx.err << "vramscope-cli batch-fit: " << fit.error().message << "\n";
        return std::nullopt;
    }
    std::vector<std::string> same = sameRunWarnings(fit->points);
    fit->warnings.insert(fit->warnings.begin(), same.begin(), same.end());
    exitCode = kExitSuccess;
    return std::move(fit).value();
}

int batchFitExitCode(const analysis::BatchFit& fit) {
    return fit.limit100 == analysis::BatchLimit::Found ? kExitSuccess : kExitCheckFailed;
}

void printBatchFit(const analysis::BatchFit& fit, bool json, std::ostream& os) {
    auto orNull = [](const std::optional<int64_t>& v) {
        return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    if (json) {
        nlohmann::ordered_json j;
        j["points"] = nlohmann::ordered_json::array();
        for (const auto& p : fit.points) {
            j["points"].push_back(
                {{"file", p.label}, {"batch", p.batch}, {"peak_bytes", p.peakBytes}});
        }
        j["slope_bytes_per_sample"] = fit.slopeBytesPerSample;
        j["intercept_bytes"] = fit.interceptBytes;
        j["r_squared"] = fit.rSquared;
        j["capacity_bytes"] = fit.capacityBytes;
        j["largest_batch_under_80_pct"] = orNull(fit.largestBatchUnder80);
        j["largest_batch_under_100_pct"] = orNull(fit.largestBatchUnder100);
        j["largest_measured_batch"] = fit.largestMeasuredBatch;
        j["smallest_measured_batch"] = fit.smallestMeasuredBatch;
        j["distinct_batch_sizes"] = fit.distinctBatchSizes;
        j["r_squared_threshold"] = analysis::kBatchFitMinRSquared;
        j["warnings"] = fit.warnings;
        os << j.dump(2) << "\n";
        return;
    }
    for (const auto& p : fit.points) {
        os << "  batch " << p.batch << ": peak " << formatBytes(uint64_t(p.peakBytes)) << "  ("
           << p.label << ")\n";
    }
    os << "fit: peak = " << formatBytes(fit.interceptBytes) << " + "
       << formatBytes(fit.slopeBytesPerSample)
       << " x batch (least squares, R^2 = " << analysis::formatSignificant(fit.rSquared) << ")\n";
    os << "capacity " << formatBytes(fit.capacityBytes) << "\n";
    auto line = [&](const std::string& what, const std::optional<int64_t>& b,
                    analysis::BatchLimit limit) {
        os << "largest batch under " << what << " of capacity: ";
        if (b) {
            os << *b << " (predicted peak " << formatBytes(fit.predict(double(*b))) << ")\n";
        } else {
            os << analysis::batchLimitText(fit, limit) << "\n";
        }
    };
    line(analysis::formatPercent(analysis::kCapacityWarningShare, 0), fit.largestBatchUnder80,
         fit.limit80);
    line("100 %", fit.largestBatchUnder100, fit.limit100);
    for (const std::string& w : fit.warnings) {
        os << "warning: " << w << "\n";
    }
}

int runBatchFit(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<BatchFitOptions> options = parseBatchFitOptions(ctx, code);
    if (!options) {
        return code;
    }
    const std::optional<analysis::BatchFit> fit = fitBatchRuns(ctx, *options, code);
    if (!fit) {
        return code;
    }
    printBatchFit(*fit, options->json, ctx.out);
    return batchFitExitCode(*fit);
}

}  // namespace vramscope::app
