#include "host_memory_sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>

namespace vramscope::capture {

std::optional<uint64_t> residentBytesFromStatm(std::string_view statm, long pageBytes) {
    if (pageBytes <= 0) {
        return std::nullopt;
    }
    uint64_t fields[2] = {0, 0};
    const char* p = statm.data();
    const char* end = statm.data() + statm.size();
    for (uint64_t& field : fields) {
        while (p != end && (*p == ' ' || *p == '\t')) {
            ++p;
        }
        const auto [next, ec] = std::from_chars(p, end, field);
        if (ec != std::errc() || next == p) {
            return std::nullopt;
        }
        p = next;
    }
    return fields[1] * static_cast<uint64_t>(pageBytes);
}

std::optional<uint64_t> readResidentBytes() {
    // statm rather than /proc/self/status or getrusage: one short line of numbers (no text to
    // search), the current resident set (ru_maxrss is only the peak), and the same counters the
    // kernel reports as VmRSS.
    const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    char buf[256];
    const ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n <= 0) {
        return std::nullopt;
    }
    return residentBytesFromStatm(std::string_view(buf, static_cast<size_t>(n)),
                                  sysconf(_SC_PAGESIZE));
}

trace::CounterSample hostResidentSample(trace::StringId name, trace::TimestampNs timestampNs,
                                        uint64_t bytes) {
    trace::CounterSample s;
    s.timestampNs = timestampNs;
    s.name = name;
    s.device = trace::kHostDevice;
    s.kind = trace::CounterKind::HostResidentBytes;
    s.value = static_cast<double>(bytes);
    return s;
}

}  // namespace vramscope::capture
