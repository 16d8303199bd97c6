// Kineto / Chrome trace JSON importer, second pass: the builder that turns the raw rows of
// kineto_parse.h into TraceData. Internal to trace_format: kineto_importer.cpp holds the time
// base, kernels, memory, ranges and header; kineto_collectives.cpp the collectives.
#pragma once

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import/kineto/kineto_parse.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::trace::kineto {

/// Turns the raw rows into TraceData. Single use; `raw` string views must still be alive.
class TraceBuilder {
public:
    TraceBuilder(const RawKineto& raw, TraceData& data) : m_raw(raw), m_data(data) {}

    void build() {
        sortLaunches();
        chooseTimeBase();
        buildKernels();
        buildCollectives();
        buildMemory();
        buildRanges();
        buildHeader();
    }
    /// Set when the base time could not be added without overflowing int64 ns.
    bool baseDropped() const { return m_baseDropped; }

private:
    int64_t toTrace(int64_t rawNs) const { return rawNs + m_offsetNs; }

    /// Interns a string the raw rows point to (it outlives the builder, so its view may key the
    /// cache); temporaries go to m_data.intern directly.
    StringId intern(std::string_view s) {
        auto it = m_stringCache.find(s);
        if (it != m_stringCache.end()) {
            return it->second;
        }
        const StringId id = m_data.intern(s);
        m_stringCache.emplace(s, id);
        return id;
    }

    void noteDevice(DeviceIndex d) {
        if (toInt(d) >= 0) {
            m_devicesSeen.insert({d, true});
        }
    }

    /// The runtime call with this correlation id, nullptr when the trace has none.
    const RawLaunch* findLaunch(uint64_t correlation) const {
        auto it =
            std::lower_bound(m_launches.begin(), m_launches.end(), correlation,
                             [](const RawLaunch& l, uint64_t c) { return l.correlation < c; });
        return it != m_launches.end() && it->correlation == correlation ? &*it : nullptr;
    }
    /// m_launches by correlation id, with the operand type of each launch's operator.
    void sortLaunches();
    /// The operand type of the op that launched `launch` (an entry of m_launches), 0 = none.
    StringId operandTypeOf(const RawLaunch* launch) {
        const std::string_view t = m_launchTypes[size_t(launch - m_launches.data())];
        return t.empty() ? StringId{0} : intern(t);
    }
    void chooseTimeBase();
    void buildKernels();
    void buildCollectives();
    const CollectiveArgs* matchComms(size_t kernelRow, bool opName = false) const;
    void addCollective(size_t kernelRow, const CollectiveArgs* args, std::string_view kernelName);
    /// The message size in NCCL's convention from In / Out msg nelems and dtype, 0 = unknown.
    static uint64_t messageBytes(std::string_view function, const CollectiveArgs& args);
    /// The message size from an op's first input tensor (Input Dims, Input type), 0 = unknown.
    static uint64_t inputMessageBytes(std::string_view function, const CollectiveArgs& op,
                                      int32_t nranks);
    /// The world size of distributedInfo, 0 when unknown.
    int32_t worldGroup() const { return m_raw.worldSize > 0 ? m_raw.worldSize : 0; }
    void buildMemory();
    void buildDeviceMemory(DeviceIndex device, const std::vector<size_t>& rows);
    void buildMemoryCounters(const std::map<DeviceIndex, std::vector<size_t>>& memory);
    void buildHostMemory();
    void buildRanges();
    void buildHeader();

    const RawKineto& m_raw;
    TraceData& m_data;
    int64_t m_offsetNs = 0;
    bool m_baseDropped = false;
    int64_t m_firstNs = std::numeric_limits<int64_t>::max();
    std::unordered_map<std::string_view, StringId> m_stringCache;
    std::map<DeviceIndex, bool> m_devicesSeen;
    std::vector<RawLaunch> m_launches;            ///< sorted by correlation id
    std::vector<std::string_view> m_launchTypes;  ///< per m_launches entry (launchOperandTypes)
    std::vector<size_t> m_kernelOrder;            ///< raw kernel index of each KernelEvents row
    std::vector<StackId> m_memoryStacks;          ///< stack of each raw memory event
    std::map<uint64_t, std::vector<size_t>> m_commsByThread;  ///< comms rows sorted by start
};

}  // namespace vramscope::trace::kineto
