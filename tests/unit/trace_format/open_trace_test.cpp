// openTrace / openJob: format detection, ranks from headers and file names, directories,
// archives, skipped inputs, and every real input opening without a crash.

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gz_file.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "refusal.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

/// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path =
            fs::temp_directory_path() / (std::string("vramscope_open_trace_") + info->name() + "_" +
                                         std::to_string(reinterpret_cast<uintptr_t>(this)));
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    std::string file(const std::string& name) const { return (m_path / name).string(); }
    std::string path() const { return m_path.string(); }

private:
    fs::path m_path;
};

void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

using testdata::gzipBytes;
using ::vramscope::test::refused;

/// A Kineto trace with `kernels` kernels, and distributedInfo when rank >= 0.
std::string kinetoTrace(int rank, int kernels, int64_t firstTsUs = 1000) {
    std::string events;
    for (int i = 0; i < kernels; ++i) {
        events += std::string(i ? "," : "") + R"({"ph": "X", "cat": "kernel", "name": "k",)" +
                  R"( "pid": 0, "tid": 7, "ts": )" + std::to_string(firstTsUs + i) +
                  R"(, "dur": 1})";
    }
    std::string info;
    if (rank >= 0) {
        info = R"("distributedInfo": {"rank": )" + std::to_string(rank) + R"(, "world_size": 8}, )";
    }
    return "{" + info + "\"traceEvents\": [" + events + "]}";
}

void writeTarGz(const std::string& path,
                const std::vector<std::pair<std::string, std::string>>& members) {
    std::unique_ptr<archive, int (*)(archive*)> a(archive_write_new(), archive_write_free);
    archive_write_add_filter_gzip(a.get());
    archive_write_set_format_pax_restricted(a.get());
    ASSERT_EQ(archive_write_open_filename(a.get(), path.c_str()), ARCHIVE_OK);
    for (const auto& [name, bytes] : members) {
        std::unique_ptr<archive_entry, void (*)(archive_entry*)> e(archive_entry_new(),
                                                                   archive_entry_free);
        archive_entry_set_pathname(e.get(), name.c_str());
        archive_entry_set_size(e.get(), static_cast<la_int64_t>(bytes.size()));
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_perm(e.get(), 0644);
        ASSERT_EQ(archive_write_header(a.get(), e.get()), ARCHIVE_OK);
        archive_write_data(a.get(), bytes.data(), bytes.size());
    }
    archive_write_close(a.get());
}

