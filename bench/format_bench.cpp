// format_bench: size and read speed of the .vscope format on a synthetic 10-million-event trace,
// beside the same events written as Kineto (PyTorch profiler) Chrome-trace JSON.
//
// Usage: format_bench [--events N] [--json-events M] [--dir DIR] [--results FILE]
//                     [--random-durations 1]
//        format_bench --read-only FILE   (reads FILE 5 times, for profilers)
//   N  events in the synthetic trace (default 10,000,000: half memory events, half kernels)
//   M  how many of those events (the first M, both kinds) are also written as Kineto JSON
//      (default 1,000,000; the JSON of all 10 M would be ~3 GB)
//   DIR where the .vscope and .json files go (default /tmp)
//   --random-durations 1: every kernel launch draws a fresh random duration and launch lead
//      (a worst case for compression) instead of its name's duration +-3 %
//   FILE a JSON file the figures are written to (for bench/format_report.py)
// Speeds are per CPU-second of this single-threaded process (user + system time, so page faults
// count; other load on the machine does not); the best of 3 runs is reported.

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/trace_file.h"

namespace vt = vramscope::trace;

namespace {

/// xorshift64*: deterministic and fast; the bench needs no statistical quality.
struct Rng {
    uint64_t s;
    uint64_t next() {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 2685821657736338717ull;
    }
    uint64_t below(uint64_t n) { return next() % n; }
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

constexpr uint64_t kMiB = 1 << 20;

/// A training-like stream of events on one GPU: per layer, forward kernels that allocate
/// activations and backward kernels that free them, gradient buffers allocated and freed, an
/// all-reduce on a communication stream now and then. Addresses come from a caching-allocator
/// model (per-size free lists, 256-byte aligned bump allocation), sizes from a handful of tensor
/// shapes, kernel durations log-uniform in 10-500 us (per kernel name, see below), gaps of a few
/// us between kernels.
vt::TraceData makeTrace(size_t events, bool randomDurations) {
    vt::TraceData d;
    d.header.producer = "format_bench";
    d.header.clockDomain = "CLOCK_REALTIME";
    d.header.rank = vt::RankId{0};
    d.header.worldSize = 8;
    d.header.devices = {{vt::DeviceIndex{0}, "GPU-00000000-0000-0000-0000-000000000000",
                         "NVIDIA H200", 150'754'820'096ull}};
    const std::vector<std::string> names = {
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
        "segment_k_off_kernel__5x_cublas",
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
        "cutlass::bfloat16_t>, false, true, false, false, true, true, false, "
        "false>(Flash_fwd_params)",
        "void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, "
        "128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>, false, true, false, false, true, "
        "true>(Flash_bwd_params)",
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
        "float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, "
        "float*, float*, c10::BFloat16*)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
        "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#"
        "4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, "
        "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()"
        "#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, "
        "at::detail::Array<char*, 2>)",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, "
        "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*,"
        " c10::BFloat16 const*, int)",
        "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native"
        "::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<"
        "c10::BFloat16> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::"
        "native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::"
        "CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1})",
        "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float, float>, float, "
        "float, float, float, float, float, adamMode_t, float>(long, int volatile*, "
        "TensorListMetadata<4>, AdamFunctor<float, float>, float, float, float, float, float, "
        "float, adamMode_t, float)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "Memcpy DtoD (Device -> Device)",
    };
    std::vector<vt::StringId> nameIds;
    for (const auto& n : names) {
        nameIds.push_back(d.intern(n));
    }
    // bf16 activations of batch 8 x seq 2048, hidden 4096 / MLP 11008, attention heads 32 x 128,
    // fp32 gradients of a 4096 x 4096 weight, and a few small buffers.
    const uint64_t sizes[] = {8ull * 2048 * 4096 * 2,
                              8ull * 2048 * 11008 * 2,
                              4096ull * 4096 * 4,
                              8ull * 32 * 2048 * 4,
                              8ull * 2048 * 4,
                              4096ull * 2,
                              2ull * kMiB,
                              512};
    constexpr size_t kSizes = std::size(sizes);
    const uint64_t streams[] = {7, 7, 7, 13};
    std::map<uint64_t, std::vector<uint64_t>> freeLists;  // caching allocator: size -> addresses
    uint64_t bump = 0x7f3a'0000'0000ull;
    auto allocate = [&](uint64_t size) {
        auto& fl = freeLists[size];
        if (!fl.empty()) {
            const uint64_t a = fl.back();
            fl.pop_back();
            return a;
        }
        const uint64_t a = bump;
        bump += (size + 255) / 256 * 256;
        return a;
    };

    Rng rng{0x9E3779B97F4A7C15ull};
    d.memory.reserve(events / 2 + 16);
    d.kernels.reserve(events / 2 + 16);
    int64_t t = 1'764'000'000'000'000'000;  // ns, CLOCK_REALTIME in late 2025
    uint64_t correlation = 1000;
    struct Live {
        uint64_t address;
        uint64_t size;
    };
    std::vector<Live> live;
    auto memoryEvent = [&](const Live& l, vt::MemoryAction action, uint64_t stream) {
        d.memory.append({t, l.address, l.size, action, vt::MemoryLevel::Allocated,
                         vt::MemoryKind::Pool, vt::DeviceIndex{0}, stream, vt::StackId{0}, 0});
    };
    // Each kernel name has its own base duration (log-uniform in 10-500 us, as shapes differ);
    // a launch runs within +-3 % of it, as the same kernel on the same shapes does. With
    // randomDurations every launch draws a fresh log-uniform duration instead (a worst case).
    std::vector<double> baseDuration;
    for (size_t i = 0; i < names.size(); ++i) {
        baseDuration.push_back(std::exp(std::log(10e3) + rng.unit() * std::log(50.0)));
    }
    int64_t lead = 20'000;  // how far the host runs ahead of the GPU, ns: drifts slowly
    auto kernel = [&](size_t nameIndex, uint64_t stream, vt::KernelCategory cat) {
        t += 1'000 + static_cast<int64_t>(rng.below(8'000));  // a few us of gap
        const double base = randomDurations ? std::exp(std::log(10e3) + rng.unit() * std::log(50.0))
                                            : baseDuration[nameIndex] * (0.97 + 0.06 * rng.unit());
        const auto dur = static_cast<int64_t>(base);
        lead = std::clamp<int64_t>(lead + static_cast<int64_t>(rng.below(2'001)) - 1'000, 5'000,
                                   50'000);
        const int64_t launch =
            t - (randomDurations ? 5'000 + static_cast<int64_t>(rng.below(45'000)) : lead);
        d.kernels.append(
            {t, t + dur, vt::DeviceIndex{0}, stream, nameIds[nameIndex], cat, launch,
             cat == vt::KernelCategory::Memcpy ? sizes[rng.below(kSizes)] : uint64_t{0},
             correlation});
        correlation += 1 + rng.below(4);
        t += dur / 4;  // the next op is issued while this kernel runs
    };
    while (d.memory.size() + d.kernels.size() < events) {
        // forward: allocate activations, run layer kernels
        const int layers = 32;
        for (int l = 0; l < layers && d.memory.size() + d.kernels.size() < events; ++l) {
            for (int a = 0; a < 3; ++a) {
                const uint64_t size = sizes[rng.below(kSizes)];
                live.push_back({allocate(size), size});
                memoryEvent(live.back(), vt::MemoryAction::Alloc, 7);
            }
            kernel(0, 7, vt::KernelCategory::Compute);
            kernel(1, 7, vt::KernelCategory::Compute);
            kernel(3 + rng.below(4), streams[rng.below(4)], vt::KernelCategory::Compute);
        }
        // backward: free activations in reverse, gradient temporaries, all-reduce now and then
        while (!live.empty() && d.memory.size() + d.kernels.size() < events) {
            kernel(2, 7, vt::KernelCategory::Compute);
            kernel(0, 7, vt::KernelCategory::Compute);
            for (int f = 0; f < 3 && !live.empty(); ++f) {
                const Live l = live.back();
                live.pop_back();
                memoryEvent(l, vt::MemoryAction::Free, 7);
                freeLists[l.size].push_back(l.address);
            }
            if (rng.below(4) == 0) {
                kernel(8, 21, vt::KernelCategory::Communication);
            }
            if (rng.below(8) == 0) {
                kernel(9, 17, vt::KernelCategory::Memcpy);
            }
        }
        kernel(7, 7, vt::KernelCategory::Compute);
        t += 200'000;  // the host prepares the next batch
    }
    return d;
}

double seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

/// CPU time of this process (user + system, page faults included), in seconds. The bench is
/// single-threaded, so this is the time on one core, unaffected by other work on the machine.
double cpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Best (shortest) CPU time of `runs` calls of fn, in seconds.
double bestOf(int runs, const std::function<void()>& fn) {
    double best = 1e300;
    for (int i = 0; i < runs; ++i) {
        const double t0 = cpuSeconds();
        fn();
        best = std::min(best, cpuSeconds() - t0);
    }
    return best;
}

/// Best CPU time of `runs` calls of fn, leaving out the destruction of what fn returns (a loaded
/// trace is freed when the user closes it, not while it loads).
template <class F>
double bestOfKeeping(int runs, F fn) {
    double best = 1e300;
    for (int i = 0; i < runs; ++i) {
        const double t0 = cpuSeconds();
        auto kept = fn();
        best = std::min(best, cpuSeconds() - t0);
    }
    return best;
}

/// A copy of `all` with only its memory events or only its kernels.
vt::TraceData only(const vt::TraceData& all, bool memory) {
    vt::TraceData d;
    d.header = all.header;
    d.strings = all.strings;
    d.rebuildIndexes();
    if (memory) {
        d.memory = all.memory;
    } else {
        d.kernels = all.kernels;
    }
    return d;
}

std::string jsonEscape(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
        }
        out.push_back(c);
    }
    return out;
}

/// Writes the first `count` memory events and the kernels up to the same time as Kineto
/// Chrome-trace JSON, with the fields the PyTorch profiler writes (templates taken from a real
/// H100 trace: [memory] instant events and "kernel" complete events with their args).
struct JsonSizes {
    uint64_t memoryEvents = 0, memoryBytes = 0, kernelEvents = 0, kernelBytes = 0, fileBytes = 0;
};
JsonSizes writeKinetoJson(const vt::TraceData& d, size_t count, const std::string& path) {
    JsonSizes s;
    std::ofstream out(path, std::ios::binary);
    out << "{\"schemaVersion\": 1, \"deviceProperties\": [], \"traceEvents\": [\n";
    const size_t memN = std::min(d.memory.size(), count / 2);
    const size_t kerN = std::min(d.kernels.size(), count - memN);
    char buf[4096];
    bool first = true;
    int64_t allocated = 0;
    auto emit = [&](int n, uint64_t& bytes) {
        if (!first) {
            out << ",\n";
        }
        first = false;
        out.write(buf, n);
        bytes += static_cast<uint64_t>(n) + 2;
    };
    size_t m = 0;
    size_t k = 0;
    while (m < memN || k < kerN) {
        const bool takeMemory =
            k >= kerN || (m < memN && d.memory.timestampNs[m] <= d.kernels.startNs[k]);
        if (takeMemory) {
            const auto& mem = d.memory;
            const bool free = mem.action[m] == vt::MemoryAction::Free;
            const auto bytes = static_cast<int64_t>(mem.sizeBytes[m]);
            allocated += free ? -bytes : bytes;
            const int n = std::snprintf(
                buf, sizeof buf,
                "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": "
                "\"[memory]\", \"pid\": 19392, \"tid\": 19392, \"ts\": %.3f, \"args\": {\"Total "
                "Reserved\": %lld, \"Total Allocated\": %lld, \"Bytes\": %lld, \"Addr\": %llu, "
                "\"Device Id\": 0, \"Device Type\": 1, \"Ev Idx\": %zu}}",
                static_cast<double>(mem.timestampNs[m]) / 1e3, 64LL << 30,
                static_cast<long long>(allocated), static_cast<long long>(free ? -bytes : bytes),
                static_cast<unsigned long long>(mem.address[m]), m);
            emit(n, s.memoryBytes);
            ++s.memoryEvents;
            ++m;
        } else {
            const auto& ker = d.kernels;
            const int n = std::snprintf(
                buf, sizeof buf,
                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": "
                "%llu, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %llu, \"queued\": "
                "0, \"device\": 0, \"context\": 1, \"stream\": %llu, \"correlation\": %llu, "
                "\"registers per thread\": 32, \"shared memory\": 0, \"blocks per SM\": 4.272727, "
                "\"warps per SM\": 17.09091, \"grid\": [564, 1, 1], \"block\": [128, 1, 1], \"est. "
                "achieved occupancy %%\": 27}}",
                jsonEscape(d.string(ker.name[k])).c_str(),
                static_cast<unsigned long long>(ker.stream[k]),
                static_cast<double>(ker.startNs[k]) / 1e3,
                static_cast<double>(ker.endNs[k] - ker.startNs[k]) / 1e3,
                static_cast<unsigned long long>(ker.correlationId[k] / 2),
                static_cast<unsigned long long>(ker.stream[k]),
                static_cast<unsigned long long>(ker.correlationId[k]));
            emit(n, s.kernelBytes);
            ++s.kernelEvents;
            ++k;
        }
    }
    out << "\n]}\n";
    out.flush();
    s.fileBytes = static_cast<uint64_t>(out.tellp());
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    size_t events = 10'000'000;
    size_t jsonEvents = 1'000'000;
    std::string dir = "/tmp";
    std::string resultsPath;
    bool randomDurations = false;  // --random-durations 1: every kernel a fresh random duration
    std::string readOnly;          // --read-only FILE: only read FILE 5 times (for profilers)
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--events") {
            events = std::stoull(argv[i + 1]);
        } else if (a == "--json-events") {
            jsonEvents = std::stoull(argv[i + 1]);
        } else if (a == "--dir") {
            dir = argv[i + 1];
        } else if (a == "--results") {
            resultsPath = argv[i + 1];
        } else if (a == "--random-durations") {
            randomDurations = std::string(argv[i + 1]) == "1";
        } else if (a == "--read-only") {
            readOnly = argv[i + 1];
        } else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }

    if (!readOnly.empty()) {
        size_t n = 0;
        const double s = bestOfKeeping(5, [&] {
            auto res = vt::readTraceFile(readOnly);
            n = res.ok() ? res->data.eventCount() : 0;
            return res;
        });
        std::printf("read %zu events: %.1f M events/s\n", n, n / s / 1e6);
        return n > 0 ? 0 : 1;
    }
    auto t0 = std::chrono::steady_clock::now();
    const vt::TraceData trace = makeTrace(events, randomDurations);
    const size_t total = trace.memory.size() + trace.kernels.size();
    std::printf("generated %zu events (%zu memory, %zu kernels) in %.2f s\n", total,
                trace.memory.size(), trace.kernels.size(),
                seconds(std::chrono::steady_clock::now() - t0));

    std::map<std::string, double> r;  // figures for the report
    r["events"] = static_cast<double>(total);
    r["memory_events"] = static_cast<double>(trace.memory.size());
    r["kernel_events"] = static_cast<double>(trace.kernels.size());
    for (const bool compress : {true, false}) {
        const std::string tag = compress ? "zstd" : "raw";
        vt::WriterOptions opt;
        opt.compress = compress;
        std::string bytes;
        const double writeS = bestOf(1, [&] { bytes = vt::writeTraceBytes(trace, opt); });
        const std::string path = dir + "/format_bench_" + tag + ".vscope";
        std::ofstream(path, std::ios::binary)
            .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        size_t loaded = 0;
        const double readS = bestOfKeeping(3, [&] {
            auto res = vt::readTraceBytes(bytes, path);
            loaded = res.ok() ? res->data.memory.size() + res->data.kernels.size() : 0;
            return res;
        });
        const double fileS = bestOfKeeping(1, [&] { return vt::readTraceFile(path); });
        if (loaded != total) {
            std::fprintf(stderr, "read back %zu of %zu events\n", loaded, total);
            return 1;
        }
        const std::string memBytes = vt::writeTraceBytes(only(trace, true), opt);
        const std::string kerBytes = vt::writeTraceBytes(only(trace, false), opt);
        r[tag + "_file_bytes"] = static_cast<double>(bytes.size());
        r[tag + "_bytes_per_event"] = static_cast<double>(bytes.size()) / total;
        r[tag + "_bytes_per_memory_event"] =
            static_cast<double>(memBytes.size()) / trace.memory.size();
        r[tag + "_bytes_per_kernel_event"] =
            static_cast<double>(kerBytes.size()) / trace.kernels.size();
        r[tag + "_write_events_per_s"] = total / writeS;
        r[tag + "_read_events_per_s"] = total / readS;
        r[tag + "_read_file_events_per_s"] = total / fileS;
        std::printf(
            "vscope %-4s: %.1f MB, %.2f B/event (memory %.2f, kernel %.2f), write %.1f M events/s, "
            "read %.1f M events/s (from memory), %.1f M events/s (from file)\n",
            tag.c_str(), bytes.size() / 1e6, r[tag + "_bytes_per_event"],
            r[tag + "_bytes_per_memory_event"], r[tag + "_bytes_per_kernel_event"],
            r[tag + "_write_events_per_s"] / 1e6, r[tag + "_read_events_per_s"] / 1e6,
            r[tag + "_read_file_events_per_s"] / 1e6);
    }

    if (jsonEvents > 0) {
        const std::string jsonPath = dir + "/format_bench_kineto.json";
        const JsonSizes js = writeKinetoJson(trace, jsonEvents, jsonPath);
        const uint64_t n = js.memoryEvents + js.kernelEvents;
        simdjson::dom::parser parser;
        simdjson::padded_string json;
        if (simdjson::padded_string::load(jsonPath).get(json)) {
            std::fprintf(stderr, "cannot load %s\n", jsonPath.c_str());
            return 1;
        }
        size_t parsed = 0;
        const double parseS = bestOf(3, [&] {
            simdjson::dom::element doc;
            if (parser.parse(json).get(doc)) {
                return;
            }
            simdjson::dom::array evs;
            if (doc["traceEvents"].get_array().get(evs)) {
                return;
            }
            parsed = 0;
            for (simdjson::dom::element e : evs) {
                // Touch the fields an importer reads, as a reader would.
                double ts = 0;
                parsed += (e["ts"].get_double().get(ts) == simdjson::SUCCESS) ? 1 : 0;
            }
        });
        r["json_events"] = static_cast<double>(n);
        r["json_memory_events"] = static_cast<double>(js.memoryEvents);
        r["json_kernel_events"] = static_cast<double>(js.kernelEvents);
        r["json_file_bytes"] = static_cast<double>(js.fileBytes);
        r["json_bytes_per_event"] = static_cast<double>(js.fileBytes) / n;
        r["json_bytes_per_memory_event"] = static_cast<double>(js.memoryBytes) / js.memoryEvents;
        r["json_bytes_per_kernel_event"] = static_cast<double>(js.kernelBytes) / js.kernelEvents;
        r["json_simdjson_events_per_s"] = parsed == n ? n / parseS : 0.0;
        std::printf(
            "kineto json: %llu events, %.1f MB, %.1f B/event (memory %.1f, kernel %.1f), simdjson "
            "DOM parse %.2f M events/s -> %s\n",
            static_cast<unsigned long long>(n), js.fileBytes / 1e6, r["json_bytes_per_event"],
            r["json_bytes_per_memory_event"], r["json_bytes_per_kernel_event"],
            r["json_simdjson_events_per_s"] / 1e6, jsonPath.c_str());
    }
    if (!resultsPath.empty()) {
        std::ofstream out(resultsPath);
        out << "{\n";
        bool first = true;
        for (const auto& [k, v] : r) {
            out << (first ? "" : ",\n") << "  \"" << k << "\": " << std::fixed << v;
            first = false;
        }
        out << "\n}\n";
    }
    return 0;
}
