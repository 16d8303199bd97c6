// vramscope-cli batch-fit: the largest batch that fits, from runs at several batch sizes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "analysis_report.h"
#include "cli_command.h"
#include "vramscope/analysis/batch_fit.h"
#include "vramscope/analysis/job_analysis.h"
#include "vramscope/analysis/memory_summary.h"
#include "vramscope/analysis/text_format.h"

namespace vramscope::app {

namespace {

/// "0.9", "2": a threshold as the help prints it.
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

int runBatchFit(CommandContext& ctx) {
    // OptionSpec holds views: the text lives as long as the program.
    static const std::string capacityHelp =
        "GPU capacity, instead of the smallest one the traces name: " + capacityValueHelp();
    const std::vector<OptionSpec> options = {
        {"--capacity", true, "BYTES|GPU", capacityHelp},
        {"--json", false, "", "write JSON instead of text"},
    };
    const std::string help = commandHelp(
        ctx.command, "FILE:BATCH FILE:BATCH... [--capacity BYTES|GPU] [--json]",
        "Fits peak memory against batch size over runs of one job at different batch sizes\n"
        "(ordinary least squares: peak = intercept + slope x batch) and reports the largest\n"
        "batch whose predicted peak stays under 80 % and under 100 % of the GPU's capacity.\n"
        "A run's peak is the highest max(peak reserved, peak allocated) over its GPUs; the\n"
        "capacity is the smallest one the traces name, or --capacity (needed for PyTorch\n"
        "snapshots, which name none).\n\n"
        "Refuses runs whose memory climbs every iteration (a staircase: the peak then depends on\n"
        "how long the run lasted). Gives no answer when the peak does not grow with the batch\n"
        "(slope <= 0), nor below the smallest measured batch when the intercept is negative (such\n"
        "a line does not start from a fixed base: the runs are probably not one job). Warns with\n"
        "fewer than " +
            std::to_string(analysis::kBatchFitMinBatchSizes) +
            " batch sizes (a line through two points always has R^2 = 1), when the fit is\n"
            "poor (R^2 = 1 - SS_res / SS_tot below " +
            formatFixed(analysis::kBatchFitMinRSquared) + "),\nwhen a largest batch is more than " +
            formatFixed(analysis::kBatchFitMaxExtrapolation) +
            " x the largest measured batch (extrapolated), and\nwhen two inputs are one "
            "run (the same file or the same bytes).\n\n"
            "exit codes: 0 a batch fits under 100 % of the capacity, 1 no batch fits (batch 1 is\n"
            "predicted above the capacity), no answer can be derived, or a run was refused,\n"
            "2 usage or capacity unknown, 3 unreadable input",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (args->positional.size() < 2) {
        return usageError(ctx, "batch-fit needs at least two FILE:BATCH inputs", help);
    }
    std::optional<uint64_t> capacity;
    if (auto c = args->value("--capacity")) {
        capacity = parseCapacity(*c);
        if (!capacity) {
            return usageError(ctx, capacityError(*c), help);
        }
    }
    std::vector<analysis::BatchPoint> points;
    uint64_t headerCapacity = 0;
    std::vector<std::string> refused;  // runs whose memory climbs every iteration
    for (const std::string& spec : args->positional) {
        const size_t colon = spec.rfind(':');
        if (colon == std::string::npos || colon == 0) {
            return usageError(ctx, "expected FILE:BATCH, got '" + spec + "'", help);
        }
        char* end = nullptr;
        const std::string batchText = spec.substr(colon + 1);
        const double batch = std::strtod(batchText.c_str(), &end);
        if (batchText.empty() || end != batchText.c_str() + batchText.size() || !(batch > 0)) {
            return usageError(ctx, "BATCH must be a positive number in '" + spec + "'", help);
        }
        const std::string file = spec.substr(0, colon);
        auto job = loadJob(ctx, {file});
        if (!job) {
            return kExitUnreadable;
        }
        auto analysed = analysis::analyzeJob(analysis::rankInputs(*job));
        if (!analysed.ok()) {
            ctx.err << "vramscope-cli batch-fit: " << file << ": " << analysed.error().message
                    << "\n";
            return kExitUnreadable;
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
        points.push_back({batch, double(peak), file});
    }
    if (!refused.empty()) {
        ctx.err << "vramscope-cli batch-fit: memory climbs every iteration (a staircase) in:";
        for (const std::string& r : refused) {
            ctx.err << "\n  " << r;
        }
        ctx.err << "\nsuch a run's peak depends on how long it ran, not on its batch: fix the "
                   "leak (vramscope-cli report shows the survivors) or leave the run out\n";
        return kExitCheckFailed;
    }
    if (!capacity && headerCapacity == 0) {
        ctx.err << "vramscope-cli batch-fit: the device capacity is unknown: none of the traces "
                   "names its GPU's total memory; give it with --capacity BYTES|GPU (e.g. "
                   "--capacity 80GiB or --capacity H200)\n";
        return kExitUsage;
    }
    auto fit = analysis::fitBatch(points, capacity.value_or(headerCapacity));
    if (!fit.ok()) {
        ctx.err << "vramscope-cli batch-fit: " << fit.error().message << "\n";
        return kExitUsage;
    }
    {
        std::vector<std::string> same = sameRunWarnings(fit->points);
        fit->warnings.insert(fit->warnings.begin(), same.begin(), same.end());
    }
    // Success only with an answer: no batch fitting and no answer derivable both fail, so a
    // script never reads "fits" from a fit that cannot say.
    const int exitCode =
        fit->limit100 == analysis::BatchLimit::Found ? kExitSuccess : kExitCheckFailed;
    auto orNull = [](const std::optional<int64_t>& v) {
        return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    if (args->has("--json")) {
        nlohmann::ordered_json j;
        j["points"] = nlohmann::ordered_json::array();
        for (const auto& p : fit->points) {
            j["points"].push_back(
                {{"file", p.label}, {"batch", p.batch}, {"peak_bytes", p.peakBytes}});
        }
        j["slope_bytes_per_sample"] = fit->slopeBytesPerSample;
        j["intercept_bytes"] = fit->interceptBytes;
        j["r_squared"] = fit->rSquared;
        j["capacity_bytes"] = fit->capacityBytes;
        j["largest_batch_under_80_pct"] = orNull(fit->largestBatchUnder80);
        j["largest_batch_under_100_pct"] = orNull(fit->largestBatchUnder100);
        j["largest_measured_batch"] = fit->largestMeasuredBatch;
        j["smallest_measured_batch"] = fit->smallestMeasuredBatch;
        j["distinct_batch_sizes"] = fit->distinctBatchSizes;
        j["r_squared_threshold"] = analysis::kBatchFitMinRSquared;
        j["warnings"] = fit->warnings;
        ctx.out << j.dump(2) << "\n";
        return exitCode;
    }
    for (const auto& p : fit->points) {
        ctx.out << "  batch " << p.batch << ": peak " << formatBytes(uint64_t(p.peakBytes)) << "  ("
                << p.label << ")\n";
    }
    ctx.out << "fit: peak = " << formatBytes(fit->interceptBytes) << " + "
            << formatBytes(fit->slopeBytesPerSample)
            << " x batch (least squares, R^2 = " << analysis::formatSignificant(fit->rSquared)
            << ")\n";
    ctx.out << "capacity " << formatBytes(fit->capacityBytes) << "\n";
    auto line = [&](const std::string& what, const std::optional<int64_t>& b,
                    analysis::BatchLimit limit) {
        ctx.out << "largest batch under " << what << " of capacity: ";
        if (b) {
            ctx.out << *b << " (predicted peak " << formatBytes(fit->predict(double(*b))) << ")\n";
        } else {
            ctx.out << analysis::batchLimitText(*fit, limit) << "\n";
        }
    };
    line(analysis::formatPercent(analysis::kCapacityWarningShare, 0), fit->largestBatchUnder80,
         fit->limit80);
    line("100 %", fit->largestBatchUnder100, fit->limit100);
    for (const std::string& w : fit->warnings) {
        ctx.out << "warning: " << w << "\n";
    }
    return exitCode;
}

}  // namespace vramscope::app
