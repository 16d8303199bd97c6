# Standalone build of the capture folder (cmake -S capture): the pieces of the project it needs,
# from packages a GPU machine has (compiler, CMake, protobuf with protoc, zstd, CUDA toolkit).
# The .vscope schema, writer and reader are compiled from ../trace_format; the importers (which
# need simdjson and libarchive) are left out.
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
find_package(ZLIB QUIET)

set(_tf ${CMAKE_CURRENT_SOURCE_DIR}/../trace_format)
set(_proto ${_tf}/proto/vramscope/trace/v1/trace.proto)
set(_gen ${CMAKE_CURRENT_BINARY_DIR}/gen)
file(MAKE_DIRECTORY ${_gen})
add_custom_command(
  OUTPUT ${_gen}/vramscope/trace/v1/trace.pb.cc ${_gen}/vramscope/trace/v1/trace.pb.h
  COMMAND protobuf::protoc --cpp_out=${_gen} -I ${_tf}/proto ${_proto}
  DEPENDS ${_proto} protobuf::protoc
  COMMENT "protoc trace.proto")
add_library(vramscope_trace_proto STATIC ${_gen}/vramscope/trace/v1/trace.pb.cc)
target_include_directories(vramscope_trace_proto PUBLIC ${_gen})
target_link_libraries(vramscope_trace_proto PUBLIC protobuf::libprotobuf)

# The writer/reader sources of trace_format that need only protobuf and zstd (and zlib if found).
set(_tf_sources)
foreach(_src trace_data.cpp error.cpp crc32c.cpp chunk_decoder.cpp trace_writer.cpp trace_reader.cpp)
  list(APPEND _tf_sources ${_tf}/src/${_src})
endforeach()
add_library(vramscope_trace_format STATIC ${_tf_sources})
add_library(vramscope::trace_format ALIAS vramscope_trace_format)
target_include_directories(vramscope_trace_format PUBLIC ${_tf}/include PRIVATE ${_tf}/src)
target_link_libraries(vramscope_trace_format
  PUBLIC Threads::Threads
  PRIVATE vramscope_trace_proto PkgConfig::ZSTD)
if(ZLIB_FOUND)
  target_link_libraries(vramscope_trace_format PRIVATE ZLIB::ZLIB)
endif()
