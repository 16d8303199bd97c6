# vramscope_deployable_library(TARGET): makes the shared library TARGET loadable in old training
# containers (RHEL 8 / Ubuntu 20.04, glibc 2.28 and an old libstdc++) when it is built on a newer
# distribution. Used for libvramscope_capture.so and for the test library that checks exceptions
# under the same settings.
#  - libstdc++ and libgcc are linked statically; --exclude-libs,ALL (set by the caller with its
#    version script) keeps their symbols local, so they never meet the process's own copies.
#  - On x86-64 with glibc, every glibc reference above GLIBC_2.28 goes through a __wrap_ of
#    agent/glibc_compat.cpp to an old version (see there for the version facts). The list below
#    is what `objdump -T` showed for the agent; tests/unit/capture/agent_library_test.cpp fails
#    when a new one appears.
#  - Linked with GNU ld even where the rest of the project uses mold or lld
#    (cmake/build_speed.cmake): the checks above were made with its output.
#  - libpthread.so.0 and libdl.so.2 are kept in NEEDED: before glibc 2.34 pthread_*, sem_* and
#    dl* live there, not in libc.so.6 (on newer glibc they are empty and cost nothing).
function(vramscope_deployable_library target)
  # One object per source, as when its exports and glibc versions were checked (no unity batches
  # around glibc_compat.cpp's .symver bindings).
  set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
  target_link_options(${target} PRIVATE -fuse-ld=bfd -static-libstdc++ -static-libgcc)
  if(NOT (CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND CMAKE_SYSTEM_NAME STREQUAL "Linux"))
    return()
  endif()
  target_sources(${target} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../agent/glibc_compat.cpp)
  set(_wrapped
    pthread_create pthread_join pthread_detach pthread_once pthread_key_create
    __pthread_key_create pthread_key_delete pthread_getspecific pthread_setspecific
    pthread_sigmask pthread_cond_clockwait sem_init sem_wait sem_post
    dlopen dlsym dlclose dladdr dlerror
    stat lstat fstat stat64 lstat64 fstat64
    arc4random _dl_find_object)
  list(TRANSFORM _wrapped PREPEND "LINKER:--wrap=")
  target_link_options(${target} PRIVATE ${_wrapped}
    "SHELL:-Wl,--push-state,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -Wl,--pop-state")
endfunction()
