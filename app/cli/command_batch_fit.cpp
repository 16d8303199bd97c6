// vramscope-cli batch-fit: the largest batch that fits, from runs at several batch sizes.
#include <algorithm>
#include <ostream>

#include <nlohmann/json.hpp>

#include "analysis_report.h"
#include "cli_command.h"
#include "vramscope/analysis/batch_fit.h"
#include "vramscope/analysis/memory_summary.h"

namespace vramscope::app {

int runBatchFit(CommandContext& ctx) {
    const std::vector<OptionSpec> options = {
        {"--capacity", true, "BYTES",
         "GPU capacity: B, KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB (of 1024), e.g. 141GB "
         "or 80GiB; default: from the traces"},
        {"--json", false, "", "write JSON instead of text"},
    };
    const std::string help = commandHelp(
        ctx.command, "FILE:BATCH FILE:BATCH... [--capacity BYTES] [--json]",
        "Fits peak memory against batch size over runs of one job at different batch sizes\n"
        "(ordinary least squares: peak = intercept + slope x batch) and reports the largest\n"
        "batch whose predicted peak stays under 80 % and under 100 % of the GPU's capacity.\n"
        "A run's peak is the highest max(peak reserved, peak allocated) over its GPUs; the\n"
        "capacity is the smallest one the traces name.",
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
        capacity = parseByteCount(*c);
        if (!capacity || *capacity == 0) {
            return usageError(
                ctx, "--capacity needs a byte count such as 80GiB or 141GB, got '" + *c + "'",
                help);
        }
    }
    std::vector<analysis::BatchPoint> points;
    uint64_t headerCapacity = 0;
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
        auto job = loadJob(ctx, {spec.substr(0, colon)});
        if (!job) {
            return kExitUnreadable;
        }
        int64_t peak = 0;
        for (const trace::RankTrace& rt : job->ranks) {
            for (const analysis::MemoryTimeline& t :
                 analysis::buildMemoryTimelines(rt.trace.data)) {
                const analysis::MemorySummary m = analysis::summarizeMemory(t);
                peak = std::max(peak, m.peakBytes());
                if (m.capacityBytes > 0) {
                    headerCapacity = headerCapacity == 0
                                         ? m.capacityBytes
                                         : std::min(headerCapacity, m.capacityBytes);
                }
            }
        }
        points.push_back({batch, double(peak), spec.substr(0, colon)});
    }
    auto fit = analysis::fitBatch(points, capacity.value_or(headerCapacity));
    if (!fit.ok()) {
        ctx.err << "vramscope-cli batch-fit: " << fit.error().message << "\n";
        return kExitUsage;
    }
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
        ctx.out << j.dump(2) << "\n";
        return kExitSuccess;
    }
    for (const auto& p : fit->points) {
        ctx.out << "  batch " << p.batch << ": peak " << formatBytes(uint64_t(p.peakBytes)) << "  ("
                << p.label << ")\n";
    }
    ctx.out << "fit: peak = " << formatBytes(uint64_t(std::max(0.0, fit->interceptBytes)))
            << (fit->interceptBytes < 0 ? " (negative intercept)" : "") << " + "
            << formatBytes(uint64_t(std::max(0.0, fit->slopeBytesPerSample)))
            << " x batch (least squares, R^2 = " << fit->rSquared << ")\n";
    ctx.out << "capacity " << formatBytes(fit->capacityBytes) << "\n";
    auto line = [&](const std::string& what, const std::optional<int64_t>& b) {
        ctx.out << "largest batch under " << what << " of capacity: ";
        if (b) {
            ctx.out << *b << " (predicted peak "
                    << formatBytes(uint64_t(std::max(0.0, fit->predict(double(*b))))) << ")\n";
        } else {
            ctx.out << (fit->slopeBytesPerSample <= 0 ? "no limit found (peak does not grow)"
                                                      : "none (batch 1 does not fit)")
                    << "\n";
        }
    };
    line(analysis::formatPercent(analysis::kCapacityWarningShare, 0), fit->largestBatchUnder80);
    line("100 %", fit->largestBatchUnder100);
    return kExitSuccess;
}

}  // namespace vramscope::app
