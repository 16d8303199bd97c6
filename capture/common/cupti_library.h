#pragma once
// Which libcupti a job uses and whether the agent can read its records: the search order for the
// library (docs/DESIGN.md "Which libcupti a job uses") and the table of CUPTI releases
// (cupti_version.h's version history; record versions and known-bad releases: docs/DESIGN.md
// "CUPTI record versions").
//
// Pure functions over plain inputs, no CUDA headers and no loading, so that the launcher and the
// unit tests use them as the agent does; mappedLibraries() alone looks at the running process.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramscope::capture {

/// VRAMSCOPE_CUPTI_PATH: a libcupti file, or a folder holding libcupti.so.N, tried after every
/// other place (the order of docs/DESIGN.md "Which libcupti a job uses": the process's own, the
/// loader, wheels, toolkits, then this).
inline constexpr const char* kEnvCuptiPath = "VRAMSCOPE_CUPTI_PATH";
/// VRAMSCOPE_CUPTI_UNVERIFIED=1: record with a CUPTI release newer than the table below knows.
inline constexpr const char* kEnvCuptiUnverified = "VRAMSCOPE_CUPTI_UNVERIFIED";

/// The CUDA majors whose CUPTI records the agent reads (12.x and 13.x record structs).
inline constexpr int kSupportedCudaMajors[] = {13, 12};

/// The major N of a shared-object name or path "…/STEM.so.N[.minor…]": sonameMajor(
/// "/opt/nvidia/cu13/lib/libcupti.so.13", "libcupti") == 13, sonameMajor("libcudart.so.12.8.90",
/// "libcudart") == 12; nullopt for any other name (also "libcupti.so" without a number).
std::optional<int> sonameMajor(std::string_view pathOrName, std::string_view stem);

/// One object mapped in the process: the path the loader opened it by and its DT_SONAME ("" when
/// it has none).
struct MappedLibrary {
    std::string path;
    std::string soname;
};

/// Every object mapped in this process, in load order (dl_iterate_phdr; the main program and the
/// vDSO, which have no path, are left out).
std::vector<MappedLibrary> mappedLibraries();

/// The major of `stem` among `mapped` (by soname, else by file name), the first found; nullopt
/// when none is mapped.
std::optional<int> mappedMajor(const std::vector<MappedLibrary>& mapped, std::string_view stem);

/// The CUDA major of the job: that of its mapped libcudart.so.N. nullopt when the process maps
/// none (cudart linked statically, or the driver API alone).
std::optional<int> jobCudaMajor(const std::vector<MappedLibrary>& mapped);

/// Where a candidate libcupti was found.
enum class CuptiSource {
    Mapped,         ///< already mapped by the process (PyTorch's wheels map theirs at import)
    SearchPath,     ///< "libcupti.so.N" through the loader's search (LD_LIBRARY_PATH, ldconfig)
    BesideRuntime,  ///< in the folder of the mapped libcudart (cu13 wheels: nvidia/cu13/lib)
    WheelFolder,    ///< ../../cuda_cupti/lib of the mapped libcudart (cu12 wheels, package
                    ///< nvidia-cuda-cupti-cu12: nvidia/cuda_runtime/lib beside nvidia/cuda_cupti)
    ToolkitOfRuntime,  ///< the toolkit of a mapped libcudart (.../lib64 -> ../extras/CUPTI/lib64)
    CudaHome,          ///< $CUDA_HOME (else $CUDA_PATH)
    Toolkit,           ///< /usr/local/cuda-N.* (newest first), then /usr/local/cuda
    Override,          ///< VRAMSCOPE_CUPTI_PATH
};

/// "mapped by the process", "loader search path", ... (for the header and notices).
const char* toString(CuptiSource source);

struct CuptiCandidate {
    std::string path;  ///< a file path, or the bare soname for SearchPath
    CuptiSource source = CuptiSource::Mapped;
    int major = 0;  ///< the CUDA major the file's name says
};