TEST(OpenTrace, ReadsRanksFromCommonFileNames) {
    EXPECT_EQ(rankFromFileName("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), RankId{34});
    EXPECT_EQ(rankFromFileName("/data/job/sampled_rank-1.json.gz"), RankId{1});
    EXPECT_EQ(rankFromFileName("trace_rank7.json"), RankId{7});
    EXPECT_EQ(rankFromFileName("RANK_12.vscope"), RankId{12});
    EXPECT_EQ(rankFromFileName("worker0_step_12.1694128201545.pt.trace.json"), RankId{0});
    EXPECT_EQ(rankFromFileName("job.tar.gz:dlrm/worker5_step_12.json"), RankId{5});
    EXPECT_EQ(rankFromFileName("distributed_info_not_found.json.gz"), kUnknownRank);
    EXPECT_EQ(rankFromFileName("frank3.json"), kUnknownRank);  // not the word "rank"
    EXPECT_EQ(rankFromFileName("ranks.json"), kUnknownRank);
    EXPECT_EQ(rankFromFileName("/rank-9/trace.json"), kUnknownRank);  // directories ignored
}

TEST(OpenTrace, DetectsTheFormatFromContentThenName) {
    EXPECT_EQ(detectFormat("{\"traceEvents\": []}", "x.bin"), InputFormat::KinetoJson);
    EXPECT_EQ(detectFormat("\xEF\xBB\xBF  \n[", "x.bin"), InputFormat::KinetoJson);
    EXPECT_EQ(detectFormat(std::string("\x80\x04\x95", 3), "x.bin"), InputFormat::PytorchSnapshot);
    EXPECT_EQ(detectFormat(std::string(kMagic) + "....", "x.json"), InputFormat::Vscope);
    EXPECT_EQ(detectFormat(std::string("SQLite format 3\0", 16), "x.json"),
              InputFormat::NsysSqlite);
    EXPECT_EQ(detectFormat("", "report.SQLITE"), InputFormat::NsysSqlite);
    EXPECT_EQ(detectFormat("", "snapshot.pickle.gz"), InputFormat::PytorchSnapshot);
    EXPECT_EQ(detectFormat("", "trace.JSON"), InputFormat::KinetoJson);
    EXPECT_EQ(detectFormat("hello", "notes.txt"), InputFormat::Unknown);
    EXPECT_STREQ(toString(InputFormat::KinetoJson), "kineto-json");
    EXPECT_TRUE(isArchiveName("job.TAR.GZ"));
    EXPECT_TRUE(isArchiveName("job.tgz"));
    EXPECT_FALSE(isArchiveName("job.json.gz"));
}

TEST(OpenTrace, OpensGzippedJsonAndRefusesUnsupportedFormats) {
    TempDir dir;
    writeFile(dir.file("t.json.gz"), gzipBytes(kinetoTrace(3, 4)));
    auto t = openTrace(dir.file("t.json.gz"));
    ASSERT_TRUE(t.ok()) << t.error().describe();
    EXPECT_EQ(t->data.kernels.size(), 4u);
    EXPECT_EQ(t->data.header.rank, RankId{3});

    // An SQLite file is read as an Nsight Systems export: 20 bytes are a database cut inside its
    // header (nsys_importer_test covers the rest).
    writeFile(dir.file("x.sqlite"), std::string("SQLite format 3\0rest", 20));
    auto sqlite = openTrace(dir.file("x.sqlite"));
    ASSERT_FALSE(sqlite.ok());
    EXPECT_EQ(sqlite.error().code, ErrorCode::Truncated);
    EXPECT_NE(sqlite.error().message.find("cut inside its 100-byte header"), std::string::npos);
    EXPECT_EQ(sqlite.error().file, dir.file("x.sqlite"));
    writeFile(dir.file("x.txt"), "plain text");
    auto text = openTrace(dir.file("x.txt"));
    ASSERT_FALSE(text.ok());
    EXPECT_NE(text.error().message.find("unsupported format"), std::string::npos);

    auto missing = openTrace(dir.file("missing.json"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().file, dir.file("missing.json"));
}

TEST(OpenTrace, LoadsWhatPrecedesTheCutOfAGzipFile) {
    TempDir dir;
    const std::string gz = gzipBytes(kinetoTrace(0, 2000));
    writeFile(dir.file("cut.json.gz"), gz.substr(0, gz.size() / 2));
    auto t = openTrace(dir.file("cut.json.gz"));
    ASSERT_TRUE(t.ok()) << t.error().describe();
    EXPECT_GT(t->data.kernels.size(), 0u);
    EXPECT_LT(t->data.kernels.size(), 2000u);
    EXPECT_FALSE(t->report.complete);
    EXPECT_GE(t->report.problems.size(), 2u);  // the gzip cut and the JSON cut
    EXPECT_FALSE(t->data.dataLoss.empty());
}

TEST(OpenJob, TakesRanksFromHeadersThenFileNamesAndSkipsBadInputs) {
    TempDir dir;
    writeFile(dir.file("worker3.json"), kinetoTrace(-1, 1));
    writeFile(dir.file("b.json"), kinetoTrace(-1, 1));
    writeFile(dir.file("a.json"), kinetoTrace(-1, 1));
    writeFile(dir.file("rank_9.json.gz"), gzipBytes(kinetoTrace(1, 1)));  // header wins
    writeFile(dir.file("bad.json"), "this is not json");
    writeFile(dir.file("notes.txt"), "ignored: not a trace name");
    auto job = openJob({dir.path()});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    std::vector<std::pair<RankId, std::string>> got;
    for (const auto& r : job->ranks) {
        got.emplace_back(r.trace.data.header.rank, r.rankSource);
        EXPECT_EQ(r.format, InputFormat::KinetoJson);
    }
    const std::vector<std::pair<RankId, std::string>> expected{{RankId{1}, "header"},
                                                               {RankId{3}, "file name"},
                                                               {kUnknownRank, "unknown"},
                                                               {kUnknownRank, "unknown"}};
    EXPECT_EQ(got, expected);
    EXPECT_EQ(fs::path(job->ranks[2].path).filename(), "a.json");  // unknown ranks in path order
    EXPECT_EQ(fs::path(job->ranks[3].path).filename(), "b.json");
    ASSERT_EQ(job->skipped.size(), 1u);
    EXPECT_EQ(job->skipped[0].file, dir.file("bad.json"));
}

TEST(OpenJob, FailsOnlyWhenNothingOpens) {
    TempDir dir;
    writeFile(dir.file("bad.json"), "[{\"ph\": ");
    auto none = openJob({dir.file("bad.json"), dir.file("missing.json")});
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().file, dir.file("bad.json"));
    writeFile(dir.file("good.json"), kinetoTrace(0, 1));
    auto some = openJob({dir.file("bad.json"), dir.file("good.json")});
    ASSERT_TRUE(some.ok());
    EXPECT_EQ(some->ranks.size(), 1u);
    EXPECT_EQ(some->skipped.size(), 1u);
    EXPECT_TRUE(refused(openJob({}), ErrorCode::Invalid, {"no input to open"}));
}

TEST(OpenJob, OpensTarGzMembersAsRanks) {
    TempDir dir;
    writeTarGz(dir.file("job.tar.gz"), {{"job/worker1.json", kinetoTrace(-1, 2)},
                                        {"job/worker0.json.gz", gzipBytes(kinetoTrace(-1, 3))},
                                        {"job/._worker0.json", "AppleDouble junk"},
                                        {"job/README", "not a trace"}});
    auto job = openJob({dir.file("job.tar.gz")});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    auto asOne = openTrace(dir.file("job.tar.gz"));
    ASSERT_FALSE(asOne.ok());
    EXPECT_NE(asOne.error().message.find("open it as a job"), std::string::npos);
    ASSERT_EQ(job->ranks.size(), 2u);
    EXPECT_EQ(job->ranks[0].trace.data.header.rank, RankId{0});
    EXPECT_EQ(job->ranks[0].trace.data.kernels.size(), 3u);
    EXPECT_EQ(job->ranks[0].path, dir.file("job.tar.gz") + ":job/worker0.json.gz");
    EXPECT_EQ(job->ranks[1].trace.data.header.rank, RankId{1});
    EXPECT_EQ(job->ranks[1].rankSource, "file name");
    EXPECT_TRUE(job->skipped.empty());
}

/// Number of NCCL kernels in each member of the dlrm archive, by worker number, read with
/// libarchive and nlohmann-json.
std::map<int, size_t> ncclKernelsPerWorker(const std::string& path) {
    std::map<int, size_t> out;
    std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
    archive_read_support_filter_all(a.get());
    archive_read_support_format_all(a.get());
    if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) {
        return out;
    }
    archive_entry* e = nullptr;
    while (archive_read_next_header(a.get(), &e) == ARCHIVE_OK) {
        const std::string name = archive_entry_pathname(e);
        const size_t at = name.find("worker");
        if (at == std::string::npos || archive_entry_filetype(e) != AE_IFREG) {
            continue;
        }
        std::string text;
        char block[1 << 16];
        for (la_ssize_t got; (got = archive_read_data(a.get(), block, sizeof block)) > 0;) {
            text.append(block, static_cast<size_t>(got));
        }
        size_t n = 0;
        const nlohmann::json doc = nlohmann::json::parse(text);
        for (const auto& ev : doc.at("traceEvents")) {
            n += ev.value("cat", "") == "kernel" &&
                 ev.value("name", "").find("nccl") != std::string::npos;
        }
        out[std::stoi(name.substr(at + 6))] = n;
    }
    return out;
}

TEST(OpenJob, OpensTheEightRankDlrmArchive) {
    const std::string path = realdata::kDlrmJob;
    VRAMSCOPE_REQUIRE_INPUT(path);
    const auto expected = ncclKernelsPerWorker(path);
    ASSERT_EQ(expected.size(), 8u);
    auto job = openJob({path});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 8u);
    EXPECT_TRUE(job->skipped.empty());
    int64_t earliest = INT64_MAX;
    int64_t latest = INT64_MIN;
    for (int rank = 0; rank < 8; ++rank) {
        const auto& r = job->ranks[static_cast<size_t>(rank)];
        const auto& d = r.trace.data;
        EXPECT_EQ(d.header.rank, RankId{rank});
        EXPECT_EQ(d.header.worldSize, 8);
        EXPECT_EQ(r.rankSource, "header");
        const auto comm = static_cast<size_t>(std::count(
            d.kernels.category.begin(), d.kernels.category.end(), KernelCategory::Communication));
        EXPECT_EQ(comm, expected.at(rank)) << "rank " << rank;
        EXPECT_EQ(comm, 8u) << "rank " << rank;  // README: 8 NCCL kernels per rank
        ASSERT_GT(d.kernels.size(), 0u);
        const int64_t first = *std::min_element(d.kernels.startNs.begin(), d.kernels.startNs.end());
        earliest = std::min(earliest, first);
        latest = std::max(latest, first);
    }
    // One host clock: the ranks' first kernels lie within a few ms of each other.
    EXPECT_LT(latest - earliest, 10'000'000);
}

