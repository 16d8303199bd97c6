#include "cupti_library.h"

#include <dirent.h>
#include <link.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

namespace vramscope::capture {

namespace {

std::string_view baseName(std::string_view path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string dirName(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string cuptiName(int major) {
    return "libcupti.so." + std::to_string(major);
}

/// "cuda-12.4" -> {12, 4}; "cuda-12" -> {12, -1}; nullopt for "cuda" or another name.
std::optional<std::pair<int, int>> toolkitVersion(std::string_view folder) {
    if (folder.substr(0, 5) != "cuda-") {
        return std::nullopt;
    }
    folder.remove_prefix(5);
    int major = 0;
    auto [p, ec] = std::from_chars(folder.data(), folder.data() + folder.size(), major);
    if (ec != std::errc{}) {
        return std::nullopt;
    }
    int minor = -1;
    if (p < folder.data() + folder.size() && *p == '.') {
        std::from_chars(p + 1, folder.data() + folder.size(), minor);
    }
    return std::pair{major, minor};
}

/// The folders of a toolkit root that hold libcupti: the CUDA 12 layout first, then CUDA 13's
/// (which puts it beside the other libraries).
std::vector<std::string> toolkitLibFolders(const std::string& root) {
    return {root + "/extras/CUPTI/lib64", root + "/lib64", root + "/lib",
            root + "/targets/x86_64-linux/lib"};
}

class CandidateList {
public:
    void add(std::string path, CuptiSource source, int major) {
        if (m_seen.insert(path).second) {
            m_out.push_back({std::move(path), source, major});
        }
    }
    std::vector<CuptiCandidate> take() { return std::move(m_out); }

private:
    std::set<std::string> m_seen;
    std::vector<CuptiCandidate> m_out;
};

/// dl_iterate_phdr's view of one object's DT_SONAME.
std::string sonameOf(const dl_phdr_info& info) {
    const ElfW(Dyn)* dyn = nullptr;
    for (int i = 0; i < info.dlpi_phnum; ++i) {
        if (info.dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dyn = reinterpret_cast<const ElfW(Dyn)*>(info.dlpi_addr + info.dlpi_phdr[i].p_vaddr);
        }
    }
    if (dyn == nullptr) {
        return {};
    }
    ElfW(Addr) strtab = 0;
    ElfW(Xword) soname = 0;
    bool hasSoname = false;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
        if (dyn->d_tag == DT_STRTAB) {
            strtab = dyn->d_un.d_ptr;
        } else if (dyn->d_tag == DT_SONAME) {
            soname = dyn->d_un.d_val;
            hasSoname = true;
        }
    }
    if (!hasSoname || strtab == 0) {
        return {};
    }
    // NOTE: glibc relocates DT_STRTAB in place on most targets (x86-64 among them); where it does
    // not, the value is still relative to the load address.
    if (strtab < info.dlpi_addr) {
        strtab += info.dlpi_addr;
    }
    return reinterpret_cast<const char*>(strtab + soname);
}

int collectMapped(dl_phdr_info* info, size_t, void* data) {
    if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') {
        return 0;  // the main program, the vDSO
    }
    auto* out = static_cast<std::vector<MappedLibrary>*>(data);
    out->push_back({info->dlpi_name, sonameOf(*info)});
    return 0;
}

}  // namespace

std::optional<int> sonameMajor(std::string_view pathOrName, std::string_view stem) {
    const std::string_view name = baseName(pathOrName);
    const std::string prefix = std::string(stem) + ".so.";
    if (name.substr(0, prefix.size()) != prefix) {
        return std::nullopt;
    }
    const std::string_view rest = name.substr(prefix.size());
    int major = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), major);
    if (ec != std::errc{} || p == rest.data() || (p != rest.data() + rest.size() && *p != '.')) {
        return std::nullopt;
    }
    return major;
}

std::vector<MappedLibrary> mappedLibraries() {
    std::vector<MappedLibrary> out;
    dl_iterate_phdr(collectMapped, &out);
    return out;
}

std::optional<int> mappedMajor(const std::vector<MappedLibrary>& mapped, std::string_view stem) {
    for (const MappedLibrary& lib : mapped) {
        if (auto m = sonameMajor(lib.soname, stem)) {
            return m;
        }
        if (auto m = sonameMajor(lib.path, stem)) {
            return m;
        }
    }
    return std::nullopt;
}

