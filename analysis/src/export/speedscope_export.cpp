#include "vramscope/analysis/export/speedscope_export.h"

#include <unordered_map>

#include <nlohmann/json.hpp>

namespace vramscope::analysis {

namespace {

using Json = nlohmann::ordered_json;

/// Frame indices by name: speedscope shares frames between samples, so a name is written once.
class FrameTable {
public:
    size_t indexOf(const std::string& name) {
        auto [it, inserted] = m_index.try_emplace(name, m_frames.size());
        if (inserted) {
            m_frames.push_back(Json{{"name", name}});
        }
        return it->second;
    }
    Json take() { return std::move(m_frames); }

private:
    std::unordered_map<std::string, size_t> m_index;
    Json m_frames = Json::array();
};

}  // namespace

std::string speedscopeProfileName(const FlameTree& tree, const SpeedscopeSource& source) {
    std::string name = source.file.empty() ? std::string() : source.file + ", ";
    if (source.rank != trace::kUnknownRank) {
        name += "rank " + std::to_string(toInt(source.rank)) + " ";
    }
    name += "GPU " + std::to_string(toInt(tree.device)) + ", " + trace::toString(tree.level) +
            " at " + std::to_string(tree.timeNs) + " ns (trace clock), by " +
            toString(tree.grouping);
    return name;
}

trace::Status writeSpeedscope(const FlameTree& tree, const SpeedscopeSource& source,
                              std::ostream& out) {
    if (tree.isDiff) {
        return trace::Error::make(trace::ErrorCode::Invalid, source.file,
                                  "a difference between two times has negative bytes, which "
                                  "speedscope cannot weigh; export one time");
    }
    FrameTable frames;
    Json samples = Json::array();
    Json weights = Json::array();
    int64_t total = 0;
    // Depth-first in tree order, carrying the frame indices of the path so far.
    std::vector<size_t> path;
    std::vector<std::pair<uint32_t, bool>> stack;  // node, leaving
    if (!tree.nodes.empty()) {
        stack.push_back({0, false});
    }
    while (!stack.empty()) {
        auto [i, leaving] = stack.back();
        stack.pop_back();
        if (leaving) {
            path.pop_back();
            continue;
        }
        const FlameNode& n = tree.nodes[i];
        if (i != 0) {
            path.push_back(frames.indexOf(n.name));
            stack.push_back({i, true});
        }
        if (n.selfBytes > 0) {
            samples.push_back(path.empty() ? Json::array({frames.indexOf(kSpeedscopeRootFrame)})
                                           : Json(path));
            weights.push_back(n.selfBytes);
            total += n.selfBytes;
        }
        for (auto c = n.children.rbegin(); c != n.children.rend(); ++c) {
            stack.push_back({*c, false});
        }
    }
    const std::string name = speedscopeProfileName(tree, source);
    Json file;
    file["$schema"] = "https://www.speedscope.app/file-format-schema.json";
    file["shared"] = {{"frames", frames.take()}};
    Json profile;
    profile["type"] = "sampled";
    profile["name"] = name;
    profile["unit"] = "bytes";
    profile["startValue"] = 0;
    profile["endValue"] = total;
    profile["samples"] = std::move(samples);
    profile["weights"] = std::move(weights);
    file["profiles"] = Json::array({std::move(profile)});
    file["name"] = name;
    file["activeProfileIndex"] = 0;
    file["exporter"] = "vramscope";
    out << file.dump() << "\n";
    if (!out) {
        return trace::Error::make(trace::ErrorCode::Io, source.file,
                                  "the output could not be written");
    }
    return {};
}

}  // namespace vramscope::analysis
