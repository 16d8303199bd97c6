// What vramscope-cli concludes on real traces from ../shared/realdata is held to what the files
// support: a live set only where allocations carry addresses, "no GPU in this trace" where no GPU
// recorded anything, kernel names that stay apart once shortened, and one byte and one duration
// format in every text. Expectations are derived here from the raw JSON (zlib + nlohmann-json),
// never from vramscope's own reading of it.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::app {
namespace {

using testdata::eventsOf;
using testdata::loadGzJson;

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;
using nlohmann::json;

/// The `[memory]` events on CUDA devices (args "Device Type" 1 = c10::DeviceType::CUDA).
std::vector<json> cudaMemoryEvents(const json& doc) {
    std::vector<json> out;
    for (const json& e : eventsOf(doc)) {
        if (e.is_object() && e.value("name", "") == "[memory]" && e.contains("args") &&
            e["args"].value("Device Type", -1) == 1) {
            out.push_back(e);
        }
    }
    return out;
}

/// Whether the file has anything on a GPU: a kernel, a copy, or CUDA memory.
bool anythingOnAGpu(const json& doc) {
    for (const json& e : eventsOf(doc)) {
        const std::string cat = e.is_object() ? e.value("cat", "") : "";
        if (cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
            return true;
        }
    }
    return !cudaMemoryEvents(doc).empty();
}

TEST(ClaimsRealdata, NoLiveSetWhereKinetoAllocationsCarryNoAddress) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kResnetTrace);
    const json doc = loadGzJson(realdata::kResnetTrace);
    const std::vector<json> memory = cudaMemoryEvents(doc);
    ASSERT_FALSE(memory.empty());
    size_t withAddress = 0, withTotals = 0;
    for (const json& e : memory) {
        withAddress += e["args"].contains("Addr") ? 1 : 0;
        withTotals += e["args"].contains("Total Allocated") ? 1 : 0;
    }
    ASSERT_EQ(withAddress, 0u) << "the 2021 schema has no Addr";
    ASSERT_EQ(withTotals, 0u) << "nor Total Allocated";

    const CliRun flame = run({"flame", "--at", "peak", realdata::kResnetTrace});
    EXPECT_EQ(flame.code, kExitUnreadable) << flame.err;
    EXPECT_TRUE(flame.out.empty()) << flame.out;
    EXPECT_NE(flame.err.find(realdata::kResnetTrace), std::string::npos) << flame.err;
    EXPECT_NE(flame.err.find("carry no address"), std::string::npos) << flame.err;

    const CliRun report = run({"report", "--json", realdata::kResnetTrace});
    ASSERT_EQ(report.code, kExitSuccess) << report.err;
    const json j = json::parse(report.out);
    ASSERT_EQ(j["devices"].size(), 1u);
    const json& d = j["devices"][0];
    EXPECT_EQ(d["live_set_known"], false);
    EXPECT_NE(d["live_set_reason"].get<std::string>().find("carry no address"), std::string::npos);
    EXPECT_EQ(d["allocated_source"], "rebuilt from Bytes");
    // What pairs frees with allocations is not built: no model state, no survivors.
    EXPECT_TRUE(d["model_state_bytes"].is_null()) << d["model_state_bytes"];
    EXPECT_TRUE(d["leak"]["survivors"].empty()) << d["leak"]["survivors"];

    const CliRun text = run({"report", realdata::kResnetTrace});
    EXPECT_NE(text.out.find("model state: unknown"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("rank 0 GPU 0: live set unknown:"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("rebuilt from Bytes"), std::string::npos) << text.out;
}

TEST(ClaimsRealdata, LiveSetKnownWhereEveryAllocationHasAnAddress) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    const json doc = loadGzJson(realdata::kBertTrace);
    const std::vector<json> memory = cudaMemoryEvents(doc);
    ASSERT_FALSE(memory.empty());
    for (const json& e : memory) {
        ASSERT_TRUE(e["args"].contains("Addr"));
        ASSERT_TRUE(e["args"].contains("Total Allocated"));
    }
    const CliRun report = run({"report", "--json", realdata::kBertTrace});
    ASSERT_EQ(report.code, kExitSuccess) << report.err;
    const json j = json::parse(report.out);
    ASSERT_FALSE(j["devices"].empty());
    for (const json& d : j["devices"]) {
        if (d["memory_events"].get<int64_t>() > 0) {
            EXPECT_EQ(d["live_set_known"], true) << d.dump();
            EXPECT_TRUE(d["live_set_reason"].is_null());
            EXPECT_EQ(d["allocated_source"], "producer counter");
        }
    }
    EXPECT_EQ(run({"flame", "--at", "peak", realdata::kBertTrace}).code, kExitSuccess);
}

/// Sum of one key over an `operators` object's rows and its "other" row.
uint64_t operatorSum(const json& ops, const char* key) {
    uint64_t sum = ops["other"][key].get<uint64_t>();
    for (const json& r : ops["rows"]) {
        sum += r[key].get<uint64_t>();
    }
    return sum;
}

