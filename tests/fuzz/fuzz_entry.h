#pragma once
// The entry point of one fuzz target. Built as a libFuzzer target (VRAMSCOPE_FUZZ_ENTRY names
// LLVMFuzzerTestOneInput), or, with VRAMSCOPE_FUZZ_REPLAY defined, into the regression replayer
// (fuzz_regression_test.cpp), where each target keeps its own name so that all of them link into
// one gtest binary without libFuzzer.

#include <cstddef>
#include <cstdint>

#ifdef VRAMSCOPE_FUZZ_REPLAY
#define VRAMSCOPE_FUZZ_ENTRY(target) extern "C" int vramscopeFuzz_##target
#else
#define VRAMSCOPE_FUZZ_ENTRY(target) extern "C" int LLVMFuzzerTestOneInput
#endif
