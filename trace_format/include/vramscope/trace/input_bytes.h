#pragma once
// Reading whole input files, transparently gunzipping .gz content (zlib).

#include <string>

#include "vramscope/trace/error.h"

namespace vramscope::trace {

/// Reads `path` into memory. When the content starts with the gzip magic (1f 8b) it is
/// decompressed with zlib. Errors name the file (and the compressed byte offset for bad gzip).
/// Refuses uncompressed sizes above `maxBytes`.
Result<std::string> readInputBytes(const std::string& path, uint64_t maxBytes = (64ull << 30));

}  // namespace vramscope::trace