/// What the search looks at, gathered by the caller (the agent from its process, tests by hand).
struct CuptiSearchInputs {
    std::vector<MappedLibrary> mapped;
    std::optional<int> jobMajor;  ///< jobCudaMajor(mapped), or set by hand
    std::string cudaHome;         ///< $CUDA_HOME, else $CUDA_PATH; "" when unset
    std::string overridePath;     ///< VRAMSCOPE_CUPTI_PATH; "" when unset
    /// Folder names under /usr/local that look like toolkits ("cuda", "cuda-12.4", ...), any order.
    std::vector<std::string> localToolkits;
};

/// The libcupti files to try, best first, without duplicates, for the job's CUDA major (for each
/// of kSupportedCudaMajors, newest first, when it is unknown; then any mapped libcupti of a
/// supported major comes first). Order (docs/DESIGN.md "Which libcupti a job uses"): a mapped
/// libcupti.so.N; libcupti.so.N through the loader; beside each mapped libcudart.so.N, its wheel's
/// cuda_cupti/lib and its toolkit's extras/CUPTI/lib64; $CUDA_HOME's extras/CUPTI/lib64, lib64 and
/// targets/x86_64-linux/lib; the same folders of /usr/local/cuda-N.* (highest version first) and
/// of /usr/local/cuda; VRAMSCOPE_CUPTI_PATH (a file as it is, a folder with libcupti.so.N added).
std::vector<CuptiCandidate> cuptiCandidates(const CuptiSearchInputs& in);

/// Folder names of /usr/local that start with "cuda" (a toolkit or its symlink).
std::vector<std::string> listLocalToolkits();

/// What the agent makes of a CUPTI release.
enum class CuptiVerdict {
    Supported,   ///< known and good
    Warn,        ///< known, records, with a warning (CuptiRelease::note)
    Unverified,  ///< newer than this table: refused unless VRAMSCOPE_CUPTI_UNVERIFIED=1
    Refused,     ///< older than CUDA 12: the agent cannot read its records
};

/// One CUPTI release as cuptiGetVersion names it.
struct CuptiRelease {
    uint32_t apiVersion = 0;
    int major = 0;     ///< CUDA major (12 or 13; 0 when unknown)
    std::string name;  ///< "12.6", "12.9 Update 1", "13.0.1", ...
    CuptiVerdict verdict = CuptiVerdict::Refused;
    bool nvtxAllowed = true;  ///< false where NVTX injection crashes the job (13.0.0)
    std::string note;         ///< one sentence for the warning or the refusal; "" when Supported
};

/// The release of a cuptiGetVersion value. 12.x numbers are a counter (cupti_version.h: 19 =
/// 12.0 and 12.1, 20 = 12.2, 21 = 12.3, 22 = 12.4, 23 = 12.5, 24 = 12.6, 26 = 12.8, 27 = 12.9, 28 =
/// 12.9 Update 1; 25 is no release it lists); from 13.0 on MMmmpp (130001 = 13.0.1). Known-bad
/// (docs/DESIGN.md "CUPTI record versions"): 22 and 23 warn (12.4 Update 1 stopped tracing kernels,
/// fixed in 12.5 Update 1, and the counter does not tell updates apart); 130000 warns
/// (cuptiActivityFlushAll can crash, fixed in 13.0 Update 1) and refuses NVTX (it crashes under
/// NVTX injection). Record structs are known for 12.0-12.9 and 13.0-13.1; 13.2 and later (new
/// kernel records), other 12.x numbers and majors above 13 are Unverified; below 19 Refused.
CuptiRelease classifyCuptiVersion(uint32_t apiVersion);

/// True when the agent records with `release`: Supported or Warn, or Unverified when
/// `allowUnverified` (VRAMSCOPE_CUPTI_UNVERIFIED=1).
bool releaseUsable(const CuptiRelease& release, bool allowUnverified);

/// For vramscope-run before the job starts: one warning line per CUDA major in `runtimeMajors`
/// (the majors whose libcudart the machine has) for which no libcupti is loadable (`loadable`
/// says whether libcupti.so.N resolves through the loader) and no candidate file of `in` exists
/// (`exists`); empty when every major has one. `in.mapped` is ignored (nothing is mapped yet).
std::vector<std::string> missingCuptiWarnings(
    const std::vector<int>& runtimeMajors, const CuptiSearchInputs& in,
    const std::function<bool(int major)>& loadable,
    const std::function<bool(const std::string&)>& exists);

}  // namespace vramscope::capture