std::optional<int> jobCudaMajor(const std::vector<MappedLibrary>& mapped) {
    return mappedMajor(mapped, "libcudart");
}

const char* toString(CuptiSource source) {
    switch (source) {
        case CuptiSource::Mapped:
            return "mapped by the process";
        case CuptiSource::SearchPath:
            return "loader search path";
        case CuptiSource::BesideRuntime:
            return "beside the job's libcudart";
        case CuptiSource::WheelFolder:
            return "the job's nvidia-cuda-cupti wheel";
        case CuptiSource::ToolkitOfRuntime:
            return "the toolkit of the job's libcudart";
        case CuptiSource::CudaHome:
            return "CUDA_HOME";
        case CuptiSource::Toolkit:
            return "/usr/local toolkit";
        case CuptiSource::Override:
            return kEnvCuptiPath;
    }
    return "?";
}

std::vector<CuptiCandidate> cuptiCandidates(const CuptiSearchInputs& in) {
    std::vector<int> majors;
    if (in.jobMajor) {
        majors.push_back(*in.jobMajor);
    } else {
        majors.assign(std::begin(kSupportedCudaMajors), std::end(kSupportedCudaMajors));
    }
    CandidateList list;
    // (1) the process's own libcupti
    for (int major : majors) {
        for (const MappedLibrary& lib : in.mapped) {
            const auto m = sonameMajor(lib.soname, "libcupti").has_value()
                               ? sonameMajor(lib.soname, "libcupti")
                               : sonameMajor(lib.path, "libcupti");
            if (m == major) {
                list.add(lib.path, CuptiSource::Mapped, major);
            }
        }
    }
    // (2) the loader, then the folders of the job's own runtime, CUDA_HOME and the toolkits
    std::vector<std::pair<std::pair<int, int>, std::string>> versioned;
    bool plainCuda = false;
    for (const std::string& folder : in.localToolkits) {
        if (auto v = toolkitVersion(folder)) {
            versioned.push_back({*v, folder});
        } else if (folder == "cuda") {
            plainCuda = true;
        }
    }
    std::sort(versioned.begin(), versioned.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    for (int major : majors) {
        const std::string name = cuptiName(major);
        list.add(name, CuptiSource::SearchPath, major);
        for (const MappedLibrary& lib : in.mapped) {
            const auto m = sonameMajor(lib.soname, "libcudart").has_value()
                               ? sonameMajor(lib.soname, "libcudart")
                               : sonameMajor(lib.path, "libcudart");
            if (m != major || lib.path.find('/') == std::string::npos) {
                continue;
            }
            const std::string dir = dirName(lib.path);
            list.add(dir + "/" + name, CuptiSource::BesideRuntime, major);
            list.add(dir + "/../../cuda_cupti/lib/" + name, CuptiSource::WheelFolder, major);
            list.add(dir + "/../extras/CUPTI/lib64/" + name, CuptiSource::ToolkitOfRuntime, major);
        }
        if (!in.cudaHome.empty()) {
            for (const std::string& dir : toolkitLibFolders(in.cudaHome)) {
                list.add(dir + "/" + name, CuptiSource::CudaHome, major);
            }
        }
        for (const auto& [version, folder] : versioned) {
            if (version.first != major) {
                continue;
            }
            for (const std::string& dir : toolkitLibFolders("/usr/local/" + folder)) {
                list.add(dir + "/" + name, CuptiSource::Toolkit, major);
            }
        }
        if (plainCuda) {
            for (const std::string& dir : toolkitLibFolders("/usr/local/cuda")) {
                list.add(dir + "/" + name, CuptiSource::Toolkit, major);
            }
        }
    }
    // (3) the explicit variable
    if (!in.overridePath.empty()) {
        const auto m = sonameMajor(in.overridePath, "libcupti");
        if (m.has_value()) {
            list.add(in.overridePath, CuptiSource::Override, *m);
        } else {
            for (int major : majors) {
                list.add(in.overridePath + "/" + cuptiName(major), CuptiSource::Override, major);
            }
        }
    }
    return list.take();
}

std::vector<std::string> listLocalToolkits() {
    std::vector<std::string> out;
    if (DIR* d = opendir("/usr/local")) {
        while (dirent* e = readdir(d)) {
            if (std::strncmp(e->d_name, "cuda", 4) == 0) {
                out.emplace_back(e->d_name);
            }
        }
        closedir(d);
    }
    return out;
}

CuptiRelease classifyCuptiVersion(uint32_t v) {
    CuptiRelease r;
    r.apiVersion = v;
    if (v >= 100000) {
        // MMmmpp from CUDA 13.0 on (cupti_version.h)
        r.major = static_cast<int>(v / 10000);
        const int minor = static_cast<int>(v / 100 % 100);
        const int patch = static_cast<int>(v % 100);
        r.name =
            std::to_string(r.major) + "." + std::to_string(minor) + "." + std::to_string(patch);
        if (r.major == 13 && minor <= 1) {
            r.verdict = CuptiVerdict::Supported;
            if (v == 130000) {
                r.verdict = CuptiVerdict::Warn;
                r.nvtxAllowed = false;
                r.note =
                    "CUPTI 13.0.0 can crash in cuptiActivityFlushAll (fixed in CUDA 13.0 "
                    "Update 1); if the job crashes, update the toolkit or the wheel's "
                    "CUPTI";
            }
            return r;
        }
        r.verdict = CuptiVerdict::Unverified;
        r.note = "CUPTI " + r.name +
                 " is newer than the releases whose activity records this agent reads (13.0 "
                 "and 13.1; 13.2 changed the kernel record)";
        return r;
    }
    static constexpr std::pair<uint32_t, const char*> kTwelve[] = {
        {19, "12.0 or 12.1"}, {20, "12.2"}, {21, "12.3"}, {22, "12.4"},          {23, "12.5"},
        {24, "12.6"},         {26, "12.8"}, {27, "12.9"}, {28, "12.9 Update 1"},
    };
    for (const auto& [number, name] : kTwelve) {
        if (number == v) {
            r.major = 12;
            r.name = name;
            r.verdict = CuptiVerdict::Supported;
            if (v == 22 || v == 23) {
                r.verdict = CuptiVerdict::Warn;
                r.note = std::string("CUPTI ") + name +
                         ": 12.4 Update 1 and 12.5 before Update 1 stopped tracing kernels "
                         "(fixed in 12.5 Update 1); kernel records may be missing";
            }
            return r;
        }
    }
    if (v < 19) {
        r.name = "API version " + std::to_string(v);
        r.verdict = CuptiVerdict::Refused;
        r.note = "CUPTI API version " + std::to_string(v) +
                 " is CUDA 11 or older; the agent reads CUDA 12 and 13 records only";
        return r;
    }
    r.major = 12;
    r.name = "12.x (API version " + std::to_string(v) + ")";
    r.verdict = CuptiVerdict::Unverified;
    r.note = "CUPTI API version " + std::to_string(v) +
             " is no CUDA 12 release this agent knows (cupti_version.h lists 19-24 and 26-28)";
    return r;
}

bool releaseUsable(const CuptiRelease& release, bool allowUnverified) {
    switch (release.verdict) {
        case CuptiVerdict::Supported:
        case CuptiVerdict::Warn:
            return true;
        case CuptiVerdict::Unverified:
            return allowUnverified;
        case CuptiVerdict::Refused:
            return false;
    }
    return false;
}

std::vector<std::string> missingCuptiWarnings(
    const std::vector<int>& runtimeMajors, const CuptiSearchInputs& in,
    const std::function<bool(int major)>& loadable,
    const std::function<bool(const std::string&)>& exists) {
    std::vector<std::string> out;
    for (int major : runtimeMajors) {
        CuptiSearchInputs one = in;
        one.mapped.clear();
        one.jobMajor = major;
        bool found = loadable(major);
        for (const CuptiCandidate& c : cuptiCandidates(one)) {
            found = found || (c.source != CuptiSource::SearchPath && exists(c.path));
        }
        if (!found) {
            out.push_back("no " + cuptiName(major) + " for CUDA " + std::to_string(major) +
                          " here (not on the loader's path, in CUDA_HOME, /usr/local/cuda*, or " +
                          kEnvCuptiPath + "): a CUDA " + std::to_string(major) +
                          " job that does not bring its own (PyTorch's nvidia-cuda-cupti wheel) "
                          "is not recorded");
        }
    }
    return out;
}

}  // namespace vramscope::capture