TEST(ClaimsRealdata, OperatorTableAccountsForEveryAllocatedByte) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    uint64_t allocated = 0;  // positive Bytes of the CUDA [memory] events, from the file
    size_t allocations = 0;
    for (const json& e : cudaMemoryEvents(loadGzJson(realdata::kBertTrace))) {
        const int64_t b = e["args"].value("Bytes", int64_t{0});
        allocated += b > 0 ? uint64_t(b) : 0;
        allocations += b > 0 ? 1 : 0;
    }
    const CliRun report = run({"report", "--json", realdata::kBertTrace});
    ASSERT_EQ(report.code, kExitSuccess) << report.err;
    const json j = json::parse(report.out);
    size_t withOperators = 0;
    for (const json& d : j["devices"]) {
        if (!d.contains("operators")) {
            continue;
        }
        ++withOperators;
        const json& ops = d["operators"];
        EXPECT_EQ(ops["bytes"].get<uint64_t>(), allocated);
        EXPECT_EQ(ops["allocations"].get<size_t>(), allocations);
        EXPECT_EQ(operatorSum(ops, "self_bytes"), ops["bytes"].get<uint64_t>());
        EXPECT_EQ(operatorSum(ops, "self_allocations"), ops["allocations"].get<uint64_t>());
        EXPECT_EQ(operatorSum(ops, "self_peak_bytes"), ops["peak_bytes"].get<uint64_t>());
        EXPECT_LE(ops["rows"].size(), 25u);
        for (size_t i = 1; i < ops["rows"].size(); ++i) {
            EXPECT_GE(ops["rows"][i - 1]["self_bytes"], ops["rows"][i]["self_bytes"]);
        }
    }
    EXPECT_EQ(withOperators, 1u);
    const CliRun text = run({"report", realdata::kBertTrace});
    ASSERT_EQ(text.code, kExitSuccess) << text.err;
    EXPECT_NE(text.out.find("memory by operator (allocated level: " + std::to_string(allocations) +
                            " allocations, " + analysis::formatBytes(double(allocated))),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("self = the innermost op"), std::string::npos) << text.out;
}

TEST(ClaimsRealdata, OperatorPeaksUnknownWhereKinetoAllocationsCarryNoAddress) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kResnetTrace);
    const CliRun report = run({"report", "--json", realdata::kResnetTrace});
    ASSERT_EQ(report.code, kExitSuccess) << report.err;
    const json j = json::parse(report.out);
    ASSERT_EQ(j["devices"].size(), 1u);
    const json& d = j["devices"][0];
    ASSERT_TRUE(d.contains("operators")) << "the 2021 trace has Operator events";
    const json& ops = d["operators"];
    EXPECT_EQ(ops["peak_known"], false);
    EXPECT_TRUE(ops["peak_bytes"].is_null());
    EXPECT_TRUE(ops["rows"].at(0)["self_peak_bytes"].is_null());
    EXPECT_EQ(operatorSum(ops, "self_bytes"), ops["bytes"].get<uint64_t>());
}

fs::path emptyArrayFile() {
    const fs::path p = fs::temp_directory_path() /
                       ("vramscope_claims_empty_" + std::to_string(::getpid()) + ".json");
    std::ofstream(p) << "[]\n";
    return p;
}

TEST(ClaimsRealdata, AJobWithNoGpuSaysSoInTheReportAndTheCheck) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kCpuOnlyTrace);
    VRAMSCOPE_REQUIRE_INPUT(realdata::kNoDistributedInfoTrace);
    const fs::path empty = emptyArrayFile();
    for (const std::string& file :
         {realdata::kCpuOnlyTrace, realdata::kNoDistributedInfoTrace, empty.string()}) {
        SCOPED_TRACE(file);
        const json doc = file == empty.string() ? json::array() : loadGzJson(file);
        ASSERT_FALSE(anythingOnAGpu(doc));

        const CliRun text = run({"report", file});
        EXPECT_EQ(text.code, kExitSuccess) << text.err;
        EXPECT_NE(text.out.find("no GPU in this trace"), std::string::npos) << text.out;
        EXPECT_EQ(text.out.find("peak allocated"), std::string::npos) << "no empty table";

        const CliRun report = run({"report", "--json", file});
        ASSERT_EQ(report.code, kExitSuccess) << report.err;
        const json j = json::parse(report.out);
        EXPECT_EQ(j["gpus"], 0);
        EXPECT_EQ(j["message"], "no GPU in this trace");

        const CliRun check = run({"check", file});
        EXPECT_NE(check.out.find("no GPU in this trace"), std::string::npos) << check.out;
    }
    fs::remove(empty);
}

