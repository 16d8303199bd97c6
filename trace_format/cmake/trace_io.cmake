# The .vscope schema, writers and readers, as two libraries:
#  - vramscope::trace_write  everything needed to write .vscope streams without libprotobuf: the
#                            in-memory TraceData, errors, the data-loss registry, CRC-32C, the
#                            summary builder, the frame writer (TraceStreamWriter) with the
#                            header-only protozero chunk encoder, and the live server. Needs zstd,
#                            protozero's headers and Threads. The capture agent links only this.
#  - vramscope::trace_io     trace_write plus trace.proto through protoc: the readers and their
#                            chunk decoders, the libprotobuf chunk encoder behind TraceWriter,
#                            summary reading, the job index, the live receiver. What the tools,
#                            the analysis library and the GUI link.
# The capture agent's standalone build (capture/cmake/standalone.cmake) includes this file as it
# is. Expects the targets protobuf::protoc, protobuf::libprotobuf, PkgConfig::ZSTD,
# Threads::Threads and vramscope_warnings to exist; finds protozero (Debian: libprotozero-dev;
# elsewhere -DPROTOZERO_INCLUDE_DIR=<checkout>/include).

set(_tio_dir ${CMAKE_CURRENT_LIST_DIR}/..)
set(_tio_proto ${_tio_dir}/proto/vramscope/trace/v1/trace.proto)
set(_tio_gen ${CMAKE_CURRENT_BINARY_DIR}/gen)
file(MAKE_DIRECTORY ${_tio_gen})
add_custom_command(
  OUTPUT ${_tio_gen}/vramscope/trace/v1/trace.pb.cc ${_tio_gen}/vramscope/trace/v1/trace.pb.h
  COMMAND protobuf::protoc --cpp_out=${_tio_gen} -I ${_tio_dir}/proto ${_tio_proto}
  DEPENDS ${_tio_proto} protobuf::protoc
  COMMENT "protoc trace.proto")

# The generated code, on its own so that warnings stay on for ours.
add_library(vramscope_trace_proto STATIC ${_tio_gen}/vramscope/trace/v1/trace.pb.cc)
# protoc's output, not ours to keep free of clashing file-local names: each file on its own.
set_target_properties(vramscope_trace_proto PROPERTIES UNITY_BUILD OFF)
target_include_directories(vramscope_trace_proto PUBLIC ${_tio_gen})
target_link_libraries(vramscope_trace_proto PUBLIC protobuf::libprotobuf)

# protozero: header-only (protozero/pbf_writer.hpp), no CMake package of its own.
find_path(PROTOZERO_INCLUDE_DIR protozero/pbf_writer.hpp
  DOC "folder holding protozero/pbf_writer.hpp (Debian: libprotozero-dev)")
if(NOT PROTOZERO_INCLUDE_DIR)
  message(FATAL_ERROR "trace_format: protozero's headers were not found (Debian: apt-get install "
                      "libprotozero-dev; or -DPROTOZERO_INCLUDE_DIR=<protozero checkout>/include)")
endif()
if(NOT TARGET vramscope_protozero)
  add_library(vramscope_protozero INTERFACE)
  target_include_directories(vramscope_protozero SYSTEM INTERFACE ${PROTOZERO_INCLUDE_DIR})
endif()

add_library(vramscope_trace_write STATIC
  ${_tio_dir}/src/core/trace_data.cpp
  ${_tio_dir}/src/core/error.cpp
  ${_tio_dir}/src/core/output_file.cpp
  ${_tio_dir}/src/core/data_loss.cpp
  ${_tio_dir}/src/vscope/crc32c.cpp
  ${_tio_dir}/src/vscope/summary_builder.cpp
  ${_tio_dir}/src/vscope/trace_stream_writer.cpp
  ${_tio_dir}/src/vscope/protozero_chunk_encoder.cpp
  # live viewing over a Unix socket (live.h): the producer's side
  ${_tio_dir}/src/live/live_socket.cpp
  ${_tio_dir}/src/live/live_server.cpp
)
add_library(vramscope::trace_write ALIAS vramscope_trace_write)
# Goes into the deployable capture agent: one object per source, so that the agent takes in only
# the objects it uses (a unity batch brings all of its code along).
set_target_properties(vramscope_trace_write PROPERTIES UNITY_BUILD OFF)
target_include_directories(vramscope_trace_write PUBLIC ${_tio_dir}/include PRIVATE ${_tio_dir}/src)
target_link_libraries(vramscope_trace_write
  PUBLIC Threads::Threads
  PRIVATE vramscope_protozero PkgConfig::ZSTD vramscope_warnings)

add_library(vramscope_trace_io STATIC
  ${_tio_dir}/src/vscope/trace_writer.cpp
  ${_tio_dir}/src/vscope/trace_reader.cpp
  ${_tio_dir}/src/vscope/chunk_decoder.cpp
  ${_tio_dir}/src/vscope/fast_chunk_decoder.cpp
  ${_tio_dir}/src/vscope/summary_reader.cpp
  ${_tio_dir}/src/vscope/summary_proto.cpp
  ${_tio_dir}/src/vscope/job_index.cpp
  # live viewing: the viewer's side
  ${_tio_dir}/src/live/live_receiver.cpp
)
add_library(vramscope::trace_io ALIAS vramscope_trace_io)
target_include_directories(vramscope_trace_io PUBLIC ${_tio_dir}/include PRIVATE ${_tio_dir}/src)
target_link_libraries(vramscope_trace_io
  PUBLIC vramscope_trace_write Threads::Threads
  PRIVATE vramscope_trace_proto PkgConfig::ZSTD vramscope_warnings)
if(COMMAND vramscope_precompile)  # not in the capture folder's standalone build
  vramscope_precompile(vramscope_trace_write std.h)
  vramscope_reuse_precompiled(vramscope_trace_io vramscope_trace_write)
endif()
