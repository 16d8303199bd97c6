#pragma once
// A scratch file for fuzz targets whose reader takes a path (SQLite, openJob): one per process,
// named by mkstemp under $TMPDIR (else /tmp), rewritten for every input and removed at exit.
// A target that cannot make or write it aborts: nothing it checks could run.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace vramscope_fuzz {

class ScratchFile {
public:
    /// `prefix` starts the file's name, e.g. "vramscope-fuzz-nsys".
    explicit ScratchFile(const char* prefix) {
        const char* dir = std::getenv("TMPDIR");
        std::string pattern =
            std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/" + prefix + "-XXXXXX";
        const int fd = mkstemp(pattern.data());
        if (fd < 0) {
            std::abort();
        }
        close(fd);
        m_path = pattern;
    }
    ~ScratchFile() { std::remove(m_path.c_str()); }
    ScratchFile(const ScratchFile&) = delete;
    ScratchFile& operator=(const ScratchFile&) = delete;

    /// Replaces the file's content with `size` bytes at `data`; returns its path.
    const std::string& write(const uint8_t* data, size_t size) {
        std::FILE* file = std::fopen(m_path.c_str(), "wb");
        if (file == nullptr) {
            std::abort();
        }
        const bool written = size == 0 || std::fwrite(data, 1, size, file) == size;
        if (std::fclose(file) != 0 || !written) {
            std::abort();
        }
        return m_path;
    }

private:
    std::string m_path;
};

}  // namespace vramscope_fuzz