TEST(ClaimsRealdata, ACutTraceDoesNotClaimThereIsNoGpu) {
    // The first 20,000 compressed bytes of the BERT trace (which has GPU kernels and memory):
    // what is left holds no GPU event, but the rest was cut, not absent.
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    ASSERT_TRUE(anythingOnAGpu(loadGzJson(realdata::kBertTrace)));
    const fs::path cut =
        fs::temp_directory_path() / ("vramscope_cut_" + std::to_string(::getpid()) + ".json.gz");
    {
        std::ifstream in(realdata::kBertTrace, std::ios::binary);
        std::string head(20000, '\0');
        in.read(head.data(), std::streamsize(head.size()));
        std::ofstream(cut, std::ios::binary).write(head.data(), in.gcount());
    }
    const CliRun text = run({"report", cut.string()});
    EXPECT_EQ(text.code, kExitSuccess) << text.err;
    EXPECT_NE(text.out.find("no GPU in the part of the trace that could be read"),
              std::string::npos)
        << text.out;
    EXPECT_EQ(text.out.find("no GPU in this trace"), std::string::npos) << text.out;
    const json j = json::parse(run({"report", "--json", cut.string()}).out);
    EXPECT_EQ(j["message"], "no GPU in the part of the trace that could be read");
    fs::remove(cut);
}

TEST(ClaimsRealdata, DifferentKernelNamesStayDifferentWhenShortened) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDfIndexTrace);
    const json doc = loadGzJson(realdata::kDfIndexTrace);
    std::set<std::string> kernels;
    for (const json& e : eventsOf(doc)) {
        if (e.is_object() && e.value("cat", "") == "kernel") {
            kernels.insert(e.value("name", ""));
        }
    }
    ASSERT_GT(kernels.size(), 10u);
    const std::vector<std::string> names(kernels.begin(), kernels.end());
    const std::vector<std::string> shown = analysis::shortenNames(names, 60);
    EXPECT_EQ(std::set<std::string>(shown.begin(), shown.end()).size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        EXPECT_LE(shown[i].size(), 60u) << names[i] << " -> " << shown[i];
    }

    // The report's gap lines: as many different names as the JSON has different full names.
    const json j = json::parse(run({"report", "--json", realdata::kDfIndexTrace}).out);
    std::set<std::string> full;
    for (const json& d : j["devices"]) {
        const json& gaps = d["idle_gaps"];
        for (size_t i = 0; gaps.is_array() && i < gaps.size() && i < 3; ++i) {
            full.insert(gaps[i]["kernel_after_name"].get<std::string>() + "#" +
                        std::to_string(d["device"].get<int>()));
        }
    }
    const std::string text = run({"report", realdata::kDfIndexTrace}).out;
    std::set<std::string> printed;
    std::string device;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        static const std::regex gpu(R"(^rank \S+ GPU (\d+):$)");
        static const std::regex ended(R"(, ended by (.*)$)");
        std::smatch m;
        if (std::regex_match(line, m, gpu)) {
            device = m[1];
        } else if (std::regex_search(line, m, ended)) {
            EXPECT_LE(m[1].length(), 60) << line;
            printed.insert(m[1].str() + "#" + device);
        }
    }
    EXPECT_FALSE(printed.empty());
    EXPECT_EQ(printed.size(), full.size());
}

/// Every "<number> <byte unit>" and "<number> <time unit>" in `text` that does not read as the one
/// format: three significant digits below 1000 of the unit, whole bytes and ns.
std::vector<std::string> offFormat(const std::string& text) {
    static const std::regex figure(R"((-?\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB|PiB|EiB|ns|us|ms|s)\b)");
    static const std::regex whole(R"(-?\d{1,3})");
    static const std::regex scaled(R"(-?(0\.\d\d\d|[1-9]\.\d\d|\d\d\.\d|\d{3}))");
    std::vector<std::string> bad;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), figure);
         it != std::sregex_iterator(); ++it) {
        const std::string number = (*it)[1], unit = (*it)[2];
        const bool base = unit == "B" || unit == "ns";
        const bool largest = unit == "EiB" || unit == "s";  // may exceed 999
        const bool ok = std::regex_match(number, base ? whole : scaled) ||
                        (largest && std::regex_match(number, std::regex(R"(-?\d{4,})")));
        if (!ok) {
            bad.push_back(it->str());
        }
    }
    return bad;
}

TEST(ClaimsRealdata, EveryByteAndTimeFigureInTheTextHasTheOneFormat) {
    // The format checker itself rejects what a second formatter would print.
    EXPECT_EQ(offFormat("2000.0 MiB, 1000 MiB, 1.000 s, 12.50 us, 1.5 GiB, 0.98 GiB").size(), 6u);
    EXPECT_TRUE(
        offFormat("11.9 GiB, 96.6 MiB, 512 B, 1.95 GiB, 0.977 GiB, 346 ms, 850 ns").empty());
    std::vector<std::vector<std::string>> commands = {{"report"}};  // the bundled sample
    for (const std::string& f :
         {realdata::kResnetTrace, realdata::kDfIndexTrace, realdata::kBertTrace}) {
        if (!fs::exists(f)) {
            VRAMSCOPE_REQUIRE_INPUT(f);
        }
        commands.push_back({"report", f});
        commands.push_back({"check", f});
    }
    for (const auto& args : commands) {
        const CliRun r = run(args);
        SCOPED_TRACE(args.back());
        EXPECT_FALSE(r.out.empty());
        for (const std::string& bad : offFormat(r.out + r.err)) {
            ADD_FAILURE() << "'" << bad << "' is not in the one format";
        }
    }
}

}  // namespace
}  // namespace vramscope::app
