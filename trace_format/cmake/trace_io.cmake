# vramscope::trace_io: the .vscope schema (trace.proto through protoc), the in-memory TraceData,
# errors, the data-loss registry, CRC-32C, the writer, the reader and its chunk decoders.
# Needs protobuf (with protoc), zstd and Threads, nothing else, so that the capture agent's
# standalone build (capture/cmake/standalone.cmake) includes this file as it is. Expects the
# targets protobuf::protoc, protobuf::libprotobuf, PkgConfig::ZSTD, Threads::Threads and
# vramscope_warnings to exist.

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

add_library(vramscope_trace_io STATIC
  ${_tio_dir}/src/trace_data.cpp
  ${_tio_dir}/src/error.cpp
  ${_tio_dir}/src/output_file.cpp
  ${_tio_dir}/src/data_loss.cpp
  ${_tio_dir}/src/crc32c.cpp
  ${_tio_dir}/src/trace_writer.cpp
  ${_tio_dir}/src/trace_reader.cpp
  ${_tio_dir}/src/chunk_decoder.cpp
  ${_tio_dir}/src/fast_chunk_decoder.cpp
  ${_tio_dir}/src/summary_builder.cpp
  ${_tio_dir}/src/summary_reader.cpp
  ${_tio_dir}/src/summary_proto.cpp
  ${_tio_dir}/src/job_index.cpp
  # live viewing over a Unix socket (live.h)
  ${_tio_dir}/src/live_socket.cpp
  ${_tio_dir}/src/live_server.cpp
  ${_tio_dir}/src/live_receiver.cpp
)
add_library(vramscope::trace_io ALIAS vramscope_trace_io)
# Goes into the deployable capture agent too: one object per source, so that the agent takes in
# only the writer's objects (a unity batch would bring the reader's, the job index's and more).
set_target_properties(vramscope_trace_io PROPERTIES UNITY_BUILD OFF)
target_include_directories(vramscope_trace_io PUBLIC ${_tio_dir}/include PRIVATE ${_tio_dir}/src)
target_link_libraries(vramscope_trace_io
  PUBLIC Threads::Threads
  PRIVATE vramscope_trace_proto PkgConfig::ZSTD vramscope_warnings)
if(COMMAND vramscope_precompile)  # not in the capture folder's standalone build
  vramscope_precompile(vramscope_trace_io std.h)
endif()
