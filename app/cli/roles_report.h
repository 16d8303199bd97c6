#pragma once
// Roles of memory in vramscope-cli's report: the JSON objects roles_at_peak / iteration roles and
// the text table with the rules that gave each role.

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "vramscope/analysis/model/job_analysis.h"

namespace vramscope::app {

/// {"parameters": bytes, "gradients", "optimizer_state", "activations", "temporaries", "inputs",
/// "persistent", "unknown"} of the live set `roles`, every key present (0 when none).
nlohmann::ordered_json roleBytesJson(const analysis::RolesAt& roles);

/// Adds to a device's JSON "roles_at_peak" (roleBytesJson at the peak, or null without roles),
/// "roles" {"phase_source", "time_ns" of the peak, "allocations", "kept_activation_bytes",
/// "rules": {rule description: allocations over the trace}, "rules_at_peak": {rule description:
/// bytes at the peak}, "unknown_reason" (null when roles are known)} and
/// "iteration_roles" [{"iteration", "peak_bytes", "roles": roleBytesJson}] at each iteration's
/// peak. Times ("time_ns") are on the rank's own clock.
void addRolesJson(const analysis::DeviceAnalysis& d, nlohmann::ordered_json& j);

/// "activations 5.10 GiB, persistent 1.19 GiB, ..., unknown 65.1 MiB": the roles with bytes,
/// largest first, for one line (e.g. at an OOM).
std::string rolesLine(const analysis::RolesAt& roles);

/// The roles at the peak as a table (role, bytes, share of the live set, rules that gave it),
/// and where the phases came from; one line saying why when roles are unknown.
void writeRolesText(const analysis::DeviceAnalysis& d, std::ostream& os);

}  // namespace vramscope::app
