# Finds the Debian-packaged dependencies and exposes each as an imported target:
#   headwise::xnnpack, headwise::pthreadpool, headwise::cpuinfo, headwise::sentencepiece,
#   flatbuffers::flatbuffers (+ the flatc executable in HEADWISE_FLATC), nlohmann_json::nlohmann_json.
# Works for the host and for a cross sysroot (CMAKE_SYSROOT / CMAKE_FIND_ROOT_PATH).
find_package(Threads REQUIRED)

function(headwise_import_library target header libname)
  find_path(${target}_INCLUDE_DIR ${header})
  find_library(${target}_LIBRARY NAMES ${libname})
  if(NOT ${target}_INCLUDE_DIR OR NOT ${target}_LIBRARY)
    message(FATAL_ERROR "headwise: ${libname} not found (header ${header}). "
                        "Run scripts/setup.sh to install the Debian packages.")
  endif()
  add_library(headwise::${target} UNKNOWN IMPORTED GLOBAL)
  set_target_properties(headwise::${target} PROPERTIES
    IMPORTED_LOCATION "${${target}_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${${target}_INCLUDE_DIR}")
endfunction()

headwise_import_library(xnnpack xnnpack.h XNNPACK)
headwise_import_library(pthreadpool pthreadpool.h pthreadpool)
headwise_import_library(cpuinfo cpuinfo.h cpuinfo)
headwise_import_library(sentencepiece sentencepiece_processor.h sentencepiece)
set_property(TARGET headwise::xnnpack APPEND PROPERTY INTERFACE_LINK_LIBRARIES
  headwise::pthreadpool headwise::cpuinfo Threads::Threads)

find_package(FlatBuffers CONFIG REQUIRED)
if(NOT TARGET flatbuffers::flatbuffers AND TARGET flatbuffers::flatbuffers_shared)
  add_library(flatbuffers::flatbuffers ALIAS flatbuffers::flatbuffers_shared)
endif()
# flatc always runs on the build machine, also when cross-compiling.
find_program(HEADWISE_FLATC flatc NO_CMAKE_FIND_ROOT_PATH REQUIRED)

find_package(nlohmann_json 3 CONFIG REQUIRED)

if(HEADWISE_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(HEADWISE_BUILD_BENCH)
  find_package(benchmark CONFIG QUIET)
  if(NOT benchmark_FOUND)
    set(HEADWISE_BUILD_BENCH OFF)
  endif()
endif()

# The reference interpreter for trainer/ and the end-to-end tests: Debian's python3 with torch.
find_program(HEADWISE_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