TEST(OpenJob, OpensTwoSampledRanksOfAJobOf128) {
    const std::string dir = realdata::kSampledRanksDir;
    VRAMSCOPE_REQUIRE_INPUT(dir);
    auto job = openJob({dir});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 2u);
    for (int rank = 0; rank < 2; ++rank) {
        EXPECT_EQ(job->ranks[static_cast<size_t>(rank)].trace.data.header.rank, RankId{rank});
        EXPECT_EQ(job->ranks[static_cast<size_t>(rank)].trace.data.header.worldSize, 128);
    }
}

TEST(OpenJob, LeavesTheRankUnknownWithoutDistributedInfoOrRankInTheName) {
    const std::string path = realdata::kNoDistributedInfoTrace;
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = openJob({path});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 1u);
    EXPECT_EQ(job->ranks[0].trace.data.header.rank, kUnknownRank);
    EXPECT_EQ(job->ranks[0].rankSource, "unknown");
    EXPECT_TRUE(job->ranks[0].trace.data.header.devices.empty());
}

TEST(OpenTrace, EveryRealInputOpensWithoutACrash) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDir);
    size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(realdata::kDir)) {
        const std::string path = entry.path().string();
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file() || path.find("/LICENSES/") != std::string::npos ||
            name == "README.md") {
            continue;
        }
        ++files;
        if (isArchiveName(name)) {
            auto job = openJob({path});
            EXPECT_TRUE(job.ok()) << path;
            continue;
        }
        auto r = openTrace(path);
        if (name.find(".sqlite") != std::string::npos || name.find(".json") != std::string::npos) {
            EXPECT_TRUE(r.ok()) << path << ": " << (r.ok() ? "" : r.error().describe());
        } else if (!r.ok()) {
            EXPECT_FALSE(r.error().message.empty()) << path;  // snapshots: no crash is enough
        }
    }
    EXPECT_GT(files, 10u);
}

}  // namespace
}  // namespace vramscope::trace
