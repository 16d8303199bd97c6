#pragma once
// The bundled sample job (resources/sample/*.vscope, one file per rank), compiled into the
// binaries. How it was made is in resources/README.md.

#include <string_view>
#include <vector>

namespace vramscope {

struct BundledFile {
    std::string_view name;   ///< file name, e.g. "sample-rank0.vscope"
    std::string_view bytes;  ///< the whole .vscope file
};

/// The bundled sample's rank files, in rank order.
const std::vector<BundledFile>& bundledSampleTraces();

}  // namespace vramscope
