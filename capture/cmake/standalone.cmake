# Standalone build of the capture folder (cmake -S capture): the pieces of the project it needs,
# from packages a GPU machine has (compiler, CMake, protobuf with protoc, protozero's headers,
# zstd, CUDA toolkit). vramscope::trace_write (the agent's writer, no libprotobuf) and
# vramscope::trace_io (the .vscope schema, writer and reader) come from trace_format's own
# cmake/trace_io.cmake; the importers (zlib, simdjson, libarchive) are not needed here.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

add_library(vramscope_warnings INTERFACE)
target_compile_options(vramscope_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)

find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)

include(${CMAKE_CURRENT_SOURCE_DIR}/../trace_format/cmake/trace_io.cmake)
