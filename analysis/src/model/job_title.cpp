#include "vramscope/analysis/model/job_title.h"

#include <filesystem>

namespace vramscope::analysis {

std::string jobTitle(const std::vector<std::string>& inputs) {
    if (inputs.empty())
        return "bundled sample";
    if (inputs.size() == 1) {
        const std::filesystem::path p(inputs.front());
        const std::string name = p.filename().string();
        return name.empty() ? p.parent_path().filename().string() : name;
    }
    return std::to_string(inputs.size()) + " inputs";
}

}  // namespace vramscope::analysis
