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

# trace_format's sources minus the importers: every src/*.cpp that includes (directly or through
# one of its own src/ headers) neither simdjson, libarchive, nlohmann-json nor zlib.
file(GLOB _tf_all ${_tf}/src/*.cpp)
set(_tf_sources)
set(_foreign "simdjson|archive\\.h|nlohmann|zlib\\.h")
foreach(_src ${_tf_all})
  file(STRINGS ${_src} _includes REGEX "^#include")
  set(_uses_foreign OFF)
  foreach(_inc ${_includes})
    if(_inc MATCHES "${_foreign}")
      set(_uses_foreign ON)
    elseif(_inc MATCHES "#include \"([a-z_]+\\.h)\"" AND EXISTS ${_tf}/src/${CMAKE_MATCH_1})
      file(STRINGS ${_tf}/src/${CMAKE_MATCH_1} _inner REGEX "^#include.*(${_foreign})")
      if(_inner)
        set(_uses_foreign ON)
      endif()
    endif()
  endforeach()
  if(NOT _uses_foreign)
    list(APPEND _tf_sources ${_src})
  endif()
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
