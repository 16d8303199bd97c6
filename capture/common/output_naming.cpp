#include "output_naming.h"

#include <cstdlib>
#include <initializer_list>
#include <utility>

namespace vramscope::capture {

namespace {

constexpr std::string_view kSuffix = ".vscope";

std::optional<int32_t> firstInt(const GetEnv& env, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (auto value = env(name)) {
            if (auto parsed = parseNonNegativeInt(*value)) {
                return parsed;
            }
        }
    }
    return std::nullopt;
}

std::string stemOf(const std::string& path) {
    return path.ends_with(kSuffix) ? path.substr(0, path.size() - kSuffix.size()) : path;
}

std::string joinPath(const std::string& dir, const std::string& name) {
    if (dir.empty()) {
        return name;
    }
    return dir.back() == '/' ? dir + name : dir + "/" + name;
}

}  // namespace

GetEnv processEnvironment() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) {
            return std::nullopt;
        }
        return std::string(value);
    };
}

GetEnv mapEnvironment(std::map<std::string, std::string> values) {
    return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
        auto it = values.find(name);
        if (it == values.end()) {
            return std::nullopt;
        }
        return it->second;
    };
}

std::optional<int32_t> parseNonNegativeInt(std::string_view text) {
    if (text.empty() || text.size() > 10) {
        return std::nullopt;
    }
    int64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        value = value * 10 + (c - '0');
    }
    if (value > INT32_MAX) {
        return std::nullopt;
    }
    return static_cast<int32_t>(value);
}

ProcessIdentity identityFromEnvironment(const GetEnv& env, std::string host, int64_t pid) {
    ProcessIdentity who;
    who.host = std::move(host);
    who.pid = pid;
    who.rank =
        firstInt(env, {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}).value_or(-1);
    who.localRank = firstInt(env, {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                   "MPI_LOCALRANKID"})
                        .value_or(-1);
    who.worldSize =
        firstInt(env, {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
            .value_or(0);
    for (const char* name : {kEnvJob, "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"}) {
        auto value = env(name);
        // torchrun without --rdzv-id publishes the placeholder "none".
        if (value && !value->empty() && *value != "none") {
            who.job = *value;
            break;
        }
    }
    return who;
}

OutputSpec parseOutputSpec(std::string_view value) {
    constexpr std::string_view kUnix = "unix:";
    if (value.starts_with(kUnix)) {
        return {OutputKind::UnixSocket, std::string(value.substr(kUnix.size()))};
    }
    if (value.ends_with(kSuffix)) {
        return {OutputKind::File, std::string(value)};
    }
    return {OutputKind::Directory, std::string(value)};
}

std::string sanitizeFileNamePart(std::string_view text, std::string_view fallback) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        out.push_back(keep ? c : '_');
    }
    // A name made only of dots would mean "this directory" or "the parent".
    if (out.empty() || out.find_first_not_of('.') == std::string::npos) {
        return std::string(fallback);
    }
    return out;
}

std::string traceOutputPath(const OutputSpec& spec, const ProcessIdentity& who,
                            bool isRootProcess) {
    const std::string host = sanitizeFileNamePart(who.host, "host");
    const std::string perProcess = host + "-" + std::to_string(who.pid);
    switch (spec.kind) {
        case OutputKind::UnixSocket:
            return spec.path;
        case OutputKind::File: {
            const std::string stem = stemOf(spec.path);
            if (who.rank >= 0) {
                return stem + "-rank" + std::to_string(who.rank) + std::string(kSuffix);
            }
            if (isRootProcess) {
                return spec.path;
            }
            return stem + "-" + perProcess + std::string(kSuffix);
        }
        case OutputKind::Directory:
            break;
    }
    const std::string job = sanitizeFileNamePart(who.job, "vramscope");
    const std::string name =
        who.rank >= 0 ? job + "-rank" + std::to_string(who.rank) : job + "-" + perProcess;
    return joinPath(spec.path, name + std::string(kSuffix));
}

std::string collisionFallbackPath(const std::string& path, int64_t pid) {
    return stemOf(path) + "-pid" + std::to_string(pid) + std::string(kSuffix);
}

}  // namespace vramscope::capture
