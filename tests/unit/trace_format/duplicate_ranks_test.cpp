// openJob with one rank given twice (an archive and its unpacked folder, one file named twice)
// and with two different traces claiming one rank; and the Kineto importer naming NCCL's
// SendRecv kernels after the PyTorch collective op ("nccl:all_to_all") that launched them. Expected
// values come from the real files themselves, read here with libarchive and nlohmann-json.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "realdata.h"
#include "realdata_paths.h"
#include "test_files.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

fs::path freshRanksDir() {
    return testdata::freshTestDir("vramscope_duplicate_ranks");
}

/// The regular members of a .tar.gz: name -> bytes.
std::map<std::string, std::string> readTar(const std::string& path) {
    std::map<std::string, std::string> out;
    std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
    archive_read_support_filter_all(a.get());
    archive_read_support_format_all(a.get());
    if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) {
        return out;
    }
    archive_entry* e = nullptr;
    while (archive_read_next_header(a.get(), &e) == ARCHIVE_OK) {
        if (archive_entry_filetype(e) != AE_IFREG) {
            continue;
        }
        std::string bytes;
        char buf[1 << 16];
        la_ssize_t n = 0;
        while ((n = archive_read_data(a.get(), buf, sizeof buf)) > 0) {
            bytes.append(buf, size_t(n));
        }
        out[archive_entry_pathname(e)] = std::move(bytes);
    }
    return out;
}

std::string kineto(int rank, int kernels) {
    std::string events;
    for (int i = 0; i < kernels; ++i) {
        events += std::string(i ? "," : "") +
                  R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
                  std::to_string(1000 + i) + R"(, "dur": 1})";
    }
    return R"({"distributedInfo": {"rank": )" + std::to_string(rank) +
           R"(, "world_size": 8}, "traceEvents": [)" + events + "]}";
}

TEST(DuplicateRanks, DlrmArchiveAndItsUnpackedFolderLoadEachRankOnce) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
    const auto members = readTar(realdata::kDlrmJob);
    const fs::path dir = freshRanksDir();
    std::string folder;
    size_t traces = 0;
    for (const auto& [name, bytes] : members) {
        if (!name.ends_with(".json")) {
            continue;
        }
        const fs::path out = dir / name;
        fs::create_directories(out.parent_path());
        std::ofstream(out, std::ios::binary) << bytes;
        folder = out.parent_path().string();
        ++traces;
    }
    ASSERT_EQ(traces, 8u);  // realdata README: all 8 ranks of one step
    auto job = openJob({realdata::kDlrmJob, folder});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 8u);
    std::set<int> ranks;
    for (const RankTrace& r : job->ranks) {
        ranks.insert(toInt(r.trace.data.header.rank));
        // The archive came first on the command line: its copy is the one kept.
        EXPECT_EQ(r.path.rfind(realdata::kDlrmJob + ":", 0), 0u) << r.path;
    }
    EXPECT_EQ(ranks.size(), 8u);
    ASSERT_EQ(job->warnings.size(), 8u);
    for (const std::string& w : job->warnings) {
        EXPECT_NE(w.find("given twice"), std::string::npos) << w;
        EXPECT_NE(w.find(realdata::kDlrmJob + ":"), std::string::npos) << w;  // both sources named
        EXPECT_NE(w.find(folder), std::string::npos) << w;
    }
    fs::remove_all(dir);
}

TEST(DuplicateRanks, OneFileGivenTwiceLoadsOnce) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kSampledRank0Trace);
    auto job = openJob({realdata::kSampledRank0Trace, realdata::kSampledRank0Trace});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 1u);
    ASSERT_EQ(job->warnings.size(), 1u);
    const std::string& w = job->warnings[0];
    EXPECT_NE(w.find("rank 0 was given twice"), std::string::npos) << w;
    EXPECT_NE(w.find(realdata::kSampledRank0Trace + " and " + realdata::kSampledRank0Trace),
              std::string::npos)
        << w;
}

