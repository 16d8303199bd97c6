#pragma once
// The process's resident host memory, sampled by the agent's writer thread once per flush period
// and written as a HostResidentBytes counter (the host-memory advice reads it). No CUDA here.

#include <cstdint>
#include <optional>
#include <string_view>

#include "vramscope/trace/trace_data.h"

namespace vramscope::capture {

/// Name of the agent's host counter in the trace.
inline constexpr std::string_view kHostResidentCounterName = "host resident bytes";

/// Resident bytes from the text of /proc/<pid>/statm ("size resident shared text lib data dt",
/// in pages): resident x `pageBytes`. nullopt when the text has no second number or pageBytes
/// <= 0. Source: proc(5), /proc/pid/statm.
std::optional<uint64_t> residentBytesFromStatm(std::string_view statm, long pageBytes);

/// This process's resident bytes now (/proc/self/statm x sysconf(_SC_PAGESIZE)); nullopt when
/// the file cannot be read (no procfs). One open/read/close, no allocation: callable from the
/// writer thread every period. Never from a CUDA callback (it is I/O).
std::optional<uint64_t> readResidentBytes();

/// A HostResidentBytes sample of `bytes` at `timestampNs` (the trace's clock) on kHostDevice,
/// named `name` (an id of the trace's string table for kHostResidentCounterName).
trace::CounterSample hostResidentSample(trace::StringId name, trace::TimestampNs timestampNs,
                                        uint64_t bytes);

}  // namespace vramscope::capture
