// Fuzz target: the data-only pickle reader (parsePickle, walking every value of the document it
// builds) and the PyTorch memory snapshot importer on the same bytes (importPytorchSnapshot, as
// openTrace calls it for a .pickle file, already gunzipped).
#include <string_view>

#include "fuzz_entry.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/pickle_reader.h"

namespace {

// Reads every node once through the public accessors; a node id out of range or a view past
// the input shows up as a sanitizer report here.
void walkDocument(const vramscope::trace::PickleDocument& doc) {
    using vramscope::trace::PickleKind;
    for (vramscope::trace::PickleNodeId node = 0; node < doc.nodeCount(); ++node) {
        switch (doc.kind(node)) {
            case PickleKind::Int:
            case PickleKind::Bool:
            case PickleKind::Float:
                (void)doc.asInt(node);
                (void)doc.asFloat(node);
                break;
            case PickleKind::String:
            case PickleKind::Bytes:
                if (auto text = doc.asString(node)) {
                    volatile char sink = text->empty() ? '\0' : text->back();
                    (void)sink;
                }
                break;
            case PickleKind::BigInt:
                (void)doc.bigIntBytes(node).size();
                break;
            case PickleKind::Dict:
                (void)doc.get(node, "segments");
                [[fallthrough]];
            default:
                for (auto item : doc.items(node)) {
                    (void)doc.kind(item);
                }
                break;
        }
    }
}

}  // namespace

VRAMSCOPE_FUZZ_ENTRY(snapshot)(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    if (auto doc = vramscope::trace::parsePickle(bytes, "fuzz.pickle")) {
        walkDocument(*doc);
    }
    auto loaded = vramscope::trace::importPytorchSnapshot(bytes, "fuzz.pickle");
    if (loaded) {
        (void)loaded->report.summary();
    } else {
        (void)loaded.error().describe();
    }
    return 0;
}
