// Which libcupti the agent binds and which CUPTI releases it records with (capture/common/
// cupti_library.h). Expected orders are docs/DESIGN.md "Which libcupti a job uses", written
// out here; the version numbers are
// cupti_version.h's history (19 = 12.0 ... 28 = 12.9 Update 1, then MMmmpp).

#include "cupti_library.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace vramscope::capture;

std::vector<std::string> paths(const std::vector<CuptiCandidate>& c) {
    std::vector<std::string> out;
    for (const CuptiCandidate& x : c) {
        out.push_back(x.path);
    }
    return out;
}

TEST(CuptiLibrary, SonameMajorReadsTheNumberAfterDotSo) {
    EXPECT_EQ(sonameMajor("libcupti.so.13", "libcupti"), 13);
    EXPECT_EQ(sonameMajor("/opt/venv/nvidia/cuda_cupti/lib/libcupti.so.12", "libcupti"), 12);
    EXPECT_EQ(sonameMajor("/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "libcudart"), 12);
    EXPECT_EQ(sonameMajor("libcupti.so", "libcupti"), std::nullopt);
    EXPECT_EQ(sonameMajor("libcupti.so.12x", "libcupti"), std::nullopt);
    // CUDA 12 toolkits name the file by year (libcupti.so.2024.1.0): not a major, which is why
    // a mapped library's DT_SONAME (libcupti.so.12) is read before its path.
    EXPECT_EQ(sonameMajor("libcupti.so.2024.1.0", "libcupti"), 2024);
    EXPECT_EQ(sonameMajor("libcupti_static.so.13", "libcupti"), std::nullopt);
    EXPECT_EQ(sonameMajor("libcudart.so.12", "libcupti"), std::nullopt);
}

TEST(CuptiLibrary, TheProcessesMappedLibrariesCarryTheirSonames) {
    // This test program maps glibc, whose soname is libc.so.6 whatever its file is called.
    const std::vector<MappedLibrary> mapped = mappedLibraries();
    const bool libc = std::any_of(mapped.begin(), mapped.end(), [](const MappedLibrary& m) {
        return m.soname == "libc.so.6" && m.path.find("libc") != std::string::npos;
    });
    EXPECT_TRUE(libc) << mapped.size() << " objects mapped";
}

TEST(CuptiLibrary, TheJobsMajorIsItsMappedRuntimesBySonameBeforeFileName) {
    // A toolkit's real file name carries the full version; the soname the major alone.
    EXPECT_EQ(
        jobCudaMajor({{"/usr/lib/libc.so.6", "libc.so.6"},
                      {"/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "libcudart.so.12"}}),
        12);
    EXPECT_EQ(jobCudaMajor({{"/w/nvidia/cu13/lib/libcudart.so.13", ""}}), 13);
    EXPECT_EQ(jobCudaMajor({{"/usr/lib/libc.so.6", "libc.so.6"}}), std::nullopt);
}

TEST(CuptiLibrary, MappedFirstThenLoaderThenTheCu12WheelBesideTheRuntimeThenToolkits) {
    CuptiSearchInputs in;
    in.mapped = {{"/v/nvidia/cuda_runtime/lib/libcudart.so.12", "libcudart.so.12"},
                 {"/v/nvidia/cuda_cupti/lib/libcupti.so.12", "libcupti.so.12"},
                 {"/usr/local/cuda-13.0/lib/libcupti.so.13", "libcupti.so.13"}};
    in.jobMajor = jobCudaMajor(in.mapped);
    in.cudaHome = "/opt/cuda";
    in.localToolkits = {"cuda", "cuda-12.2", "cuda-13.0", "cuda-12.8", "cudnn"};
    in.overridePath = "/mine";
    const std::vector<std::string> expected = {
        "/v/nvidia/cuda_cupti/lib/libcupti.so.12",  // mapped, of the job's major (not the 13)
        "libcupti.so.12",
        "/v/nvidia/cuda_runtime/lib/libcupti.so.12",
        "/v/nvidia/cuda_runtime/lib/../../cuda_cupti/lib/libcupti.so.12",
        "/v/nvidia/cuda_runtime/lib/../extras/CUPTI/lib64/libcupti.so.12",
        "/opt/cuda/extras/CUPTI/lib64/libcupti.so.12",
        "/opt/cuda/lib64/libcupti.so.12",
        "/opt/cuda/lib/libcupti.so.12",
        "/opt/cuda/targets/x86_64-linux/lib/libcupti.so.12",
        "/usr/local/cuda-12.8/extras/CUPTI/lib64/libcupti.so.12",  // 12.8 before 12.2
        "/usr/local/cuda-12.8/lib64/libcupti.so.12",
        "/usr/local/cuda-12.8/lib/libcupti.so.12",
        "/usr/local/cuda-12.8/targets/x86_64-linux/lib/libcupti.so.12",
        "/usr/local/cuda-12.2/extras/CUPTI/lib64/libcupti.so.12",
        "/usr/local/cuda-12.2/lib64/libcupti.so.12",
        "/usr/local/cuda-12.2/lib/libcupti.so.12",
        "/usr/local/cuda-12.2/targets/x86_64-linux/lib/libcupti.so.12",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12",
        "/usr/local/cuda/lib64/libcupti.so.12",
        "/usr/local/cuda/lib/libcupti.so.12",
        "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.12",
        "/mine/libcupti.so.12",
    };
    const auto c = cuptiCandidates(in);
    EXPECT_EQ(paths(c), expected);
    EXPECT_EQ(c[0].source, CuptiSource::Mapped);
    EXPECT_EQ(c[1].source, CuptiSource::SearchPath);
    EXPECT_EQ(c[3].source, CuptiSource::WheelFolder);
    EXPECT_EQ(c.back().source, CuptiSource::Override);
    for (const CuptiCandidate& x : c) {
        EXPECT_EQ(x.major, 12) << x.path;
    }
}

TEST(CuptiLibrary, ACu13WheelHasItsCuptiBesideTheRuntime) {
    CuptiSearchInputs in;
    in.mapped = {{"/v/nvidia/cu13/lib/libcudart.so.13", "libcudart.so.13"}};
    in.jobMajor = 13;
    const auto c = cuptiCandidates(in);
    ASSERT_GE(c.size(), 3u);
    EXPECT_EQ(c[0].path, "libcupti.so.13");
    EXPECT_EQ(c[1].path, "/v/nvidia/cu13/lib/libcupti.so.13");
    EXPECT_EQ(c[1].source, CuptiSource::BesideRuntime);
}

TEST(CuptiLibrary, WithoutARuntimeEverySupportedMajorIsTriedNewestFirstMappedOnesAhead) {
    CuptiSearchInputs in;
    in.mapped = {{"/x/libcupti.so.12", "libcupti.so.12"}};
    in.overridePath = "/y/libcupti.so.13";  // a file: taken as it is, for its own major
    const auto c = cuptiCandidates(in);
    EXPECT_EQ(paths(c), (std::vector<std::string>{"/x/libcupti.so.12", "libcupti.so.13",
                                                  "libcupti.so.12", "/y/libcupti.so.13"}));
    EXPECT_EQ(c.back().major, 13);
}

TEST(CuptiLibrary, TwelveXVersionsAreTheCounterOfCuptiVersionH) {
    EXPECT_EQ(classifyCuptiVersion(19).name, "12.0 or 12.1");
    EXPECT_EQ(classifyCuptiVersion(24).name, "12.6");
    EXPECT_EQ(classifyCuptiVersion(26).name, "12.8");
    EXPECT_EQ(classifyCuptiVersion(28).name, "12.9 Update 1");
    for (uint32_t v : {19u, 20u, 21u, 24u, 26u, 27u, 28u}) {
        const CuptiRelease r = classifyCuptiVersion(v);
        EXPECT_EQ(r.major, 12) << v;
        EXPECT_EQ(r.verdict, CuptiVerdict::Supported) << v;
        EXPECT_TRUE(r.nvtxAllowed) << v;
        EXPECT_TRUE(releaseUsable(r, false)) << v;
    }
}

TEST(CuptiLibrary, ReleasesThatLoseKernelsWarnAndThe1300NvtxCrashTurnsNvtxOff) {
    for (uint32_t v : {22u, 23u}) {  // 12.4 (Update 1 lost kernels) and 12.5 (fixed in Update 1)
        const CuptiRelease r = classifyCuptiVersion(v);
        EXPECT_EQ(r.verdict, CuptiVerdict::Warn) << v;
        EXPECT_NE(r.note.find("kernel"), std::string::npos) << r.note;
        EXPECT_TRUE(releaseUsable(r, false));
    }
    const CuptiRelease r = classifyCuptiVersion(130000);
    EXPECT_EQ(r.name, "13.0.0");
    EXPECT_EQ(r.verdict, CuptiVerdict::Warn);
    EXPECT_FALSE(r.nvtxAllowed);
    EXPECT_EQ(r.note.find("NVTX"), std::string::npos) << "NVTX is said where it is refused";
    const CuptiRelease fixed = classifyCuptiVersion(130001);
    EXPECT_EQ(fixed.name, "13.0.1");
    EXPECT_EQ(fixed.verdict, CuptiVerdict::Supported);
    EXPECT_TRUE(fixed.nvtxAllowed);
    EXPECT_EQ(classifyCuptiVersion(130100).verdict, CuptiVerdict::Supported);  // 13.1
}

TEST(CuptiLibrary, NewerReleasesNeedTheUnverifiedSwitchAndCuda11IsRefused) {
    for (uint32_t v : {25u, 29u, 130200u, 140000u}) {
        const CuptiRelease r = classifyCuptiVersion(v);
        EXPECT_EQ(r.verdict, CuptiVerdict::Unverified) << v;
        EXPECT_FALSE(releaseUsable(r, false)) << v;
        EXPECT_TRUE(releaseUsable(r, true)) << v;
        EXPECT_FALSE(r.note.empty());
    }
    EXPECT_EQ(classifyCuptiVersion(140000).major, 14);
    const CuptiRelease old = classifyCuptiVersion(18);  // CUDA 11.8
    EXPECT_EQ(old.verdict, CuptiVerdict::Refused);
    EXPECT_FALSE(releaseUsable(old, true));
}

TEST(CuptiLibrary, TheLauncherWarnsForEachRuntimeMajorWithoutACupti) {
    CuptiSearchInputs in;
    in.localToolkits = {"cuda-12.4"};
    // CUDA 13's CUPTI resolves through the loader; CUDA 12's exists in no folder.
    const auto loadable = [](int major) { return major == 13; };
    const auto none = [](const std::string&) { return false; };
    auto warnings = missingCuptiWarnings({12, 13}, in, loadable, none);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("libcupti.so.12"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("CUDA 12"), std::string::npos);
    // The toolkit's extras/CUPTI/lib64 holds one: no warning.
    const auto inToolkit = [](const std::string& p) {
        return p == "/usr/local/cuda-12.4/extras/CUPTI/lib64/libcupti.so.12";
    };
    EXPECT_TRUE(missingCuptiWarnings({12, 13}, in, loadable, inToolkit).empty());
}

}  // namespace
