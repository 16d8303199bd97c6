# How the build is kept fast on a two-core machine (measured in the README, "Build and test
# times"). Each choice here changes how long the build takes, never what it builds.
#
#  - ccache, when installed, caches every compile (a second build of the same sources is mostly
#    cache hits). Precompiled headers are hashed by their content (sloppiness below), so they
#    stay cacheable.
#  - mold, when installed (packaging/setup-debian.sh installs it), links every target except the
#    capture agent and the libraries linked like it (capture/cmake/deployable_library.cmake keeps
#    GNU ld there: its symbol versions and wrapped glibc symbols were checked with that linker).
#    lld is the fallback.
#  - Unity builds: CMake compiles the sources of a target in batches of
#    VRAMSCOPE_UNITY_BATCH_SIZE, each batch one translation unit, so that the headers they share
#    are parsed, and the templates they share instantiated and optimised, once per batch instead
#    of once per file. Every source must therefore compile beside the others of its target: no two
#    files of one target define the same name with internal linkage (anonymous namespace,
#    `static`) or the same macro; what several files need is shared through a header (a library's
#    internal header, a test support header under tests/). The targets that stay out set
#    UNITY_BUILD OFF and say why: protoc's generated code; the capture agent, the libraries
#    linked into it (trace_io, capture_env, capture_nccl, capture_core: one object per source, so
#    that the agent takes in only what it uses, whatever the batches) and the test library linked
#    like it; the fake CUDA libraries of the agent tests.
#  - vramscope_precompile(TARGET HEADER): a target compiles HEADER once and every one of its
#    sources starts from it (target_precompile_headers). The headers in cmake/pch/ hold what the
#    sources of a layer include most and what costs most to parse: the standard library, Qt and
#    QCustomPlot, GoogleTest, nlohmann-json.
#  - VRAMSCOPE_TEST_OPTIMIZATION: the flags test sources are compiled with (the code under test
#    keeps the build type's). GoogleTest assertions cost much to optimise and gain nothing from it.

option(VRAMSCOPE_PRECOMPILED_HEADERS "Precompile the heavy common headers of each target" ON)
add_feature_info(precompiled-headers VRAMSCOPE_PRECOMPILED_HEADERS
                 "precompiled headers (cmake/pch/)")

find_program(VRAMSCOPE_CCACHE ccache)
if(VRAMSCOPE_CCACHE)
  # With precompiled headers ccache hashes the header's content only under this sloppiness
  # (ccache manual, "Precompiled headers").
  set(_launcher ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${VRAMSCOPE_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_launcher})
endif()

option(VRAMSCOPE_UNITY_BUILD "Compile each target's sources in batches (CMake unity builds)" ON)
set(VRAMSCOPE_UNITY_BATCH_SIZE 8 CACHE STRING "Sources per unity batch")
if(VRAMSCOPE_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${VRAMSCOPE_UNITY_BATCH_SIZE})
  # A batch includes its sources, so GCC takes them for headers and warns of a class member whose
  # type is in an anonymous namespace (-Wsubobject-linkage is meant for headers).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endif()
add_feature_info(unity-build VRAMSCOPE_UNITY_BUILD
                 "unity builds, ${VRAMSCOPE_UNITY_BATCH_SIZE} sources per batch")

option(VRAMSCOPE_FAST_LINKER "Link with mold (else lld) when one is installed" ON)
set(VRAMSCOPE_LINKER "default")
if(VRAMSCOPE_FAST_LINKER)
  find_program(VRAMSCOPE_MOLD mold)
  find_program(VRAMSCOPE_LLD NAMES ld.lld lld)
  if(VRAMSCOPE_MOLD)
    set(VRAMSCOPE_LINKER mold)
  elseif(VRAMSCOPE_LLD)
    set(VRAMSCOPE_LINKER lld)
  endif()
  if(NOT VRAMSCOPE_LINKER STREQUAL "default")
    # gcc 12 and clang 14 both take -fuse-ld=mold and -fuse-ld=lld.
    add_link_options(-fuse-ld=${VRAMSCOPE_LINKER})
  endif()
endif()
add_feature_info(fast-linker VRAMSCOPE_FAST_LINKER "links with ${VRAMSCOPE_LINKER}")

# -Og keeps the tests debuggable and compiles test sources about twice as fast as -O2 (GoogleTest
# macros expand to much code that -O2 works hard on). Empty: the build type's own flags.
set(VRAMSCOPE_TEST_OPTIMIZATION "-Og" CACHE STRING
    "Optimisation flags for test sources (the libraries under test keep the build type's)")

# vramscope_precompile(TARGET HEADER...): HEADER are files under cmake/pch (without the folder).
function(vramscope_precompile target)
  if(NOT VRAMSCOPE_PRECOMPILED_HEADERS)
    return()
  endif()
  set(_headers)
  foreach(_h IN LISTS ARGN)
    list(APPEND _headers "${PROJECT_SOURCE_DIR}/cmake/pch/${_h}")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${_headers})
  vramscope_precompiled_warnings(${target})
endfunction()

# vramscope_reuse_precompiled(TARGET FROM): TARGET's sources start from FROM's precompiled header
# (one header compiled for several test executables; their flags differ only in definitions the
# header does not use, which GCC and clang accept).
function(vramscope_reuse_precompiled target from)
  if(VRAMSCOPE_PRECOMPILED_HEADERS)
    target_precompile_headers(${target} REUSE_FROM ${from})
    vramscope_precompiled_warnings(${target})
  endif()
endfunction()

# NOTE(gcc): GCC 12 at -O1 and above reports -Warray-bounds and -Wstringop-overflow/-overread in
# libstdc++'s std::string (char_traits.h) for some of our sources when <string> comes from a
# precompiled header; the same sources compile without a warning when it is included as text
# (check_rules.cpp, command_synth.cpp, open_trace.cpp). Off for targets with precompiled headers
# under GCC 12; clang (the asan build, where AddressSanitizer checks every access) keeps them.
function(vramscope_precompiled_warnings target)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow
                                             -Wno-stringop-overread)
  endif()
endfunction()

