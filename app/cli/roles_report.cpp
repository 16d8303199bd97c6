#include "roles_report.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "vramscope/analysis/model/text_format.h"

namespace vramscope::app {

using analysis::MemoryRole;
using analysis::RoleRule;
using Json = nlohmann::ordered_json;

namespace {

constexpr MemoryRole kRoles[] = {MemoryRole::Parameters,     MemoryRole::Gradients,
                                 MemoryRole::OptimizerState, MemoryRole::Activations,
                                 MemoryRole::Temporaries,    MemoryRole::Inputs,
                                 MemoryRole::Persistent,     MemoryRole::Unknown};

/// Why a device has no roles, or empty when it has them.
std::string noRolesReason(const analysis::DeviceAnalysis& d) {
    if (d.rolesAtPeak) {
        return {};
    }
    if (!d.liveSet.known) {
        return "the live set cannot be rebuilt (" + d.liveSet.reason + ")";
    }
    return "no allocations at the detail level";
}

}  // namespace

Json roleBytesJson(const analysis::RolesAt& roles) {
    Json j = Json::object();
    for (const MemoryRole r : kRoles) {
        j[analysis::toString(r)] = roles.bytes[r];
    }
    return j;
}

void addRolesJson(const analysis::DeviceAnalysis& d, Json& j) {
    if (!d.rolesAtPeak || !d.roles) {
        j["roles_at_peak"] = nullptr;
        j["roles"] = {{"unknown_reason", noRolesReason(d)}};
        j["iteration_roles"] = Json::array();
        return;
    }
    j["roles_at_peak"] = roleBytesJson(*d.rolesAtPeak);
    Json rules = Json::object();
    const auto& perRule = d.roles->allocationsPerRule();
    for (size_t r = 1; r < perRule.size(); ++r) {
        if (perRule[r] > 0) {
            rules[analysis::describe(RoleRule(r))] = perRule[r];
        }
    }
    Json rulesAtPeak = Json::object();
    for (size_t r = 1; r < d.rolesAtPeak->ruleBytes.size(); ++r) {
        if (d.rolesAtPeak->ruleBytes[r] > 0) {
            rulesAtPeak[analysis::describe(RoleRule(r))] = d.rolesAtPeak->ruleBytes[r];
        }
    }
    j["roles"] = {{"phase_source", d.roles->phaseSource()},
                  {"time_ns", d.rolesAtPeak->timeNs},
                  {"level", trace::toString(d.roles->level())},
                  {"allocations", d.rolesAtPeak->allocations},
                  {"kept_activation_bytes", d.rolesAtPeak->keptActivationBytes},
                  {"rules", rules},
                  {"rules_at_peak", rulesAtPeak},
                  {"unknown_reason", nullptr}};
    Json its = Json::array();
    for (const analysis::IterationRoles& it : d.iterationRoles) {
        its.push_back({{"iteration", it.number},
                       {"peak_bytes", it.peakBytes},
                       {"time_ns", it.roles.timeNs},
                       {"roles", roleBytesJson(it.roles)}});
    }
    j["iteration_roles"] = its;
}

std::string rolesLine(const analysis::RolesAt& roles) {
    std::vector<std::pair<int64_t, MemoryRole>> present;
    for (const MemoryRole r : kRoles) {
        if (roles.bytes[r] > 0) {
            present.emplace_back(roles.bytes[r], r);
        }
    }
    std::stable_sort(present.begin(), present.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string out;
    for (const auto& [bytes, r] : present) {
        out += (out.empty() ? "" : ", ") + std::string(analysis::roleLabel(r)) + " " +
               analysis::formatBytes(double(bytes));
    }
    return out.empty() ? std::string("nothing alive") : out;
}

void writeRolesText(const analysis::DeviceAnalysis& d, std::ostream& os) {
    if (!d.rolesAtPeak || !d.roles) {
        if (d.memory.peakBytes() > 0) {
            os << "  roles of memory: unknown (" << noRolesReason(d) << ")\n";
        }
        return;
    }
    const analysis::RolesAt& at = *d.rolesAtPeak;
    const int64_t total = at.bytes.total();
    os << "  roles at the " << trace::toString(d.roles->level()) << " peak ("
       << analysis::formatBytes(double(total)) << " in " << at.allocations << " allocations; "
       << (d.roles->hasPhases() ? "phases from " + d.roles->phaseSource()
                                : std::string("no forward, backward or optimizer ranges or stack "
                                              "frames: lifetimes only"))
       << "):\n";
    for (const MemoryRole r : kRoles) {
        const int64_t b = at.bytes[r];
        if (b == 0 && r != MemoryRole::Unknown) {
            continue;
        }
        os << "    " << std::left << std::setw(44) << analysis::roleLabel(r) << std::right
           << std::setw(12) << analysis::formatBytes(double(b)) << "  " << std::setw(7)
           << (total > 0 ? analysis::formatPercent(double(b) / double(total)) : "-") << "\n";
        for (size_t rule = 1; rule < at.ruleBytes.size(); ++rule) {
            if (at.ruleBytes[rule] > 0 && analysis::roleOf(RoleRule(rule)) == r) {
                os << "      " << analysis::formatBytes(double(at.ruleBytes[rule])) << ": "
                   << analysis::describe(RoleRule(rule)) << "\n";
            }
        }
    }
}

}  // namespace vramscope::app