TEST(DuplicateRanks, AnUnrankedTraceRepeatsOnlyWhenItIsTheSameFile) {
    const fs::path dir = freshRanksDir();
    const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
    const std::string unranked =
        R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, )"
        R"("ts": 1000, "dur": 1}]})";
    std::ofstream(a) << unranked;
    std::ofstream(b) << unranked;
    auto twice = openJob({a, (dir / "." / "a.json").string()});  // one file, two spellings
    ASSERT_TRUE(twice.ok());
    EXPECT_EQ(twice->ranks.size(), 1u);
    ASSERT_EQ(twice->warnings.size(), 1u);
    EXPECT_NE(twice->warnings[0].find("a trace of unknown rank was given twice"),
              std::string::npos);
    // Two files that agree on everything but are two files: two unranked traces.
    auto two = openJob({a, b});
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(two->ranks.size(), 2u);
    EXPECT_TRUE(two->warnings.empty());
    fs::remove_all(dir);
}

TEST(DuplicateRanks, TwoDifferentTracesClaimingOneRankAreBothKeptWithAWarning) {
    const fs::path dir = freshRanksDir();
    const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
    std::ofstream(a) << kineto(3, 2);
    std::ofstream(b) << kineto(3, 3);  // one kernel more: not the same capture
    auto job = openJob({a, b});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 2u);
    ASSERT_EQ(job->warnings.size(), 1u);
    EXPECT_NE(job->warnings[0].find("rank 3 is claimed by two different traces"), std::string::npos)
        << job->warnings[0];
    // Same content under another rank is not a repeat either.
    std::ofstream(b) << kineto(4, 2);
    job = openJob({a, b});
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->ranks.size(), 2u);
    EXPECT_TRUE(job->warnings.empty());
    fs::remove_all(dir);
}

/// Per PyTorch op "nccl:<name>" in one Kineto JSON, how many there are.
std::map<std::string, int> ncclOps(const nlohmann::json& doc) {
    std::map<std::string, int> out;
    for (const auto& e : doc["traceEvents"]) {
        const std::string name = e.value("name", "");
        const std::string cat = e.value("cat", "");
        if ((cat == "cpu_op" || cat == "user_annotation") && name.rfind("nccl:", 0) == 0) {
            out[name.substr(5)] += 1;
        }
    }
    return out;
}

TEST(KinetoCollectives, SendRecvKernelsOfAnAllToAllAreNamedAllToAll) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
    std::map<int, std::map<std::string, int>> expected;  // rank -> op -> count
    for (const auto& [name, bytes] : readTar(realdata::kDlrmJob)) {
        if (name.ends_with(".json")) {
            const auto doc = nlohmann::json::parse(bytes);
            expected[doc["distributedInfo"]["rank"].get<int>()] = ncclOps(doc);
        }
    }
    ASSERT_EQ(expected.size(), 8u);
    auto job = openJob({realdata::kDlrmJob});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    for (const RankTrace& r : job->ranks) {
        const TraceData& d = r.trace.data;
        std::map<std::string, int> got;
        for (size_t i = 0; i < d.collectives.size(); ++i) {
            got[std::string(d.string(d.collectives.function[i]))] += 1;
        }
        const auto& ops = expected.at(toInt(d.header.rank));
        // Each nccl:all_to_all op launched one SendRecv kernel, each nccl:all_reduce one
        // AllReduce kernel (5 + 3 = the 8 NCCL kernels per rank of the README).
        EXPECT_EQ(got["AllToAll"], ops.at("all_to_all")) << "rank " << toInt(d.header.rank);
        EXPECT_EQ(got["AllReduce"], ops.at("all_reduce")) << "rank " << toInt(d.header.rank);
        EXPECT_EQ(got.count("SendRecv"), 0u);
    }
}

}  // namespace
}  // namespace vramscope::trace
