#pragma once
// The analyses in vramscope-cli's output: JSON and text for iterations, leaks, time breakdowns,
// idle gaps, collectives, advice and cost, and the command-line options that steer them (shared by
// `report` and `check`).

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "report_lines.h"
#include "vramscope/analysis/advice/check_rules.h"
#include "vramscope/analysis/model/job_analysis.h"

namespace vramscope::app {

/// --iteration-regex, --gpu-hour-price, --planned-steps.
std::vector<OptionSpec> analysisOptionSpecs();

/// Reads the options of analysisOptionSpecs() into `options`; on a bad value writes a usage error
/// and returns false.
bool readAnalysisOptions(CommandContext& ctx, const ParsedArgs& args, const std::string& help,
                         analysis::JobAnalysisOptions& options);

/// The rule options of `check`, shared with `watch --alert`: --max-peak-fraction F,
/// --fail-on-leak, --max-exposed-communication F, --advice RULE,...|all, --allow-oom.
std::vector<OptionSpec> checkRuleOptionSpecs();

/// Reads the options of checkRuleOptionSpecs() into `rules`; the rules named on the command line
/// go into `asked`, and with none named `rules` is CheckRules::defaults() (with --allow-oom
/// applied). On a bad value writes a usage error and returns false.
bool readCheckRules(CommandContext& ctx, const ParsedArgs& args, const std::string& help,
                    analysis::CheckRules& rules, std::vector<std::string>& asked);

/// Adds "iterations", "leak", "time_breakdown", "idle_gaps" (largest first, at most `maxGaps`),
/// "model_state_bytes" and "model_state_excluded_leak_bytes" (DeviceAnalysis), "operators" (only
/// when DeviceAnalysis::operators is set: {level, allocations, bytes, peak_known, peak_time_ns,
/// peak_bytes, pre_existing_peak_bytes, rows: the 25 first of OperatorMemoryTable::rows as {name,
/// self_allocations, self_bytes, self_peak_bytes, total_allocations, total_bytes,
/// total_peak_bytes}, other: the rest summed}; peak values null when not peak_known),
/// "top_kernels" (topKernelsJson of DeviceAnalysis::kernelTimes; null without kernels) and "ooms"
/// [{time_ns,
/// requested_bytes, free_bytes, allocated_bytes, reserved_bytes, live_allocations,
/// largest_free_block_bytes, segment_free_bytes, cause (toString of diagnoseOom's OomCause),
/// segments (segmentsJson at the OOM; null, with segments_unknown_reason, when unknown),
/// top_live: [{label, bytes, count}]}] to a device's JSON object. Every time ("*_time_ns",
/// "time_ns", "start_ns") is on the rank's own clock (its trace's timestamps), as DeviceAnalysis
/// holds it; durations ("*_ns" of a length) need no clock.
void addDeviceAnalysisJson(const analysis::DeviceAnalysis& d, nlohmann::ordered_json& j,
                           size_t maxGaps = 20);

/// {"segments", "reserved_bytes", "allocated_bytes", "free_bytes", "largest_free_block_bytes",
/// "fragmentation" (null when nothing is free), "request_bytes" (null for 0), "blocks",
/// "blocks_outside_segments", "bytes_outside_segments", "straddling_blocks",
/// "overlapping_segments"} of a segment layout's totals (segments.h).
nlohmann::ordered_json segmentTotalsJson(const analysis::SegmentTotals& totals,
                                         uint64_t requestBytes);
/// segmentTotalsJson plus "largest_segments": [{"address", "size_bytes", "allocated_bytes",
/// "free_bytes", "largest_free_bytes", "blocks"}] (largest first); null when the overview is
/// unknown (the OOM's "segments_unknown_reason" then says why).
nlohmann::ordered_json segmentsJson(const analysis::SegmentOverview& overview,
                                    uint64_t requestBytes);

/// [{"rule", "severity", "message", "evidence": {name: value}, "rank", "device"}].
nlohmann::ordered_json adviceJson(const std::vector<analysis::Advice>& advice);
/// One object per checklist assessment: rule, rank (null = unknown), device (-1 = the rank's
/// host), outcome ("fired", "clear", "not assessed"), severity (null unless fired), detail.
nlohmann::ordered_json assessmentsJson(const std::vector<analysis::AdviceAssessment>& assessed);
/// {"gpu_hour_price", "gpus", "step_time_ns", ...} or null.
nlohmann::ordered_json costJson(const std::optional<analysis::CostEstimate>& cost);
/// {"method", "source", "matched", "unmatched", "point_to_point", "partial", "straggler",
/// "ranks": [...], "collectives": [{"function", "sequence", "communicator_hash", "bytes",
/// "ranks", "straggler_rank", "skew_ns", "first_arrival_ns", "last_arrival_ns"}]} of the job's
/// matched collectives; "partial": the waits and last arrivals count the ranks present only.
/// first_arrival_ns / last_arrival_ns: the earliest and the latest participant's start, on the
/// job's clock (ns from the job's earliest event) when `job` is JobModel::analysis, as report
/// prints it.
nlohmann::ordered_json collectivesJson(const analysis::JobAnalysis& job,
                                       size_t maxCollectives = 100);

/// One device's analyses in words, each number with its formula, as lines of `out`: its heading,
/// then ReportPart::Device lines; the OOM lines, the leak verdict and the time and compute lines
/// are the summary's (SummaryRole::Keep).
void writeDeviceAnalysisText(const analysis::DeviceAnalysis& d, ReportText& out);
/// Collectives, advice and, when `cost` is given (a price was), the cost, in words, as lines of
/// `out`. The summary's: the job's coverage line, the collectives' count and straggler lines,
/// the advice (each entry's first line SummaryRole::Entry) and the cost.
void writeJobAnalysisText(const analysis::JobAnalysis& job,
                          const std::optional<analysis::CostEstimate>& cost, ReportText& out);

}  // namespace vramscope::app
